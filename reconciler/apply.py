"""Carry a plan out: lock, re-check every action against the catalog, then
execute in order, per-view atomic, with an audit row per attempted action and
a version row per applied change (committed with the audit outcome). Records
left by a dead run are repaired first, under the lock (reconciler.repair). A
failure stops the run; what was applied stays applied and recorded, so a re-run
converges."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reconciler.adapters.base import AdapterError, Marker, SchemaSnapshot, WriteContext
from reconciler.errors import UserError
from reconciler.gitinfo import GitInfo
from reconciler.model import LiveView, ViewSpec
from reconciler.plan import Action, Plan
from reconciler.repair import repair_dead_runs
from reconciler.secrets import redact
from reconciler.state import StateStore, VersionRecord, new_run_id
from reconciler.workspace import Workspace


class StalePlan(UserError):
    pass


@dataclass
class ApplyResult:
    run_id: str
    applied: list[Action] = field(default_factory=list)
    failed: list[tuple[Action, str]] = field(default_factory=list)
    skipped: list[Action] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)  # records of dead runs fixed first

    @property
    def ok(self) -> bool:
        return not self.failed


def lock_name(project: str) -> str:
    return f"apply:{project}"


def stale_actions(plan: Plan, snapshots: dict[tuple[str, str], SchemaSnapshot],
                  folds: Callable[[str], bool]) -> list[str]:
    """Why each action no longer matches the catalog (empty = plan is fresh)."""
    reasons = []
    for a in plan.actions:
        snap = snapshots.get((a.view.catalog, a.view.schema))
        live = snap.find(a.view.name, folds(a.view.catalog)) if snap is not None else None
        if a.action == "create":
            if live is not None:
                reasons.append(f"{a.view}: planned as create, but a view now exists")
        elif live is None:
            reasons.append(f"{a.view}: planned as {a.action}, but the view no longer exists")
        elif live.fingerprint != a.live_fingerprint:
            reasons.append(f"{a.view}: changed in the catalog since the plan was made")
    return reasons


def repair_before_plan(ws: Workspace, state: StateStore, actor: str, lock_timeout: float,
                       on_note: Callable[[str], None]) -> list[str]:
    """Repair the records of dead applies under the apply lock, before planning.
    A store without tables or without running applies is left untouched."""
    project = ws.config.project
    if not state.ready or not state.dead_runs(project, ""):
        return []
    run_id = new_run_id()
    state.acquire_lock(lock_name(project), f"{actor}@{socket.gethostname()}:{os.getpid()} (repair)", run_id,
                       wait_s=lock_timeout)
    try:
        notes = repair_dead_runs(ws, state, project, run_id)
    finally:
        state.release_lock(lock_name(project), run_id)
    for note in notes:
        on_note(note)
    return notes


def apply_plan(
    ws: Workspace,
    plan: Plan,
    state: StateStore,
    actor: str,
    git: GitInfo,
    lock_timeout: float = 0,
    on_action: Callable[[Action, str, str | None], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> ApplyResult:
    if plan.errors:
        raise UserError("the plan has errors and cannot be applied")
    project = ws.config.project
    run_id = new_run_id()
    result = ApplyResult(run_id)
    holder = f"{actor}@{socket.gethostname()}:{os.getpid()}"
    try:
        state.acquire_lock(lock_name(project), holder, run_id, wait_s=lock_timeout)
    except UserError:
        state.start_run(project, "apply", actor, git, plan.digest(), plan.declarations_digest, run_id,
                        outcome="refused")
        state.finish_run(run_id, "refused", {"reason": "locked"})
        raise
    try:
        # Marked running only under the lock: any other running apply of this project is dead.
        state.start_run(project, "apply", actor, git, plan.digest(), plan.declarations_digest, run_id)
        result.repaired = repair_dead_runs(ws, state, project, run_id)
        if on_note:
            for note in result.repaired:
                on_note(note)
        # Under the lock, read again what the plan was made against.
        schemas = {(a.view.catalog, a.view.schema) for a in plan.actions}
        snapshots = ws.fetch(sorted({c for c, _ in schemas}), schemas, all_schemas=False)
        def folds(catalog: str) -> bool:
            return ws.adapter(catalog).capabilities.fold_names

        reasons = stale_actions(plan, snapshots, folds)
        if reasons:
            state.finish_run(run_id, "refused", {"reason": "stale plan", "details": reasons})
            raise StalePlan("stale plan: the catalog changed since the plan was made, nothing was applied:\n  "
                            + "\n  ".join(reasons) + "\nrun `viewsync plan` again")
        ctx = WriteContext(actor=actor, git_commit=git.commit, run_id=run_id)
        for seq, action in enumerate(plan.actions):
            if result.failed:
                result.skipped.append(action)
                continue
            snap = snapshots.get((action.view.catalog, action.view.schema))
            live = snap.find(action.view.name, folds(action.view.catalog)) if snap is not None else None
            error = _execute(ws, state, run_id, seq, action, live, actor, git, ctx, project)
            if error is None:
                result.applied.append(action)
            else:
                result.failed.append((action, error))
            if on_action:
                on_action(action, "applied" if error is None else "failed", error)
        for seq, action in enumerate(result.skipped, start=len(plan.actions)):
            audit_id = state.audit_start(run_id, seq, actor, action.action, action.view, _canonical(action.before),
                                         _canonical(action.desired), None, None,
                                         [c.to_json() for c in action.changes], git)
            state.finish_action(audit_id, "skipped", "not attempted: an earlier action failed")
        state.finish_run(run_id, "success" if result.ok else "failed",
                         {"applied": len(result.applied), "failed": len(result.failed),
                          "skipped": len(result.skipped)})
        return result
    except StalePlan:
        raise
    except BaseException:
        state.finish_run(run_id, "failed", {"applied": len(result.applied)})
        raise
    finally:
        state.release_lock(lock_name(project), run_id)


def _canonical(spec: ViewSpec | None) -> dict[str, Any] | None:
    return spec.canonical() if spec is not None else None


def _execute(ws: Workspace, state: StateStore, run_id: str, seq: int, action: Action, live: LiveView | None,
             actor: str, git: GitInfo, ctx: WriteContext, project: str) -> str | None:
    """Run one action; returns an error message or None. The audit row is written
    first (pending) so a crash mid-call still leaves a trace."""
    spec = action.desired
    after_digest = spec.digest() if spec is not None else None
    before_digest = action.before.digest() if action.before is not None else None
    changes = [c.to_json() for c in action.changes]
    audit_id = state.audit_start(run_id, seq, actor, action.action, action.view, _canonical(action.before),
                                 _canonical(spec), before_digest, after_digest, changes, git)
    adapter = ws.adapter(action.view.catalog)
    try:
        if action.action == "create":
            assert spec is not None and after_digest is not None
            adapter.create(action.view, spec, Marker(project, after_digest), ctx)
        elif action.action in ("update", "adopt"):
            assert spec is not None and after_digest is not None and live is not None
            adapter.update(live, spec, Marker(project, after_digest), ctx)
        else:
            assert live is not None
            adapter.drop(live, ctx)
    except AdapterError as err:
        message = redact(str(err), ws.config.secrets)
        state.finish_action(audit_id, "failed", message)
        return message
    except Exception as err:  # an unexpected backend failure must still be recorded
        message = redact(f"{type(err).__name__}: {err}", ws.config.secrets)
        state.finish_action(audit_id, "failed", message)
        return message
    state.finish_action(audit_id, "applied", version=VersionRecord(
        run_id, action.view, action.action, _canonical(spec), after_digest, changes, actor, git.commit))
    return None
