"""Spark verification with a real Hive Metastore as the live catalog: source tables are stubbed
from the metastore, nothing is written to it, inferred columns apply and read back, and impact
analysis names declared and undeclared dependents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def make_repo(tmp_path: Path, uri: str, database: str, views: list[dict[str, Any]]) -> Path:
    repo = tmp_path / "repo"
    (repo / "views" / "hive").mkdir(parents=True, exist_ok=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": uri, "write_format": "spark"}}}))
    write_views(repo, database, views)
    return repo


def write_views(repo: Path, database: str, views: list[dict[str, Any]]) -> None:
    (repo / "views" / "hive" / f"{database}.yaml").write_text(yaml.safe_dump(
        {"catalog": "hive", "schema": database, "views": views}, sort_keys=False))


def view(name: str, sql: str, columns: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if columns is not None:
        out["columns"] = [{"name": n, "type": t} for n, t in columns]
    out["representations"] = [{"dialect": "spark", "sql": sql}]
    return out


def metastore_state(client: Any) -> list[Any]:
    """Everything verification could touch: databases, and every object of every database."""
    state: list[Any] = []
    for db in sorted(client.get_all_databases()):
        names = sorted(client.get_all_tables(db))
        tables = client.get_table_objects_by_name(db, names) if names else []
        state.append((db, [(t.tableName, t.tableType, t.viewOriginalText, sorted((t.parameters or {}).items()),
                            [(c.name, c.type) for c in t.sd.cols]) for t in tables]))
    return state


def orders(spark: Any, database: str) -> None:
    spark.sql(f"CREATE TABLE IF NOT EXISTS {database}.orders (order_id BIGINT, customer_id BIGINT, "
              "amount DECIMAL(18,2), name STRING) USING parquet")


def test_stubs_come_from_the_metastore_and_nothing_is_written(tmp_path: Path, metastore: Any, spark: Any,
                                                              database: str, hms_client: Any) -> None:
    orders(spark, database)
    repo = make_repo(tmp_path, metastore.uri, database, [
        view("narrowed", "SELECT order_id FROM orders", [("order_id", "int")]),
        view("unaliased", "SELECT order_id, upper(name) FROM orders", [("order_id", "bigint"), ("uname", "string")]),
        view("misspelt", "SELECT amont FROM orders"),
        view("good", "SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id",
             [("customer_id", "bigint"), ("total", "decimal(28,2)")]),
    ])
    before = metastore_state(hms_client)
    res = run_cli(repo, "plan", "--spark")
    assert res.code == 1, res.text
    errors = [ln for ln in res.out.splitlines() if "[spark_verification]" in ln]
    assert len(errors) == 3, res.out
    assert any(f"hive.{database}.narrowed" in e and "CANNOT_UP_CAST_DATATYPE" in e for e in errors)
    assert any(f"hive.{database}.unaliased" in e and "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS" in e for e in errors)
    assert any(f"hive.{database}.misspelt" in e and "`amount`" in e for e in errors), errors
    assert metastore_state(hms_client) == before

    # The same table schemas, kept in Git for offline CI: import --sources writes them, validate reads them.
    imported = run_cli(repo, "import", "--sources", "--catalog", "hive", "--schema", database)
    assert imported.code == 0, imported.text
    doc = yaml.safe_load((repo / "sources" / "hive" / f"{database}.yaml").read_text())
    assert doc["tables"] == [{"name": "orders", "columns": [
        {"name": "order_id", "type": "bigint"}, {"name": "customer_id", "type": "bigint"},
        {"name": "amount", "type": "decimal(18,2)"}, {"name": "name", "type": "string"}]}]
    offline = run_cli(repo, "validate", "--spark")
    assert offline.code == 1 and "resolves nowhere" not in offline.err, offline.text
    assert "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS" in offline.err and "`amount`" in offline.err


def test_inferred_columns_apply_and_read_back_without_diff(tmp_path: Path, metastore: Any, spark: Any,
                                                           database: str) -> None:
    orders(spark, database)
    spark.sql(f"INSERT INTO {database}.orders VALUES (1, 7, 2.50, 'a'), (2, 7, 1.25, 'b')")
    repo = make_repo(tmp_path, metastore.uri, database, [
        view("totals", "SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id")])
    plan = run_cli(repo, "plan", "--spark", "--format", "json")
    assert plan.code == 0, plan.text
    action = json.loads(plan.out)["actions"][0]
    assert [(c["name"], c["type"]) for c in action["desired"]["columns"]] == [
        ("customer_id", "bigint"), ("total", "decimal(28,2)")]
    applied = run_cli(repo, "apply", "--spark", "--auto-approve")
    assert applied.code == 0, applied.text
    again = run_cli(repo, "plan", "--spark", "--detailed-exitcode")
    assert again.code == 0, again.text
    rows = spark.sql(f"SELECT * FROM {database}.totals").collect()
    assert [(r["customer_id"], str(r["total"])) for r in rows] == [(7, "3.75")]


def test_impact_names_declared_and_live_dependents(tmp_path: Path, metastore: Any, spark: Any,
                                                    database: str) -> None:
    orders(spark, database)
    base = "SELECT order_id, customer_id, amount FROM orders"
    readers = [view("r1", "SELECT order_id, amount FROM v1"), view("r2", "SELECT SUM(amount) AS s FROM v1")]
    repo = make_repo(tmp_path, metastore.uri, database, [view("v1", base), *readers])
    applied = run_cli(repo, "apply", "--spark", "--auto-approve")
    assert applied.code == 0, applied.text
    spark.sql(f"CREATE VIEW {database}.live_reader AS SELECT amount FROM {database}.v1")

    write_views(repo, database, [view("v1", "SELECT order_id, customer_id FROM orders"), *readers])
    res = run_cli(repo, "plan", "--spark", "--format", "json")
    assert res.code == 1, res.text
    doc = json.loads(res.out)
    imp = next(i for i in doc["verification"]["impact"] if i["view"]["name"] == "v1")
    assert imp["breaking"] and imp["change"] == "columns_changed"
    assert {(d["view"]["name"], d["status"], d["declared"]) for d in imp["dependents"]} == {
        ("r1", "broken", True), ("r2", "broken", True), ("live_reader", "broken", False)}
    breaking = [e for e in doc["errors"] if e["code"] == "breaking_change"]
    assert len(breaking) == 1 and all(n in breaking[0]["message"] for n in ("r1", "r2", "live_reader"))

    shown = run_cli(repo, "impact", f"hive.{database}.v1")
    assert shown.code == 0, shown.text
    assert "3 dependent view(s)" in shown.out and "BROKEN" in shown.out and "live_reader" in shown.out

    write_views(repo, database, [view("v1", base.replace(" FROM", ", name FROM")), *readers])
    res = run_cli(repo, "plan", "--spark", "--format", "json")
    assert res.code == 0, res.text
    imp = next(i for i in json.loads(res.out)["verification"]["impact"] if i["view"]["name"] == "v1")
    assert imp["change"] == "columns_added" and not imp["breaking"]
    assert all(d["status"] == "ok" for d in imp["dependents"]) and len(imp["dependents"]) == 3


def test_duplicate_output_columns_are_spark_s_error_at_the_column(tmp_path: Path, metastore: Any, spark: Any,
                                                                  database: str, hms_client: Any) -> None:
    """Spark refuses a view whose output names a column twice (COLUMN_ALREADY_EXISTS): so does the
    verifier, located at the second column, and plan ends with that error, not a crash."""
    orders(spark, database)
    sql = "SELECT a.order_id, b.order_id\nFROM orders a JOIN orders b ON a.customer_id = b.customer_id"
    repo = make_repo(tmp_path, metastore.uri, database, [view("dup", sql)])
    before = metastore_state(hms_client)
    assert run_cli(repo, "import", "--sources", "--catalog", "hive", "--schema", database).code == 0
    for command in ("validate", "plan"):
        res = run_cli(repo, command, "--spark")
        assert res.code == 1, res.text
        assert "unexpected" not in res.text, res.text
        line = next(ln for ln in res.text.splitlines() if f"hive.{database}.dup:" in ln)
        text = (repo / "views" / "hive" / f"{database}.yaml").read_text()
        at = text.index("b.order_id")
        where = f"{text.count(chr(10), 0, at) + 1}:{at - text.rfind(chr(10), 0, at)}"
        assert f"views/hive/{database}.yaml:{where}:" in line, (where, line)
        assert "COLUMN_ALREADY_EXISTS" in line and "`order_id`" in line, line
    assert metastore_state(hms_client) == before


def test_column_names_with_surrounding_spaces_apply_and_spark_reads_them(tmp_path: Path, metastore: Any,
                                                                         spark: Any, database: str) -> None:
    """Spark accepts `order count ` (trailing space) as a view column: validate infers it,
    --write-columns writes it, apply stores it, Spark queries it and a plain plan is empty."""
    orders(spark, database)
    spark.sql(f"INSERT INTO {database}.orders VALUES (1, 7, 2.50, 'a'), (2, 7, 1.25, 'b')")
    repo = make_repo(tmp_path, metastore.uri, database, [
        view("counts", "SELECT customer_id, count(*) AS `order count ` FROM orders GROUP BY customer_id")])
    assert run_cli(repo, "import", "--sources", "--catalog", "hive", "--schema", database).code == 0
    wrote = run_cli(repo, "validate", "--spark", "--write-columns")
    assert wrote.code == 0, wrote.text
    doc = yaml.safe_load((repo / "views" / "hive" / f"{database}.yaml").read_text())
    assert doc["views"][0]["columns"] == [{"name": "customer_id", "type": "bigint"},
                                          {"name": "order count ", "type": "bigint"}]
    applied = run_cli(repo, "apply", "--auto-approve")
    assert applied.code == 0, applied.text
    rows = spark.sql(f"SELECT `order count ` FROM {database}.counts").collect()
    assert [r["order count "] for r in rows] == [2]
    assert spark.table(f"{database}.counts").schema.names == ["customer_id", "order count "]
    again = run_cli(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.text
