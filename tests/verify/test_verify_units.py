"""Pure parts of the verifier: type fit, YAML positions, column write-back, sources files, impact."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.core import coltypes
from reconciler.core.errors import ValidationFailed
from reconciler.core.model import Column, ViewId
from reconciler.source.config import load_config
from reconciler.verify import columns as vcols
from reconciler.verify import impact, sources, writeback
from reconciler.verify.analyze import _local_sql
from reconciler.verify.locate import Locator
from reconciler.verify.result import ViewResult
from tests.helpers.specs import spec


def field(name: str, type_: str) -> dict[str, object]:
    return {"name": name, "type": coltypes.to_spark(coltypes.parse(type_)), "nullable": True, "metadata": {}}


@pytest.mark.parametrize(("src", "dst", "fit"), [
    ("decimal(28,2)", "decimal(38,2)", "upcast"),
    ("decimal(28,2)", "decimal(18,2)", "store"),
    ("bigint", "int", "store"),
    ("int", "bigint", "upcast"),
    ("bigint", "string", "upcast"),
    ("date", "timestamp", "upcast"),
    ("array<int>", "array<bigint>", "upcast"),
    ("string", "int", "incompatible"),
    ("array<int>", "map<int,int>", "incompatible"),
    ("bigint", "bigint", "same"),
])
def test_type_fit_follows_spark_up_cast_rules(src: str, dst: str, fit: str) -> None:
    assert vcols.fit(coltypes.parse(src), coltypes.parse(dst)) == fit


def test_column_check_messages() -> None:
    declared = [Column(name="id", type="int"), Column(name="uname", type="string")]
    issues = vcols.check(declared, [field("id", "bigint"), field("upper(name)", "string")], strict_upcast=False)
    assert [(i.severity, i.code) for i in issues] == [("warning", "column_type"), ("error", "unaliased_expression")]
    assert "may fail at run time" in issues[0].message and "upper(name) AS uname" in issues[1].message
    strict = vcols.check(declared[:1], [field("id", "bigint")], strict_upcast=True)
    assert strict[0].severity == "error" and strict[0].code == "CANNOT_UP_CAST_DATATYPE"
    count = vcols.check(declared, [field("id", "bigint")], strict_upcast=False)
    assert count[0].code == "column_count" and "returns 1" in count[0].message
    spaced = vcols.check([Column(name="order count ", type="bigint")], [field("count(1)", "bigint")], False)
    assert "write `count(1) AS `order count ``" in spaced[0].message  # the suggested SQL runs as written


TEXT = """catalog: local   # a comment
schema: s
views:
  - name: a
    representations:
      - dialect: trino
        sql: SELECT 1
      - dialect: spark
        sql: |

          SELECT x,
                 yy
          FROM t
  - name: b
    representations:
      - {dialect: spark, sql: "SELECT  zz FROM t"}
"""


def test_sql_offsets_map_to_file_positions() -> None:
    loc = Locator({"views/local/s.yaml": TEXT})
    where = loc.sql("views/local/s.yaml (views[0])", "spark", "SELECT x,\n       yy".index("yy"))
    assert where is not None
    assert (where.line, where.column, where.field) == (12, 18, "views[0].representations[1].sql")
    assert TEXT.splitlines()[11][17:19] == "yy"
    flow = loc.sql("views/local/s.yaml (views[1])", "spark", "SELECT  zz".index("zz"))
    assert flow is not None and TEXT.splitlines()[flow.line - 1][flow.column - 1:flow.column + 1] == "zz"


def test_write_columns_keeps_comments_and_layout() -> None:
    out = writeback.insert_columns(TEXT, {0: [Column(name="x", type="decimal(28,2)"), Column(name="yy", type="int")],
                                          1: [Column(name="zz", type="array<string>")]})
    assert out.startswith("catalog: local   # a comment\n")
    assert '  - name: a\n    columns:\n      - {name: x, type: "decimal(28,2)"}\n      - {name: yy, type: int}\n' in out
    assert '    columns:\n      - {name: zz, type: "array<string>"}\n' in out
    assert TEXT.splitlines()[-1] in out


def test_sources_files_are_validated_with_positions() -> None:
    good = "catalog: c\nschema: s\ntables:\n  - name: t\n    columns:\n      - {name: a, type: bigint}\n"
    loaded = sources.load([("sources/c/s.yaml", good)])
    assert loaded.get("C", "S", "T") == [Column(name="a", type="bigint")]
    bad = good.replace("bigint", "bigintt")
    with pytest.raises(ValidationFailed) as err:
        sources.load([("sources/c/s.yaml", bad)])
    assert str(err.value.problems[0]).startswith("sources/c/s.yaml:6:25: tables[0].columns[0].type:")


def test_catalog_qualifiers_are_blanked_keeping_offsets() -> None:
    sql = "SELECT a FROM lake.sales.t JOIN `lake`.sales.u ON 1=1 JOIN sales.v"
    out = _local_sql(sql, "lake", {"lake": None})  # type: ignore[dict-item]
    assert len(out) == len(sql) and " sales.t" in out and "sales.u" in out and "lake" not in out


def test_change_classification() -> None:
    a, b = Column(name="a", type="int"), Column(name="b", type="string")
    assert impact.classify([a], [a, b], dropped=False)[:2] == ("columns_added", False)
    assert impact.classify([a, b], [a], dropped=False)[:2] == ("columns_changed", True)
    assert impact.classify([a], [Column(name="a", type="bigint")], dropped=False)[:2] == ("columns_changed", True)
    assert impact.classify([a], [a], dropped=False)[:2] == ("same_output", False)
    assert impact.classify([a], None, dropped=True)[:2] == ("dropped", True)


def test_same_columns_is_not_called_the_same_output() -> None:
    """Issue 43: a filter change keeps the columns, not the output (its tests may fail): say "same columns"."""
    a = Column(name="a", type="int")
    assert impact.classify([a], [a], dropped=False)[2] == "same columns"
    vid = ViewId("c", "s", "v")
    result = ViewResult(vid, "ok", [a])
    assert impact.attributed_status(vid, True, result, False, result, False).detail == \
        "same columns with the old and the new input"
    assert impact.dependent_status(vid, True, result, None, False).detail == "still resolves with the same columns"


def test_spark_config_section(tmp_path: Path) -> None:
    base = "version: 1\nproject: p\ncatalogs:\n  local: {type: managed, url: 'sqlite:///c.db'}\n"
    (tmp_path / "viewsync.yaml").write_text(base + "spark:\n  verify: true\n  jvm_options: -Xss4m -Dx=1\n"
                                            "  conf: {spark.sql.ansi.enabled: true}\n")
    cfg = load_config(tmp_path)
    assert cfg.spark.verify and cfg.spark.master == "local[1]" and cfg.spark.jvm_options == ("-Xss4m", "-Dx=1")
    assert cfg.spark.conf == {"spark.sql.ansi.enabled": "True"}
    # A conf key that would point the scratch session at a live catalog is refused, located.
    (tmp_path / "viewsync.yaml").write_text(base + "spark:\n  conf:\n    spark.sql.catalog.lake: x\n")
    with pytest.raises(ValidationFailed) as err:
        load_config(tmp_path)
    assert str(err.value.problems[0]) == (
        "viewsync.yaml:7:5: spark.conf: 'spark.sql.catalog.lake': the verifier runs Spark on its own scratch "
        "catalog; conf that reaches a live catalog or sets the master is refused")


def test_dependents_are_the_views_that_read_a_view_directly_or_through_others() -> None:
    """Readers are found whatever the case or quoting of the name, transitively, and never by a
    longer name, a column of that name, a table of that name in another schema, or the view itself."""
    def vid(name: str, schema: str = "s") -> ViewId:
        return ViewId("c", schema, name)

    declared = {
        vid("orders"): spec("SELECT id FROM raw_orders"),
        vid("Daily"): spec("SELECT id FROM `ORDERS`"),
        vid("weekly"): spec("SELECT * FROM s.daily"),
        vid("qualified"): spec("SELECT * FROM c.s.Orders"),
        vid("monthly"): spec("SELECT * FROM weekly"),
        vid("longer"): spec("SELECT * FROM orders_2023"),
        vid("column_only"): spec("SELECT orders FROM raw_orders"),
        vid("elsewhere"): spec("SELECT * FROM other.orders"),
        vid("orders", "other"): spec("SELECT 1 AS id"),
        vid("odd name"): spec("SELECT * FROM orders"),
        vid("reads_odd"): spec("SELECT * FROM `odd name`"),
    }
    found = impact.dependents([vid("orders"), vid("Daily"), vid("odd name"), vid("monthly")], declared, {})
    assert found[vid("orders")] == {vid("Daily"), vid("weekly"), vid("monthly"), vid("qualified"), vid("odd name"),
                                    vid("reads_odd")}
    assert found[vid("Daily")] == {vid("weekly"), vid("monthly")}
    assert found[vid("odd name")] == {vid("reads_odd")}  # a name that is not one word is searched for
    assert found[vid("monthly")] == set()


def test_dependent_status() -> None:
    from reconciler.core.model import LiveView, ViewId, ViewSpec
    from reconciler.verify.result import ViewResult

    vid = ViewId("c", "s", "d")
    spec = ViewSpec(columns=[Column(name="a", type="int")], representations=[{"dialect": "spark", "sql": "x"}])
    live = LiveView(id=vid, spec=spec, format="managed")
    ok = ViewResult(vid, "ok", [Column(name="a", type="int")])
    retyped = ViewResult(vid, "ok", [Column(name="a", type="bigint")])
    assert impact.dependent_status(vid, False, ok, live, False).status == "ok"
    assert impact.dependent_status(vid, False, retyped, live, False).status == "type_changed"
    assert impact.dependent_status(vid, True, ok, live, True).status == "type_changed"
    assert impact.dependent_status(vid, True, ViewResult(vid, "error"), live, False).status == "broken"
    assert impact.dependent_status(vid, True, ViewResult(vid, "not_checked", reason="r"), live, False).detail == "r"


def test_create_view_is_skipped_only_where_the_analysed_output_shows_spark_accepts_it() -> None:
    """The verifier creates a view nothing else reads only when its analysed output cannot show what
    CREATE VIEW checks: names equal ignoring case (COLUMN_ALREADY_EXISTS), a name taken, a name Spark
    may not store as it is, types whose views Spark may refuse. Each of those is still created, so
    Spark's own error is reported."""
    from reconciler.verify.spark_ops import _creation_needed

    def field(name: str, type_: object = "bigint") -> dict[str, object]:
        return {"name": name, "type": type_, "nullable": True, "metadata": {}}

    plain = {"db": "marts", "name": "v", "columns": None}
    assert not _creation_needed(plain, [field("id"), field("n")], set())
    assert _creation_needed(plain, [field("n"), field("N")], set())
    assert _creation_needed({**plain, "columns": ["a", "A"]}, [field("x"), field("y")], set())
    assert _creation_needed(plain, [field("id")], {("marts", "v")})
    assert _creation_needed({**plain, "name": "v-2"}, [field("id")], set())
    for type_ in ("void", "interval day", "string collate UTF8_LCASE", "variant", "char(3)", "varchar(3)",
                  {"type": "array", "elementType": "void", "containsNull": True}):
        assert _creation_needed(plain, [field("x", type_)], set()), type_
