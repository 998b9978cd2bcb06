"""Spark's variable substitution is off in the tests' session: a fixture value, an expected value or
a view's SQL holding `${env:NAME}`, `${system:NAME}` or `${NAME}` reaches Spark byte for byte, so a
pull request cannot print a CI secret through `viewsync test` (issue 38, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.repos import managed_config, write_repo

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]

SECRET = "CITOKEN_SECRET_8d2f"
VALUES = ["${env:VS_T_CI_TOKEN}", "${system:user.name}", " $HOME ${SECRET}", "${HOME}", "${spark.master}"]


def test_dollar_braces_in_fixtures_and_view_sql_are_data_not_variables(tmp_path: Path) -> None:
    rows = [{"id": i, "code": v} for i, v in enumerate(VALUES)]
    views = {"catalog": "local", "schema": "s", "views": [{
        "name": "echo",
        "representations": [{"dialect": "spark",
                             "sql": "SELECT id, code, '${env:VS_T_CI_TOKEN}' AS leak FROM raw"}],
        "tests": [{"name": "values_come_back_as_written",
                   "given": {"raw": {"rows": rows}},
                   "expect": {"rows": [{**r, "leak": "${env:VS_T_CI_TOKEN}"} for r in rows]}},
                  {"name": "a_failure_shows_the_values_as_written",
                   "given": {"raw": {"rows": rows[:1]}},
                   "expect": {"rows": [{"id": 9, "code": "x", "leak": "y"}]}}]}]}
    sources = {"catalog": "local", "schema": "s",
               "tables": [{"name": "raw", "columns": [{"name": "id", "type": "int"},
                                                      {"name": "code", "type": "string"}]}]}
    repo = write_repo(tmp_path / "repo", managed_config(tmp_path), {
        "views/local/s.yaml": yaml.safe_dump(views), "sources/local/s.yaml": yaml.safe_dump(sources)})

    env = {"VS_T_CI_TOKEN": SECRET, "SECRET": "also-a-secret"}
    res = run_cli(repo, "test", "--format", "json", env=env, process=True)
    assert SECRET not in res.text and "also-a-secret" not in res.text
    by_name = {t["name"]: t for t in json.loads(res.out)["tests"]}
    assert by_name["values_come_back_as_written"]["status"] == "passed", by_name
    failed = by_name["a_failure_shows_the_values_as_written"]
    assert failed["status"] == "failed"
    assert "${env:VS_T_CI_TOKEN}" in json.dumps(failed["difference"]), failed
    for fmt in ("text", "markdown"):
        shown = run_cli(repo, "test", "--format", fmt, env=env, process=True)
        assert SECRET not in shown.text and "${env:VS_T_CI_TOKEN}" in shown.out, shown.text
