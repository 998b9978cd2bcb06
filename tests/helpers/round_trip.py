"""Every type of a fixture reaching an engine exactly: one view, `SELECT *` over a table of the
given columns, written in spark and in the engine's dialect, tested with the rows given back
(and with none), on Spark and on that engine in one `viewsync test`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.cli import CliResult, run_cli
from tests.helpers.repos import managed_config, write_repo


def outcomes(tmp: Path, engine: str, settings: dict[str, Any], columns: list[dict[str, Any]],
                  rows: list[dict[str, Any]]) -> tuple[list[tuple[str, str, str, Any]], CliResult]:
    """(engine, test, status, error or difference) of each test, and the run itself."""
    config = {**managed_config(tmp), "engines": {engine: settings}}
    view = {"name": "flat_copy", "representations": [{"dialect": "spark", "sql": "SELECT * FROM flat"},
                                                     {"dialect": engine, "sql": "SELECT * FROM flat"}],
            "tests": [{"name": "as_given", "given": {"flat": {"rows": rows}}, "expect": {"rows": rows}},
                      {"name": "none_given", "given": {"flat": {"rows": []}}, "expect": {"empty": True}}]}
    repo = write_repo(tmp / "repo", config, {
        "views/local/s.yaml": {"catalog": "local", "schema": "s", "views": [view]},
        "sources/local/s.yaml": {"catalog": "local", "schema": "s", "tables": [{"name": "flat", "columns": columns}]}})
    res = run_cli(repo, "test", "--format", "json")
    return [(t["engine"], t["name"], t["status"], t.get("error") or t.get("difference"))
            for t in json.loads(res.out)["tests"]], res


def all_passed(engine: str) -> list[tuple[str, str, str, Any]]:
    return [(e, name, "passed", None) for e in ("spark", engine) for name in ("as_given", "none_given")]
