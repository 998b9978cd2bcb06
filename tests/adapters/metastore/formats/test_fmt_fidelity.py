"""Engine fidelity rules of the codecs (pure): what a rewrite keeps, what a new view carries."""

from __future__ import annotations

import json
from typing import Any

from reconciler.adapters.metastore.formats import TableDesc, check_view, read_view, spark, trino, write_view
from reconciler.core.model import Representation, ViewSpec


def spec_for(**over: Any) -> ViewSpec:
    data: dict[str, Any] = {"columns": [{"name": "id", "type": "bigint"}, {"name": "uname", "type": "string"}],
                            "representations": [{"dialect": "spark", "sql": "SELECT id, upper(name) FROM people"},
                                                {"dialect": "trino", "sql": "SELECT id, upper(name) FROM people"}],
                            "default_namespace": ["sales"]}
    data.update(over)
    return ViewSpec.model_validate(data)


# ---------------------------------------------------------------------- trino
def test_definer_view_runs_as_declared_owner_else_the_catalog_default() -> None:
    doc = trino.decode_envelope(write_view("trino", "sales", "v", spec_for(owner="bob"), {},
                                           default_owner="trino_svc").view_original_text or "")
    assert doc["owner"] == "bob" and doc["runAsInvoker"] is False
    table = write_view("trino", "sales", "v", spec_for(), {}, default_owner="trino_svc")
    assert trino.decode_envelope(table.view_original_text or "")["owner"] == "trino_svc"
    assert read_view(table).spec.owner is None  # the declaration said nothing: no diff next plan
    invoker = write_view("trino", "sales", "v", spec_for(security="invoker"), {})
    assert "owner" not in trino.decode_envelope(invoker.view_original_text or "")


def test_definer_view_without_any_owner_is_a_plan_error() -> None:
    [(code, msg)] = check_view("trino", spec_for(), "catalog 'hive': view hive.sales.v")
    assert code == "owner_required" and "trino_owner" in msg and "hive.sales.v" in msg
    assert check_view("trino", spec_for(), "w", default_owner="trino_svc") == []
    assert check_view("trino", spec_for(security="invoker"), "w") == []
    assert check_view("spark", spec_for(), "w") == []  # Spark has no definer rights


def _athena(doc: dict[str, Any]) -> TableDesc:
    return TableDesc(database="logs", name="v", view_original_text=trino.encode_envelope(doc),
                     view_expanded_text=trino.EXPANDED_TEXT, parameters={"presto_view": "true"})


def test_athena_view_without_schema_keeps_none_and_its_sql_whitespace() -> None:
    base = _athena({"originalSql": "SELECT 1 AS x\n\n", "catalog": "awsdatacatalog",
                    "columns": [{"name": "x", "type": "integer"}]})
    read = read_view(base).spec
    assert read.default_namespace == []  # explicit: no default schema
    changed = read.model_copy(update={"comment": "now documented", "owner": "ann"})
    doc = trino.decode_envelope(write_view("trino", "logs", "v", changed, {}, base=base).view_original_text or "")
    assert "schema" not in doc and doc["catalog"] == "awsdatacatalog"
    assert doc["originalSql"] == "SELECT 1 AS x\n\n" and doc["comment"] == "now documented"
    # New SQL is written as declared.
    new_sql = changed.model_copy(update={"representations": [Representation(dialect="trino", sql="SELECT 2 AS x")]})
    doc = trino.decode_envelope(write_view("trino", "logs", "v", new_sql, {}, base=base).view_original_text or "")
    assert doc["originalSql"] == "SELECT 2 AS x"


def test_rewriting_a_trino_view_keeps_every_trino_type() -> None:
    types = ["json", "uuid", "time(3)", "timestamp(9)", "timestamp(3) with time zone", "varchar",
             "map(varchar(3),array(timestamp(0)))"]
    base = _athena({"originalSql": "SELECT * FROM t", "catalog": "hive", "schema": "logs",
                    "columns": [{"name": f"c{i}", "type": t} for i, t in enumerate(types)],
                    "owner": "ann", "runAsInvoker": False})
    live = read_view(base).spec
    assert [c.type for c in live.columns] == ["json", "uuid", "time(3)", "timestamp(9)", "timestamp_ltz(3)",
                                              "string", "map<varchar(3),array<timestamp(0)>>"]
    changed = live.model_copy(update={"representations": [Representation(dialect="trino", sql="SELECT * FROM t2")]})
    doc = trino.decode_envelope(write_view("trino", "logs", "v", changed, {}, base=base).view_original_text or "")
    assert [c["type"] for c in doc["columns"]] == types
    # Without a base (a create), the canonical types are rendered as Trino signatures.
    doc = trino.decode_envelope(write_view("trino", "logs", "v", changed, {}).view_original_text or "")
    assert [c["type"] for c in doc["columns"]][:5] == ["json", "uuid", "time(3)", "timestamp(9)",
                                                       "timestamp(3) with time zone"]


# ---------------------------------------------------------------------- spark
def test_spark_view_names_query_outputs_and_aliases_unnamed_expressions() -> None:
    table = write_view("spark", "sales", "v", spec_for(), {})
    p = table.parameters
    assert [p["view.query.out.col.0"], p["view.query.out.col.1"]] == ["id", "uname"]
    assert table.view_original_text == "SELECT id, upper(name) FROM people"  # what we read back
    assert table.view_expanded_text == "SELECT id, UPPER(name) AS `uname` FROM `sales`.`people`"  # what Spark runs
    renamed = write_view("spark", "sales", "v", spec_for(representations=[
        {"dialect": "spark", "sql": "SELECT id, upper(name) AS u FROM people"}]), {})
    assert renamed.parameters["view.query.out.col.1"] == "u"  # the query's own name
    assert renamed.view_expanded_text == "SELECT id, upper(name) AS u FROM `sales`.`people`"  # only qualified
    schema = json.loads(renamed.parameters[spark.SCHEMA])
    assert [f["name"] for f in schema["fields"]] == ["id", "uname"]  # the declared names


def test_spark_view_carries_schema_mode_and_sql_configs() -> None:
    p = write_view("spark", "sales", "v", spec_for(), {}).parameters
    assert p["view.schemaMode"] == "COMPENSATION"
    assert p["view.sqlConfig.spark.sql.ansi.enabled"] == "true"
    assert p["view.sqlConfig.spark.sql.session.timeZone"] == "UTC"
    # A view Spark wrote keeps the configs Spark captured.
    base = write_view("spark", "sales", "v", spec_for(), {})
    base.parameters = {k: v for k, v in base.parameters.items() if not k.startswith("view.sqlConfig.")}
    base.parameters |= {"view.sqlConfig.spark.sql.session.timeZone": "Europe/Paris",
                        "view.sqlConfig.spark.sql.ansi.enabled": "false", "view.schemaMode": "EVOLUTION"}
    again = write_view("spark", "sales", "v", spec_for(comment="x"), {}, base=base).parameters
    assert again["view.sqlConfig.spark.sql.session.timeZone"] == "Europe/Paris"
    assert again["view.sqlConfig.spark.sql.ansi.enabled"] == "false"
    assert again["view.schemaMode"] == "EVOLUTION"


def test_spark_nested_char_varchar_is_string_plus_its_catalog_string() -> None:
    spec = spec_for(columns=[{"name": "addr", "type": "struct<city:string,zip:varchar(10)>"},
                             {"name": "tags", "type": "array<char(2)>"}],
                    representations=[{"dialect": "spark", "sql": "SELECT addr, tags FROM people"}])
    table = write_view("spark", "sales", "v", spec, {})
    fields = json.loads(table.parameters[spark.SCHEMA])["fields"]
    assert fields[0]["type"]["fields"][1]["type"] == "string"
    assert fields[0]["metadata"]["__CHAR_VARCHAR_TYPE_STRING"] == "struct<city:string,zip:varchar(10)>"
    assert fields[1]["metadata"]["__CHAR_VARCHAR_TYPE_STRING"] == "array<char(2)>"
    assert read_view(table).spec.columns == spec.columns


# ---------------------------------------------------------------------- flink
def test_flink_column_comments_are_written_and_read() -> None:
    spec = spec_for(columns=[{"name": "id", "type": "bigint", "comment": "key"},
                             {"name": "ts", "type": "timestamp(3)"}],
                    representations=[{"dialect": "flink", "sql": "SELECT id, ts FROM clicks"}], default_namespace=None)
    table = write_view("flink", "web", "v", spec, {})
    assert table.parameters["flink.schema.0.comment"] == "key"
    assert table.parameters["flink.schema.1.data-type"] == "TIMESTAMP(3)"
    assert "viewsync.extra" not in table.parameters
    assert read_view(table).spec.columns == spec.columns


def test_flink_rewrite_with_new_sql_keeps_not_null_and_lengths() -> None:
    base = TableDesc(database="web", name="v", view_original_text="SELECT id, d FROM t",
                     view_expanded_text="SELECT `t`.`id`, `t`.`d` FROM `c`.`web`.`t`",
                     parameters={"is_generic": "true", "flink.schema.0.name": "id",
                                 "flink.schema.0.data-type": "BIGINT NOT NULL",
                                 "flink.schema.1.name": "d", "flink.schema.1.data-type": "BINARY(16)"})
    live = read_view(base).spec
    changed = live.model_copy(update={"representations": [Representation(dialect="flink", sql="SELECT id, d FROM t2")]})
    out = write_view("flink", "web", "v", changed, {}, base=base)
    assert out.parameters["flink.schema.0.data-type"] == "BIGINT NOT NULL"
    assert out.parameters["flink.schema.1.data-type"] == "BINARY(16)"
    assert out.view_original_text == "SELECT id, d FROM t2"  # new SQL, not stale text
    assert out.view_expanded_text == "SELECT id, d FROM `web`.`t2`"
    # Unchanged SQL keeps Flink's own expansion; one viewsync wrote unexpanded is written anew.
    kept = write_view("flink", "web", "v", live.model_copy(update={"comment": "c"}), {}, base=base)
    assert kept.view_expanded_text == base.view_expanded_text
    base.view_expanded_text = base.view_original_text
    again = write_view("flink", "web", "v", live.model_copy(update={"comment": "c"}), {}, base=base)
    assert again.view_expanded_text == "SELECT id, d FROM `web`.`t`"


def test_a_spec_that_reads_back_invalid_is_a_plan_error_not_a_crash() -> None:
    """Columns set without validation (two named `id`): every format answers a not_storable plan
    error instead of letting pydantic's ValidationError escape (once an "unexpected" crash of plan)."""
    from reconciler.core.model import Column

    spec = ViewSpec(representations=[Representation(dialect=d, sql="SELECT a.id, b.id FROM t a, t b")
                                     for d in ("spark", "hive", "trino", "flink")], security="invoker")
    spec = spec.model_copy(update={"columns": [Column(name="id", type="bigint"), Column(name="ID", type="bigint")]})
    for fmt in ("spark", "hive", "trino", "flink"):
        [(code, message)] = check_view(fmt, spec, "catalog 'c': view v")
        assert code == "not_storable" and "\n" not in message, (fmt, message)
        assert message.lower().endswith("columns[1].name: duplicate column 'id'"), (fmt, message)
