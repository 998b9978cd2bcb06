"""Repair the records of applies that died (SIGKILL, power loss) before writing
their outcome: under the apply lock, every run still marked `running` is dead.
Each of its `pending` audit rows is reconciled against the live catalog: the
change is there (the marker digest matches, or the dropped view is gone) ->
`applied`, with the missing version row; otherwise -> `failed`. The run is
marked `interrupted`. Each repair is reported in one line. With an emitter, each
repaired outcome's post-event (its pre-event's data, `repaired: true`) is written in the
transaction of its audit row, and the run's `run.finished` (outcome `interrupted`) in the
run's: the dead process never wrote them, and sinks must hear of what it changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Connection

from reconciler.adapters.base import SchemaSnapshot
from reconciler.apply.target import Target
from reconciler.core.model import LiveView, ViewId
from reconciler.core.outcome import Outcome, RunOutcome
from reconciler.events import model as ev
from reconciler.state.store import VIEW_ACTIONS, Finish, StateStore, VersionRecord

if TYPE_CHECKING:
    from reconciler.events.dispatch import Emitter


def outcome(row: dict[str, Any], live: LiveView | None) -> tuple[Outcome, str | None]:
    """What a pending audit row really was, judged by the live view (pure)."""
    if row["action"] == "drop":
        if live is None:
            return Outcome.APPLIED, None
        return Outcome.FAILED, "interrupted: the process died before the view was dropped"
    if live is not None and row["after_digest"] is not None and row["after_digest"] in (
            live.spec_digest, live.spec.digest()):
        return Outcome.APPLIED, None
    return Outcome.FAILED, "interrupted: the process died before the change reached the catalog"


def repair_dead_runs(ws: Target, state: StateStore, project: str, current_run: str,
                     events: Emitter | None = None) -> list[str]:
    """Reconcile the records of dead runs; returns one line per repaired record."""
    notes: list[str] = []
    for run in state.dead_runs(project, current_run):
        rows = state.unfinished_actions(run["run_id"])
        live = _live_views(ws, rows)
        counts = {Outcome.APPLIED: 0, Outcome.FAILED: 0, Outcome.UNKNOWN: 0}
        for row in rows:
            view = ViewId(row["catalog"], row["schema_name"], row["view_name"])
            if row["outcome"] == Outcome.APPLIED:  # written by an older version in two transactions
                state.record_version(run["run_id"], view, row["action"], _spec(row), row["after_digest"],
                                     json.loads(row["changes"] or "[]"), row["actor"], row["git_commit"])
                notes.append(f"{view}: {row['action']} recorded as version (run {run['run_id']} died before)")
                continue
            result: Outcome
            error: str | None
            if row["action"] not in VIEW_ACTIONS:  # e.g. a schema owner: no version to judge it by
                result, error = Outcome.UNKNOWN, "interrupted; re-run apply to converge"
            elif (view.catalog, view.schema) not in live:  # the catalog is no longer configured
                result, error = Outcome.UNKNOWN, f"interrupted; catalog {view.catalog!r} is not configured to check"
            else:
                result, error = outcome(row, live[(view.catalog, view.schema)].find(view.name, _folds(ws, view)))
            version = None
            if result == Outcome.APPLIED:
                version = VersionRecord(run["run_id"], view, row["action"], _spec(row), row["after_digest"],
                                        json.loads(row["changes"] or "[]"), row["actor"], row["git_commit"])
            also = _post_event(ws, events, row, result, error) if row["action"] in VIEW_ACTIONS else None
            state.finish_actions([Finish(int(row["id"]), result, error, version)], also=also)
            counts[result] += 1
            notes.append(f"{view}: pending {row['action']} of dead run {run['run_id']} marked {result}"
                         + {Outcome.APPLIED: " (found in the catalog; version recorded)",
                            Outcome.FAILED: " (not in the catalog)", Outcome.UNKNOWN: f" ({error})"}[result])
        summary: dict[str, Any] = {"reason": "the process died; records repaired by a later apply",
                                   **{str(o): n for o, n in counts.items()}}
        state.finish_run(run["run_id"], RunOutcome.INTERRUPTED, summary,
                         also=_run_finished(events, run, summary, announced=bool(rows)))
        notes.append(f"run {run['run_id']} (started {run['started_at']:%Y-%m-%d %H:%M:%S} by {run['actor']}) "
                     f"died mid-apply: marked interrupted, {counts[Outcome.APPLIED]} action(s) found applied, "
                     f"{counts[Outcome.FAILED]} failed, {counts[Outcome.UNKNOWN]} unknown")
    return notes


@dataclass(frozen=True)
class _Recorded:
    """The plan action an audit row records, as much as the emitter's pre_event reads of it."""

    action: str
    view: ViewId
    strategy: str


def _post_event(ws: Target, events: Emitter | None, row: dict[str, Any], result: Outcome,
                error: str | None) -> Callable[[Connection], None] | None:
    """What writes the post-event of a repaired action: the stored pre-event's data (as a live
    apply's post-event repeats it) with the outcome and `repaired: true`. A dead run that had no
    emitter stored no pre-event: its data is made again from the audit row."""
    if events is None:
        return None
    run_id, seq, action = str(row["run_id"]), int(row["seq"]), str(row["action"])

    def write(conn: Connection) -> None:
        pre = events.stored(conn, ev.event_id(run_id, seq, ev.pre_type(action))) or _pre_event(ws, events, row)
        kind = ev.post_type(action, True) if result == Outcome.APPLIED else ev.FAILED
        # Checked by id, not stored as new: a repair cut short and run again never stores two.
        events.enqueue(conn, events.outcome_event(pre, kind, run_id, seq, result,
                                                  None if result == Outcome.APPLIED else error, repaired=True))
    return write


def _pre_event(ws: Target, events: Emitter, row: dict[str, Any]) -> dict[str, Any]:
    view = ViewId(row["catalog"], row["schema_name"], row["view_name"])
    strategy = ws.adapter(view.catalog).capabilities.strategy if view.catalog in ws.config.catalogs else ""
    return events.pre_event(
        _Recorded(row["action"], view, strategy), run_id=row["run_id"], seq=int(row["seq"]), actor=row["actor"],
        git=_git_of(row),
        before_digest=row["before_digest"], after_digest=row["after_digest"], after=_spec(row),
        changes=json.loads(row["changes"] or "[]"))


def _run_finished(events: Emitter | None, run: dict[str, Any], summary: dict[str, Any],
                  announced: bool) -> Callable[[Connection], None] | None:
    """What writes the dead run's `run.finished` (outcome `interrupted`), when the run was
    announced (its run.started is stored) or recorded actions; a run that died before either
    told nobody anything."""
    if events is None:
        return None
    run_id = str(run["run_id"])

    def write(conn: Connection) -> None:
        if not announced and events.stored(conn, ev.event_id(run_id, -1, ev.RUN_STARTED)) is None:
            return
        events.enqueue(conn, events.event(run_id, -1, ev.RUN_FINISHED, run_id, {
            "run_id": run_id, "project": run["project"], "actor": run["actor"],
            "git": _git_of(run),
            "outcome": RunOutcome.INTERRUPTED, "summary": summary, "repaired": True}))
    return write


def _git_of(record: dict[str, Any]) -> dict[str, Any]:
    """An event's `git` object from an audit or run row (both store the commit alike)."""
    return {"commit": record["git_commit"], "ref": record["git_ref"], "author": record["git_author"]}


def _spec(row: dict[str, Any]) -> dict[str, Any] | None:
    return json.loads(row["after_spec"]) if row["after_spec"] else None


def _folds(ws: Target, view: ViewId) -> bool:
    return ws.adapter(view.catalog).capabilities.fold_names


def _live_views(ws: Target, rows: list[dict[str, Any]]) -> dict[tuple[str, str], SchemaSnapshot]:
    wanted = {(r["catalog"], r["schema_name"]) for r in rows if r["outcome"] == Outcome.PENDING
              and r["catalog"] in ws.config.catalogs}
    if not wanted:
        return {}
    # A catalog that cannot be read fails the apply: a repair never guesses.
    return ws.fetch(sorted({c for c, _ in wanted}), wanted, all_schemas=False)
