"""The one writer of throwaway repositories: viewsync.yaml plus view files."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml


def write_repo(root: Path, config: str | Mapping[str, Any], files: Mapping[str, Any] | None = None) -> Path:
    """Write `root`/viewsync.yaml and `files` (path relative to `root` -> text, or a mapping or
    list dumped as YAML); directories are made as needed. Returns `root`."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in {"viewsync.yaml": config, **(files or {})}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else yaml.safe_dump(content), encoding="utf-8")
    return root


def view_yaml(name: str, sql: str) -> str:
    """One entry of a view file's `views:` list, Spark SQL only, as YAML text."""
    return f"  - name: {name}\n    representations:\n      - dialect: spark\n        sql: {sql}\n"


def managed_config(tmp: Path) -> dict[str, Any]:
    """viewsync.yaml of a repository with one managed catalog `local`, its stores under `tmp`."""
    return {"version": 1, "project": "t", "state": f"sqlite:///{tmp}/s.db",
            "catalogs": {"local": {"type": "managed", "url": f"sqlite:///{tmp}/c.db"}}}
