"""Repositories of many Hive Metastore views, for the speed, prefetch and sent-ahead tests,
and their plan and apply."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from reconciler.apply.run import ApplyResult, apply_plan
from reconciler.core.gitinfo import GitInfo
from reconciler.plan.planner import PlanOptions
from reconciler.state.store import StateStore
from reconciler.workspace import Workspace


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


def _plan_and_apply(repo: Path, parallelism: int = 8,
                    between: Callable[[], object] | None = None) -> tuple[ApplyResult, list[str]]:
    """Plan `repo` (project "speed"; it must have no errors), call `between`, then apply: the
    result and each action's "name:outcome" in the order reported."""
    ws = Workspace.open(repo, parallelism=parallelism)
    try:
        plan, _ = ws.plan(PlanOptions(project="speed"), ws.declarations())
        assert not plan.errors, plan.errors
        if between is not None:
            between()
        order: list[str] = []
        res = apply_plan(ws, plan, StateStore(ws.config.state_url), "tester", GitInfo(),
                         on_action=lambda a, outcome, _e: order.append(f"{a.view.name}:{outcome}"))
        return res, order
    finally:
        ws.close()
