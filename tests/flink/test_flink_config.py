"""The `engines: flink:` section, offline: what a user configures (the interpreter that has
PyFlink), the error when Flink is asked for but not configured, a bad section refused at its
line, and an interpreter that cannot run named with how to install PyFlink."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from reconciler.core.errors import ValidationFailed
from reconciler.source.config import load_config
from reconciler.viewtests import engines
from tests.helpers.cli import run_cli
from tests.helpers.repos import managed_config, write_repo

VIEWS = {"views/local/s.yaml": yaml.safe_dump({"catalog": "local", "schema": "s", "views": [{
    "name": "v", "representations": [{"dialect": "flink", "sql": "SELECT 1 AS x"}],
    "tests": [{"name": "one", "expect": {"rows": [{"x": 1}]}}]}]})}


def _repo(tmp_path: Path, engines_section: dict[str, object] | None) -> Path:
    config = {**managed_config(tmp_path), **({"engines": engines_section} if engines_section is not None else {})}
    return write_repo(tmp_path / "repo", config, VIEWS)


def test_flink_is_configured_by_the_interpreter_that_has_pyflink(tmp_path: Path) -> None:
    config = load_config(_repo(tmp_path, {"flink": {"python": "~/flink-venv/bin/python",
                                                    "conf": {"parallelism.default": 2}}}))
    assert config.engines.flink is not None
    assert config.engines.flink.python == str(Path.home() / "flink-venv/bin/python")
    assert config.engines.flink.conf == {"parallelism.default": "2"}
    assert config.engines.configured() == ["spark", "flink"]
    assert engines.chosen(config, "flink") == ["flink"] and engines.load("flink").dialect == "flink"


def test_a_relative_interpreter_is_the_projects_from_any_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, {"flink": {"python": ".venv-flink/bin/python"}})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the path is the project's, not the working directory's
    config = load_config(repo)
    assert config.engines.flink is not None and config.engines.flink.python == str(repo / ".venv-flink/bin/python")
    bare = load_config(_repo(tmp_path / "bare", {"flink": {"python": "python3"}}))
    assert bare.engines.flink is not None and bare.engines.flink.python == "python3"  # found on PATH


def test_testing_on_flink_not_configured_is_a_clear_error(tmp_path: Path) -> None:
    res = run_cli(_repo(tmp_path, None), "test", "--engine", "flink")
    assert res.code != 0
    assert "engine 'flink' is not configured (configure it under engines: in viewsync.yaml)" in res.text, res.text


@pytest.mark.parametrize(("section", "said"), [
    ({}, "'python' is required"),
    ({"python": "/x", "pyhton": "/y"}, "unknown key 'pyhton'"),
])
def test_a_bad_flink_section_is_refused(tmp_path: Path, section: dict[str, object], said: str) -> None:
    with pytest.raises(ValidationFailed) as err:
        load_config(_repo(tmp_path, {"flink": section}))
    assert "engines.flink" in str(err.value) and said in str(err.value), str(err.value)


def test_an_interpreter_that_cannot_run_says_how_to_install_pyflink(tmp_path: Path) -> None:
    missing = tmp_path / "no-venv" / "bin" / "python"
    res = run_cli(_repo(tmp_path, {"flink": {"python": str(missing)}}), "test", "--engine", "flink")
    assert res.code != 0
    assert f"'{missing}' cannot run" in res.text and "pip install apache-flink==2.3.0" in res.text, res.text
