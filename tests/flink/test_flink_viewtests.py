"""View tests on real PyFlink in batch mode (issue 41, item 4): a view's flink representation runs
on the test's fixture rows as inline VALUES, next to its Spark one, and the result is per test and
per engine in every report. Flink's arrays start at 1 like Trino's: a flink SQL copied unchanged
from Spark (`tags[1]`) returns other rows, which `plan --spark` reports as
`representations_disagree` with both engines' rows, in the flink column of the engine matrix."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from junitparser import Failure, JUnitXml

from tests.helpers import round_trip
from tests.helpers.cli import run_cli
from tests.helpers.flink import flink_python
from tests.helpers.paths import ROOT
from tests.helpers.repos import managed_config, write_repo

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]

SOURCES = {"catalog": "local", "schema": "s", "tables": [{"name": "items", "columns": [
    {"name": "id", "type": "int"}, {"name": "tags", "type": "array<string>"},
    {"name": "amount", "type": "decimal(10,2)"}, {"name": "ordered_at", "type": "timestamp"}]}]}
ROWS = [{"id": 1, "tags": ["a", "b", "c"], "amount": "1.50", "ordered_at": "2026-01-01 10:00:00.123456"},
        {"id": 2, "tags": ["x", "y"], "amount": None, "ordered_at": None}]
EXPECTED = [{"id": 1, "second_tag": "b", "amount": "1.50", "ordered_at": "2026-01-01 10:00:00.123456"},
            {"id": 2, "second_tag": "y", "amount": None, "ordered_at": None}]
SPARK_SQL = "SELECT id, tags[1] AS second_tag, amount, ordered_at FROM items"


@pytest.fixture(scope="module")
def python() -> str:
    return flink_python()


def _repo(tmp_path: Path, python: str, flink_sql: str) -> Path:
    config = {**managed_config(tmp_path), "engines": {"flink": {"python": python}}}
    view = {"name": "second_tag", "representations": [
        {"dialect": "spark", "sql": SPARK_SQL}, {"dialect": "flink", "sql": flink_sql}],
        "tests": [{"name": "the_second_tag", "given": {"items": {"rows": ROWS}}, "expect": {"rows": EXPECTED}},
                  {"name": "nothing_given", "given": {"items": {"rows": []}}, "expect": {"empty": True}}]}
    return write_repo(tmp_path / "repo", config, {
        "views/local/s.yaml": {"catalog": "local", "schema": "s", "views": [view]},
        "sources/local/s.yaml": SOURCES})


def test_a_view_passes_on_spark_and_flink_in_every_report(tmp_path: Path, python: str) -> None:
    repo = _repo(tmp_path, python, "SELECT id, tags[2] AS second_tag, amount, ordered_at\nFROM items")
    res = run_cli(repo, "test", "--format", "json")
    assert res.code == 0, res.text
    report = json.loads(res.out)
    jsonschema.validate(report, json.loads((ROOT / "schemas" / "tests.schema.json").read_text()))
    assert [(t["engine"], t["name"], t["status"]) for t in report["tests"]] == [
        ("spark", "the_second_tag", "passed"), ("spark", "nothing_given", "passed"),
        ("flink", "the_second_tag", "passed"), ("flink", "nothing_given", "passed")], res.out
    only = json.loads(run_cli(repo, "test", "--engine", "flink", "--format", "json").out)
    assert [(t["engine"], t["status"]) for t in only["tests"]] == [("flink", "passed")] * 2
    text = run_cli(repo, "test", "--engine", "all").out
    assert text.startswith("Tests passed: 4 test(s): 4 passed"), text
    md = run_cli(repo, "test", "--format", "markdown").out
    assert "| ✅ | flink | `local.s.second_tag` | `the_second_tag` | passed |" in md, md
    out = tmp_path / "junit.xml"
    assert run_cli(repo, "test", "--format", "junit", "--out", str(out)).code == 0
    suites = sorted(s.name for s in JUnitXml.fromfile(str(out)))
    assert suites == ["local.s.second_tag [flink]", "local.s.second_tag [spark]"], suites


def test_a_wrong_flink_representation_fails_on_flink_and_disagrees_in_the_plan(tmp_path: Path, python: str) -> None:
    """Copied unchanged from Spark, `tags[1]` is the first tag on Flink."""
    repo = _repo(tmp_path, python, SPARK_SQL)
    res = run_cli(repo, "test")
    assert res.code == 1
    fails = [ln for ln in res.out.splitlines() if ln.startswith(("FAIL", "ERROR"))]
    assert len(fails) == 1 and fails[0].startswith("FAIL  flink  views/local/s.yaml:"), res.out
    assert "the_second_tag: 2 expected row(s) missing, 2 unexpected row(s)" in fails[0]
    out = tmp_path / "junit.xml"
    run_cli(repo, "test", "--format", "junit", "--out", str(out))
    failed = [(s.name, c.name) for s in JUnitXml.fromfile(str(out)) for c in s
              if any(isinstance(r, Failure) for r in c.result)]
    assert failed == [("local.s.second_tag [flink]", "the_second_tag")]

    planned = run_cli(repo, "plan", "--spark", "--format", "json")
    assert planned.code == 1, planned.text
    plan = json.loads(planned.out)
    jsonschema.validate(plan, json.loads((ROOT / "schemas" / "plan.schema.json").read_text()))
    assert plan["engines"] == [{"view": {"catalog": "local", "schema": "s", "name": "second_tag"},
                                "spark": "passed", "trino": "no representation", "flink": "failed"}]
    disagree = {e["code"]: e for e in plan["errors"]}["representations_disagree"]["message"]
    assert "spark returned 2 row(s) (id, second_tag, amount, ordered_at): (1, b, 1.50, 2026-01-01 10:00:00.123456)" \
        in disagree, disagree
    assert "flink returned 2 row(s) (id, second_tag, amount, ordered_at): (1, a, 1.50, 2026-01-01 10:00:00.123456)" \
        in disagree, disagree
    text = run_cli(repo, "plan", "--spark").out
    assert "  local.s.second_tag  passed  no representation  failed" in text, text


def test_a_right_flink_representation_shows_passed_in_the_plans_matrix(tmp_path: Path, python: str) -> None:
    repo = _repo(tmp_path, python, "SELECT id, tags[2] AS second_tag, amount, ordered_at FROM items")
    plan = json.loads(run_cli(repo, "plan", "--spark", "--format", "json").out)
    assert plan["engines"] == [{"view": {"catalog": "local", "schema": "s", "name": "second_tag"},
                                "spark": "passed", "trino": "no representation", "flink": "passed"}]
    assert "representations_disagree" not in {e["code"] for e in plan["errors"]}


FLAT = [{"name": n, "type": t} for n, t in (
    ("id", "int"), ("amount", "decimal(10,2)"), ("ratio", "double"), ("f", "float"), ("ok", "boolean"),
    ("day", "date"), ("ts", "timestamp"), ("ts_z", "timestamp_ltz"), ("code", "char(3)"), ("bin", "binary"),
    ("name", "string"), ("big", "bigint"), ("nums", "array<int>"), ("pair", "struct<x:int,y:string>"),
    ("props", "map<string,int>"))]
FLAT_ROWS = [
    {"id": 1, "amount": "12345678.90", "ratio": "NaN", "f": 0.1, "ok": True, "day": "2026-02-28",
     "ts": "2026-01-01 10:00:00.123456", "ts_z": "2026-07-01 23:30:00-07:00", "code": "a", "bin": "hi",
     "name": "it's \"quoted\" \\ ünï", "big": -9223372036854775808, "nums": [1, None, 3],
     "pair": {"x": 7, "y": "b"}, "props": {"k": 1}},
    {"id": 2, "ratio": "-Infinity", "ok": False, "day": "0001-01-01", "ts": "9999-12-31 23:59:59",
     "name": "", "big": 9223372036854775807, "nums": [], "props": {}},
    {"id": 3},
]


def test_every_type_reaches_flink_exactly_as_spark_reads_it(tmp_path: Path, python: str) -> None:
    """Each value arrives on Flink and comes back exactly (decimals, 32-bit floats, NaN,
    microseconds, instants, padded CHAR, bytes, arrays and maps (an empty one of each too), structs), on both
    engines."""
    got, res = round_trip.outcomes(tmp_path, "flink", {"python": python}, FLAT, FLAT_ROWS)
    assert got == round_trip.all_passed("flink"), res.text
