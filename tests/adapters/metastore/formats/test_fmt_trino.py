"""Trino envelope: golden vector from Trino's documented JSON fields, and round trips."""

from __future__ import annotations

import base64
import json

import pytest

from reconciler.adapters.metastore.formats import FormatError, TableDesc, detect, read_view, trino, write_view
from reconciler.core.model import ViewId, ViewSpec

# Written by hand from Trino's ConnectorViewDefinition fields (not produced by our encoder).
GOLDEN_JSON = {
    "originalSql": "SELECT o.custkey, sum(o.totalprice) AS total FROM orders o GROUP BY o.custkey",
    "catalog": "hive",
    "schema": "tpch",
    "columns": [
        {"name": "custkey", "type": "bigint", "comment": "customer key"},
        {"name": "total", "type": "decimal(18,2)"},
        {"name": "name", "type": "varchar"},
        {"name": "tags", "type": "array(varchar(10))"},
        {"name": "at", "type": "timestamp(3) with time zone"},
        {"name": "pt", "type": "row(\"x\" integer,\"y\" double)"},
    ],
    "comment": "Totals per customer",
    "owner": "alice",
    "runAsInvoker": False,
}
GOLDEN_TEXT = "/* Presto View: " + base64.b64encode(json.dumps(GOLDEN_JSON).encode()).decode() + " */"

EXPECTED = ViewSpec(
    comment="Totals per customer",
    columns=[
        {"name": "custkey", "type": "bigint", "comment": "customer key"},
        {"name": "total", "type": "decimal(18,2)"},
        {"name": "name", "type": "string"},
        {"name": "tags", "type": "array<varchar(10)>"},
        {"name": "at", "type": "timestamp_ltz(3)"},
        {"name": "pt", "type": "struct<x:int,y:double>"},
    ],  # type: ignore[list-item]
    representations=[{"dialect": "trino", "sql": GOLDEN_JSON["originalSql"]}],  # type: ignore[list-item]
    default_catalog="hive",
    default_namespace=["tpch"],
    security="definer",
    owner="alice",
)


def golden_table() -> TableDesc:
    return TableDesc(
        database="tpch", name="cust_totals", view_original_text=GOLDEN_TEXT,
        view_expanded_text="/* Presto View */",
        parameters={"presto_view": "true", "comment": "Presto View",
                    "trino_created_by": "Trino Hive connector",
                    "trino_version": "476", "trino_query_id": "20250101_000000_00000_abcde",
                    "transient_lastDdlTime": "1700000000"},
        owner="alice",
    )


def test_golden_vector_decodes_to_expected_spec() -> None:
    table = golden_table()
    assert detect(table) == "trino"
    read = read_view(table)
    assert read.format == "trino"
    assert read.writable
    assert read.managed_by is None
    assert read.spec == EXPECTED


def test_golden_vector_reencodes_with_same_json_fields() -> None:
    doc = trino.to_definition(EXPECTED)
    payload = trino.decode_envelope(trino.encode_envelope(doc))
    assert set(payload) == set(GOLDEN_JSON)
    for key in ("originalSql", "catalog", "schema", "comment", "owner", "runAsInvoker"):
        assert payload[key] == GOLDEN_JSON[key]
    assert [c["name"] for c in payload["columns"]] == [c["name"] for c in GOLDEN_JSON["columns"]]
    # Types are Trino signatures that parse back to the same canonical types.
    assert trino.from_definition(payload) == EXPECTED


def test_encoded_table_has_trino_envelope_and_parameters() -> None:
    table = write_view("trino", "tpch", "cust_totals", EXPECTED, {"viewsync.managed-by": "p"})
    assert table.view_original_text is not None
    assert table.view_original_text.startswith("/* Presto View: ")
    assert table.view_original_text.endswith(" */")
    assert table.view_expanded_text == "/* Presto View */"
    assert table.parameters["presto_view"] == "true"
    assert table.parameters["comment"] == "Presto View"
    assert [c.name for c in table.columns] == ["dummy"]
    # Everything Trino holds is in the envelope: nothing left over for the extras.
    assert "viewsync.extra" not in table.parameters
    assert read_view(table).spec == EXPECTED


def test_invoker_view_has_no_owner_in_json_but_reads_back_exactly() -> None:
    spec = EXPECTED.model_copy(update={"security": "invoker"})
    doc = trino.to_definition(spec)
    assert doc["runAsInvoker"] is True
    assert "owner" not in doc
    table = write_view("trino", "tpch", "v", spec, {})
    assert read_view(table).spec == spec


def test_multi_dialect_spec_round_trips_through_trino_format() -> None:
    spec = ViewSpec.model_validate({
        "comment": "c", "columns": [{"name": "A", "type": "int", "comment": "x" * 300}],
        "representations": [{"dialect": "trino", "sql": "SELECT 1 AS A"},
                            {"dialect": "spark", "sql": "SELECT 1 AS A"}],
        "default_namespace": ["a", "b"], "properties": {"tier": "gold", "comment": "user comment key"},
    }).resolved(ViewId("c", "s", "v"))
    table = write_view("trino", "s", "v", spec, {})
    # Trino cannot hold a nested namespace: no catalog/schema in the JSON.
    doc = trino.decode_envelope(table.view_original_text or "")
    assert "schema" not in doc and "catalog" not in doc
    assert read_view(table).spec.digest() == spec.digest()


def test_materialized_view_is_recognised_and_not_writable() -> None:
    doc = dict(GOLDEN_JSON, storageTable="st_123")
    table = golden_table()
    table.view_original_text = trino.encode_envelope(doc, trino.MV_PREFIX)
    table.parameters["comment"] = "Presto Materialized View"
    assert detect(table) == "trino-materialized-view"
    read = read_view(table)
    assert read.format == "trino-materialized-view"
    assert not read.writable
    assert read.spec.sql_for("trino") == GOLDEN_JSON["originalSql"]


@pytest.mark.parametrize("text", ["/* Presto View: not-base64!! */", "/* Presto View: " +
                                  base64.b64encode(b"[1,2]").decode() + " */", "SELECT 1"])
def test_damaged_envelope_raises_format_error(text: str) -> None:
    table = golden_table()
    table.view_original_text = text
    with pytest.raises(FormatError):
        read_view(table)
