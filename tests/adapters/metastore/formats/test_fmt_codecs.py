"""Spark, Hive, Flink codecs, detection, parameter splitting and the extras (pure, no I/O)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.adapters.metastore.formats import (
    WRITE_FORMATS,
    HiveColumn,
    TableDesc,
    check_view,
    detect,
    params,
    read_view,
    write_view,
)
from reconciler.core.model import ViewId, ViewSpec

VIEW = ViewId("hive", "sales", "v")
MARKER = {"viewsync.managed-by": "proj", "viewsync.spec-digest": "sha256:x"}


def spec_for(**kw: object) -> ViewSpec:
    base: dict[str, object] = {
        "comment": "Aggregated", "security": "definer",
        "columns": [{"name": "Customer_Id", "type": "bigint", "comment": "the id"},
                    {"name": "total", "type": "decimal(18,2)"}],
        "representations": [{"dialect": d, "sql": f"SELECT customer_id AS Customer_Id, sum(x) AS total "
                                                  f"FROM orders GROUP BY customer_id -- {d}"}
                            for d in ("spark", "trino", "hive", "flink")],
        "properties": {"tier": "gold"},
    }
    base.update(kw)
    return ViewSpec.model_validate(base).resolved(VIEW)


# ------------------------------------------------------------------- detection
def test_detection_order() -> None:
    t = TableDesc("db", "v", view_original_text="SELECT 1")
    assert detect(t) == "hive"
    t.parameters = {"flink.schema.0.name": "a"}
    assert detect(t) == "flink"
    t.parameters = {"is_generic": "true"}
    assert detect(t) == "flink"
    t.parameters = {"is_generic": "true", "spark.sql.create.version": "4.3.0"}
    assert detect(t) == "spark"
    t.parameters = {"presto_view": "true", "comment": "PRESTO VIEW", "spark.sql.create.version": "4.3.0"}
    assert detect(t) == "trino"
    t.parameters = {"presto_view": "true", "comment": "Presto Materialized View"}
    assert detect(t) == "trino-materialized-view"
    assert detect(TableDesc("db", "t", table_type="MANAGED_TABLE")) is None


# ----------------------------------------------------------------- round trips
@pytest.mark.parametrize("fmt", WRITE_FORMATS)
def test_every_format_reads_back_exactly(fmt: str) -> None:
    spec = spec_for(security="invoker", owner="team", default_catalog="other",
                    properties={"tier": "gold", "comment": "a user key", "spark.sql.x": "y"})
    table = write_view(fmt, "sales", "v", spec, MARKER)
    assert detect(table) == fmt
    read = read_view(table)
    assert read.format == fmt
    assert read.spec.digest() == spec.digest()
    assert read.managed_by == "proj" and read.spec_digest == "sha256:x"
    assert all(len(v) <= params.PARAM_VALUE_LIMIT for v in table.parameters.values())


@pytest.mark.parametrize("fmt", WRITE_FORMATS)
def test_long_values_are_split_under_the_metastore_limit(fmt: str) -> None:
    cols = [{"name": f"c{i}", "type": "string", "comment": "c" * 300} for i in range(40)]
    spec = spec_for(columns=cols, comment="x" * 5000, properties={"big": "y" * 9000})
    table = write_view(fmt, "sales", "v", spec, MARKER)
    assert all(len(v) <= params.PARAM_VALUE_LIMIT for v in table.parameters.values())
    assert all(c.comment is None or len(c.comment) <= params.COLUMN_COMMENT_LIMIT for c in table.columns)
    assert "viewsync.extra.numParts" in table.parameters
    assert read_view(table).spec.digest() == spec.digest()


_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,8}", fullmatch=True)
_types = st.sampled_from(["int", "bigint", "string", "double", "decimal(10,2)", "varchar(5)", "date",
                          "timestamp", "timestamp_ltz", "array<int>", "map<string,bigint>",
                          "struct<a:int,b:string>", "boolean", "binary"])


@settings(max_examples=60, deadline=None)
@given(
    fmt=st.sampled_from(WRITE_FORMATS),
    cols=st.lists(st.tuples(_names, _types, st.none() | st.text(max_size=20)), min_size=1, max_size=5,
                  unique_by=lambda c: c[0].lower()),
    comment=st.none() | st.text(max_size=30),
    owner=st.none() | _names,
    security=st.sampled_from(["definer", "invoker"]),
    ns=st.none() | st.lists(_names, min_size=1, max_size=2),
    props=st.dictionaries(_names, st.text(max_size=10), max_size=3),
)
def test_round_trip_property(fmt: str, cols: list[tuple[str, str, str | None]], comment: str | None,
                             owner: str | None, security: str, ns: list[str] | None,
                             props: dict[str, str]) -> None:
    spec = spec_for(columns=[{"name": n, "type": t, "comment": c} for n, t, c in cols], comment=comment,
                    owner=owner, security=security, default_namespace=ns, properties=props)
    assert read_view(write_view(fmt, "sales", "v", spec, MARKER)).spec.digest() == spec.digest()


# ------------------------------------------------------------ engine-written
def test_spark_written_view_with_split_schema() -> None:
    schema = json.dumps({"type": "struct", "fields": [
        {"name": "Id", "type": "long", "nullable": True, "metadata": {"comment": "Identifier"}},
        {"name": "Name", "type": "string", "nullable": True,
         "metadata": {"__CHAR_VARCHAR_TYPE_STRING": "varchar(20)"}},
        {"name": "at", "type": "timestamp", "nullable": True, "metadata": {}}]})
    p = {"spark.sql.create.version": "4.3.0", "view.query.out.numCols": "3",
         "view.query.out.col.0": "Id", "view.query.out.col.1": "Name", "view.query.out.col.2": "at",
         "view.catalogAndNamespace.numParts": "2", "view.catalogAndNamespace.part.0": "spark_catalog",
         "view.catalogAndNamespace.part.1": "sales", "view.sqlConfig.spark.sql.ansi.enabled": "true",
         "view.schemaMode": "BINDING", "comment": "People", "team": "core", "transient_lastDdlTime": "1"}
    p.update(params.split_value("spark.sql.sources.schema", schema, 50))
    t = TableDesc("sales", "people", view_original_text="SELECT id AS Id, name AS Name, now() AS at FROM p",
                  view_expanded_text="SELECT id AS Id, name AS Name, now() AS at FROM p", parameters=p,
                  columns=[HiveColumn("id", "bigint", "Identifier"), HiveColumn("name", "varchar(20)"),
                           HiveColumn("at", "timestamp")], owner="root")
    read = read_view(t)
    assert read.format == "spark"
    s = read.spec
    assert [(c.name, c.type, c.comment) for c in s.columns] == [
        ("Id", "bigint", "Identifier"), ("Name", "varchar(20)", None), ("at", "timestamp_ltz", None)]
    assert s.comment == "People" and s.owner == "root"
    assert s.default_catalog == "spark_catalog" and s.default_namespace == ["sales"]
    assert s.properties == {"team": "core"}
    assert s.dialects() == ["spark"]

    # An update in the same format keeps Spark's own bookkeeping but not stale parts.
    new = ViewSpec.model_validate(s.model_dump() | {"representations": [
        {"dialect": "spark", "sql": "SELECT 1 AS Id, 'a' AS Name, now() AS at"}]})
    out = write_view("spark", "sales", "people", new, MARKER, base=t)
    assert out.parameters["view.sqlConfig.spark.sql.ansi.enabled"] == "true"
    assert out.parameters["transient_lastDdlTime"] == "1"
    assert "spark.sql.sources.schema.numParts" not in out.parameters
    assert "spark.sql.sources.schema" in out.parameters
    assert read_view(out).spec.digest() == new.digest()


def test_flink_view_as_flink_writes_it() -> None:
    t = TableDesc("db", "fv", view_original_text="SELECT a, b FROM t", view_expanded_text="SELECT `t`.`a`, "
                  "`t`.`b` FROM `cat`.`db`.`t`", parameters={
                      "is_generic": "true", "flink.schema.0.name": "a", "flink.schema.0.data-type": "BIGINT",
                      "flink.schema.1.name": "b", "flink.schema.1.data-type": "VARCHAR(2147483647)",
                      "flink.comment": "flink view", "flink.owner-team": "x"})
    read = read_view(t)
    assert read.format == "flink"
    assert [(c.name, c.type) for c in read.spec.columns] == [("a", "bigint"), ("b", "string")]
    assert read.spec.comment == "flink view"
    assert read.spec.sql_for("flink") == "SELECT a, b FROM t"
    assert read.spec.properties == {"owner-team": "x"}


def test_hive_native_view() -> None:
    t = TableDesc("db", "hv", view_original_text="select a from t", view_expanded_text="select `t`.`a` from "
                  "`db`.`t`", columns=[HiveColumn("A", "int", "col a")], parameters={"comment": "hv"})
    read = read_view(t)
    assert read.format == "hive"
    assert [(c.name, c.type, c.comment) for c in read.spec.columns] == [("a", "int", "col a")]
    assert read.spec.sql_for("hive") == "select a from t"


def test_hive_expanded_text_is_qualified_for_engines() -> None:
    spec = spec_for(representations=[{"dialect": "hive", "sql": "SELECT a FROM t JOIN other.u ON true"}])
    table = write_view("hive", "sales", "v", spec, {})
    assert table.view_original_text == "SELECT a FROM t JOIN other.u ON true"
    # As Hive writes it: every unqualified table qualified and backquoted, the rest as declared.
    assert table.view_expanded_text == "SELECT a FROM `sales`.`t` JOIN other.u ON true"


@pytest.mark.parametrize("fmt", ["spark", "hive", "flink"])
def test_expanded_text_qualifies_tables_but_not_ctes_and_keeps_the_text(fmt: str) -> None:
    """Trino's Hive view translation (Coral) runs viewExpandedText with no default database: each
    engine format other than Trino's writes it with the view's database before unqualified tables."""
    sql = ("WITH recent AS (SELECT * FROM `Orders` WHERE d > 1)\n"
           "SELECT r.id, x.n  -- keep me\nFROM recent r JOIN other.items x ON r.id = x.id JOIN codes ON true")
    spec = spec_for(columns=[{"name": "id", "type": "bigint"}, {"name": "n", "type": "string"}],
                    representations=[{"dialect": fmt, "sql": sql}])
    table = write_view(fmt, "sales", "v", spec, {})
    assert table.view_original_text == sql  # what viewsync reads back
    assert table.view_expanded_text == sql.replace("`Orders`", "`sales`.`Orders`").replace(
        "JOIN codes", "JOIN `sales`.`codes`")
    assert read_view(table).spec == spec


def test_expanded_text_follows_the_declared_default_namespace_and_catalog() -> None:
    sql = "SELECT id FROM orders"
    cols = [{"name": "id", "type": "bigint"}]

    def expanded(fmt: str, text: str = sql, **kw: object) -> str | None:
        spec = spec_for(columns=cols, representations=[{"dialect": fmt, "sql": text}], **kw)
        return write_view(fmt, "sales", "v", spec, {}, engine_catalog=None).view_expanded_text

    assert expanded("spark", default_namespace=["raw"]) == "SELECT id FROM `raw`.`orders`"
    assert expanded("spark", default_catalog="spark_catalog", default_namespace=["raw"]) == \
        "SELECT id FROM `raw`.`orders`"  # this metastore's own Spark name: what Hive and Trino read
    # Another catalog: Spark's meaning of `orders` exactly (Trino's translation cannot read it anyway).
    assert expanded("spark", default_catalog="lake", default_namespace=["raw"]) == \
        "SELECT id FROM `lake`.`raw`.`orders`"
    assert expanded("spark", default_namespace=[]) == sql  # no default namespace: left as declared
    assert expanded("flink", default_namespace=["raw"]) == "SELECT id FROM `raw`.`orders`"
    assert expanded("hive", default_namespace=["raw"]) == "SELECT id FROM `raw`.`orders`"
    assert expanded("spark", "SELECT id FROM orders WHERE") == \
        "SELECT id FROM orders WHERE"  # sqlglot cannot read it: unchanged (plan refuses it anyway)


@pytest.mark.parametrize("fmt", ["spark", "hive", "flink"])
def test_the_table_owner_is_the_declared_one_else_the_live_one_else_the_writer(fmt: str) -> None:
    """Hive, Spark and Flink record who created a view as the table owner, and Trino's Hive view
    translation runs the view as that owner (it refuses a view without one). A view that declares
    no owner still reads back without one: no change in the next plan."""
    spec = spec_for(owner=None)
    created = write_view(fmt, "sales", "v", spec, MARKER, writer="etl")
    assert created.owner == "etl"
    assert read_view(created).spec == spec
    assert write_view(fmt, "sales", "v", spec_for(owner="bob"), MARKER, writer="etl").owner == "bob"
    # An update by someone else keeps the creator, while the declaration names no owner.
    updated = write_view(fmt, "sales", "v", spec_for(owner=None, comment="new"), MARKER, base=created,
                         writer="someone")
    assert updated.owner == "etl" and read_view(updated).spec.owner is None
    # A declared owner no longer declared: the view is owned as if created now.
    owned = write_view(fmt, "sales", "v", spec_for(owner="bob"), MARKER, writer="etl")
    dropped = write_view(fmt, "sales", "v", spec_for(owner=None), MARKER, base=owned, writer="someone")
    assert dropped.owner == "someone" and read_view(dropped).spec.owner is None
    # An owner changed in the catalog is read as such (drift), not hidden by the extras.
    created.owner = "mallory"
    assert read_view(created).spec.owner == "mallory"


def test_the_trino_format_keeps_its_own_owner_rule() -> None:
    table = write_view("trino", "sales", "v", spec_for(owner=None), MARKER, default_owner="svc", writer="etl")
    assert table.owner is None  # Trino runs a definer view as the JSON owner (svc) then


# -------------------------------------------------------------------- extras
def test_out_of_band_engine_change_wins_over_stale_extras() -> None:
    spec = spec_for(columns=[{"name": "A", "type": "int", "comment": "x"}],
                    representations=[{"dialect": "hive", "sql": "SELECT 1 AS a"},
                                     {"dialect": "trino", "sql": "SELECT 1 AS a"}])
    table = write_view("hive", "sales", "v", spec, MARKER)
    # Someone runs ALTER VIEW in Hive: new SQL and columns, our extras stay behind.
    table.view_original_text = "SELECT 2 AS b"
    table.columns = [HiveColumn("b", "int")]
    s = read_view(table).spec
    assert s.sql_for("hive") == "SELECT 2 AS b"
    assert s.sql_for("trino") == "SELECT 1 AS a"  # the other dialect is still reported
    assert [c.name for c in s.columns] == ["b"]


def test_split_and_join() -> None:
    value = "abcdefghij" * 5
    parts = params.split_value("k", value, 7)
    assert parts["k.numParts"] == "8"
    assert params.join_value(parts, "k") == value
    assert params.split_value("k", "short") == {"k": "short"}
    del parts["k.part.3"]
    assert params.join_value(parts, "k") is None


# --------------------------------------------------------------------- check
def test_check_errors() -> None:
    spec = spec_for(representations=[{"dialect": "trino", "sql": "SELECT 1"}])
    [(code, msg)] = check_view("spark", spec, "catalog 'hive' view hive.sales.v")
    assert code == "dialect_not_storable" and "'hive'" in msg and "'spark'" in msg
    assert check_view("spark", spec_for(columns=[]), "w")[0][0] == "columns_required"
    huge = spec_for(representations=[{"dialect": "spark", "sql": "SELECT 1 AS a -- " + "x" * 33000}])
    assert check_view("spark", huge, "w")[0][0] == "value_too_long"
    # Trino's base64 envelope grows the text by a third.
    big = spec_for(representations=[{"dialect": "trino", "sql": "SELECT 1 AS a -- " + "x" * 25000}])
    assert check_view("trino", big, "w", default_owner="trino")[0][0] == "value_too_long"
    assert check_view("spark", big, "w")[0][0] == "dialect_not_storable"
    assert check_view("hive", spec_for(), "w") == []
