"""Generated trino SQL returns Spark's types where the view's inputs are typed (issue 41): an avg of a
decimal and a division of two decimals are written with Spark's decimal type, unaliased outputs get
Spark's name where it is certain; with the types unknown, sqlglot's translation stands."""

from __future__ import annotations

from pathlib import Path

import yaml

from reconciler.plan import generation, spark_types
from reconciler.services.generate import GenerateRequest, generate
from reconciler.workspace import Workspace

TABLES = {"lineitem": {"qty": "decimal(15,2)", "price": "decimal(15,2)", "disc": "decimal(15,2)", "n": "int",
                       "m": "bigint", "d": "double"}}


def _columns(catalog: str | None, schema: str | None, table: str) -> dict[str, str] | None:
    return TABLES.get(table)


def _trino(sql: str, typed: bool = True) -> str:
    return generation.transpile(sql, "spark", "trino", _columns if typed else None).sql


def test_avg_of_a_decimal_is_sparks_decimal_p_plus_4_s_plus_4_when_the_input_is_typed() -> None:
    out = _trino("SELECT avg(qty) AS a FROM lineitem")
    assert "CAST(AVG(CAST(qty AS DECIMAL(19, 6))) AS DECIMAL(19, 6)) AS a" in out
    assert "AVG(qty) AS a" in _trino("SELECT avg(qty) AS a FROM lineitem", typed=False)
    assert "AVG(n) AS a" in _trino("SELECT avg(n) AS a FROM lineitem")  # DOUBLE in both engines


def test_a_decimal_division_is_exact_at_sparks_scale_and_an_integer_one_stays_double() -> None:
    out = _trino("SELECT sum(price) / sum(qty) AS r, n / m AS i, price / 7.0 AS s FROM lineitem")
    # sum: decimal(25,2); (25,2) / (25,2): scale max(6, 2+25+1) = 28, precision 25-2+2+28 = 53; over 38:
    # 25 integer digits kept, scale max(38 - 25, min(28, 6)) = 13
    assert "CAST(CAST(SUM(price) AS DECIMAL(38, 13)) / NULLIF(SUM(qty), 0) AS DECIMAL(38, 13)) AS r" in out
    assert "CAST(n AS DOUBLE) / NULLIF(m, 0) AS i" in out
    # (15,2) / (2,1): scale max(6, 2+2+1) = 6, precision 15-2+1+6 = 20
    assert "CAST(CAST(price AS DECIMAL(38, 6)) / NULLIF(7.0, 0) AS DECIMAL(20, 6)) AS s" in out
    untyped = _trino("SELECT sum(price) / sum(qty) AS r FROM lineitem", typed=False)
    assert "CAST(SUM(price) AS DOUBLE) / NULLIF(SUM(qty), 0) AS r" in untyped
    assert "CAST(d AS DOUBLE) / NULLIF(qty, 0)" in _trino("SELECT d / qty AS x FROM lineitem")


def test_types_are_followed_through_subqueries_case_and_spark_literal_rules() -> None:
    sql = ("SELECT sum(CASE WHEN n = 1 THEN v ELSE 0 END) / sum(v) AS share "
           "FROM (SELECT n, price * (1 - disc) AS v FROM lineitem) AS t")
    # v: (15,2) * ((1,0) - (15,2) = (16,2)) = (32,4); sum (38,4); (38,4)/(38,4) -> 81 digits, adjusted (38,6)
    assert "AS DECIMAL(38, 6)) AS share" in _trino(sql)
    assert spark_types.adjust(81, 43) == ("decimal", 38, 6)
    assert spark_types.adjust(20, 6) == ("decimal", 20, 6)


def test_a_division_spark_rounds_below_an_operands_scale_is_left_as_sqlglot_writes_it() -> None:
    """(38,30) / (38,30): Spark's scale is adjusted to 6, below the operands' 30; Trino dividing at 30 and
    casting to 6 would round twice, so it is not rewritten (and stays flagged)."""
    TABLES["wide"] = {"a": "decimal(38,30)", "b": "decimal(38,30)"}
    try:
        assert "CAST(a AS DOUBLE) / NULLIF(b, 0)" in _trino("SELECT a / b AS x FROM wide")
    finally:
        del TABLES["wide"]


def test_unaliased_aggregates_of_a_column_get_sparks_name_and_others_are_listed() -> None:
    out = generation.transpile("SELECT k, sum(qty), count(*), qty + 1 FROM lineitem GROUP BY k", "spark", "trino")
    assert 'SUM(qty) AS "sum(qty)"' in out.sql
    assert out.typed is not None and out.typed.named == ["sum(qty)"]
    assert out.typed.unnamed == ["COUNT(*)", "qty + 1"]
    mixed = generation.transpile("SELECT max(Qty) FROM lineitem", "spark", "trino")  # the table's case decides
    assert mixed.typed is not None and mixed.typed.named == [] and mixed.typed.unnamed == ["MAX(Qty)"]


def _project(root: Path, qty_type: str) -> None:
    (root / "views" / "local").mkdir(parents=True, exist_ok=True)
    (root / "sources" / "local").mkdir(parents=True, exist_ok=True)
    (root / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "p", "state": f"sqlite:///{root}/s.db",
        "catalogs": {"local": {"type": "managed", "url": f"sqlite:///{root}/c.db"}}}), encoding="utf-8")
    (root / "sources" / "local" / "db.yaml").write_text(yaml.safe_dump({
        "catalog": "local", "schema": "db", "tables": [
            {"name": "li", "columns": [{"name": "qty", "type": qty_type}, {"name": "k", "type": "string"}]}]}),
        encoding="utf-8")
    if not (root / "views" / "local" / "db.yaml").exists():
        (root / "views" / "local" / "db.yaml").write_text(
            "catalog: local\nschema: db\nviews:\n  - name: v\n    representations:\n      - dialect: spark\n"
            "        sql: SELECT k, avg(qty) AS a, sum(qty) / count(*) AS r FROM li GROUP BY k\n", encoding="utf-8")


def _generate(root: Path) -> tuple[str, list[str]]:
    ws = Workspace.open(root)
    try:
        report = generate(ws, GenerateRequest("trino"))
    finally:
        ws.close()
    return report.views[0].outcome, report.views[0].warnings


def test_generate_uses_the_declared_sources_and_a_change_of_their_types_generates_again(tmp_path: Path) -> None:
    _project(tmp_path, "decimal(10,2)")
    outcome, warnings = _generate(tmp_path)
    text = (tmp_path / "views" / "local" / "db.yaml").read_text(encoding="utf-8")
    assert outcome == "added"
    assert "CAST(AVG(CAST(qty AS DECIMAL(14, 6))) AS DECIMAL(14, 6)) AS a" in text
    # sum (20,2) / count as decimal(20,0): scale max(6, 2+20+1) = 23, precision 20-2+0+23 = 41 -> (38, 20)
    assert "AS DECIMAL(38, 20)) AS r" in text
    assert not any("dialect_integer_division" in w for w in warnings), warnings  # written exactly: no warning
    assert _generate(tmp_path)[0] == "unchanged"
    _project(tmp_path, "int")  # the source SQL is the same: the marker is fresh, the types are not
    assert _generate(tmp_path)[0] == "refreshed"
    text = (tmp_path / "views" / "local" / "db.yaml").read_text(encoding="utf-8")
    assert "AVG(qty) AS a" in text and "CAST(SUM(qty) AS DOUBLE) / NULLIF(COUNT(*), 0) AS r" in text
