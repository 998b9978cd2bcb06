"""End to end through the real `viewsync` command against a moto_server Glue."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import CliResult, run_cli

TRINO = "SELECT customer_id, sum(amount) AS total FROM analytics.orders GROUP BY customer_id"
SPARK = "SELECT customer_id, SUM(amount) AS total FROM analytics.orders GROUP BY customer_id"


def viewsync(repo: Path, *args: str) -> CliResult:
    return run_cli(repo, *args, process=True)


def _write_views(repo: Path, trino_sql: str) -> None:
    (repo / "views" / "glue" / "analytics.yaml").write_text(yaml.safe_dump({
        "catalog": "glue", "schema": "analytics",
        "views": [
            {"name": "customer_totals", "comment": "Totals per customer",
             "columns": [{"name": "customer_id", "type": "bigint", "comment": "Customer"},
                         {"name": "total", "type": "decimal(18,2)"}],
             "representations": [{"dialect": "trino", "sql": trino_sql}, {"dialect": "spark", "sql": SPARK},
                                 {"dialect": "hive", "sql": SPARK}],
             "properties": {"tier": "gold"}},
            {"name": "big_customers",
             "columns": [{"name": "customer_id", "type": "bigint"}],
             "representations": [{"dialect": "trino",
                                  "sql": "SELECT customer_id FROM analytics.customer_totals WHERE total > 100"}]},
        ],
    }, sort_keys=False))


@pytest.mark.parametrize("view_format", ["multi-dialect", "athena"])
def test_plan_apply_plan(view_format: str, tmp_path: Path, glue_url: str, raw_glue: Any) -> None:
    raw_glue.create_database(DatabaseInput={"Name": "analytics"})
    raw_glue.create_table(DatabaseName="analytics", TableInput={
        "Name": "orders", "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {"Columns": [{"Name": "customer_id", "Type": "bigint"},
                                          {"Name": "amount", "Type": "decimal(18,2)"}], "Location": "s3://b/o/"}})
    raw_glue.create_table(DatabaseName="analytics", TableInput={
        "Name": "legacy_v", "TableType": "VIRTUAL_VIEW", "ViewOriginalText": "SELECT 1 AS x",
        "ViewExpandedText": "SELECT 1 AS x", "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}]}})
    repo = tmp_path / "repo"
    (repo / "views" / "glue").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"glue": {"type": "glue", "region": "us-east-1", "catalog_id": "123456789012",
                              "endpoint_url": glue_url, "view_format": view_format,
                                  "trino_owner": "analyst"}},
    }))
    _write_views(repo, TRINO)

    plan = viewsync(repo, "plan", "--detailed-exitcode")
    assert plan.code == 2, plan.out + plan.err
    assert "customer_totals" in plan.out and "big_customers" in plan.out
    applied = viewsync(repo, "apply", "--auto-approve")
    assert applied.code == 0, applied.out + applied.err
    again = viewsync(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err

    stored = raw_glue.get_table(DatabaseName="analytics", Name="customer_totals")["Table"]
    assert stored["Parameters"]["viewsync.managed-by"] == "t"
    assert ("ViewDefinition" in stored) == (view_format == "multi-dialect")
    legacy = raw_glue.get_table(DatabaseName="analytics", Name="legacy_v")["Table"]
    assert legacy["VersionId"] == "1" and "viewsync.managed-by" not in legacy.get("Parameters", {})

    # An SQL edit is one update, applied, then nothing left to do.
    _write_views(repo, TRINO.replace("sum(amount)", "sum(amount) * 1"))
    plan = viewsync(repo, "plan", "--detailed-exitcode")
    assert plan.code == 2, plan.out + plan.err
    assert viewsync(repo, "apply", "--auto-approve").code == 0
    again = viewsync(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err
    assert "testing" not in again.out + again.err  # the dummy credentials are never printed

    # `viewsync history` shows Glue's table versions beside our own version rows.
    shown = viewsync(repo, "history", "glue.analytics.customer_totals")
    assert shown.code == 0, shown.err
    ours, native = shown.out.split("Native versions in catalog 'glue':")
    assert re.search(r"v1 .* create", ours) and re.search(r"v2 .* update .*representations.trino.sql", ours)
    assert len(re.findall(r"^\s+\d+\s", native, re.M)) >= 2

    # A saved plan is stale once Glue's VersionId moved, even when nothing else changed.
    _write_views(repo, TRINO)
    assert viewsync(repo, "plan", "--out", str(tmp_path / "plan.json")).code == 0
    table = raw_glue.get_table(DatabaseName="analytics", Name="customer_totals")["Table"]
    same = {k: table[k] for k in ("Name", "TableType", "StorageDescriptor", "Parameters", "ViewOriginalText",
                                  "ViewExpandedText", "ViewDefinition", "Description", "Owner") if k in table}
    raw_glue.update_table(DatabaseName="analytics", TableInput=same)
    moved = raw_glue.get_table(DatabaseName="analytics", Name="customer_totals")["Table"]["VersionId"]
    assert moved != table["VersionId"]
    stale = viewsync(repo, "apply", str(tmp_path / "plan.json"), "--auto-approve")
    assert stale.code == 1 and "stale plan" in stale.out + stale.err, stale.out + stale.err
    after = raw_glue.get_table(DatabaseName="analytics", Name="customer_totals")["Table"]
    assert after["VersionId"] == moved  # nothing applied


def test_import_and_adopt_an_athena_view(tmp_path: Path, glue_url: str, raw_glue: Any) -> None:
    """The common Glue story: views Athena made, imported as YAML, adopted, then quiet."""
    import base64
    import json

    raw_glue.create_database(DatabaseInput={"Name": "analytics"})
    definition = {"originalSql": "SELECT 1 AS x", "catalog": "awsdatacatalog", "schema": "analytics",
                  "columns": [{"name": "x", "type": "integer"}]}
    raw_glue.create_table(DatabaseName="analytics", TableInput={
        "Name": "athena_v", "TableType": "VIRTUAL_VIEW",
        "ViewOriginalText": "/* Presto View: " + base64.b64encode(json.dumps(definition).encode()).decode() + " */",
        "ViewExpandedText": "/* Presto View */", "Parameters": {"presto_view": "true", "comment": "Presto View"},
        "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}]}})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"glue": {"type": "glue", "region": "us-east-1", "endpoint_url": glue_url,
                              "view_format": "athena", "trino_owner": "analyst"}},
    }))
    imported = viewsync(repo, "import", "--catalog", "glue")
    assert imported.code == 0, imported.out + imported.err
    doc = yaml.safe_load((repo / "views" / "glue" / "analytics.yaml").read_text())
    assert doc["views"][0]["representations"] == [{"dialect": "trino", "sql": "SELECT 1 AS x"}]

    plan = viewsync(repo, "plan", "--adopt", "--detailed-exitcode")
    assert plan.code == 2 and "adopt glue.analytics.athena_v" in plan.out, plan.out + plan.err
    assert "~" not in plan.out.split("adopt glue.analytics.athena_v")[1].split("Plan:")[0]  # no field changes
    applied = viewsync(repo, "apply", "--adopt", "--auto-approve")
    assert applied.code == 0, applied.out + applied.err
    again = viewsync(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err
    stored = raw_glue.get_table(DatabaseName="analytics", Name="athena_v")["Table"]
    assert stored["Parameters"]["viewsync.managed-by"] == "t" and stored["Parameters"]["presto_view"] == "true"


def test_adopted_spark_view_in_athena_catalog_stays_spark(tmp_path: Path, glue_url: str, raw_glue: Any) -> None:
    """import a Spark view, add a trino representation, apply --adopt: still a Spark view, and the
    next plan is empty (storable and update agree on the kept format)."""
    from reconciler.adapters.metastore import formats
    from reconciler.adapters.metastore.glue import legacy_codec as glue_legacy
    from reconciler.core.model import ViewId, ViewSpec

    raw_glue.create_database(DatabaseInput={"Name": "analytics"})
    spark_view = ViewSpec.model_validate({"columns": [{"name": "customer_id", "type": "bigint"},
                                                      {"name": "total", "type": "decimal(18,2)"}],
                                          "representations": [{"dialect": "spark", "sql": SPARK}]})
    desc = formats.write_view("spark", "analytics", "spark_v",
                              spark_view.resolved(ViewId("glue", "analytics", "spark_v")), {})
    desc.parameters = {k: v for k, v in desc.parameters.items() if not k.startswith("viewsync.")}
    raw_glue.create_table(DatabaseName="analytics", TableInput=glue_legacy.to_table_input(desc))
    repo = tmp_path / "repo"
    (repo / "views").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"glue": {"type": "glue", "region": "us-east-1", "catalog_id": "123456789012",
                              "endpoint_url": glue_url, "view_format": "athena"}},
    }))
    imported = viewsync(repo, "import", "--catalog", "glue")
    assert imported.code == 0, imported.out + imported.err
    files = list((repo / "views").rglob("*.yaml"))
    assert len(files) == 1
    doc = yaml.safe_load(files[0].read_text())
    (entry,) = doc["views"]
    entry["representations"].append({"dialect": "trino", "sql": TRINO})
    files[0].write_text(yaml.safe_dump(doc, sort_keys=False))

    applied = viewsync(repo, "apply", "--adopt", "--auto-approve")
    assert applied.code == 0, applied.out + applied.err
    again = viewsync(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.out + again.err

    stored = raw_glue.get_table(DatabaseName="analytics", Name="spark_v")["Table"]
    assert stored["Parameters"]["viewsync.managed-by"] == "t"
    assert "presto_view" not in stored["Parameters"]
    assert stored["ViewOriginalText"] == SPARK
    assert stored["Parameters"]["view.catalogAndNamespace.part.0"] == "spark_catalog"


@pytest.mark.parametrize("view_format", ["multi-dialect", "athena", "spark", "hive"])
def test_column_names_with_surrounding_spaces_round_trip(view_format: str, tmp_path: Path, glue_url: str,
                                                         raw_glue: Any) -> None:
    """A column Spark and Athena accept, `order count ` (trailing space), is stored as is in
    every Glue format and reads back: the plan after apply is empty."""
    raw_glue.create_database(DatabaseInput={"Name": "analytics"})
    repo = tmp_path / "repo"
    (repo / "views" / "glue").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"glue": {"type": "glue", "region": "us-east-1", "catalog_id": "123456789012",
                              "endpoint_url": glue_url, "view_format": view_format, "trino_owner": "analyst"}}}))
    spark = "SELECT customer_id, count(*) AS `order count ` FROM analytics.orders GROUP BY customer_id"
    (repo / "views" / "glue" / "analytics.yaml").write_text(yaml.safe_dump({
        "catalog": "glue", "schema": "analytics",
        "views": [{"name": "counts",
                   "columns": [{"name": "customer_id", "type": "bigint"}, {"name": "order count ", "type": "bigint"}],
                   "representations": [
                       {"dialect": "trino", "sql": spark.replace("`", '"')}, {"dialect": "spark", "sql": spark},
                       {"dialect": "hive", "sql": spark}]}]}, sort_keys=False))
    applied = run_cli(repo, "apply", "--auto-approve")
    assert applied.code == 0, applied.text
    again = run_cli(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.text
    stored = raw_glue.get_table(DatabaseName="analytics", Name="counts")["Table"]
    assert [c["Name"] for c in stored["StorageDescriptor"]["Columns"]] == ["customer_id", "order count "], stored
