"""Legacy VIRTUAL_VIEW formats on Glue (moto_server): Athena/Trino envelope, Spark, Hive --
all through the shared reconciler.formats codecs."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from glue_support import Writer

from reconciler.adapters.base import WriteContext
from reconciler.adapters.glue import GlueAdapter
from reconciler.formats.trino import decode_envelope, encode_envelope
from reconciler.model import Column, Representation, ViewId, ViewSpec

SQL = "SELECT id AS order_id, amount FROM sales.orders WHERE amount > 0"
VIEW = ViewId("glue", "analytics", "big_orders")


def spec(dialect: str = "trino", **changes: Any) -> ViewSpec:
    base = ViewSpec(
        comment="Orders above zero",
        columns=[Column(name="order_id", type="bigint", comment="Order id"),
                 Column(name="amount", type="decimal(18,2)")],
        representations=[Representation(dialect=dialect, sql=SQL)],
        properties={"tier": "silver"},
    )
    return base.model_copy(update=changes)


def athena_view(name: str, sql: str) -> dict[str, Any]:
    """A view the way Athena's CREATE VIEW stores it in Glue."""
    definition = {"originalSql": sql, "catalog": "awsdatacatalog", "schema": "analytics",
                  "columns": [{"name": "x", "type": "integer"}]}
    text = "/* Presto View: " + base64.b64encode(json.dumps(definition).encode()).decode() + " */"
    return {"Name": name, "TableType": "VIRTUAL_VIEW", "ViewOriginalText": text,
            "ViewExpandedText": "/* Presto View */", "Parameters": {"presto_view": "true", "comment": "Presto View"},
            "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}]}}


@pytest.fixture
def db(raw_glue: Any) -> Any:
    raw_glue.create_database(DatabaseInput={"Name": "analytics"})
    return raw_glue


def _stored(raw_glue: Any, name: str = "big_orders") -> dict[str, Any]:
    table: dict[str, Any] = raw_glue.get_table(DatabaseName="analytics", Name=name)["Table"]
    return table


def test_athena_lifecycle(make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer) -> None:
    adapter = make_adapter("athena")
    db.create_table(DatabaseName="analytics", TableInput=athena_view("someone_elses", "SELECT 1 AS x"))
    db.create_table(DatabaseName="analytics", TableInput={
        "Name": "orders", "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": "s3://b/o/"}})
    untouched = _stored(db, "someone_elses")

    live = writer.create(adapter, VIEW, spec())
    assert live.format == "trino"
    stored = _stored(db)
    assert stored["TableType"] == "VIRTUAL_VIEW"
    assert stored["Parameters"]["presto_view"] == "true" and stored["Parameters"]["comment"] == "Presto View"
    assert stored["ViewExpandedText"] == "/* Presto View */"
    # Athena's convention: the real columns in the StorageDescriptor, Hive types
    assert stored["StorageDescriptor"]["Columns"] == [{"Name": "order_id", "Type": "bigint", "Comment": "Order id"},
                                                      {"Name": "amount", "Type": "decimal(18,2)"}]

    live = writer.update(adapter, live, spec(representations=[
        Representation(dialect="trino", sql=SQL.replace("> 0", ">= 10"))]))
    assert ">= 10" in (live.spec.sql_for("trino") or "")
    live = writer.update(adapter, live, spec(properties={"tier": "gold", "team": "finance"}))
    assert live.spec.properties == {"tier": "gold", "team": "finance"}

    snap = adapter.fetch("analytics")
    assert snap.tables == {"orders"}
    other = snap.views["someone_elses"]
    assert other.managed_by is None and other.format == "trino"
    assert other.spec.sql_for("trino") == "SELECT 1 AS x"

    history = adapter.native_history(VIEW)
    assert [v.version for v in history] == ["1", "2", "3"] and history[-1].dialects == ("trino",)
    adapter.drop(live, WriteContext())
    snap = adapter.fetch("analytics")
    assert set(snap.views) == {"someone_elses"} and snap.tables == {"orders"}
    assert _stored(db, "someone_elses") == untouched  # never written: same version, same content


def test_athena_view_decodes_with_the_shared_trino_codec(
    make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    writer.create(make_adapter("athena"), VIEW, spec())
    doc = decode_envelope(_stored(db)["ViewOriginalText"])  # the function HMS uses
    assert doc["originalSql"] == SQL
    assert doc["catalog"] == "awsdatacatalog" and doc["schema"] == "analytics"
    assert doc["columns"] == [{"name": "order_id", "type": "bigint", "comment": "Order id"},
                              {"name": "amount", "type": "decimal(18,2)"}]


def test_declared_athena_reads_back_as_athena(
    make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    live = writer.create(make_adapter("athena"), VIEW, spec(dialect="athena"))
    assert live.spec.dialects() == ["athena"]
    assert decode_envelope(_stored(db)["ViewOriginalText"])["originalSql"] == SQL


@pytest.mark.parametrize("fmt", ["spark", "hive"])
def test_spark_and_hive_formats(
    fmt: str, make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    adapter = make_adapter(fmt)
    declared = spec(dialect=fmt, representations=[Representation(dialect=fmt, sql=SQL),
                                                  Representation(dialect="trino", sql=SQL)])
    live = writer.create(adapter, VIEW, declared)
    assert live.format == fmt
    stored = _stored(db)
    assert stored["ViewOriginalText"] == SQL
    assert ("spark.sql.create.version" in stored["Parameters"]) == (fmt == "spark")
    assert "viewsync.extra" in stored["Parameters"]  # the trino SQL rides along, as on HMS
    live = writer.update(adapter, live, declared.model_copy(update={"comment": "changed"}))
    assert live.spec.comment == "changed"


def test_format_switch_leaves_no_stale_engine_parameters(
    make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    both = spec(representations=[Representation(dialect="trino", sql=SQL), Representation(dialect="spark", sql=SQL)])
    live = writer.create(make_adapter("athena"), VIEW, both)
    live = writer.update(make_adapter("spark"), live, both.model_copy(update={"comment": "now spark"}))
    assert live.format == "spark"
    assert not any(k.startswith(("presto", "trino")) for k in _stored(db)["Parameters"])


def test_check_needs_the_formats_dialect(make_adapter: Callable[..., GlueAdapter], db: Any) -> None:
    errors = make_adapter("athena").check(VIEW, spec(dialect="spark"))
    assert [c for c, _ in errors] == ["dialect_not_storable"]
    assert "'trino' or 'athena'" in errors[0][1] and "big_orders" in errors[0][1]
    assert [c for c, _ in make_adapter("hive").check(VIEW, spec())] == ["dialect_not_storable"]
    assert [c for c, _ in make_adapter("athena").check(VIEW, spec(columns=[]))] == ["columns_required"]


def test_glue_returning_its_own_encoding_is_no_diff(
    make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    """Terraform AWS provider #49731: for a validated ATHENA representation Glue answers with a
    Presto envelope instead of the submitted SQL. Decoded, it is the same view."""
    from reconciler.plan import diff_specs

    adapter = make_adapter("multi-dialect")
    declared = spec(representations=[Representation(dialect="trino", sql=SQL),
                                     Representation(dialect="spark", sql=SQL)])
    writer.create(adapter, VIEW, declared)
    stored = _stored(db)
    reps = stored["ViewDefinition"]["Representations"]
    for rep in reps:
        if rep["Dialect"] == "ATHENA":
            rep["ViewOriginalText"] = encode_envelope({"originalSql": SQL, "catalog": "awsdatacatalog",
                                                       "schema": "analytics", "columns": []})
            rep["ViewExpandedText"] = "/* Presto View */"
    db.update_table(DatabaseName="analytics", TableInput={
        k: stored[k] for k in ("Name", "TableType", "StorageDescriptor", "Parameters", "ViewDefinition",
                               "Description")})
    live = adapter.fetch("analytics").views["big_orders"]
    assert live.spec.sql_for("trino") == SQL
    assert live.spec.digest() == adapter.storable(VIEW, declared).digest()

    # Athena may also reformat the text it keeps: the plan compares normalised SQL.
    rewritten = "select id as order_id, amount\nfrom sales.orders\nwhere amount > 0"
    for rep in reps:
        if rep["Dialect"] == "ATHENA":
            rep["ViewOriginalText"] = encode_envelope({"originalSql": rewritten, "columns": []})
    db.update_table(DatabaseName="analytics", TableInput={
        k: stored[k] for k in ("Name", "TableType", "StorageDescriptor", "Parameters", "ViewDefinition",
                               "Description")})
    live = adapter.fetch("analytics").views["big_orders"]
    assert live.spec.sql_for("trino") == rewritten
    assert diff_specs(adapter.storable(VIEW, declared), live.spec, adapter.capabilities.rewrites_sql) == []


def test_adopting_an_athena_view_needs_no_cosmetic_changes(
    make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    """A declaration matching what Athena wrote plans no field change; adoption stamps the marker."""
    from reconciler.plan import diff_specs

    adapter = make_adapter("athena")
    db.create_table(DatabaseName="analytics", TableInput=athena_view("athena_made", "SELECT 1 AS x"))
    declared = ViewSpec(columns=[Column(name="x", type="int")],
                        representations=[Representation(dialect="trino", sql="SELECT 1 AS x")])
    view = ViewId("glue", "analytics", "athena_made")
    live = adapter.fetch("analytics").views["athena_made"]
    assert live.spec.default_catalog == "awsdatacatalog"
    assert diff_specs(adapter.storable(view, declared), live.spec, rewrites_sql=True) == []
    adopted = writer.update(adapter, live, declared)
    assert adopted.spec.default_catalog == "awsdatacatalog"
