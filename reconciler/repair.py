"""Repair the records of applies that died (SIGKILL, power loss) before writing
their outcome: under the apply lock, every run still marked `running` is dead.
Each of its `pending` audit rows is reconciled against the live catalog: the
change is there (the marker digest matches, or the dropped view is gone) ->
`applied`, with the missing version row; otherwise -> `failed`. The run is
marked `interrupted`. Each repair is reported in one line."""

from __future__ import annotations

import json
from typing import Any

from reconciler.adapters.base import SchemaSnapshot
from reconciler.model import LiveView, ViewId
from reconciler.state import VIEW_ACTIONS, StateStore, VersionRecord
from reconciler.workspace import Workspace


def outcome(row: dict[str, Any], live: LiveView | None) -> tuple[str, str | None]:
    """What a pending audit row really was, judged by the live view (pure)."""
    if row["action"] == "drop":
        if live is None:
            return "applied", None
        return "failed", "interrupted: the process died before the view was dropped"
    if live is not None and row["after_digest"] is not None and row["after_digest"] in (
            live.spec_digest, live.spec.digest()):
        return "applied", None
    return "failed", "interrupted: the process died before the change reached the catalog"


def repair_dead_runs(ws: Workspace, state: StateStore, project: str, current_run: str) -> list[str]:
    """Reconcile the records of dead runs; returns one line per repaired record."""
    notes: list[str] = []
    for run in state.dead_runs(project, current_run):
        rows = state.unfinished_actions(run["run_id"])
        live = _live_views(ws, rows)
        counts = {"applied": 0, "failed": 0, "unknown": 0}
        for row in rows:
            view = ViewId(row["catalog"], row["schema_name"], row["view_name"])
            if row["outcome"] == "applied":  # written by an older version in two transactions
                state.record_version(run["run_id"], view, row["action"], _spec(row), row["after_digest"],
                                     json.loads(row["changes"] or "[]"), row["actor"], row["git_commit"])
                notes.append(f"{view}: {row['action']} recorded as version (run {run['run_id']} died before)")
                continue
            error: str | None
            if row["action"] not in VIEW_ACTIONS:  # e.g. a schema owner: no version to judge it by
                result, error = "unknown", "interrupted; re-run apply to converge"
            elif (view.catalog, view.schema) not in live:  # the catalog is no longer configured
                result, error = "unknown", f"interrupted; catalog {view.catalog!r} is not configured to check"
            else:
                result, error = outcome(row, live[(view.catalog, view.schema)].find(view.name, _folds(ws, view)))
            version = None
            if result == "applied":
                version = VersionRecord(run["run_id"], view, row["action"], _spec(row), row["after_digest"],
                                        json.loads(row["changes"] or "[]"), row["actor"], row["git_commit"])
            state.finish_action(int(row["id"]), result, error, version)
            counts[result] += 1
            notes.append(f"{view}: pending {row['action']} of dead run {run['run_id']} marked {result}"
                         + {"applied": " (found in the catalog; version recorded)",
                            "failed": " (not in the catalog)", "unknown": f" ({error})"}[result])
        state.finish_run(run["run_id"], "interrupted",
                         {"reason": "the process died; records repaired by a later apply", **counts})
        notes.append(f"run {run['run_id']} (started {run['started_at']:%Y-%m-%d %H:%M:%S} by {run['actor']}) "
                     f"died mid-apply: marked interrupted, {counts['applied']} action(s) found applied, "
                     f"{counts['failed']} failed, {counts['unknown']} unknown")
    return notes


def _spec(row: dict[str, Any]) -> dict[str, Any] | None:
    return json.loads(row["after_spec"]) if row["after_spec"] else None


def _folds(ws: Workspace, view: ViewId) -> bool:
    return ws.adapter(view.catalog).capabilities.fold_names


def _live_views(ws: Workspace, rows: list[dict[str, Any]]) -> dict[tuple[str, str], SchemaSnapshot]:
    wanted = {(r["catalog"], r["schema_name"]) for r in rows if r["outcome"] == "pending"
              and r["catalog"] in ws.config.catalogs}
    if not wanted:
        return {}
    # A catalog that cannot be read fails the apply: a repair never guesses.
    return ws.fetch(sorted({c for c, _ in wanted}), wanted, all_schemas=False)
