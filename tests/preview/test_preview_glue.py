"""Preview environments on Glue (moto_server): copies in a Glue database the env creates and
removes, references rewritten, live tables untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.preview import chain_repo, change


def _glue_state(raw_glue: Any, skip: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for db in raw_glue.get_databases()["DatabaseList"]:
        if db["Name"] == skip:
            continue
        out[db["Name"]] = db.get("Parameters")
        for t in raw_glue.get_tables(DatabaseName=db["Name"])["TableList"]:
            out[f"{db['Name']}.{t['Name']}"] = (t.get("VersionId"), t.get("ViewOriginalText"), t.get("Parameters"),
                                                t.get("ViewDefinition"))
    return out


@pytest.mark.parametrize("view_format", ["multi-dialect", "spark"])
def test_preview_on_glue(tmp_path: Path, glue_url: str, raw_glue: Any, view_format: str) -> None:
    raw_glue.create_database(DatabaseInput={"Name": "shop"})
    config = {"version": 1, "project": "p", "state": f"sqlite:///{tmp_path}/state.db",
              "catalogs": {"glue": {"type": "glue", "region": "us-east-1", "catalog_id": "123456789012",
                                    "endpoint_url": glue_url, "view_format": view_format}}}
    repo = chain_repo(tmp_path / "repo", config, "glue", "shop", "orders")
    applied = run_cli(repo, "apply", "--auto-approve")
    assert applied.code == 0, applied.text
    before = _glue_state(raw_glue, "shop__pr2")
    change(repo, "glue", "shop", "orders")
    res = run_cli(repo, "preview", "up", "--env", "pr2", "--base", "main")
    assert res.code == 0, res.text
    tables = {t["Name"]: t for t in raw_glue.get_tables(DatabaseName="shop__pr2")["TableList"]}
    assert sorted(tables) == ["a", "b", "c"]
    assert tables["b"]["Parameters"]["viewsync.preview"] == "pr2"
    assert raw_glue.get_database(Name="shop__pr2")["Database"]["Parameters"] == {"viewsync.preview": "pr2"}
    assert _glue_state(raw_glue, "shop__pr2") == before
    assert run_cli(repo, "preview", "up", "--env", "pr2", "--base", "main").out.endswith("nothing to change.\n")
    assert run_cli(repo, "preview", "down", "--env", "pr2").code == 0
    assert _glue_state(raw_glue, "") == before
