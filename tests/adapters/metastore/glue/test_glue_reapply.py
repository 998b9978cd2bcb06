"""Out-of-band replace (Athena's CREATE OR REPLACE VIEW, another tool's update_table), then the
same declaration applied again: converges, and the next plan is empty (moto_server)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from reconciler.adapters.metastore.formats.trino import decode_envelope
from reconciler.adapters.metastore.glue import GlueAdapter
from reconciler.core.model import ViewId, ViewSpec
from tests.helpers.glue_support import Writer

VIEW = ViewId("glue", "analytics", "orders_v")


def declared() -> ViewSpec:
    return ViewSpec.model_validate({
        "comment": "orders", "columns": [{"name": "id", "type": "bigint"}, {"name": "payload", "type": "json"}],
        "representations": [{"dialect": "trino", "sql": "SELECT id, payload FROM sales.orders"},
                            {"dialect": "spark", "sql": "SELECT id, payload FROM sales.orders"}],
    })


def athena_replace(raw_glue: Any) -> None:
    """What Athena's CREATE OR REPLACE VIEW stores: a fresh envelope, its own parameters only."""
    definition = {"originalSql": "SELECT 1 AS id, json_parse('{}') AS payload", "catalog": "awsdatacatalog",
                  "schema": "analytics", "columns": [{"name": "id", "type": "integer"},
                                                     {"name": "payload", "type": "json"}]}
    raw_glue.update_table(DatabaseName="analytics", TableInput={
        "Name": VIEW.name, "TableType": "VIRTUAL_VIEW", "ViewExpandedText": "/* Presto View */",
        "ViewOriginalText": "/* Presto View: " + base64.b64encode(json.dumps(definition).encode()).decode() + " */",
        "Parameters": {"presto_view": "true", "comment": "Presto View"},
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "int"}, {"Name": "payload", "Type": "string"}]}})


@pytest.mark.parametrize("view_format", ["athena", "multi-dialect"])
def test_out_of_band_replace_then_apply_converges(view_format: str, make_adapter: Callable[..., GlueAdapter],
                                                  raw_glue: Any, writer: Writer) -> None:
    raw_glue.create_database(DatabaseInput={"Name": "analytics"})
    adapter = make_adapter(view_format)
    writer.create(adapter, VIEW, declared())
    if view_format == "athena":
        athena_replace(raw_glue)
    else:  # another tool rewrites the multi-dialect definition
        table = raw_glue.get_table(DatabaseName="analytics", Name=VIEW.name)["Table"]
        vd = table["ViewDefinition"]
        for rep in vd["Representations"]:
            rep["ViewOriginalText"] = "SELECT 1 AS id, '{}' AS payload"
        raw_glue.update_table(DatabaseName="analytics", TableInput={
            "Name": VIEW.name, "TableType": "VIRTUAL_VIEW", "StorageDescriptor": table["StorageDescriptor"],
            "ViewDefinition": {k: v for k, v in vd.items() if k in ("IsProtected", "Definer", "Representations")},
            "Parameters": table["Parameters"]})
    drifted = adapter.fetch("analytics").views[VIEW.name]
    assert drifted.spec.digest() != adapter.storable(VIEW, declared(), drifted).digest()

    live = writer.update(adapter, drifted, declared())  # asserts the read-back equals storable(declared)
    assert adapter.storable(VIEW, declared(), live).digest() == live.spec.digest()  # the next plan is empty
    if view_format == "athena":
        doc = decode_envelope(raw_glue.get_table(DatabaseName="analytics", Name=VIEW.name)["Table"]["ViewOriginalText"])
        assert doc["originalSql"] == "SELECT id, payload FROM sales.orders"
        assert [c["type"] for c in doc["columns"]] == ["bigint", "json"]  # json stays json for Athena/Trino
        assert doc["owner"] == "analyst"  # a definer view carries the catalog's trino_owner


def test_import_and_adopt_keeps_an_athena_view_as_athena_wrote_it(tmp_path: Any, glue_url: str,
                                                                  raw_glue: Any) -> None:
    """No `schema` (unqualified names resolve in the reader's session), SQL with trailing
    whitespace, a json column: adopting it rewrites none of that."""
    import yaml

    from tests.helpers.cli import run_cli

    raw_glue.create_database(DatabaseInput={"Name": "analytics"})
    definition = {"originalSql": "SELECT 1 AS id, json_parse('{}') AS doc\n\n", "catalog": "awsdatacatalog",
                  "columns": [{"name": "id", "type": "integer"}, {"name": "doc", "type": "json"}]}
    raw_glue.create_table(DatabaseName="analytics", TableInput={
        "Name": "bare", "TableType": "VIRTUAL_VIEW", "ViewExpandedText": "/* Presto View */",
        "ViewOriginalText": "/* Presto View: " + base64.b64encode(json.dumps(definition).encode()).decode() + " */",
        "Parameters": {"presto_view": "true", "comment": "Presto View"},
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "int"}, {"Name": "doc", "Type": "string"}]}})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"glue": {"type": "glue", "region": "us-east-1", "endpoint_url": glue_url,
                              "view_format": "athena", "trino_owner": "analyst"}}}))
    imported = run_cli(repo, "import", "--catalog", "glue")
    assert imported.code == 0, imported.text
    doc = yaml.safe_load((repo / "views" / "glue" / "analytics.yaml").read_text())
    assert doc["views"][0]["default_namespace"] == [] and doc["views"][0]["columns"][1]["type"] == "json"
    applied = run_cli(repo, "apply", "--adopt", "--auto-approve", "--allow-dirty")
    assert applied.code == 0, applied.text
    again = run_cli(repo, "plan", "--detailed-exitcode")
    assert again.code == 0, again.text
    stored = decode_envelope(raw_glue.get_table(DatabaseName="analytics", Name="bare")["Table"]["ViewOriginalText"])
    assert "schema" not in stored and stored["originalSql"] == definition["originalSql"]
    assert [c["type"] for c in stored["columns"]] == ["integer", "json"]
    assert stored["owner"] == "analyst" and stored["runAsInvoker"] is False
