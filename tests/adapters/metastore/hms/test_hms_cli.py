"""End to end through the real `viewsync` command: plan, apply, plan again, and Spark sees the view."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import CliResult, run_cli

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def viewsync(repo: Path, *args: str) -> CliResult:
    return run_cli(repo, *args, process=True)


def test_plan_apply_plan_through_cli(tmp_path: Path, metastore: Any, spark: Any, database: str) -> None:
    spark.sql(f"CREATE TABLE {database}.sales (region STRING, amount BIGINT) USING parquet")
    spark.sql(f"INSERT INTO {database}.sales VALUES ('eu', 3), ('eu', 4), ('us', 5)")
    repo = tmp_path / "repo"
    (repo / "views" / "hive").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": metastore.uri, "write_format": "spark"}},
    }))
    (repo / "views" / "hive" / f"{database}.yaml").write_text(yaml.safe_dump({
        "catalog": "hive", "schema": database,
        "views": [{
            "name": "region_totals", "comment": "Sales per region",
            "columns": [{"name": "Region", "type": "string", "comment": "Sales region"},
                        {"name": "total", "type": "bigint"}],
            "representations": [
                {"dialect": "spark", "sql": "SELECT region AS Region, SUM(amount) AS total FROM sales GROUP BY region"},
                {"dialect": "trino", "sql": "SELECT region, sum(amount) AS total FROM sales GROUP BY region"}],
            "properties": {"tier": "gold"},
        }],
    }, sort_keys=False))

    plan = viewsync(repo, "plan", "--detailed-exitcode")
    assert plan.code == 2, plan.out + plan.err
    assert "region_totals" in plan.out
    applied = viewsync(repo, "apply", "--auto-approve")
    assert applied.code == 0, applied.out + applied.err
    again = viewsync(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err

    rows = spark.sql(f"SELECT * FROM {database}.region_totals ORDER BY Region").collect()
    assert [(r["Region"], r["total"]) for r in rows] == [("eu", 7), ("us", 5)]


def test_plan_errors_through_cli(tmp_path: Path, metastore: Any, database: str, hms_client: Any) -> None:
    from hmsclient.genthrift.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    hms_client.create_table(Table(tableName="orders", dbName=database, tableType="MANAGED_TABLE",
                                  sd=StorageDescriptor(cols=[FieldSchema("id", "bigint")], serdeInfo=SerDeInfo()),
                                  partitionKeys=[], parameters={}))
    repo = tmp_path / "repo"
    (repo / "views" / "hive").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": metastore.uri, "write_format": "spark"}},
    }))

    def view(name: str, sql: str, dialect: str = "spark") -> dict[str, Any]:
        return {"name": name, "columns": [{"name": "id", "type": "bigint"}],
                "representations": [{"dialect": dialect, "sql": sql}]}

    (repo / "views" / "hive" / f"{database}.yaml").write_text(yaml.safe_dump({
        "catalog": "hive", "schema": database,
        "views": [view("orders", "SELECT 1 AS id"),
                  view("huge", "SELECT 1 AS id -- " + "x" * 33000),
                  view("trino_only", "SELECT 1 AS id", "trino")],
    }))
    (repo / "views" / "hive" / "no_such_db.yaml").write_text(yaml.safe_dump({
        "catalog": "hive", "schema": "no_such_db", "views": [view("v", "SELECT 1 AS id")]}))

    plan = viewsync(repo, "plan", "--format", "json")
    assert plan.code == 1, plan.out + plan.err
    errors = {(e["view"]["name"], e["code"]): e["message"] for e in json.loads(plan.out)["errors"]}
    assert ("orders", "name_is_table") in errors
    assert ("v", "schema_missing") in errors
    assert "32700" in errors[("huge", "value_too_long")]
    assert "'spark'" in errors[("trino_only", "dialect_not_storable")]
    assert "'hive'" in errors[("trino_only", "dialect_not_storable")]
    # Nothing is applied from an unappliable plan.
    applied = viewsync(repo, "apply", "--auto-approve")
    assert applied.code == 1
    assert sorted(hms_client.get_all_tables(database)) == ["orders"]


def test_import_adopt_then_plan_is_empty(tmp_path: Path, metastore: Any, spark: Any, database: str) -> None:
    """A view Spark created is imported as YAML, adopted, and then needs nothing more."""
    spark.sql(f"CREATE TABLE {database}.events (kind STRING, n INT) USING parquet")
    spark.sql(f"INSERT INTO {database}.events VALUES ('a', 1), ('b', 2), ('a', 3)")
    spark.sql(f"USE {database}")
    spark.sql(f"CREATE VIEW {database}.kinds (Kind COMMENT 'event kind', Total COMMENT 'sum of n') "
              f"COMMENT 'per kind' AS SELECT kind AS Kind, SUM(n) AS Total FROM events GROUP BY kind")
    spark.sql("USE default")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": metastore.uri, "write_format": "spark"}},
    }))
    imported = viewsync(repo, "import", "--catalog", "hive", "--schema", database)
    assert imported.code == 0, imported.out + imported.err
    doc = yaml.safe_load((repo / "views" / "hive" / f"{database}.yaml").read_text())
    [decl] = doc["views"]
    assert decl["name"] == "kinds"
    assert [c["name"] for c in decl["columns"]] == ["Kind", "Total"]

    blocked = viewsync(repo, "plan", "--detailed-exitcode")
    assert blocked.code == 1 and "unmanaged" in (blocked.out + blocked.err).lower()
    adopted = viewsync(repo, "apply", "--auto-approve", "--adopt")
    assert adopted.code == 0, adopted.out + adopted.err
    again = viewsync(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err
    rows = spark.sql(f"SELECT * FROM {database}.kinds ORDER BY Kind").collect()
    assert [(r["Kind"], r["Total"]) for r in rows] == [("a", 4), ("b", 2)]


def test_import_then_adopt_a_trino_view_in_a_spark_catalog(tmp_path: Path, metastore: Any, database: str,
                                                           hms_client: Any) -> None:
    """A view Trino wrote, imported and adopted by a `write_format: spark` catalog: no plan error,
    and it stays a Trino view (Trino keeps reading it)."""
    from reconciler.adapters.metastore import formats
    from reconciler.adapters.metastore.hms import to_thrift
    from reconciler.core.model import ViewId, ViewSpec

    trino_view = ViewSpec.model_validate({
        "columns": [{"name": "id", "type": "bigint"}],
        "representations": [{"dialect": "trino", "sql": "SELECT 1 AS id"}]})
    hms_client.create_table(to_thrift(formats.write_view(
        "trino", database, "from_trino", trino_view.resolved(ViewId("hive", database, "from_trino")), {})))
    repo = tmp_path / "repo"
    (repo / "views").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": metastore.uri, "write_format": "spark",
                              "trino_owner": "trino_svc"}},  # the owner-less Trino definer view runs as it
    }))
    imported = viewsync(repo, "import", "--catalog", "hive", "--schema", database)
    assert imported.code == 0, imported.out + imported.err

    plan = viewsync(repo, "plan", "--adopt", "--format", "json")
    assert plan.code == 0, plan.out + plan.err
    assert "dialect_not_storable" not in plan.out
    applied = viewsync(repo, "apply", "--adopt", "--auto-approve")
    assert applied.code == 0, applied.out + applied.err
    again = viewsync(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err

    stored = hms_client.get_table(database, "from_trino")
    assert stored.parameters["presto_view"] == "true"
    assert stored.parameters["viewsync.managed-by"] == "t"
    assert stored.viewOriginalText.startswith("/* Presto View: ")
