"""Legacy VIRTUAL_VIEW formats on Glue (moto_server): Athena/Trino envelope, Spark, Hive --
all through the shared reconciler.adapters.metastore.formats codecs."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from reconciler.adapters.base import WriteContext
from reconciler.adapters.metastore.formats.trino import decode_envelope, encode_envelope
from reconciler.adapters.metastore.glue import GlueAdapter
from reconciler.core.model import Column, Representation, ViewId, ViewSpec
from tests.helpers.glue_support import Writer

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
    spark = make_adapter("spark")
    # The declaration still has trino SQL: the view stays an Athena view (Athena keeps reading it).
    live = writer.update(spark, spark.fetch("analytics").views["big_orders"],
                         both.model_copy(update={"comment": "still athena"}))
    assert live.format == "trino"
    # Without it, the plan refuses to rewrite the view into another engine's format...
    spark_only = spec(dialect="spark")
    errors = spark.check(VIEW, spark_only, live)
    assert [c for c, _ in errors] == ["format_change"]
    assert "athena format" in errors[0][1] and "spark format" in errors[0][1] and "big_orders" in errors[0][1]
    # ...and should update() be called anyway, no stale engine parameter survives the switch.
    spark.update(live, spark.storable(VIEW, spark_only), writer.marker(spark, VIEW, spark_only), WriteContext())
    after = writer.assert_round_trip(spark, VIEW, spark_only)
    assert after.format == "spark"
    assert not any(k.startswith(("presto", "trino")) for k in _stored(db)["Parameters"])


def _foreign_spark_view(db: Any, name: str, sql: str, **extra: Any) -> None:
    """A view as Spark (EMR, Glue jobs) writes it into Glue: no viewsync marker, no extras."""
    from reconciler.adapters.metastore import formats
    from reconciler.adapters.metastore.glue import legacy_codec as glue_legacy

    declared = ViewSpec(columns=[Column(name="order_id", type="bigint"), Column(name="amount", type="decimal(18,2)")],
                        representations=[Representation(dialect="spark", sql=sql)])
    desc = formats.write_view("spark", "analytics", name, declared.resolved(ViewId("glue", "analytics", name)), {})
    desc.parameters = {k: v for k, v in desc.parameters.items() if not k.startswith("viewsync.")}
    table = glue_legacy.to_table_input(desc)
    table.update(extra)
    db.create_table(DatabaseName="analytics", TableInput=table)


def test_spark_view_under_athena_format_stays_spark(
    make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    """Adding a trino representation to a Spark view in an `athena` catalog must not turn it into a
    Presto envelope that Spark can no longer read."""
    _foreign_spark_view(db, "big_orders", SQL)
    adapter = make_adapter("athena")
    live = adapter.fetch("analytics").views["big_orders"]
    assert live.format == "spark" and live.managed_by is None
    declared = spec(representations=[Representation(dialect="spark", sql=SQL),
                                     Representation(dialect="trino", sql=SQL.replace("> 0", ">= 0"))])
    assert adapter.check(VIEW, declared, live) == []
    live = writer.update(adapter, live, declared)  # adopt: update + round-trip invariant
    assert live.format == "spark"
    stored = _stored(db)
    assert stored["ViewOriginalText"] == SQL  # what Spark runs
    assert "presto_view" not in stored["Parameters"]
    assert "spark.sql.create.version" in stored["Parameters"]
    # Spark resolves unqualified names in its session catalog, not in Athena's catalog name
    assert stored["Parameters"]["view.catalogAndNamespace.part.0"] == "spark_catalog"
    assert live.spec.sql_for("trino") == SQL.replace("> 0", ">= 0")  # rides along in the extras

    # A later plan over the managed view agrees with what is stored: no perpetual diff.
    from reconciler.plan.planner import diff_specs

    live = adapter.fetch("analytics").views["big_orders"]
    assert adapter.check(VIEW, declared, live) == []
    assert diff_specs(adapter.storable(VIEW, declared, live), live.spec, rewrites_sql=True) == []

    # Dropping the spark SQL would rewrite it as an Athena view: a plan error naming both formats.
    trino_only = spec()
    errors = adapter.check(VIEW, trino_only, live)
    assert [c for c, _ in errors] == ["format_change"]
    assert "spark format" in errors[0][1] and "athena format" in errors[0][1]
    # a new view (no live one) is written in the catalog's format as before
    assert adapter.check(ViewId("glue", "analytics", "fresh"), trino_only) == []


def test_update_keeps_fields_another_tool_set(
    make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    """A legacy update rebuilds the TableInput: what viewsync never sets must survive it."""
    _foreign_spark_view(
        db, "big_orders", SQL, Description="Curated by the data platform team",
        PartitionKeys=[{"Name": "dt", "Type": "string"}])
    table = _stored(db)
    sd = table["StorageDescriptor"]
    sd["Location"] = "s3://lake/views/big_orders"
    sd["SerdeInfo"] = {**sd.get("SerdeInfo", {}), "Parameters": {"serialization.format": "1"}}
    db.update_table(DatabaseName="analytics", TableInput={
        k: table[k] for k in ("Name", "TableType", "StorageDescriptor", "Parameters", "ViewOriginalText",
                              "ViewExpandedText", "Description", "PartitionKeys")})

    adapter = make_adapter("spark")
    live = adapter.fetch("analytics").views["big_orders"]
    declared = spec(dialect="spark", representations=[Representation(dialect="spark", sql=SQL)])
    live = writer.update(adapter, live, declared)  # adopt
    live = writer.update(adapter, live, declared.model_copy(update={"comment": "changed"}))
    stored = _stored(db)
    assert stored["Description"] == "Curated by the data platform team"
    assert stored["PartitionKeys"] == [{"Name": "dt", "Type": "string"}]
    assert stored["StorageDescriptor"]["Location"] == "s3://lake/views/big_orders"
    assert stored["StorageDescriptor"]["SerdeInfo"]["Parameters"] == {"serialization.format": "1"}
    assert live.spec.comment == "changed"


def test_glue_returning_its_own_encoding_is_no_diff(
    make_adapter: Callable[..., GlueAdapter], db: Any, writer: Writer
) -> None:
    """Terraform AWS provider #49731: for a validated ATHENA representation Glue answers with a
    Presto envelope instead of the submitted SQL. Decoded, it is the same view."""
    from reconciler.plan.planner import diff_specs

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
    from reconciler.plan.planner import diff_specs

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
