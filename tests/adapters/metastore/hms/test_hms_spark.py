"""Views written by viewsync are queried by real Spark; views Spark wrote are read by viewsync."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.adapters.base import Marker, WriteContext
from reconciler.adapters.metastore.hms import HiveMetastoreAdapter
from reconciler.core.model import ViewId, ViewSpec

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

CTX = WriteContext(actor="tester")


@pytest.fixture
def orders(spark: Any, database: str) -> str:
    """A real table with rows, written by Spark."""
    spark.sql(f"CREATE TABLE {database}.orders (customer_id BIGINT, amount DECIMAL(10,2)) USING parquet")
    spark.sql(f"INSERT INTO {database}.orders VALUES (1, 10.50), (1, 4.50), (2, 7.00)")
    return f"{database}.orders"


def apply(adapter: HiveMetastoreAdapter, view: ViewId, spec: ViewSpec) -> ViewSpec:
    want = adapter.storable(view, spec)
    marker = Marker("proj", want.digest())
    live = adapter.fetch(view.schema).views.get(view.name)
    if live is None:
        adapter.create(view, want, marker, CTX)
    else:
        adapter.update(live, want, marker, CTX)
    return want


def test_spark_queries_view_written_by_viewsync(spark: Any, adapter: HiveMetastoreAdapter, database: str,
                                                orders: str) -> None:
    view = ViewId("hive", database, "customer_totals")
    spec = ViewSpec.model_validate({
        "comment": "Totals per customer",
        "columns": [{"name": "Customer_Id", "type": "bigint", "comment": "Customer identifier"},
                    {"name": "Total", "type": "decimal(20,2)"}],
        # Unqualified table: resolved through view.catalogAndNamespace (the view's own database).
        "representations": [{"dialect": "spark", "sql": "SELECT customer_id AS Customer_Id, SUM(amount) AS Total "
                                                         "FROM orders GROUP BY customer_id"},
                            {"dialect": "trino", "sql": "SELECT customer_id, sum(amount) FROM orders GROUP BY 1"}],
        "properties": {"tier": "gold"},
    })
    want = apply(adapter, view, spec)
    rows = spark.sql(f"SELECT * FROM {database}.customer_totals ORDER BY Customer_Id").collect()
    assert [(r["Customer_Id"], float(r["Total"])) for r in rows] == [(1, 15.0), (2, 7.0)]
    # Spark sees the original-case names, comments and the user property.
    schema = spark.table(f"{database}.customer_totals").schema
    assert schema.names == ["Customer_Id", "Total"]
    assert schema["Customer_Id"].metadata.get("comment") == "Customer identifier"
    props = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {database}.customer_totals").collect()}
    assert props.get("tier") == "gold"
    assert adapter.fetch(database).views["customer_totals"].spec.digest() == want.digest()

    # Change the SQL, apply (update): Spark returns the new result at once.
    changed = ViewSpec.model_validate(spec.model_dump() | {"representations": [
        {"dialect": "spark", "sql": "SELECT customer_id AS Customer_Id, MAX(amount) AS Total FROM orders "
                                    "GROUP BY customer_id"},
        {"dialect": "trino", "sql": "SELECT customer_id, max(amount) FROM orders GROUP BY 1"}]})
    want = apply(adapter, view, changed)
    rows = spark.sql(f"SELECT * FROM {database}.customer_totals ORDER BY Customer_Id").collect()
    assert [(r["Customer_Id"], float(r["Total"])) for r in rows] == [(1, 10.5), (2, 7.0)]
    assert adapter.fetch(database).views["customer_totals"].spec.digest() == want.digest()


def test_view_created_by_spark_is_read_and_adopted(spark: Any, adapter: HiveMetastoreAdapter, database: str,
                                                   orders: str) -> None:
    sql = ("SELECT customer_id AS CustomerId, SUM(amount) AS TotalAmount FROM orders GROUP BY customer_id")
    spark.sql(f"USE {database}")
    spark.sql(f"CREATE VIEW {database}.spark_v (CustomerId COMMENT 'The customer', TotalAmount COMMENT 'Sum') "
              f"COMMENT 'made by Spark' TBLPROPERTIES ('team' = 'core') AS {sql}")
    spark.sql("USE default")
    hive_before = adapter.fetch(database).views["spark_v"]
    assert hive_before.format == "spark"
    assert hive_before.managed_by is None  # unmanaged
    s = hive_before.spec
    assert s.dialects() == ["spark"]
    assert s.sql_for("spark") == sql
    assert [(c.name, c.comment) for c in s.columns] == [("CustomerId", "The customer"), ("TotalAmount", "Sum")]
    assert [c.type for c in s.columns] == ["bigint", "decimal(20,2)"]
    assert s.comment == "made by Spark"
    assert s.properties == {"team": "core"}
    assert s.default_namespace == [database]

    # Declared as-is and adopted (update stamps the marker): the next plan is empty.
    declared = ViewSpec.model_validate(s.model_dump())
    want = adapter.storable(hive_before.id, declared)
    assert want.digest() == s.digest()
    adapter.update(hive_before, want, Marker("proj", want.digest()), CTX)
    after = adapter.fetch(database).views["spark_v"]
    assert after.managed_by == "proj" and after.spec_digest == want.digest()
    assert after.spec.digest() == want.digest()
    # Spark's own bookkeeping survives the adoption, and Spark still reads the view.
    table_params = after.handle.table.parameters
    assert "spark.sql.create.version" in table_params
    assert any(k.startswith("view.sqlConfig.") for k in table_params) or "view.schemaMode" in table_params
    rows = spark.sql(f"SELECT * FROM {database}.spark_v ORDER BY CustomerId").collect()
    assert [(r["CustomerId"], float(r["TotalAmount"])) for r in rows] == [(1, 15.0), (2, 7.0)]


def test_hive_native_view_written_by_viewsync_is_read_by_spark(
        spark: Any, make_adapter: Any, database: str, orders: str) -> None:
    adapter = make_adapter("hive")
    view = ViewId("hive", database, "hive_v")
    spec = ViewSpec.model_validate({
        "columns": [{"name": "customer_id", "type": "bigint"}, {"name": "n", "type": "bigint"}],
        "representations": [{"dialect": "hive", "sql": "SELECT customer_id, count(*) AS n FROM orders "
                                                        "GROUP BY customer_id"}],
    })
    want = apply(adapter, view, spec)
    live = adapter.fetch(database).views["hive_v"]
    assert live.format == "hive"
    assert live.spec.digest() == want.digest()
    rows = spark.sql(f"SELECT * FROM {database}.hive_v ORDER BY customer_id").collect()
    assert [(r["customer_id"], r["n"]) for r in rows] == [(1, 2), (2, 1)]


def test_unmanaged_views_are_never_written(spark: Any, adapter: HiveMetastoreAdapter, database: str,
                                           orders: str, hms_client: Any) -> None:
    spark.sql(f"CREATE VIEW {database}.legacy AS SELECT customer_id FROM {database}.orders")
    before = hms_client.get_table(database, "legacy")
    # Reads and writes of other views leave the unmanaged one byte-identical.
    apply(adapter, ViewId("hive", database, "other"), ViewSpec.model_validate({
        "columns": [{"name": "a", "type": "int"}], "representations": [{"dialect": "spark", "sql": "SELECT 1 AS a"}]}))
    snap = adapter.fetch(database)
    assert snap.views["legacy"].managed_by is None
    assert snap.views["other"].managed_by == "proj"
    assert hms_client.get_table(database, "legacy") == before
    assert snap.tables == {"orders"}


@pytest.mark.parametrize("write_format", ["spark", "hive"])
def test_column_with_surrounding_spaces_is_read_by_spark(spark: Any, make_adapter: Any, database: str,
                                                        orders: str, write_format: str) -> None:
    """`order count ` (trailing space) as Spark names it: stored in either format, read back as
    declared, and Spark queries the column by that name."""
    adapter = make_adapter(write_format)
    view = ViewId("hive", database, f"counts_{write_format}")
    sql = "SELECT customer_id, count(*) AS `order count ` FROM orders GROUP BY customer_id"
    spec = ViewSpec.model_validate({
        "columns": [{"name": "customer_id", "type": "bigint"}, {"name": "order count ", "type": "bigint"}],
        "representations": [{"dialect": write_format, "sql": sql}]})
    want = apply(adapter, view, spec)
    live = adapter.fetch(database).views[view.name]
    assert live.spec.digest() == want.digest()
    assert [c.name for c in live.spec.columns] == ["customer_id", "order count "]
    rows = spark.sql(f"SELECT customer_id, `order count ` FROM {database}.{view.name} ORDER BY 1").collect()
    assert [(r["customer_id"], r["order count "]) for r in rows] == [(1, 2), (2, 1)]
