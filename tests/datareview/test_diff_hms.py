"""`viewsync diff` on a real Hive Metastore with parquet tables of known content: a changed
filter shows exactly the rows that disappear, a changed expression only that column's changes,
a key duplicated by a bad join is reported, and nothing in the metastore changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.datareview.conftest import metastore_state, review_repo, view, view_file
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow  # starts a metastore and two Sparks

LIVE_SQL = "SELECT order_id, customer_id, amount, status FROM orders"
COLUMNS = [{"name": "order_id", "type": "bigint"}, {"name": "customer_id", "type": "bigint"},
           {"name": "amount", "type": "decimal(18,2)"}, {"name": "status", "type": "string"}]
VOID = [3, 7, 11]  # the orders whose status is 'void'


def seed(spark: Any, db: str) -> None:
    """orders 1..20 (customer (id % 4) + 1, amount id * 10, three void), and two e-mail rows
    for customer 2 (a join on it duplicates its orders)."""
    spark.sql(f"CREATE TABLE {db}.orders (order_id BIGINT, customer_id BIGINT, amount DECIMAL(18,2), "
              "status STRING) USING parquet")
    rows = ", ".join(f"({i}, {i % 4 + 1}, {i * 10}.00, '{'void' if i in VOID else 'paid'}')" for i in range(1, 21))
    spark.sql(f"INSERT INTO {db}.orders VALUES {rows}")
    spark.sql(f"CREATE TABLE {db}.emails (customer_id BIGINT, email STRING) USING parquet")
    spark.sql(f"INSERT INTO {db}.emails VALUES (1, 'a@x'), (2, 'b@x'), (2, 'b2@x'), (3, 'c@x'), (4, 'd@x')")


def applied(tmp_path: Path, metastore: Any, spark: Any, db: str) -> Path:
    seed(spark, db)
    declared = view("orders_v", LIVE_SQL, columns=COLUMNS, key=["order_id"])
    repo = review_repo(tmp_path, metastore.uri, view_file(db, declared))
    res = run_cli(repo, "apply", "--auto-approve")
    assert res.code == 0, res.text
    return repo


def declare(repo: Path, db: str, sql: str, **extra: Any) -> None:
    (repo / "views" / "hive" / f"{db}.yaml").write_text(json.dumps(
        {"catalog": "hive", "schema": db, "views": [view("orders_v", sql, columns=COLUMNS, **extra)]}))


def diff_json(repo: Path, *args: str) -> dict[str, Any]:
    res = run_cli(repo, "diff", "--format", "json", *args)
    assert res.code == 0, res.text
    data: dict[str, Any] = json.loads(res.out)
    return data


def only_view(report: dict[str, Any]) -> dict[str, Any]:
    assert len(report["views"]) == 1, report
    v: dict[str, Any] = report["views"][0]
    assert v["status"] == "ok", v
    return v


def test_changed_filter_shows_exactly_the_rows_that_disappear_and_writes_nothing(
        tmp_path: Path, metastore: Any, spark: Any, database: str, hms_client: Any) -> None:
    repo = applied(tmp_path, metastore, spark, database)
    declare(repo, database, LIVE_SQL + " WHERE status <> 'void'", key=["order_id"])
    before = metastore_state(hms_client)

    v = only_view(diff_json(repo))
    assert (v["rows_before"], v["rows_after"]) == (20, 17)
    assert v["counts"] == {"added": 0, "removed": 3, "changed": 0, "unchanged": 17, "duplicate": 0}
    assert [s["before"]["order_id"] for s in v["samples"]] == VOID
    assert all(s["class"] == "removed" and s["after"] is None and s["before"]["status"] == "void"
               for s in v["samples"])
    assert all(c["changed"] == 0 for c in v["columns"])
    amount = next(n for n in v["numeric"] if n["name"] == "amount")
    assert (amount["sum_before"], amount["sum_after"]) == (2100, 2100 - 210)

    text = run_cli(repo, "diff")
    assert text.code == 0, text.text
    assert f"~ hive.{database}.orders_v (update, key: order_id)" in text.out
    assert "rows: 20 → 17 (-3)" in text.out
    assert "added 0, removed 3, changed 0, unchanged 17" in text.out
    assert metastore_state(hms_client) == before  # nothing created, altered or dropped
    plan = run_cli(repo, "plan", "--detailed-exitcode")
    assert plan.code == 2, plan.text  # the change is still pending: the diff applied nothing


def test_one_changed_expression_changes_only_that_column(tmp_path: Path, metastore: Any, spark: Any,
                                                          database: str) -> None:
    repo = applied(tmp_path, metastore, spark, database)
    declare(repo, database, "SELECT order_id, customer_id, CAST(CASE WHEN order_id <= 5 THEN amount + 1 "
            "ELSE amount END AS DECIMAL(18,2)) AS amount, status FROM orders", key=["order_id"])

    v = only_view(diff_json(repo, "--sample", "2"))
    assert v["counts"]["changed"] == 5 and v["counts"]["unchanged"] == 15
    by_name = {c["name"]: c for c in v["columns"]}
    assert by_name["amount"] == {"name": "amount", "changed": 5, "matched": 20, "rate": 0.25}
    assert by_name["customer_id"]["changed"] == 0 and by_name["status"]["changed"] == 0
    assert [(s["before"]["amount"], s["after"]["amount"]) for s in v["samples"]] == [(10, 11), (20, 21)]
    amount = next(n for n in v["numeric"] if n["name"] == "amount")
    assert amount["sum_after"] - amount["sum_before"] == 5
    assert v["schema"] == {"added": [], "removed": [], "retyped": []}


def test_a_key_duplicated_by_a_bad_join_is_reported(tmp_path: Path, metastore: Any, spark: Any, database: str) -> None:
    repo = applied(tmp_path, metastore, spark, database)
    declare(repo, database, "SELECT o.order_id, o.customer_id, o.amount, o.status FROM orders o "
            "JOIN emails e ON o.customer_id = e.customer_id", key=["order_id"])

    v = only_view(diff_json(repo))
    customer_2 = [i for i in range(1, 21) if i % 4 + 1 == 2]  # 1, 5, 9, 13, 17
    assert v["duplicates"]["after"] == {"keys": len(customer_2), "rows": 2 * len(customer_2)}
    assert v["duplicates"]["before"] == {"keys": 0, "rows": 0}
    assert v["rows_after"] == 25 and v["counts"]["duplicate"] == len(customer_2)
    assert {s["after"]["order_id"] for s in v["samples"] if s["class"] == "duplicate"} <= set(customer_2)
    md = run_cli(repo, "diff", "--format", "markdown")
    assert md.code == 0 and "Duplicate keys after: 5 key(s), 10 row(s)" in md.out, md.text


def test_without_a_key_rows_compare_as_a_multiset_and_where_restricts_both_sides(
        tmp_path: Path, metastore: Any, spark: Any, database: str) -> None:
    repo = applied(tmp_path, metastore, spark, database)
    declare(repo, database, LIVE_SQL + " WHERE status <> 'void'")  # no key

    v = only_view(diff_json(repo, "--where", "order_id <= 10"))
    assert (v["rows_before"], v["rows_after"]) == (10, 8)
    assert v["counts"] == {"added": 0, "removed": 2, "unchanged": 8}
    assert sorted(s["before"]["order_id"] for s in v["samples"]) == [3, 7]


def test_created_and_dropped_views_get_row_counts(tmp_path: Path, metastore: Any, spark: Any, database: str) -> None:
    repo = applied(tmp_path, metastore, spark, database)
    (repo / "views" / "hive" / f"{database}.yaml").write_text(json.dumps({"catalog": "hive", "schema": database,
        "views": [view("paid", "SELECT order_id FROM orders WHERE status = 'paid'",
                       columns=[{"name": "order_id", "type": "bigint"}])]}))
    report = diff_json(repo, "--sample", "1")  # orders_v is no longer declared: dropped only with --prune
    assert [(v["action"], v["view"]["name"]) for v in report["views"]] == [("create", "paid")]
    created = report["views"][0]
    assert created["rows_after"] == 17 and len(created["samples"]) == 1


def test_dependents_read_the_declared_result_of_the_changed_view(tmp_path: Path, metastore: Any, spark: Any,
                                                                  database: str) -> None:
    seed(spark, database)
    big = view("big_orders", "SELECT order_id, amount FROM orders_v WHERE amount >= 100", key=["order_id"],
               columns=[COLUMNS[0], COLUMNS[2]])
    repo = review_repo(tmp_path, metastore.uri, view_file(
        database, view("orders_v", LIVE_SQL, columns=COLUMNS, key=["order_id"]), big))
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    changed = view("orders_v", "SELECT order_id, customer_id, CAST(CASE WHEN order_id <= 5 THEN amount + 1000 "
                   "ELSE amount END AS DECIMAL(18,2)) AS amount, status FROM orders", columns=COLUMNS,
                   key=["order_id"])
    (repo / "views" / "hive" / f"{database}.yaml").write_text(json.dumps(
        view_file(database, changed, big)[f"views/hive/{database}.yaml"]))

    plain = diff_json(repo)
    assert [v["view"]["name"] for v in plain["views"]] == ["orders_v"]
    report = diff_json(repo, "--dependents")
    by_name = {v["view"]["name"]: v for v in report["views"]}
    dep = by_name["big_orders"]
    assert dep["action"] == "dependent" and dep["status"] == "ok", dep
    assert (dep["rows_before"], dep["rows_after"]) == (11, 16)  # orders 10..20, then 1..5 join them
    assert dep["counts"]["added"] == 5 and dep["counts"]["changed"] == 0
    assert sorted(s["after"]["order_id"] for s in dep["samples"]) == [1, 2, 3, 4, 5]


def test_the_pr_comment_shows_plan_diff_and_checks(tmp_path: Path, metastore: Any, spark: Any,
                                                   database: str) -> None:
    """As the plan workflow builds it: the plan's Markdown, then the diff's, then the checks'."""
    repo = applied(tmp_path, metastore, spark, database)
    declare(repo, database, LIVE_SQL + " WHERE status <> 'void'", key=["order_id"],
            checks=[{"accepted_values": {"column": "status", "values": ["paid"]}}, {"row_count": {"min": 18}}])
    parts = [run_cli(repo, "plan", "--format", "markdown"), run_cli(repo, "diff", "--format", "markdown"),
             run_cli(repo, "check", "--format", "markdown")]
    assert [p.code for p in parts] == [0, 0, 1], [p.text for p in parts]
    comment = "".join(p.out for p in parts)
    assert f"hive.{database}.orders_v" in parts[0].out  # the plan: one update
    assert f"#### ~ `hive.{database}.orders_v` (update, key `order_id`)" in comment
    assert "| 20 | 17 | 0 | 3 | 0 | 17 | 0 |" in comment  # rows before/after, added, removed, changed...
    assert "### Data checks" in comment and "1 passed, 1 failed" in comment
    assert "| ❌ | `row_count: min=18` | 17 | 17 row(s), expected at least 18 |" in comment


def test_dollar_braces_in_view_sql_checks_and_where_are_not_spark_variables(
        tmp_path: Path, metastore: Any, spark: Any, database: str) -> None:
    """Spark's variable substitution is off in the review's session: `${env:NAME}` in a PR's view
    SQL, a check expression or `--where` stays text, so no CI secret reaches the PR comment."""
    repo = applied(tmp_path, metastore, spark, database)
    secret = "CITOKEN_SECRET_8d2f"
    leaked = "'${env:VS_T_CI_TOKEN}' LIKE 'CITOKEN%'"  # true only if Spark substituted the variable
    declare(repo, database, "SELECT order_id, customer_id, amount, "
            "CASE WHEN order_id = 1 THEN '${env:VS_T_CI_TOKEN}' ELSE status END AS status FROM orders",
            key=["order_id"], checks=[{"expression": f"NOT ({leaked})"}])
    env = {"VS_T_CI_TOKEN": secret}

    res = run_cli(repo, "diff", "--format", "json", env=env, process=True)
    assert res.code == 0 and secret not in res.text, res.text
    v = only_view(json.loads(res.out))
    assert v["counts"]["changed"] == 1
    assert [s["after"]["status"] for s in v["samples"]] == ["${env:VS_T_CI_TOKEN}"]

    res = run_cli(repo, "diff", "--format", "json", "--where", f"order_id <= 2 OR {leaked}", env=env, process=True)
    assert res.code == 0, res.text
    v = only_view(json.loads(res.out))
    assert (v["rows_before"], v["rows_after"]) == (2, 2)

    res = run_cli(repo, "check", "--format", "json", "--definition", "declared", env=env, process=True)
    assert secret not in res.text
    [check] = json.loads(res.out)["views"][0]["checks"]
    assert (check["status"], check["failing"]) == ("pass", 0), check
