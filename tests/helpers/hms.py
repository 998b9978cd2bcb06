"""Repositories of many Hive Metastore views, for the speed and prefetch tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def _view(name: str, sql: str) -> dict[str, Any]:
    return {"name": name, "columns": [{"name": "id", "type": "bigint"}],
            "representations": [{"dialect": "spark", "sql": sql}]}


def _repo(tmp_path: Path, uri: str, files: dict[str, list[dict[str, Any]]]) -> Path:
    repo = tmp_path / "repo"
    (repo / "views" / "hive").mkdir(parents=True, exist_ok=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "speed", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": uri, "write_format": "spark"}}}))
    for old in (repo / "views" / "hive").glob("*.yaml"):
        old.unlink()
    for db, views in files.items():
        (repo / "views" / "hive" / f"{db}.yaml").write_text(
            yaml.safe_dump({"catalog": "hive", "schema": db, "views": views}))
    return repo
