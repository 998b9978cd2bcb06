"""Carry a plan out: lock, re-check every action against the catalog, then
execute in order, per-view atomic, with an audit row per attempted action and
a version row per applied change. A failure stops the run; what was applied
stays applied and recorded, so a re-run converges."""

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
from reconciler.secrets import redact
from reconciler.state import StateStore
from reconciler.workspace import Workspace


class StalePlan(UserError):
    pass


@dataclass
class ApplyResult:
    run_id: str
    applied: list[Action] = field(default_factory=list)
    failed: list[tuple[Action, str]] = field(default_factory=list)
    skipped: list[Action] = field(default_factory=list)

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


def apply_plan(
    ws: Workspace,
    plan: Plan,
    state: StateStore,
    actor: str,
    git: GitInfo,
    lock_timeout: float = 0,
    on_action: Callable[[Action, str, str | None], None] | None = None,
) -> ApplyResult:
    if plan.errors:
        raise UserError("the plan has errors and cannot be applied")
    project = ws.config.project
    run_id = state.start_run(project, "apply", actor, git, plan.digest(), plan.declarations_digest)
    result = ApplyResult(run_id)
    holder = f"{actor}@{socket.gethostname()}:{os.getpid()}"
    try:
        state.acquire_lock(lock_name(project), holder, run_id, wait_s=lock_timeout)
    except UserError:
        state.finish_run(run_id, "refused", {"reason": "locked"})
        raise
    try:
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
            state.audit_finish(audit_id, "skipped", "not attempted: an earlier action failed")
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
        state.audit_finish(audit_id, "failed", message)
        return message
    except Exception as err:  # an unexpected backend failure must still be recorded
        message = redact(f"{type(err).__name__}: {err}", ws.config.secrets)
        state.audit_finish(audit_id, "failed", message)
        return message
    state.audit_finish(audit_id, "applied")
    state.record_version(run_id, action.view, action.action, _canonical(spec), after_digest, changes, actor,
                         git.commit)
    return None
