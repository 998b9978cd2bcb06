"""View tests on the real Trino (issue 41): a view's trino representation runs on the test's
fixture rows as inline VALUES, next to its Spark one. Array indexing (Spark's `arr[i]` is
0-based, Trino's 1-based): the right trino SQL passes on both engines; a wrong one fails on
Trino and `plan --spark` reports `representations_disagree` with both engines' rows, and never
writes the view. `test` on both engines writes nothing to any of Trino's catalogs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import jsonschema
import pytest
import xmlschema
import yaml
from junitparser import Failure, JUnitXml

from tests.helpers import round_trip
from tests.helpers.cli import run_cli
from tests.helpers.paths import ROOT
from tests.helpers.repos import managed_config, write_repo
from tests.helpers.trino import Trino

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]

SOURCES = {"catalog": "local", "schema": "s", "tables": [{"name": "raw", "columns": [
    {"name": "id", "type": "int"}, {"name": "tags", "type": "array<string>"},
    {"name": "amount", "type": "decimal(10,2)"}, {"name": "at", "type": "timestamp"}]}]}
ROWS = [{"id": 1, "tags": ["a", "b", "c"], "amount": "1.50", "at": "2026-01-01 10:00:00"},
        {"id": 2, "tags": ["x", "y"], "amount": None, "at": None}]
EXPECTED = [{"id": 1, "second": "b", "amount": "1.50"}, {"id": 2, "second": "y", "amount": None}]


def _repo(tmp_path: Path, trino: Trino, trino_sql: str, extra: dict[str, object] | None = None) -> Path:
    config = {**managed_config(tmp_path), "engines": {"trino": {"url": f"http://127.0.0.1:{trino.port}",
                                                                 "user": "viewsync"}}}
    view = {"name": "second_tag", "representations": [
        {"dialect": "spark", "sql": "SELECT id, tags[1] AS second, amount FROM raw"},
        {"dialect": "trino", "sql": trino_sql}],
        "tests": [{"name": "the_second_tag", "given": {"raw": {"rows": ROWS}}, "expect": {"rows": EXPECTED}}]}
    return write_repo(tmp_path / "repo", {**config, **(extra or {})}, {
        "views/local/s.yaml": {"catalog": "local", "schema": "s", "views": [view]},
        "sources/local/s.yaml": SOURCES})


def test_a_right_trino_representation_passes_on_both_engines_in_every_report(tmp_path: Path, trino: Trino) -> None:
    repo = _repo(tmp_path, trino, "SELECT id, tags[2] AS second, amount FROM raw")
    res = run_cli(repo, "test", "--format", "json")
    assert res.code == 0, res.text
    report = json.loads(res.out)
    jsonschema.validate(report, json.loads((ROOT / "schemas" / "tests.schema.json").read_text()))
    assert [(t["engine"], t["status"]) for t in report["tests"]] == [("spark", "passed"), ("trino", "passed")]
    only = json.loads(run_cli(repo, "test", "--engine", "trino", "--format", "json").out)
    assert [t["engine"] for t in only["tests"]] == ["trino"]


def test_a_wrong_trino_representation_fails_on_trino_named_and_located(tmp_path: Path, trino: Trino) -> None:
    """Copied unchanged, `tags[1]` is the first tag on Trino: other rows than the test expects."""
    repo = _repo(tmp_path, trino, "SELECT id, tags[1] AS second, amount FROM raw")
    res = run_cli(repo, "test")
    assert res.code == 1
    line = next(i for i, t in enumerate((repo / "views/local/s.yaml").read_text().splitlines(), 1)
                if "name: the_second_tag" in t)
    fails = [ln for ln in res.out.splitlines() if ln.startswith(("FAIL", "ERROR"))]
    assert fails == [f"FAIL  trino  views/local/s.yaml:{line}: local.s.second_tag: the_second_tag: "
                     "2 expected row(s) missing, 2 unexpected row(s)"], res.out
    assert "    1   a       1.50" in res.out and "    1   b       1.50" in res.out
    md = run_cli(repo, "test", "--format", "markdown").out
    assert "| ❌ | trino | `local.s.second_tag` | `the_second_tag` |" in md
    assert "| ✅ | spark | `local.s.second_tag` | `the_second_tag` | passed |" in md
    out = tmp_path / "junit.xml"
    run_cli(repo, "test", "--format", "junit", "--out", str(out))
    xmlschema.XMLSchema(str(ROOT / "tests" / "fixtures" / "junit.xsd")).validate(str(out))
    failed = [(s.name, c.name) for s in JUnitXml.fromfile(str(out)) for c in s
              if any(isinstance(r, Failure) for r in c.result)]
    assert failed == [("local.s.second_tag [trino]", "the_second_tag")]


def _plan(repo: Path) -> dict[str, object]:
    res = run_cli(repo, "plan", "--spark", "--format", "json")
    assert res.code == 1, res.text
    plan = json.loads(res.out)
    jsonschema.validate(plan, json.loads((ROOT / "schemas" / "plan.schema.json").read_text()))
    return plan


def test_plan_reports_representations_disagree_with_both_row_sets_and_never_writes(tmp_path: Path,
                                                                                   trino: Trino) -> None:
    repo = _repo(tmp_path, trino, "SELECT id, tags[1] AS second, amount FROM raw")
    plan = _plan(repo)
    errors = {e["code"]: e for e in plan["errors"]}  # type: ignore[union-attr]
    disagree = errors["representations_disagree"]["message"]
    assert "spark returned 2 row(s) (id, second, amount): (1, b, 1.50), (2, y, NULL)" in disagree
    assert "trino returned 2 row(s) (id, second, amount): (1, a, 1.50), (2, x, NULL)" in disagree
    assert plan["engines"] == [{"view": {"catalog": "local", "schema": "s", "name": "second_tag"},  # type: ignore
                                "spark": "passed", "trino": "failed", "flink": "no representation"}]
    text = run_cli(repo, "plan", "--spark").out
    assert "  local.s.second_tag  passed  failed  no representation" in text, text
    assert "[representations_disagree] views/local/s.yaml:" in text
    md = run_cli(repo, "plan", "--spark", "--format", "markdown").out
    assert "| `local.s.second_tag` | ✅ passed | ❌ failed | no representation |" in md
    saved = tmp_path / "plan.json"
    assert run_cli(repo, "plan", "--spark", "--out", str(saved)).code == 1
    assert run_cli(repo, "apply", str(saved), "--auto-approve").code != 0
    refused = run_cli(repo, "apply", "--spark", "--auto-approve")
    assert refused.code != 0 and "representations_disagree" in refused.text
    with sqlite3.connect(tmp_path / "c.db") as db:  # the managed catalog's store: nothing written
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        views = [r for n in names for r in db.execute(f"SELECT * FROM {n}") if "second_tag" in repr(r)]
    assert views == []


def test_trino_refusing_index_zero_is_a_disagreement_with_its_error(tmp_path: Path, trino: Trino) -> None:
    """`tags[0]` on Trino raises (its arrays start at 1) instead of returning rows: the test is an
    error on Trino, and the plan says the two representations disagree: Spark's rows, Trino's error."""
    repo = _repo(tmp_path, trino, "SELECT id, tags[0] AS second, amount FROM raw")
    res = run_cli(repo, "test", "--format", "json")
    by_engine = {t["engine"]: t for t in json.loads(res.out)["tests"]}
    assert by_engine["spark"]["status"] == "passed"
    assert by_engine["trino"]["status"] == "error"
    assert "Trino: [INVALID_FUNCTION_ARGUMENT]" in by_engine["trino"]["error"], by_engine["trino"]
    message = {e["code"]: e for e in _plan(repo)["errors"]}["representations_disagree"]["message"]  # type: ignore
    assert "spark returned 2 row(s)" in message and "trino raised: Trino: [INVALID_FUNCTION_ARGUMENT]" in message


def _trino_objects(trino: Trino) -> list[tuple[str, ...]]:
    """Every catalog, schema and table (and view) Trino lists."""
    out: list[tuple[str, ...]] = []
    for [catalog] in trino.rows("SHOW CATALOGS"):
        if catalog == "system":
            continue
        for [schema] in trino.rows(f'SHOW SCHEMAS FROM "{catalog}"'):
            if schema == "information_schema":
                continue
            out += [(catalog, schema, t) for [t] in trino.rows(f'SHOW TABLES FROM "{catalog}"."{schema}"')]
            out.append((catalog, schema))
        out.append((catalog,))
    return sorted(out)


def test_testing_on_both_engines_writes_nothing_to_trinos_catalogs(tmp_path: Path, trino: Trino) -> None:
    repo = _repo(tmp_path, trino, "SELECT id, tags[2] AS second, amount FROM raw")
    before = _trino_objects(trino)
    assert run_cli(repo, "test", "--engine", "all").code == 0
    assert _trino_objects(trino) == before
    assert ("hive",) in before and ("memory",) in before


def test_an_engine_not_configured_is_a_clear_error(tmp_path: Path, trino: Trino) -> None:
    repo = write_repo(tmp_path / "plain", managed_config(tmp_path), {
        "views/local/s.yaml": yaml.safe_dump({"catalog": "local", "schema": "s", "views": []})})
    res = run_cli(repo, "test", "--engine", "trino")
    assert res.code != 0 and "engine 'trino' is not configured" in res.text


FLAT = [{"name": n, "type": t} for n, t in (
    ("id", "int"), ("amount", "decimal(10,2)"), ("ratio", "double"), ("f", "float"), ("ok", "boolean"),
    ("day", "date"), ("at", "timestamp"), ("at_z", "timestamp_ltz"), ("code", "char(3)"), ("bin", "binary"),
    ("name", "string"), ("big", "bigint"))]
FLAT_ROWS = [
    {"id": 1, "amount": "12345678.90", "ratio": "NaN", "f": 0.1, "ok": True, "day": "2026-02-28",
     "at": "2026-01-01 10:00:00.123456", "at_z": "2026-07-01 23:30:00-07:00", "code": "a", "bin": "hi",
     "name": "it's \"quoted\" \\ ünï", "big": -9223372036854775808},
    {"id": 2, "ratio": "-Infinity", "ok": False, "day": "0001-01-01", "at": "9999-12-31 23:59:59",
     "name": "", "big": 9223372036854775807},
    {"id": 3},
]


def test_every_flat_type_reaches_trino_exactly_as_spark_reads_it(tmp_path: Path, trino: Trino) -> None:
    """Flat inputs travel to Trino as one JSON literal per input, cast per column: each value
    arrives exactly (decimals, 32-bit floats, NaN, microseconds, instants, padded CHAR, bytes)."""
    got, res = round_trip.outcomes(tmp_path, "trino", {"url": f"http://127.0.0.1:{trino.port}"}, FLAT, FLAT_ROWS)
    assert got == round_trip.all_passed("trino"), res.text


def test_the_engines_session_fixes_join_order_and_broadcasts(trino: Trino) -> None:
    """Speed (issue 41): every test query runs with a fixed join order, broadcast joins and one
    driver per task (the planning of a test's few rows is most of its time); a user's own defaults
    do not apply."""
    from reconciler.source.engine_settings import TrinoSettings
    from reconciler.viewtests.trino_engine import TrinoEngine

    engine = TrinoEngine(TrinoSettings(f"http://127.0.0.1:{trino.port}"))
    _, rows = engine._one("SHOW SESSION")
    values = {r[0]: r[1] for r in rows}
    assert values["join_reordering_strategy"] == "NONE"
    assert values["join_distribution_type"] == "BROADCAST"
    assert values["enable_dynamic_filtering"] == "false"
    assert values["task_concurrency"] == "1"  # one driver per task: no local exchanges to plan



def test_queries_share_one_connection_per_thread_and_close_with_the_engine(trino: Trino) -> None:
    """Speed (issue 41): the engine's threads keep one HTTP connection each for the whole run (a new
    one per query cost its connect and set-up), every query still gets its own answer, and closing
    the engine closes them."""
    from reconciler.source.engine_settings import TrinoSettings
    from reconciler.viewtests.trino_engine import THREADS, TrinoEngine

    engine = TrinoEngine(TrinoSettings(f"http://127.0.0.1:{trino.port}"))
    queries = [{"id": f"q{i}", "sql": f"SELECT {i} AS n"} for i in range(24)]
    queries[5]["sql"] = "SELECT 1 / 0 AS n"
    answers = engine.call({"op": "tests", "queries": queries})["answers"]
    assert [a["rows"] for a in answers if "rows" in a] == [[[i]] for i in range(24) if i != 5]
    assert answers[5]["error"]["class"] == "DIVISION_BY_ZERO"
    assert 1 <= len(engine._opened) <= THREADS + 1  # the pool's threads, and the check at connect
    engine.close()
    assert engine._opened == []

JOINED = ("SELECT c.region, SUM(o.amount) AS revenue, COUNT(*) AS orders\n"
          "FROM o JOIN c ON o.cid = c.cid LEFT JOIN (SELECT cid, COUNT(*) AS n FROM c GROUP BY cid) k "
          "ON k.cid = c.cid\nWHERE o.status = 'done'\nGROUP BY c.region")


def test_one_failing_test_among_a_views_joined_tests_is_that_test_only_on_trino(tmp_path: Path,
                                                                                  trino: Trino) -> None:
    """The tests of a view share one Trino query (a tagged UNION ALL, planned with the engine's
    session): joins and aggregates still give each test its own rows, and a wrong expectation
    fails its test alone; a runtime error in one test is its error only."""
    config = {**managed_config(tmp_path), "engines": {"trino": {"url": f"http://127.0.0.1:{trino.port}",
                                                                 "user": "viewsync"}}}
    cols = [{"name": "region", "type": "string"}, {"name": "revenue", "type": "decimal(28,2)"},
            {"name": "orders", "type": "bigint"}]
    orders = [{"cid": 1, "amount": "10.00", "status": "done"}, {"cid": 2, "amount": "5.50", "status": "done"},
              {"cid": 1, "amount": "1.00", "status": "open"}]
    cust = [{"cid": 1, "region": "eu"}, {"cid": 2, "region": "us"}]

    def case(name: str, rows: list[dict[str, object]], expect: dict[str, object]) -> dict[str, object]:
        return {"name": name, "given": {"o": {"rows": rows}, "c": {"rows": cust}}, "expect": expect}

    tests = [case("both_regions", orders, {"rows": [{"region": "eu", "revenue": "10.00", "orders": 1},
                                                     {"region": "us", "revenue": "5.50", "orders": 1}]}),
             case("wrong_on_purpose", orders, {"rows": [{"region": "eu", "revenue": "11.00", "orders": 2}]}),
             case("nothing_done", [{**orders[2]}], {"empty": True}),
             case("one_order", [{"cid": 1, "amount": "1.00", "status": "done"}],
                  {"rows": [{"region": "eu", "revenue": "1.00", "orders": 1}]})]
    view = {"name": "revenue", "columns": cols, "representations": [{"dialect": "trino", "sql": JOINED}],
            "tests": tests}
    failing_sql = JOINED.replace("SUM(o.amount)", "SUM(o.amount / CAST(o.cid - 1 AS DECIMAL(10,2)))")
    other = {"name": "revenue_div", "columns": cols, "representations": [{"dialect": "trino", "sql": failing_sql}],
             "tests": [case("divides_by_zero", orders[:1], {"rows": [{"region": "eu", "revenue": "0", "orders": 1}]}),
                       case("no_rows_no_division", [orders[2]], {"empty": True})]}
    sources = {"catalog": "local", "schema": "s", "tables": [
        {"name": "o", "columns": [{"name": "cid", "type": "int"}, {"name": "amount", "type": "decimal(10,2)"},
                                  {"name": "status", "type": "string"}]},
        {"name": "c", "columns": [{"name": "cid", "type": "int"}, {"name": "region", "type": "string"}]}]}
    repo = write_repo(tmp_path / "repo", config, {
        "views/local/s.yaml": {"catalog": "local", "schema": "s", "views": [view, other]},
        "sources/local/s.yaml": sources})
    res = run_cli(repo, "test", "--engine", "trino", "--format", "json")
    assert res.code == 1, res.text
    got = {(t["view"]["name"], t["name"]): t for t in json.loads(res.out)["tests"]}
    assert {k: t["status"] for k, t in got.items()} == {
        ("revenue", "both_regions"): "passed", ("revenue", "wrong_on_purpose"): "failed",
        ("revenue", "nothing_done"): "passed", ("revenue", "one_order"): "passed",
        ("revenue_div", "divides_by_zero"): "error", ("revenue_div", "no_rows_no_division"): "passed"}
    assert "DIVISION_BY_ZERO" in got[("revenue_div", "divides_by_zero")]["error"]


def test_ordered_tests_share_their_views_query_on_trino_and_are_still_checked_in_order(tmp_path: Path,
                                                                                       trino: Trino) -> None:
    """Speed (issue 41): an `ordered: true` test joins its view's UNION ALL on Trino, its order
    kept as a position (viewtests.trino_order) over the declared columns; a test expecting the
    rows in another order still fails, and NULLs fall where the view's ORDER BY puts them."""
    config = {**managed_config(tmp_path), "engines": {"trino": {"url": f"http://127.0.0.1:{trino.port}",
                                                                 "user": "viewsync"}}}
    sql = "SELECT cid, amount AS spend FROM o ORDER BY spend DESC NULLS FIRST, o.cid LIMIT 3"
    cols = [{"name": "customer", "type": "int"}, {"name": "total", "type": "decimal(10,2)"}]
    rows = [{"cid": 1, "amount": "5.00"}, {"cid": 2, "amount": None}, {"cid": 3, "amount": "9.00"},
            {"cid": 4, "amount": "5.00"}, {"cid": 5, "amount": "1.00"}]
    right = [{"customer": 2, "total": None}, {"customer": 3, "total": "9.00"}, {"customer": 1, "total": "5.00"}]

    def case(name: str, expect: list[dict[str, object]], ordered: bool = True) -> dict[str, object]:
        return {"name": name, "given": {"o": {"rows": rows}}, "expect": {"rows": expect, "ordered": ordered}}

    view = {"name": "top_spenders", "columns": cols, "representations": [{"dialect": "trino", "sql": sql}],
            "tests": [case("in_order", right), case("swapped", [right[1], right[0], right[2]]),
                      case("any_order", [right[2], right[0], right[1]], ordered=False)]}
    sources = {"catalog": "local", "schema": "s", "tables": [
        {"name": "o", "columns": [{"name": "cid", "type": "int"}, {"name": "amount", "type": "decimal(10,2)"}]}]}
    repo = write_repo(tmp_path / "repo", config, {
        "views/local/s.yaml": {"catalog": "local", "schema": "s", "views": [view]},
        "sources/local/s.yaml": sources})
    res = run_cli(repo, "test", "--engine", "trino", "--format", "json")
    assert res.code == 1, res.text
    got = {t["name"]: t["status"] for t in json.loads(res.out)["tests"]}
    assert got == {"in_order": "passed", "swapped": "failed", "any_order": "passed"}
    window = 'row_number() OVER (ORDER BY "total" DESC NULLS FIRST, "customer" ASC NULLS LAST)'
    ran = [q for [q] in trino.rows("SELECT query FROM system.runtime.queries WHERE source = 'viewsync-tests'")
           if window in q]
    assert len(ran) == 1 and ran[0].count("UNION ALL") == 2, "the three tests ran as one query"
