"""Every `--out` file is masked as standard output is: a value the config takes from the
environment (a secret) reaches neither a saved plan nor a report file (issue 39, item 2)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.repos import managed_config, view_yaml, write_repo

SECRET = "vs-out-secret-5c1e"


def _repo(tmp_path: Path) -> Path:
    config = managed_config(tmp_path)
    config["events"] = {"hook": {"type": "webhook", "url": "http://127.0.0.1:9/hook", "secret": "${VS_T_OUT_TOKEN}"}}
    views = "catalog: local\nschema: s\nviews:\n" + view_yaml("v", f"SELECT '{SECRET}' AS token")
    return write_repo(tmp_path / "repo", config, {"views/local/s.yaml": views})


def test_a_saved_plan_masks_the_configs_secrets_as_stdout_does(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    res = run_cli(_repo(tmp_path), "plan", "--out", str(saved), env={"VS_T_OUT_TOKEN": SECRET})
    assert res.code == 0, res.text
    written = saved.read_text(encoding="utf-8")
    assert "AS token" in written and "'***'" in written, written  # the view is there, its literal masked
    assert SECRET not in written and SECRET not in res.text
