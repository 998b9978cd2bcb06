"""Engines of view tests, offline (issue 41): the `engines:` section and its masked credentials,
fixture rows as Trino literals, the engine in every report, the plan's engine matrix and
`representations_disagree`, and which engines `--engine` chooses."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest
import yaml

from reconciler.core.coltypes import parse
from reconciler.core.errors import UserError, ValidationFailed
from reconciler.core.model import ViewId
from reconciler.source.config import load_config
from reconciler.viewtests import engines, proof, render, trino_sql
from reconciler.viewtests import result as vresult
from reconciler.viewtests.compare import Difference
from reconciler.viewtests.result import Status
from tests.helpers.cli import run_cli
from tests.helpers.paths import ROOT
from tests.helpers.repos import managed_config, write_repo

V = ViewId("local", "s", "second_tag")


def _config(tmp_path: Path, trino: dict[str, object]) -> Path:
    return write_repo(tmp_path / "repo", {**managed_config(tmp_path), "engines": {"trino": trino}})


def test_a_trino_engine_is_configured_and_its_password_is_a_secret_even_written_literally(tmp_path: Path) -> None:
    repo = _config(tmp_path, {"url": "https://trino.example:8443/", "user": "ci", "password": "literal-pw-1"})
    config = load_config(repo)
    assert config.engines.trino is not None and config.engines.trino.url == "https://trino.example:8443"
    assert config.engines.configured() == ["spark", "trino"]
    assert "literal-pw-1" in config.secrets and "literal-pw-1" not in repr(config.engines)
    assert engines.chosen(config, None) == ["spark", "trino"] == engines.chosen(config, "all")
    assert engines.chosen(config, "trino") == ["trino"]
    with pytest.raises(UserError, match="engine 'flink' is not configured"):
        engines.chosen(config, "flink")


@pytest.mark.parametrize(("trino", "said"), [
    ({"user": "x"}, "'url' is required"),
    ({"url": "trino.example:8080"}, "http(s)://host:port of the Trino coordinator"),
    ({"url": "https://t:1", "pasword": "x"}, "unknown key 'pasword'"),
    ({"url": "https://t:1", "password": "a", "token": "b"}, "should not be valid"),
])
def test_a_bad_trino_section_is_refused_at_its_line(tmp_path: Path, trino: dict[str, object], said: str) -> None:
    with pytest.raises(ValidationFailed) as err:
        load_config(_config(tmp_path, trino))
    assert "engines.trino" in str(err.value) and said in str(err.value), str(err.value)


def test_the_trino_password_never_leaves_the_program(tmp_path: Path) -> None:
    """Over plain http a password is refused before anything is sent; the message does not show it,
    and neither does an unreachable server's."""
    files = {"views/local/s.yaml": yaml.safe_dump({"catalog": "local", "schema": "s", "views": [{
        "name": "v", "representations": [{"dialect": "trino", "sql": "SELECT 1 AS x"}],
        "tests": [{"name": "one", "expect": {"rows": [{"x": 1}]}}]}]})}
    for url in ("http://127.0.0.1:9", "https://127.0.0.1:9"):
        config = {**managed_config(tmp_path), "engines": {"trino": {"url": url, "password": "${VS_TRINO_PW}"}}}
        repo = write_repo(tmp_path / "repo", config, files)
        res = run_cli(repo, "test", env={"VS_TRINO_PW": "pw-from-env-42"})
        assert res.code == 1 and "pw-from-env-42" not in res.text, res.text
        assert ("https only" in res.text) if url.startswith("http:") else ("does not answer" in res.text), res.text


@pytest.mark.parametrize(("value", "type_", "literal"), [
    (None, "int", "NULL"),
    (-7, "bigint", "-7"),
    (Decimal("1.50"), "decimal(10,2)", "DECIMAL '1.50'"),
    ("it's", "string", "'it''s'"),
    ("back\\slash", "string", "'back\\slash'"),
    (float("nan"), "double", "nan()"),
    (float("-inf"), "double", "-infinity()"),
    (0.1, "double", "DOUBLE '0.1'"),
    (dt.date(2026, 1, 2), "date", "DATE '2026-01-02'"),
    (dt.datetime(2026, 1, 2, 3, 4, 5), "timestamp", "TIMESTAMP '2026-01-02 03:04:05.000000'"),
    (dt.datetime(2026, 1, 2, 3, 4, 5, 6), "timestamp_ltz", "TIMESTAMP '2026-01-02 03:04:05.000006 UTC'"),
    (b"\x00\xff", "binary", "X'00ff'"),
    (("a", "b"), "array<string>", "CAST(ARRAY['a', 'b'] AS array(varchar))"),
    ((("k", 1),), "map<string,int>", "CAST(MAP(ARRAY['k'], ARRAY[1]) AS map(varchar,integer))"),
    ((1, "x"), "struct<a:int,b:string>", 'CAST(ROW(1, \'x\') AS row("a" integer,"b" varchar))'),
])
def test_fixture_values_are_trino_literals_of_exactly_that_value(value: object, type_: str, literal: str) -> None:
    assert trino_sql.cell(value, parse(type_)) == literal


def _result(engine: str, status: Status, rows: list[list[str]] | None, error: str | None = None) -> vresult.TestResult:
    diff = Difference("1 unexpected row(s)", ["id"], [], [["1"]], 0, 1, 0, 1) if status is Status.FAILED else None
    return vresult.TestResult(V, "the_second_tag", "views/local/s.yaml", 9, status, difference=diff, error=error,
                      engine=engine, rows=(["id", "second"], rows) if rows is not None else None)


def test_two_engines_returning_other_rows_disagree_and_the_matrix_says_who_proved_what() -> None:
    run = vresult.TestRun([_result("spark", Status.PASSED, [["1", "b"]]),
                           _result("trino", Status.FAILED, [["1", "a"]])])
    [d] = proof.disagreements(run)
    assert d.engines == ("spark", "trino")
    assert d.message == ("test 'the_second_tag' of local.s.second_tag: the spark and trino representations "
                         "disagree: spark returned 1 row(s) (id, second): (1, b); "
                         "trino returned 1 row(s) (id, second): (1, a)")
    from reconciler.core.model import Representation, ViewSpec

    spec = ViewSpec(representations=[Representation(dialect="spark", sql="SELECT 1"),
                                     Representation(dialect="trino", sql="SELECT 1")])
    assert proof.matrix(run, [V], {V: spec}, ["spark", "trino"], engines.KNOWN) == [
        {"view": V.to_json(), "spark": "passed", "trino": "failed", "flink": "no representation"}]
    assert proof.matrix(run, [V], {V: spec}, ["spark"], engines.KNOWN)[0]["trino"] == "no engine"


def test_an_error_on_one_engine_against_rows_on_another_is_a_disagreement_and_the_same_rows_are_not() -> None:
    raised = vresult.TestRun([_result("spark", Status.PASSED, [["1", "b"]]),
                      _result("trino", Status.ERROR, None, "Trino: [INVALID_FUNCTION_ARGUMENT] SQL array indices "
                                                           "start at 1")])
    [d] = proof.disagreements(raised)
    assert d.shown[1] == "raised: Trino: [INVALID_FUNCTION_ARGUMENT] SQL array indices start at 1"
    same = vresult.TestRun([_result("spark", Status.FAILED, [["1", "a"]]),
                            _result("trino", Status.FAILED, [["1", "a"]])])
    assert proof.disagreements(same) == []  # wrong on both, alike: the tests say so, not a disagreement
    both_pass = vresult.TestRun([_result("spark", Status.PASSED, [["1", "b"]]),
                                 _result("trino", Status.PASSED, [["1", "b"]])])
    assert proof.disagreements(both_pass) == []


def test_every_report_carries_the_engine() -> None:
    run = vresult.TestRun([_result("spark", Status.PASSED, [["1", "b"]]),
                           _result("trino", Status.FAILED, [["1", "a"]])])
    data = run.to_json()
    jsonschema.validate(data, json.loads((ROOT / "schemas" / "tests.schema.json").read_text()))
    assert [t["engine"] for t in data["tests"]] == ["spark", "trino"]
    assert [r.engine for r in vresult.TestRun.from_json(data).results] == ["spark", "trino"]
    assert "FAIL  trino  views/local/s.yaml:9: local.s.second_tag: the_second_tag: 1 unexpected row(s)" \
        in render.text(run)
    assert "| ❌ | trino | `local.s.second_tag` | `the_second_tag` |" in render.markdown(run)
    junit = render.junit(run)
    assert '<testsuite name="local.s.second_tag [trino]"' in junit
    assert '<property name="engine" value="trino"' in junit
    rows = [{"view": V.to_json(), "spark": "passed", "trino": "failed", "flink": "no engine"}]
    assert render.matrix_text(rows)[-1] == "  local.s.second_tag  passed  failed  no engine"
    assert render.matrix_markdown(rows)[4] == "| `local.s.second_tag` | ✅ passed | ❌ failed | no engine |"


def test_a_view_with_only_a_trino_representation_is_not_told_it_lacks_spark_sql(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "repo", {**managed_config(tmp_path),
                                          "engines": {"trino": {"url": "http://127.0.0.1:9"}}}, {
        "views/local/s.yaml": yaml.safe_dump({"catalog": "local", "schema": "s", "views": [{
            "name": "v", "representations": [{"dialect": "trino", "sql": "SELECT 1 AS x"}],
            "tests": [{"name": "one", "expect": {"rows": [{"x": 1}]}}]}]})})
    res = run_cli(repo, "validate")
    assert res.code == 0, res.text
    res = run_cli(repo, "test", "--engine", "spark")
    assert res.code == 1 and "no selected view has a `dialect: spark` representation" in res.text, res.text


def test_a_run_on_one_engine_checks_and_prepares_its_tests_in_that_engines_sql_once(tmp_path: Path) -> None:
    """Speed (issue 41): `test --engine trino` checks each test in the trino SQL it then runs,
    so the run uses those prepared tests instead of preparing them all a second time; `validate`
    (every configured engine) still checks a view in the first dialect it has, Spark's."""
    from reconciler.services import viewtests as service
    from reconciler.workspace import Workspace

    both = [{"dialect": "spark", "sql": "SELECT 1 AS x"}, {"dialect": "trino", "sql": "SELECT 1 AS x"}]
    config = {**managed_config(tmp_path), "engines": {"trino": {"url": "http://127.0.0.1:9"}}}
    repo = write_repo(tmp_path / "repo", config, {
        "views/local/s.yaml": yaml.safe_dump({"catalog": "local", "schema": "s", "views": [
            {"name": "both", "representations": both, "tests": [{"name": "one", "expect": {"rows": [{"x": 1}]}}]},
            {"name": "spark_only", "representations": both[:1], "tests": [{"name": "two", "expect": {"rows": []}}]}]})})
    ws = Workspace.open(repo)
    decl = ws.declarations_at(None)
    _, on_trino = service._checked(ws, decl, None, ["trino"])
    assert on_trino is not None
    assert sorted((d, str(v)) for d, v, _ in on_trino) == [("spark", "local.s.spark_only"), ("trino", "local.s.both")]
    _, everywhere = service._checked(ws, decl, None)
    assert everywhere is not None and {d for d, _, _ in everywhere} == {"spark"}
