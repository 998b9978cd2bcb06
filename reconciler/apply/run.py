"""Carry a plan out: lock, re-check every action against the catalog, let each
catalog refuse writes it cannot make at all (CatalogAdapter.preflight), then
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection

from reconciler.adapters.base import AdapterError, Marker, SchemaSnapshot, WriteContext
from reconciler.apply import schema_owners
from reconciler.apply.repair import repair_dead_runs
from reconciler.apply.stream import sent_ahead, stream
from reconciler.apply.target import Target
from reconciler.apply.waves import waves
from reconciler.core.errors import UserError
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import LiveView, ViewId, ViewSpec
from reconciler.core.outcome import Outcome, RunOutcome
from reconciler.core.secrets import redact
from reconciler.events import model as ev
from reconciler.events.dispatch import Emitter
from reconciler.plan.planner import Action, Plan
from reconciler.state.lockholder import holder_string
from reconciler.state.store import Finish, PendingAction, RecordTexts, StateStore, VersionRecord, new_run_id


class StalePlan(UserError):
    pass


class CatalogRefused(UserError):
    """A catalog's preflight refused the run's writes: nothing was written."""


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


def repair_before_plan(ws: Target, state: StateStore, actor: str, lock_timeout: float,
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
    ws: Target,
    plan: Plan,
    state: StateStore,
    actor: str,
    git: GitInfo,
    lock_timeout: float = 0,
    on_action: Callable[[Action, str, str | None], None] | None = None,
    events: Emitter | None = None,
    on_note: Callable[[str], None] | None = None,
    kind: str = "apply",
    marks: Mapping[str, str] | None = None,
) -> ApplyResult:
    """`events`: announce the run and every action (outbox rows in the audit rows' transactions,
    blocking hooks before each action, delivery after each commit). `on_note` gets each line
    to show about the lock taken over and the records repaired. `kind`: the run's command in
    the records (`preview` for preview environments); `marks`: stamped on every view written,
    beside the ownership marker (a preview copy's environment, commit and expiry)."""
    if plan.errors:
        raise UserError("the plan has errors and cannot be applied")
    project = ws.config.project
    run_id = new_run_id()
    result = ApplyResult(run_id)
    plan_digest = plan.digest()  # once: it encodes every action
    try:
        result.took_over = state.acquire_lock(lock_name(project), holder_string(actor), run_id, wait_s=lock_timeout)
    except UserError:
        state.start_run(project, kind, actor, git, plan_digest, plan.declarations_digest, run_id,
                        outcome=RunOutcome.REFUSED)
        state.finish_run(run_id, RunOutcome.REFUSED, {"reason": "locked"})
        raise
    try:
        # Marked running only under the lock: any other running apply of this project is dead.
        state.start_run(project, kind, actor, git, plan_digest, plan.declarations_digest, run_id)
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
            state.finish_run(run_id, RunOutcome.REFUSED, {"reason": "stale plan", "details": reasons})
            raise StalePlan("stale plan: the catalog changed since the plan was made, nothing was applied:\n  "
                            + "\n  ".join(reasons) + "\nrun `viewsync plan` again")
        _preflight(ws, plan, state, run_id)
        if events is not None:  # a refused run (locked, stale, preflight) changed nothing: no events
            events.emit(events.event(run_id, -1, ev.RUN_STARTED, run_id, {
                "run_id": run_id, "project": project, "actor": actor, "git": _git(git),
                "plan_digest": plan_digest, "summary": plan.summary()}))
        ctx = WriteContext(actor=actor, git_commit=git.commit, run_id=run_id)

        def live_of(action: Action) -> LiveView | None:
            snap = snapshots.get((action.view.catalog, action.view.schema))
            return snap.find(action.view.name, folds(action.view.catalog)) if snap is not None else None

        steps = _Steps(ws, state, run_id, actor, git, ctx, project, events, plan.actions, live_of,
                       tuple(sorted((marks or {}).items())))
        unbegun = _run_waves(ws, plan.actions, steps, result, on_action)
        # Skipped and never begun: recorded together, without events (none was announced).
        state.record_unattempted([(steps.unattempted(seq), Outcome.SKIPPED, SKIPPED) for seq in unbegun])
        if result.ok and plan.schema_owners:  # actions of this run: under its lock, before it is finished
            result.owner_errors = schema_owners.apply(plan.schema_owners, ws.adapter, state, run_id,
                                                      len(plan.actions), actor, git)
        summary: dict[str, int] = {Outcome.APPLIED: len(result.applied), Outcome.FAILED: len(result.failed),
                                   Outcome.SKIPPED: len(result.skipped)}
        if result.refused:
            summary[Outcome.REFUSED] = len(result.refused)
        if result.owner_errors:
            summary["schema_owners_failed"] = len(result.owner_errors)
        outcome = RunOutcome.SUCCESS if result.ok and not result.owner_errors else RunOutcome.FAILED
        state.finish_run(run_id, outcome, summary)
        if events is not None:
            events.emit(events.event(run_id, -1, ev.RUN_FINISHED, run_id, {
                "run_id": run_id, "project": project, "actor": actor, "git": _git(git),
                "outcome": outcome, "summary": summary}))
            events.flush()
        return result
    except (StalePlan, CatalogRefused):  # refused runs are finished already
        raise
    except BaseException:
        state.finish_run(run_id, RunOutcome.FAILED, {Outcome.APPLIED: len(result.applied)})
        if events is not None:
            with contextlib.suppress(Exception):  # the original error matters more
                events.emit(events.event(run_id, -1, ev.RUN_FINISHED, run_id, {
                    "run_id": run_id, "project": project, "actor": actor, "git": _git(git),
                    "outcome": RunOutcome.FAILED, "summary": {Outcome.APPLIED: len(result.applied)}}))
        raise
    finally:
        state.release_lock(lock_name(project), run_id)


def _preflight(ws: Target, plan: Plan, state: StateStore, run_id: str) -> None:
    """Each catalog's refusal of writes it cannot carry out at all (CatalogAdapter.preflight),
    before the first write of the run: the run is then refused, nothing written."""
    writes: dict[str, list[tuple[str, ViewId]]] = {}
    for a in plan.actions:
        writes.setdefault(a.view.catalog, []).append((a.action, a.view))
    for catalog, pairs in sorted(writes.items()):
        try:
            ws.adapter(catalog).preflight(pairs)
        except AdapterError as err:
            message = redact(f"{err}; nothing was applied", ws.config.secrets)
            state.finish_run(run_id, RunOutcome.REFUSED, {"reason": "refused by the catalog", "details": [message]})
            raise CatalogRefused(message) from None


def _spec_of(action: Action) -> ViewSpec | None:
    """The spec whose SQL orders an action: what a write creates, what a drop removes."""
    return action.before if action.action == "drop" else action.desired


def _run_waves(ws: Target, actions: list[Action], steps: _Steps, result: ApplyResult,
               on_action: Callable[[Action, str, str | None], None] | None) -> list[int]:
    """Run every action, wave by wave (see reconciler.apply.waves), each wave streamed
    (reconciler.apply.stream: records in batches on this thread, writers making the
    blocking hooks' and the catalog's calls), up to ws.parallelism writers when every
    catalog of the wave takes parallel writes, else one; creates sent ahead of their answers
    where the catalog takes that (`_Steps.send`). The first failure stops the run:
    nothing new starts, the writes under way finish and are recorded, the rest are skipped.
    A refusal (a blocking hook's veto) stops that action only. Returns the skipped actions
    never begun (no audit row yet)."""
    stop = threading.Event()

    def reported(seq: int, outcome: str, error: str | None) -> None:
        if on_action and outcome != Outcome.SKIPPED:
            on_action(actions[seq], outcome, error)

    skipped: list[int] = []
    for wave in waves(actions, _spec_of):
        if stop.is_set():
            skipped += wave
            continue
        parallel = all(ws.adapter(actions[i].view.catalog).capabilities.parallel_writes for i in wave)
        writers = min(ws.parallelism, len(wave)) if parallel else 1
        for seq, outcome, error in stream(wave, writers, stop, steps.begin, steps.write, steps.end,
                                          lambda step: step.seq, reported, SKIPPED, send=steps.send,
                                          window=sent_ahead(writers)):
            if outcome == Outcome.SKIPPED:
                skipped.append(seq)
            elif outcome == Outcome.APPLIED:
                result.applied.append(actions[seq])
            elif outcome == Outcome.REFUSED:
                result.refused.append((actions[seq], error or ""))
            else:
                result.failed.append((actions[seq], error or ""))
    result.skipped = [actions[i] for i in sorted(skipped)]
    return [i for i in sorted(skipped) if i not in steps.begun]


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
    pre: dict[str, Any] | None = None  # the pre-event: the post-event repeats its data
    after: dict[str, Any] | None = None  # the desired spec in canonical form, made once for every record
    texts: RecordTexts | None = None  # `after` and `changes` as JSON, encoded once for the audit and version rows


class _Steps:
    """Actions in three steps, each a batch but `write`: `begin` (the pending audit rows with
    their pre-events, in one transaction), `write` or `send` (a blocking hook's veto, then the
    catalog call, or a create sent ahead of its answer; on a writer thread) and `end` (the
    outcomes, with the version rows and the post-events, in one transaction). The audit row
    is committed before the catalog is touched, so a crash mid-call leaves a trace that the
    next apply repairs (reconciler.apply.repair). Only the records thread (begin, end) touches the store."""

    def __init__(self, ws: Target, state: StateStore, run_id: str, actor: str, git: GitInfo,
                 ctx: WriteContext, project: str, events: Emitter | None, actions: list[Action],
                 live_of: Callable[[Action], LiveView | None], marks: tuple[tuple[str, str], ...] = ()) -> None:
        self.ws, self.state, self.run_id, self.actor, self.git = ws, state, run_id, actor, git
        self.ctx, self.project, self.events, self.actions, self.live_of = ctx, project, events, actions, live_of
        self.vetoes = events is not None and events.has_vetoes()
        self.begun: set[int] = set()  # sequence numbers with an audit row
        self.marks = marks  # stamped beside the ownership marker

    def begin(self, seqs: list[int]) -> list[_Step]:
        """The pending audit rows of these actions with their pre-events, in one transaction."""
        steps = [self.step(seq) for seq in seqs]
        ids = self.state.audit_starts([self.pending(s) for s in steps],
                                      also=self._stored([s.pre for s in steps if s.pre is not None]))
        for step, audit_id in zip(steps, ids, strict=True):
            step.audit_id = audit_id
        self.begun.update(seqs)
        return steps

    def step(self, seq: int) -> _Step:
        action = self.actions[seq]
        spec = action.desired
        step = _Step(seq, action, self.live_of(action), 0, action.before.digest() if action.before else None,
                     spec.digest() if spec is not None else None, [c.to_json() for c in action.changes])
        step.after = _canonical(spec)
        step.texts = RecordTexts.of(step.after, step.changes)
        if self.events is not None:
            step.pre = self.events.pre_event(
                action, run_id=self.run_id, seq=seq, actor=self.actor, git=_git(self.git),
                before_digest=step.before_digest, after_digest=step.after_digest, after=step.after,
                changes=step.changes)
        return step

    def pending(self, step: _Step) -> PendingAction:
        a = step.action
        return PendingAction(self.run_id, step.seq, self.actor, a.action, a.view, _canonical(a.before), step.after,
                             step.before_digest, step.after_digest, step.changes, self.git, step.texts)

    def unattempted(self, seq: int) -> PendingAction:
        """The audit row of an action never begun (no digests: nothing was computed for it)."""
        a = self.actions[seq]
        return PendingAction(self.run_id, seq, self.actor, a.action, a.view, _canonical(a.before),
                             _canonical(a.desired), None, None, [c.to_json() for c in a.changes], self.git)

    def _stored(self, events: list[dict[str, Any]]) -> Callable[[Connection], None] | None:
        """What writes these events of this run into the outbox, in the records' transaction."""
        emitter = self.events
        if emitter is None or not events:
            return None
        return lambda conn: emitter.enqueue_new(conn, events)  # their ids are this run's, stored once

    def write(self, step: _Step) -> tuple[Outcome, str | None]:
        """A begun action, on a writer thread: refused when a blocking hook vetoes its pre-event
        (the catalog untouched), else the catalog call: applied, or failed and why."""
        action, spec, live = step.action, step.action.desired, step.live
        refusal = self._refusal(step)
        if refusal is not None:
            return Outcome.REFUSED, refusal
        adapter = self.ws.adapter(action.view.catalog)

        def call() -> None:
            if action.action == "create":
                assert spec is not None and step.after_digest is not None
                adapter.create(action.view, spec, Marker(self.project, step.after_digest, self.marks), self.ctx)
            elif action.action in ("update", "adopt"):
                assert spec is not None and step.after_digest is not None and live is not None
                adapter.update(live, spec, Marker(self.project, step.after_digest, self.marks), self.ctx)
            else:
                assert live is not None
                adapter.drop(live, self.ctx)
        return self._outcome(call)

    def send(self, step: _Step) -> Callable[[], tuple[Outcome, str | None]] | None:
        """A begun create sent ahead of its answer, on a writer thread, when its catalog takes
        that (reconciler.apply.stream, "Sent ahead"): what returns its outcome once the answer
        is in. None for any other action, which `write` then makes."""
        action, spec = step.action, step.action.desired
        adapter = self.ws.adapter(action.view.catalog)
        if action.action != "create" or not adapter.capabilities.creates_sent_ahead:
            return None
        refusal = self._refusal(step)
        if refusal is not None:
            return lambda: (Outcome.REFUSED, refusal)
        assert spec is not None and step.after_digest is not None
        marker = Marker(self.project, step.after_digest, self.marks)
        sent: list[Callable[[], None]] = []
        failed = self._outcome(lambda: sent.append(adapter.send_create(action.view, spec, marker, self.ctx)))
        if not sent:  # not sent (e.g. the view could not be encoded): that is its outcome
            return lambda: failed
        return lambda: self._outcome(sent[0])

    def _refusal(self, step: _Step) -> str | None:
        """Why a blocking hook vetoes this action's pre-event (redacted), or None."""
        if self.vetoes and self.events is not None and step.pre is not None:
            refusal = self.events.veto(step.pre)
            if refusal is not None:
                return redact(refusal, self.ws.config.secrets)
        return None

    def _outcome(self, call: Callable[[], object]) -> tuple[Outcome, str | None]:
        """Applied when `call` returns, else failed and why (redacted)."""
        secrets = self.ws.config.secrets
        try:
            call()
        except AdapterError as err:
            return Outcome.FAILED, redact(str(err), secrets)
        except Exception as err:  # an unexpected backend failure must still be recorded
            return Outcome.FAILED, redact(f"{type(err).__name__}: {err}", secrets)
        return Outcome.APPLIED, None

    def end(self, results: list[tuple[_Step, Outcome, str | None]]) -> None:
        """One transaction for these actions: each audit outcome, for an applied change its
        version row, and each post-event (made from the pre-event); then inline delivery."""
        finishes, posts = [], []
        for step, outcome, error in results:
            action = step.action
            applied = outcome == Outcome.APPLIED
            version = VersionRecord(self.run_id, action.view, action.action, step.after, step.after_digest,
                                    step.changes, self.actor, self.git.commit, step.texts) if applied else None
            finishes.append(Finish(step.audit_id, outcome, None if applied else error, version))
            if self.events is not None and step.pre is not None:
                kind = ev.post_type(action.action, True) if applied else ev.FAILED
                posts.append(self.events.outcome_event(step.pre, kind, self.run_id, step.seq, outcome,
                                                       None if applied else error))
        self.state.finish_actions(finishes, also=self._stored(posts))
        if self.events is not None:
            self.events.flush()
