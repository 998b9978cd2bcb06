"""Carry a plan out: lock, re-check every action against the catalog, then
execute in dependency waves (independent actions concurrently where the
catalog allows), per-view atomic, with an audit row per attempted action and
a version row per applied change (committed with the audit outcome). A lock
left by a provably dead process is taken over (reconciler.state.lockholder), and the
records of a dead run are repaired first, under the lock (reconciler.apply.repair). A
failure stops the run; what was applied stays applied and recorded, so a re-run
converges."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection

from reconciler.adapters.base import AdapterError, Marker, SchemaSnapshot, WriteContext
from reconciler.apply import schema_owners
from reconciler.apply.repair import repair_dead_runs
from reconciler.apply.stream import stream
from reconciler.apply.waves import waves
from reconciler.core.errors import UserError
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import LiveView, ViewSpec
from reconciler.core.secrets import redact
from reconciler.events import model as ev
from reconciler.events.dispatch import Emitter
from reconciler.plan.planner import Action, Plan
from reconciler.state.lockholder import holder_string
from reconciler.state.store import Outcome, PendingAction, StateStore, VersionRecord, new_run_id
from reconciler.workspace import Workspace


class StalePlan(UserError):
    pass


@dataclass
class ApplyResult:
    run_id: str
    applied: list[Action] = field(default_factory=list)
    failed: list[tuple[Action, str]] = field(default_factory=list)
    skipped: list[Action] = field(default_factory=list)
    refused: list[tuple[Action, str]] = field(default_factory=list)  # vetoed by a blocking hook
    owner_errors: list[str] = field(default_factory=list)  # schema owners not written (views all applied)
    repaired: list[str] = field(default_factory=list)  # records of dead runs fixed first
    took_over: str | None = None  # the line saying the lock of a dead run was taken over

    @property
    def ok(self) -> bool:
        return not self.failed and not self.refused


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
                       on_note: Callable[[str], None],
                       events: Callable[[StateStore], Emitter] | None = None) -> list[str]:
    """Repair the records of dead applies under the apply lock, before planning.
    A store without tables or without running applies is left untouched. `events` opens
    the emitter the repaired outcomes' events are written with (only when there is a repair:
    it creates the outbox tables)."""
    project = ws.config.project
    if not state.ready or not state.dead_runs(project, ""):
        return []
    run_id = new_run_id()
    took_over = state.acquire_lock(lock_name(project), holder_string(actor, "repair"), run_id, wait_s=lock_timeout)
    if took_over:
        on_note(took_over)
    try:
        notes = repair_dead_runs(ws, state, project, run_id, events(state) if events is not None else None)
    finally:
        state.release_lock(lock_name(project), run_id)
    for note in notes:
        on_note(f"Repaired: {note}")
    return notes


def apply_plan(
    ws: Workspace,
    plan: Plan,
    state: StateStore,
    actor: str,
    git: GitInfo,
    lock_timeout: float = 0,
    on_action: Callable[[Action, str, str | None], None] | None = None,
    events: Emitter | None = None,
    on_note: Callable[[str], None] | None = None,
) -> ApplyResult:
    """`events`: announce the run and every action (outbox rows in the audit rows' transactions,
    blocking hooks before each action, delivery after each commit). `on_note` gets each line
    to show about the lock taken over and the records repaired."""
    if plan.errors:
        raise UserError("the plan has errors and cannot be applied")
    project = ws.config.project
    run_id = new_run_id()
    result = ApplyResult(run_id)
    plan_digest = plan.digest()  # once: it encodes every action
    try:
        result.took_over = state.acquire_lock(lock_name(project), holder_string(actor), run_id, wait_s=lock_timeout)
    except UserError:
        state.start_run(project, "apply", actor, git, plan_digest, plan.declarations_digest, run_id,
                        outcome="refused")
        state.finish_run(run_id, "refused", {"reason": "locked"})
        raise
    try:
        # Marked running only under the lock: any other running apply of this project is dead.
        state.start_run(project, "apply", actor, git, plan_digest, plan.declarations_digest, run_id)
        result.repaired = repair_dead_runs(ws, state, project, run_id, events)
        if on_note:
            if result.took_over:
                on_note(result.took_over)
            for note in result.repaired:
                on_note(f"Repaired: {note}")
        # Under the lock, read again what the plan was made against.
        touched: dict[tuple[str, str], list[str]] = {}
        for a in plan.actions:
            touched.setdefault((a.view.catalog, a.view.schema), []).append(a.view.name)
        snapshots = ws.fetch_views(touched)
        def folds(catalog: str) -> bool:
            return ws.adapter(catalog).capabilities.fold_names

        reasons = stale_actions(plan, snapshots, folds)
        if reasons:
            state.finish_run(run_id, "refused", {"reason": "stale plan", "details": reasons})
            raise StalePlan("stale plan: the catalog changed since the plan was made, nothing was applied:\n  "
                            + "\n  ".join(reasons) + "\nrun `viewsync plan` again")
        if events is not None:  # a run refused (locked, stale) changed nothing and announces nothing
            events.emit(events.event(run_id, -1, ev.RUN_STARTED, run_id, {
                "run_id": run_id, "project": project, "actor": actor, "git": _git(git),
                "plan_digest": plan_digest, "summary": plan.summary()}))
        ctx = WriteContext(actor=actor, git_commit=git.commit, run_id=run_id)

        def live_of(action: Action) -> LiveView | None:
            snap = snapshots.get((action.view.catalog, action.view.schema))
            return snap.find(action.view.name, folds(action.view.catalog)) if snap is not None else None

        steps = _Steps(ws, state, run_id, actor, git, ctx, project, events, plan.actions, live_of)
        _run_waves(ws, plan.actions, steps, result, on_action)
        for seq, action in enumerate(result.skipped, start=len(plan.actions)):
            if id(action) in steps.begun:  # begun ahead in a batch, then ended skipped
                continue
            audit_id = state.audit_start(run_id, seq, actor, action.action, action.view, _canonical(action.before),
                                         _canonical(action.desired), None, None,
                                         [c.to_json() for c in action.changes], git)
            state.finish_action(audit_id, "skipped", SKIPPED)
        if result.ok and plan.schema_owners:  # actions of this run: under its lock, before it is finished
            result.owner_errors = schema_owners.apply(plan.schema_owners, ws.adapter, state, run_id,
                                                      len(plan.actions), actor, git)
        summary = {"applied": len(result.applied), "failed": len(result.failed), "skipped": len(result.skipped)}
        if result.refused:
            summary["refused"] = len(result.refused)
        if result.owner_errors:
            summary["schema_owners_failed"] = len(result.owner_errors)
        outcome = "success" if result.ok and not result.owner_errors else "failed"
        state.finish_run(run_id, outcome, summary)
        if events is not None:
            events.emit(events.event(run_id, -1, ev.RUN_FINISHED, run_id, {
                "run_id": run_id, "project": project, "actor": actor, "git": _git(git),
                "outcome": outcome, "summary": summary}))
            events.flush()
        return result
    except StalePlan:
        raise
    except BaseException:
        state.finish_run(run_id, "failed", {"applied": len(result.applied)})
        if events is not None:
            with contextlib.suppress(Exception):  # the original error matters more
                events.emit(events.event(run_id, -1, ev.RUN_FINISHED, run_id, {
                    "run_id": run_id, "project": project, "actor": actor, "git": _git(git),
                    "outcome": "failed", "summary": {"applied": len(result.applied)}}))
        raise
    finally:
        state.release_lock(lock_name(project), run_id)


def _spec_of(action: Action) -> ViewSpec | None:
    """The spec whose SQL orders an action: what a write creates, what a drop removes."""
    return action.before if action.action == "drop" else action.desired


def _run_waves(ws: Workspace, actions: list[Action], steps: _Steps, result: ApplyResult,
               on_action: Callable[[Action, str, str | None], None] | None) -> None:
    """Run every action, wave by wave (see reconciler.apply.waves), up to ws.parallelism at once
    when every catalog of the wave takes parallel writes; there, without blocking hooks, the
    wave is streamed (reconciler.apply.stream: records in batches on this thread, writers making
    only catalog calls). The first failure stops the run: nothing new starts, the actions
    already running finish and are recorded, the rest are skipped. A refusal (a blocking
    hook's veto) stops that action only."""
    stop = threading.Event()
    report = threading.Lock()

    def reported(seq: int, outcome: str, error: str | None) -> tuple[int, str, str | None]:
        if outcome == "failed":
            stop.set()
        if on_action and outcome != "skipped":
            with report:
                on_action(actions[seq], outcome, error)
        return seq, outcome, error

    def attempt(seq: int) -> tuple[int, str, str | None]:
        if stop.is_set():
            return seq, "skipped", None
        return reported(seq, *steps.run(seq))

    skipped: list[int] = []
    for wave in waves(actions, _spec_of):
        if stop.is_set():
            skipped += wave
            continue
        parallel = all(ws.adapter(actions[i].view.catalog).capabilities.parallel_writes for i in wave)
        workers = min(ws.parallelism, len(wave)) if parallel else 1
        if parallel and len(wave) > 1 and not steps.vetoes:  # records in batches, beside the writes
            outcomes = stream(wave, workers, stop, steps.begin_many, steps.attempt, steps.end_many,
                              lambda step: step.seq, reported, SKIPPED)
        elif workers == 1:
            outcomes = [attempt(i) for i in wave]
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="viewsync-apply") as pool:
                outcomes = list(pool.map(attempt, wave))
        for seq, outcome, error in outcomes:
            if outcome == "skipped":
                skipped.append(seq)
            elif outcome == "applied":
                result.applied.append(actions[seq])
            elif outcome == "refused":
                result.refused.append((actions[seq], error or ""))
            else:
                result.failed.append((actions[seq], error or ""))
    result.skipped = [actions[i] for i in sorted(skipped)]


def _git(git: GitInfo) -> dict[str, str | None]:
    return {"commit": git.commit, "ref": git.ref, "author": git.author}


def _canonical(spec: ViewSpec | None) -> dict[str, Any] | None:
    return spec.canonical() if spec is not None else None


SKIPPED = "not attempted: an earlier action failed"


@dataclass
class _Step:
    """One action between its pending audit row and its outcome."""

    seq: int
    action: Action
    live: LiveView | None
    audit_id: int
    before_digest: str | None
    after_digest: str | None
    changes: list[dict[str, Any]]
    refusal: str | None = None  # a blocking hook's veto
    pre: dict[str, Any] | None = None  # the pre-event: the post-event repeats its data
    after: dict[str, Any] | None = None  # the desired spec in canonical form, made once for every record


class _Steps:
    """An action in three steps: `begin` (the pending audit row with its pre-event, and
    the blocking hooks' veto), `write` (the catalog call) and `end` (the outcome, with
    the version row and the post-event, in one transaction). The audit row is
    committed before the catalog is touched, so a crash mid-call leaves a trace that
    the next apply repairs (reconciler.apply.repair). `begin_many` and `end_many` do the same
    for several actions in one transaction each (a streamed wave's batches)."""

    def __init__(self, ws: Workspace, state: StateStore, run_id: str, actor: str, git: GitInfo,
                 ctx: WriteContext, project: str, events: Emitter | None, actions: list[Action],
                 live_of: Callable[[Action], LiveView | None]) -> None:
        self.ws, self.state, self.run_id, self.actor, self.git = ws, state, run_id, actor, git
        self.ctx, self.project, self.events, self.actions, self.live_of = ctx, project, events, actions, live_of
        self.vetoes = events is not None and events.has_vetoes()
        self.begun: set[int] = set()  # id() of actions whose audit row was written ahead, then skipped
        self._delivering = threading.Lock()  # one delivery pass at a time: parallel writers must not send twice

    def run(self, seq: int) -> tuple[str, str | None]:
        step = self.begin(seq)
        outcome, error = self.attempt(step)
        self.end(step, outcome, error)
        return outcome, error

    def begin(self, seq: int) -> _Step:
        """The pending audit row and pre-event of one action, then the blocking hooks' veto."""
        step = self.begin_many([seq])[0]
        events = self.events
        if events is not None and step.pre is not None and self.vetoes:
            refusal = events.veto(step.pre)
            step.refusal = redact(refusal, self.ws.config.secrets) if refusal is not None else None
        return step

    def begin_many(self, seqs: list[int]) -> list[_Step]:
        """The pending audit rows of these actions with their pre-events, in one transaction
        (no veto: batches are begun only when no blocking hook is configured)."""
        steps = [self._step(seq) for seq in seqs]
        pending = [PendingAction(self.run_id, s.seq, self.actor, s.action.action, s.action.view,
                                 _canonical(s.action.before), s.after, s.before_digest, s.after_digest,
                                 s.changes, self.git) for s in steps]
        ids = self.state.audit_starts(pending, also=self._stored([s.pre for s in steps if s.pre is not None]))
        for step, audit_id in zip(steps, ids, strict=True):
            step.audit_id = audit_id
        return steps

    def _step(self, seq: int) -> _Step:
        action = self.actions[seq]
        spec = action.desired
        step = _Step(seq, action, self.live_of(action), 0, action.before.digest() if action.before else None,
                     spec.digest() if spec is not None else None, [c.to_json() for c in action.changes])
        step.after = _canonical(spec)
        if self.events is not None:
            step.pre = self.events.pre_event(
                action, run_id=self.run_id, seq=seq, actor=self.actor, git=_git(self.git),
                before_digest=step.before_digest, after_digest=step.after_digest, after=step.after,
                changes=step.changes)
        return step

    def _stored(self, events: list[dict[str, Any]]) -> Callable[[Connection], None] | None:
        """What writes these events of this run into the outbox, in the records' transaction."""
        emitter = self.events
        if emitter is None or not events:
            return None
        return lambda conn: emitter.enqueue_new(conn, events)  # their ids are this run's, stored once

    def attempt(self, step: _Step) -> tuple[str, str | None]:
        """A vetoed action is refused without touching the catalog; any other is written."""
        return ("refused", step.refusal) if step.refusal is not None else self.write(step)

    def write(self, step: _Step) -> tuple[str, str | None]:
        """The catalog call: (applied, None) or (failed, why)."""
        action, spec, live = step.action, step.action.desired, step.live
        adapter = self.ws.adapter(action.view.catalog)
        try:
            if action.action == "create":
                assert spec is not None and step.after_digest is not None
                adapter.create(action.view, spec, Marker(self.project, step.after_digest), self.ctx)
            elif action.action in ("update", "adopt"):
                assert spec is not None and step.after_digest is not None and live is not None
                adapter.update(live, spec, Marker(self.project, step.after_digest), self.ctx)
            else:
                assert live is not None
                adapter.drop(live, self.ctx)
        except AdapterError as err:
            return "failed", redact(str(err), self.ws.config.secrets)
        except Exception as err:  # an unexpected backend failure must still be recorded
            return "failed", redact(f"{type(err).__name__}: {err}", self.ws.config.secrets)
        return "applied", None

    def end(self, step: _Step, outcome: str, error: str | None) -> None:
        self.end_many([(step, outcome, error)])

    def end_many(self, results: list[tuple[_Step, str, str | None]]) -> None:
        """One transaction for these actions: each audit outcome, for an applied change its
        version row, and each post-event (made from the pre-event); then inline delivery.
        A begun action ended skipped is noted, so the run's skipped list does not record it again."""
        outcomes, posts = [], []
        for step, outcome, error in results:
            action = step.action
            version = None
            if outcome == "applied":
                version = VersionRecord(self.run_id, action.view, action.action, step.after,
                                        step.after_digest, step.changes, self.actor, self.git.commit)
            elif outcome == "skipped":
                self.begun.add(id(action))
            outcomes.append(Outcome(step.audit_id, outcome, None if outcome == "applied" else error, version))
            if self.events is not None and step.pre is not None:
                kind = ev.post_type(action.action, True) if outcome == "applied" else ev.FAILED
                posts.append(self.events.outcome_event(step.pre, kind, self.run_id, step.seq, outcome,
                                                       None if outcome == "applied" else error))
        self.state.finish_actions(outcomes, also=self._stored(posts))
        if self.events is not None:
            with self._delivering:
                self.events.flush()
