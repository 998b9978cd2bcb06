"""Real Spark 4.3 reads every view viewsync writes in the Spark format (names, types, comments,
rows), and viewsync adopts the views Spark writes with no diff (issue 11)."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.adapters.base import Marker, WriteContext
from reconciler.adapters.metastore.hms import HiveMetastoreAdapter
from reconciler.core.model import ViewId, ViewSpec

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

CTX = WriteContext(actor="tester", git_commit="c0ffee")


@pytest.fixture
def people(spark: Any, database: str) -> str:
    spark.sql(f"CREATE TABLE {database}.people (id BIGINT, name STRING, "
              f"addr STRUCT<city: STRING, zip: VARCHAR(10)>, amount DECIMAL(10,2)) USING parquet")
    spark.sql(f"INSERT INTO {database}.people VALUES (1, 'ann', named_struct('city', 'Oslo', 'zip', '0150'), 2.50), "
              f"(2, 'bob', named_struct('city', 'Rome', 'zip', '00100'), 7.25)")
    return f"{database}.people"


def write(adapter: HiveMetastoreAdapter, view: ViewId, spec: ViewSpec) -> ViewSpec:
    assert adapter.check(view, spec) == []
    want = adapter.storable(view, spec)
    live = adapter.fetch(view.schema).views.get(view.name)
    if live is None:
        adapter.create(view, want, Marker("proj", want.digest()), CTX)
    else:
        adapter.update(live, want, Marker("proj", want.digest()), CTX)
    after = adapter.fetch(view.schema).views[view.name]
    assert after.spec.digest() == want.digest() and after.managed_by == "proj"  # the next plan is empty
    return want


def view_spec(sql: str, columns: list[dict[str, Any]], **over: Any) -> ViewSpec:
    return ViewSpec.model_validate({"columns": columns, "representations": [{"dialect": "spark", "sql": sql}],
                                    **over})


@pytest.mark.parametrize(("sql", "columns", "rows"), [
    # an expression without a name, declared with one
    ("SELECT id, upper(name) FROM people ORDER BY id",
     [{"name": "id", "type": "bigint", "comment": "person"}, {"name": "uname", "type": "string"}],
     [(1, "ANN"), (2, "BOB")]),
    # the query names it u, the view calls it uname
    ("SELECT id, upper(name) AS u FROM people ORDER BY id",
     [{"name": "id", "type": "bigint"}, {"name": "uname", "type": "string", "comment": "upper name"}],
     [(1, "ANN"), (2, "BOB")]),
    # declared narrower than the query (bigint -> int, decimal(10,2) -> decimal(6,1)): COMPENSATION casts
    ("SELECT id, amount FROM people ORDER BY id",
     [{"name": "id", "type": "int"}, {"name": "amount", "type": "decimal(6,1)"}],
     [(1, 2.5), (2, 7.3)]),
    # a struct with a nested varchar
    ("SELECT id, addr FROM people ORDER BY id",
     [{"name": "id", "type": "bigint"}, {"name": "addr", "type": "struct<city:string,zip:varchar(10)>"}],
     [(1, ("Oslo", "0150")), (2, ("Rome", "00100"))]),
], ids=["unnamed-expression", "renamed-output", "narrower-type", "nested-varchar"])
def test_spark_reads_what_viewsync_writes(spark: Any, adapter: HiveMetastoreAdapter, database: str, people: str,
                                          hms_client: Any, sql: str, columns: list[dict[str, Any]],
                                          rows: list[Any]) -> None:
    view = ViewId("hive", database, "v")
    write(adapter, view, view_spec(sql, columns, comment="people view"))
    df = spark.table(f"{database}.v")
    assert df.schema.names == [c["name"] for c in columns]
    for col in columns:
        assert df.schema[col["name"]].metadata.get("comment") == col.get("comment")
    got = [tuple(tuple(v) if hasattr(v, "__fields__") else (float(v) if hasattr(v, "as_tuple") else v)
                 for v in r) for r in df.collect()]
    assert got == rows
    params = hms_client.get_table(database, "v").parameters  # Spark hides view.* from SHOW TBLPROPERTIES
    assert params["view.schemaMode"] == "COMPENSATION"
    assert params["view.sqlConfig.spark.sql.session.timeZone"] == "UTC"


def test_views_spark_writes_are_adopted_with_no_diff(spark: Any, adapter: HiveMetastoreAdapter, database: str,
                                                     people: str, hms_client: Any) -> None:
    spark.sql(f"USE {database}")
    try:
        spark.sql("CREATE VIEW renamed (id COMMENT 'key', uname) COMMENT 'c' TBLPROPERTIES ('team'='core') "
                  "AS SELECT id, upper(name) AS u FROM people")
        spark.sql("CREATE VIEW nested AS SELECT id, addr, CAST(name AS VARCHAR(5)) AS vn FROM people")
    finally:
        spark.sql("USE default")
    snap = adapter.fetch(database)
    assert not snap.warnings  # the nested varchar struct is readable
    for name in ("renamed", "nested"):
        live = snap.views[name]
        assert live.format == "spark" and live.managed_by is None and live.writable
        before = dict(hms_client.get_table(database, name).parameters)
        declared = ViewSpec.model_validate(live.spec.model_dump())  # what `viewsync import` declares
        want = adapter.storable(live.id, declared)
        assert want.digest() == live.spec.digest()  # adoption has no field changes
        adapter.update(live, want, Marker("proj", want.digest()), CTX)
        after = adapter.fetch(database).views[name]
        assert after.managed_by == "proj" and after.spec.digest() == want.digest()
        params = hms_client.get_table(database, name).parameters
        kept = {k: v for k, v in before.items() if k != "transient_lastDdlTime"}
        assert {k: params.get(k) for k in kept} == kept  # every field Spark wrote, as Spark wrote it
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {database}.renamed ORDER BY id").collect()] == [
        (1, "ANN"), (2, "BOB")]
    nested = spark.sql(f"SELECT addr.zip, vn FROM {database}.nested ORDER BY id").collect()
    assert [tuple(r) for r in nested] == [("0150", "ann"), ("00100", "bob")]


def test_out_of_band_replace_then_apply_converges(spark: Any, adapter: HiveMetastoreAdapter, database: str,
                                                  people: str) -> None:
    view = ViewId("hive", database, "restored")
    spec = view_spec("SELECT id, upper(name) AS uname FROM people",
                     [{"name": "id", "type": "bigint"}, {"name": "uname", "type": "string"}])
    write(adapter, view, spec)
    spark.sql(f"CREATE OR REPLACE VIEW {database}.restored AS SELECT id, name AS uname FROM {database}.people")
    drifted = adapter.fetch(database).views["restored"]
    assert drifted.spec.digest() != adapter.storable(view, spec).digest()
    write(adapter, view, spec)  # the same declaration again: converges, the next plan is empty
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {database}.restored ORDER BY id").collect()] == [
        (1, "ANN"), (2, "BOB")]
