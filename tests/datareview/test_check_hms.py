"""`viewsync check` on a real Hive Metastore: each check kind fails on seeded bad rows with the
exact failing count and passes once the data is fixed; `--definition declared` catches a PR
that introduces NULL keys before it is applied; JUnit and Markdown reports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.datareview.conftest import metastore_state, review_repo, view, view_file
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow  # starts a metastore and two Sparks

COLUMNS = [{"name": "id", "type": "bigint"}, {"name": "customer_id", "type": "bigint"},
           {"name": "amount", "type": "decimal(18,2)"}, {"name": "status", "type": "string"}]
GOOD = [(1, 1, "10.00", "paid"), (2, 2, "20.00", "shipped"), (3, 3, "5.00", "paid"), (4, 1, "7.50", "paid")]
BAD = [(5, None, "1.00", "paid"), (6, None, "2.00", "paid"),  # NULL customer_id: not_null
       (7, 2, "3.00", "lost"), (8, 3, "4.00", "unknown"), (9, 1, "5.00", "lost"),  # accepted_values
       (10, 1, "-1.00", "paid"),  # expression
       (11, 99, "6.00", "paid"), (12, 98, "7.00", "paid"),  # relationships
       (1, 2, "8.00", "paid")]  # a second id 1: unique


def checks(db: str) -> list[dict[str, Any]]:
    return [{"not_null": ["customer_id"]}, {"unique": ["id"]},
            {"accepted_values": {"column": "status", "values": ["paid", "shipped"]}},
            {"row_count": {"min": 1, "max": 10}},
            {"relationships": {"column": "customer_id", "to": f"hive.{db}.customers", "field": "id"}},
            {"expression": "amount >= 0", "severity": "warn"}]


def write_payments(spark: Any, db: str, rows: list[tuple[Any, ...]]) -> None:
    values = ", ".join(f"({i}, {'NULL' if c is None else c}, {a}, '{s}')" for i, c, a, s in rows)
    spark.sql(f"INSERT OVERWRITE TABLE {db}.payments VALUES {values}")


def seed(spark: Any, db: str) -> None:
    spark.sql(f"CREATE TABLE {db}.payments (id BIGINT, customer_id BIGINT, amount DECIMAL(18,2), status STRING) "
              "USING parquet")
    spark.sql(f"CREATE TABLE {db}.customers (id BIGINT, name STRING) USING parquet")
    spark.sql(f"INSERT INTO {db}.customers VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')")


def check_json(repo: Path, *args: str, code: int) -> dict[str, Any]:
    res = run_cli(repo, "check", "--format", "json", *args)
    assert res.code == code, res.text
    data: dict[str, Any] = json.loads(res.out)
    return data


def by_kind(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    [v] = report["views"]
    assert v["status"] == "ok", v
    return {c["kind"]: c for c in v["checks"]}


def test_each_check_kind_fails_with_its_exact_count_then_passes_after_the_fix(
        tmp_path: Path, metastore: Any, spark: Any, database: str, hms_client: Any) -> None:
    seed(spark, database)
    write_payments(spark, database, GOOD + BAD)
    repo = review_repo(tmp_path, metastore.uri, view_file(database, view(
        "payments_v", "SELECT id, customer_id, amount, status FROM payments", columns=COLUMNS,
        checks=checks(database))))
    before = metastore_state(hms_client)

    failed = by_kind(check_json(repo, code=1))  # not applied: the declared SQL on live tables
    assert {k: (c["status"], c["failing"]) for k, c in failed.items()} == {
        "not_null": ("fail", 2), "unique": ("fail", 2), "accepted_values": ("fail", 3),
        "row_count": ("fail", 13), "relationships": ("fail", 2), "expression": ("fail", 1)}
    assert failed["unique"]["detail"] == "1 duplicated value(s)"
    assert sorted(r["id"] for r in failed["not_null"]["samples"]) == [5, 6]
    assert sorted(r["customer_id"] for r in failed["relationships"]["samples"]) == [98, 99]
    assert [r["id"] for r in failed["expression"]["samples"]] == [10]
    assert failed["expression"]["severity"] == "warn"
    assert failed["not_null"]["location"].startswith(f"views/hive/{database}.yaml:")  # file:line:col

    text = run_cli(repo, "check")
    assert text.code == 1
    assert "FAIL  not_null: customer_id: 2 failing row(s)" in text.out
    assert "WARN  expression: amount >= 0: 1 failing row(s)" in text.out
    junit = ET.fromstring(run_cli(repo, "check", "--format", "junit").out)
    suite = junit.find("testsuite")
    assert suite is not None and suite.get("failures") == "5" and suite.get("errors") == "0"

    write_payments(spark, database, GOOD)  # the data fixed
    fixed = by_kind(check_json(repo, code=0))
    assert all(c["status"] == "pass" and c["failing"] == 0 for c in fixed.values()), fixed
    assert metastore_state(hms_client) == before  # INSERT OVERWRITE keeps the table's metadata
    md = run_cli(repo, "check", "--format", "markdown")
    assert md.code == 0 and "### Data checks" in md.out and "6 passed, 0 failed" in md.out


def test_declared_definition_catches_null_keys_before_apply(tmp_path: Path, metastore: Any, spark: Any,
                                                             database: str, hms_client: Any) -> None:
    seed(spark, database)
    write_payments(spark, database, GOOD + [(11, 99, "6.00", "paid")])
    cols = [{"name": "id", "type": "bigint"}, {"name": "customer_id", "type": "bigint"}]
    live_sql = "SELECT id, customer_id FROM payments"
    checked = [{"not_null": ["id", "customer_id"]}]
    repo = review_repo(tmp_path, metastore.uri, view_file(database, view("owner", live_sql, columns=cols,
                                                                         key=["id"], checks=checked)))
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    # The PR: customer ids through a LEFT JOIN on customers, which has no customer 99.
    pr_sql = "SELECT p.id, c.id AS customer_id FROM payments p LEFT JOIN customers c ON p.customer_id = c.id"
    (repo / "views" / "hive" / f"{database}.yaml").write_text(json.dumps(view_file(
        database, view("owner", pr_sql, columns=cols, key=["id"], checks=checked))[f"views/hive/{database}.yaml"]))
    before = metastore_state(hms_client)

    declared = by_kind(check_json(repo, code=1))
    assert (declared["not_null"]["status"], declared["not_null"]["failing"]) == ("fail", 1)
    assert declared["not_null"]["samples"] == [{"id": 11, "customer_id": None}]
    live = by_kind(check_json(repo, "--definition", "live", code=0))
    assert live["not_null"]["status"] == "pass"
    diff = json.loads(run_cli(repo, "diff", "--format", "json").out)
    assert diff["views"][0]["null_keys"] == {"before": 0, "after": 0}
    assert diff["views"][0]["counts"]["changed"] == 1  # id 11's customer_id became NULL
    assert metastore_state(hms_client) == before


def _stderr_of(repo: Path, tty: bool) -> str:
    """`viewsync check` run as a user runs it, its stderr a terminal (a pty) or a pipe."""
    import os
    import pty
    import subprocess
    import sys
    import threading

    cmd = [sys.executable, "-m", "reconciler.cli", "--repo", str(repo), "check"]
    if not tty:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600).stderr
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:  # read while it runs: a full pty buffer would block the process
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the process closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=slave, timeout=600)
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_is_one_line_rewritten_on_a_terminal_and_plain_lines_otherwise(tmp_path: Path, metastore: Any,
                                                                                 spark: Any, database: str) -> None:
    seed(spark, database)
    write_payments(spark, database, GOOD)
    repo = review_repo(tmp_path, metastore.uri, view_file(database, view(
        "payments_v", "SELECT id, customer_id, amount, status FROM payments", columns=COLUMNS,
        checks=[{"not_null": ["customer_id"]}])))
    line = f"check 1/1 hive.{database}.payments_v"

    terminal = _stderr_of(repo, tty=True)
    assert "\r\x1b[K" + line in terminal, terminal  # rewritten in place
    assert terminal.rstrip("\r\n").endswith("\r\x1b[K"), terminal[-200:]  # and cleared when done
    plain = _stderr_of(repo, tty=False)
    assert line + "\n" in plain and "\x1b[" not in plain, plain


def test_a_check_spark_cannot_analyse_is_that_checks_located_error(
        tmp_path: Path, metastore: Any, spark: Any, database: str) -> None:
    """A `field` holding SQL (issue 38, item 3) stays a name: the check errors at its own line,
    saying what the table's columns are; an expression naming a column the view lacks is Spark's
    error at that check's line; the view's other checks still run."""
    seed(spark, database)
    write_payments(spark, database, GOOD)
    injected = "id` FROM payments) OR (1=1 --"
    repo = review_repo(tmp_path, metastore.uri, view_file(database, view(
        "payments_v", "SELECT id, customer_id, amount, status FROM payments", columns=COLUMNS,
        checks=[{"relationships": {"column": "customer_id", "to": f"hive.{database}.customers", "field": injected}},
                {"not_null": ["customer_id"]}, {"expression": "amout >= 0"}])))
    report = check_json(repo, code=1)
    [v] = report["views"]
    assert v["status"] == "ok", v
    rel, not_null, typo = v["checks"]
    assert typo["status"] == "error" and "amout" in typo["detail"], typo  # Spark's error, this check's
    assert typo["location"].startswith(f"views/hive/{database}.yaml:") and typo["location"] != rel["location"]
    assert rel["status"] == "error" and f"is not a column of hive.{database}.customers" in rel["detail"], rel
    assert "(its columns: id, name)" in rel["detail"]
    assert rel["location"].startswith(f"views/hive/{database}.yaml:"), rel
    assert not_null["status"] == "pass"
