"""Multi-dialect Data Catalog views against a moto_server process."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reconciler.adapters.base import ConflictError, WriteContext
from reconciler.adapters.metastore.glue import GlueAdapter
from reconciler.core.model import Column, Representation, ViewId, ViewSpec
from tests.helpers.glue_support import Writer

TRINO_SQL = "SELECT customer_id, sum(amount) AS total FROM sales.orders GROUP BY customer_id"
SPARK_SQL = "SELECT customer_id, SUM(amount) AS total FROM sales.orders GROUP BY customer_id"
HIVE_SQL = "SELECT customer_id, sum(amount) total FROM sales.orders GROUP BY customer_id"

VIEW = ViewId("glue", "analytics", "customer_summary")


def spec(**changes: Any) -> ViewSpec:
    base = ViewSpec(
        comment="Aggregated customer data",
        columns=[Column(name="customer_id", type="bigint", comment="Customer identifier"),
                 Column(name="total", type="decimal(18,2)"),
                 Column(name="seen_at", type="timestamp_ltz")],
        representations=[Representation(dialect="trino", sql=TRINO_SQL + "\n"),
                         Representation(dialect="spark", sql=SPARK_SQL),
                         Representation(dialect="hive", sql=HIVE_SQL)],
        owner="data-team",
        properties={"tier": "gold"},
    )
    return base.model_copy(update=changes)


@pytest.fixture
def adapter(make_adapter: Callable[..., GlueAdapter], raw_glue: Any) -> GlueAdapter:
    raw_glue.create_database(DatabaseInput={"Name": "analytics"})
    return make_adapter("multi-dialect")


def test_lifecycle(adapter: GlueAdapter, raw_glue: Any, writer: Writer) -> None:
    live = writer.create(adapter, VIEW, spec())
    assert live.format == "glue-multi-dialect"
    stored = raw_glue.get_table(DatabaseName="analytics", Name="customer_summary")["Table"]
    reps = {r["Dialect"]: r for r in stored["ViewDefinition"]["Representations"]}
    assert set(reps) == {"ATHENA", "SPARK"}  # hive has no Glue dialect: kept in a parameter
    assert reps["ATHENA"]["ViewOriginalText"] == TRINO_SQL
    assert "ViewExpandedText" not in reps["ATHENA"]  # Glue rejects it for ATHENA
    assert HIVE_SQL in stored["Parameters"]["viewsync.extra"]  # the shared extras, as on HMS
    assert stored["StorageDescriptor"]["Columns"][2] == {"Name": "seen_at", "Type": "timestamp"}
    # timestamp_ltz is stored as a Hive timestamp; storable() says so up front
    assert live.spec.columns[2].type == "timestamp"
    assert live.native_version == "1"

    # update SQL
    new_trino = TRINO_SQL.replace("sum(amount)", "sum(amount * 2)")
    changed = spec(representations=[Representation(dialect="trino", sql=new_trino),
                                    Representation(dialect="spark", sql=SPARK_SQL),
                                    Representation(dialect="hive", sql=HIVE_SQL)])
    live = writer.update(adapter, live, changed)
    assert live.spec.sql_for("trino") == new_trino
    assert live.native_version == "2"

    # update properties: a removed property disappears, a foreign internal parameter survives
    raw_table = raw_glue.get_table(DatabaseName="analytics", Name="customer_summary")["Table"]
    params = dict(raw_table["Parameters"], transient_lastDdlTime="1700000000")
    raw_glue.update_table(DatabaseName="analytics", TableInput={
        k: v for k, v in raw_table.items()
        if k in ("Name", "TableType", "StorageDescriptor", "ViewDefinition", "Description", "Owner")
    } | {"Parameters": params})
    live = adapter.fetch("analytics").views["customer_summary"]
    live = writer.update(adapter, live, changed.model_copy(update={"properties": {"team": "growth"}}))
    assert live.spec.properties == {"team": "growth"}
    stored = raw_glue.get_table(DatabaseName="analytics", Name="customer_summary")["Table"]
    assert stored["Parameters"]["transient_lastDdlTime"] == "1700000000"
    assert "tier" not in stored["Parameters"]

    # drop
    adapter.drop(live, WriteContext())
    snap = adapter.fetch("analytics")
    assert "customer_summary" not in snap.views
    assert snap.tables == set()


def test_dialect_names_read_back_as_declared(adapter: GlueAdapter, raw_glue: Any, writer: Writer) -> None:
    # Both names declared: trino holds the ATHENA slot, athena is kept in the extras.
    both = spec(representations=[Representation(dialect="athena", sql=TRINO_SQL + " LIMIT 5"),
                                 Representation(dialect="trino", sql=TRINO_SQL),
                                 Representation(dialect="redshift", sql=TRINO_SQL)])
    live = writer.create(adapter, VIEW, both)
    assert sorted(live.spec.dialects()) == ["athena", "redshift", "trino"]
    assert live.spec.sql_for("athena") == TRINO_SQL + " LIMIT 5"
    stored = raw_glue.get_table(DatabaseName="analytics", Name="customer_summary")["Table"]
    reps = {r["Dialect"]: r["ViewOriginalText"] for r in stored["ViewDefinition"]["Representations"]}
    assert reps == {"ATHENA": TRINO_SQL, "REDSHIFT": TRINO_SQL}

    # Only `athena` declared: it holds ATHENA and reads back as athena, not trino.
    only_athena = spec(representations=[Representation(dialect="athena", sql=TRINO_SQL)])
    live = writer.update(adapter, live, only_athena)
    assert live.spec.dialects() == ["athena"]
    stored = raw_glue.get_table(DatabaseName="analytics", Name="customer_summary")["Table"]
    assert stored["Parameters"]["viewsync.athena-dialect"] == "athena"


def test_dropping_a_native_dialect(adapter: GlueAdapter, raw_glue: Any, writer: Writer) -> None:
    live = writer.create(adapter, VIEW, spec())
    only_trino = spec(representations=[Representation(dialect="trino", sql=TRINO_SQL)])
    writer.update(adapter, live, only_trino)
    stored = raw_glue.get_table(DatabaseName="analytics", Name="customer_summary")["Table"]
    assert [r["Dialect"] for r in stored["ViewDefinition"]["Representations"]] == ["ATHENA"]
    assert "viewsync.extra" not in stored["Parameters"]


def test_default_namespace_and_catalog_round_trip(adapter: GlueAdapter, writer: Writer) -> None:
    live = writer.create(adapter, VIEW, spec(default_catalog="awsdatacatalog", default_namespace=["sales"]))
    assert live.spec.default_namespace == ["sales"]
    assert live.spec.default_catalog == "awsdatacatalog"


def test_unmanaged_view_read_but_never_written(adapter: GlueAdapter, raw_glue: Any) -> None:
    raw_glue.create_table(DatabaseName="analytics", TableInput={
        "Name": "legacy_v", "TableType": "VIRTUAL_VIEW", "Description": "someone else's",
        "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}]},
        "Parameters": {"owner_team": "bi"},
        "ViewDefinition": {"Representations": [{"Dialect": "ATHENA", "ViewOriginalText": "SELECT 1 AS x"},
                                               {"Dialect": "REDSHIFT", "ViewOriginalText": "SELECT 1 AS x"}]},
    })
    live = adapter.fetch("analytics").views["legacy_v"]
    assert live.managed_by is None and live.spec_digest is None
    assert sorted(live.spec.dialects()) == ["redshift", "trino"]  # ATHENA reads back as trino
    assert live.spec.properties == {"owner_team": "bi"}
    assert live.spec.default_namespace == ["analytics"]


def test_tables_and_views_in_one_database(adapter: GlueAdapter, raw_glue: Any, writer: Writer) -> None:
    raw_glue.create_table(DatabaseName="analytics", TableInput={
        "Name": "orders", "TableType": "EXTERNAL_TABLE",
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": "s3://b/orders"},
    })
    writer.create(adapter, VIEW, spec())
    snap = adapter.fetch("analytics")
    assert snap.tables == {"orders"}
    assert set(snap.views) == {"customer_summary"}


def test_missing_database(adapter: GlueAdapter) -> None:
    snap = adapter.fetch("nope")
    assert not snap.exists
    assert adapter.list_schemas() == ["analytics"]


def test_drop_refuses_a_view_changed_since_fetch(adapter: GlueAdapter, raw_glue: Any, writer: Writer) -> None:
    live = writer.create(adapter, VIEW, spec())
    table = raw_glue.get_table(DatabaseName="analytics", Name="customer_summary")["Table"]
    raw_glue.update_table(DatabaseName="analytics", TableInput={
        k: v for k, v in table.items()
        if k in ("Name", "TableType", "StorageDescriptor", "ViewDefinition", "Parameters")})
    with pytest.raises(ConflictError, match="changed since the plan"):
        adapter.drop(live, WriteContext())
    assert "customer_summary" in adapter.fetch("analytics").views


def test_native_history(adapter: GlueAdapter, writer: Writer) -> None:
    live = writer.create(adapter, VIEW, spec())
    writer.update(adapter, live, spec(comment="v2"))
    history = adapter.native_history(VIEW)
    assert [v.version for v in history] == ["1", "2"]
    assert history[-1].summary["viewsync.managed-by"] == "t"
    assert history[-1].dialects == ("ATHENA", "SPARK")
    assert adapter.native_history(ViewId("glue", "analytics", "missing")) == []


def test_check_errors(adapter: GlueAdapter) -> None:
    hive_only = spec(representations=[Representation(dialect="hive", sql="x")])
    codes = {c for c, _ in adapter.check(VIEW, hive_only)}
    assert codes == {"dialect_not_storable"}
    codes = {c for c, _ in adapter.check(VIEW, spec(security="invoker", columns=[]))}
    assert codes == {"security_not_storable", "columns_required"}
    long_sql = "SELECT 1 AS customer_id" + " " * 10 + "/*" + "x" * 410_000 + "*/"
    errors = adapter.check(VIEW, spec(representations=[Representation(dialect="trino", sql=long_sql)]))
    assert [c for c, _ in errors] == ["value_too_long"]
    assert "'glue'" in errors[0][1] and "customer_summary" in errors[0][1]


def test_what_glue_cannot_hold_reads_back_exactly(adapter: GlueAdapter, raw_glue: Any, writer: Writer) -> None:
    """Mixed-case columns, long comments and owners go to the extras and come back."""
    odd = spec(columns=[Column(name="CustomerId", type="bigint", comment="c" * 300),
                        Column(name="total", type="decimal(18,2)")],
               comment="d" * 3000, owner="o" * 300)
    live = writer.create(adapter, VIEW, odd)
    assert live.spec.columns[0].name == "CustomerId"
    stored = raw_glue.get_table(DatabaseName="analytics", Name="customer_summary")["Table"]
    assert "Description" not in stored and "Owner" not in stored
    assert "Comment" not in stored["StorageDescriptor"]["Columns"][0]


def test_view_names_are_stored_lower_case(adapter: GlueAdapter, raw_glue: Any) -> None:
    view = ViewId("glue", "analytics", "Daily_Totals")
    writer = Writer()
    adapter.create(view, adapter.storable(view, spec()), writer.marker(adapter, view, spec()), WriteContext())
    assert raw_glue.get_table(DatabaseName="analytics", Name="daily_totals")["Table"]["Name"] == "daily_totals"


def test_fetch_from_several_threads(adapter: GlueAdapter, raw_glue: Any, writer: Writer) -> None:
    from concurrent.futures import ThreadPoolExecutor

    schemas = [f"db{i}" for i in range(6)]
    for db in schemas:
        raw_glue.create_database(DatabaseInput={"Name": db})
        writer.create(adapter, ViewId("glue", db, "v"), spec())
    adapter.calls = 0
    with ThreadPoolExecutor(max_workers=6) as pool:
        snaps = list(pool.map(adapter.fetch, schemas * 3))
    assert [s.schema for s in snaps] == schemas * 3
    assert all(set(s.views) == {"v"} and s.views["v"].managed_by == "t" for s in snaps)
    assert adapter.calls == 18  # one get_tables page per fetch, counted under the lock
