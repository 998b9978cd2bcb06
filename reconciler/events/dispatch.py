"""The emitter apply talks to: builds events, hands them to the outbox inside
the caller's transaction, runs blocking hooks, and delivers after commit.

Delivery is at least once and in event order per sink: a sink's deliveries go
out oldest first and stop at its first failure, so a later event never
overtakes an earlier one. Inline delivery (after each action) tries each
pending delivery once and gives up on a sink for the rest of the run at its
first failure (a dead receiver costs one timeout, not one per event); `drain`
at the end of a run, and `viewsync events deliver`, retry with backoff.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection, Engine

from reconciler.core.secrets import redact
from reconciler.events import model, outbox
from reconciler.events.lineage import KnownColumns, lineage_of_spec
from reconciler.events.sinks import CommandSink, DeliveryError, Sink

Log = Callable[[str], None]


@dataclass
class DeliveryReport:
    delivered: int = 0
    rejected: int = 0
    pending: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class Emitter:
    engine: Engine
    project: str
    sinks: list[Sink]
    catalog_kinds: Mapping[str, str] = field(default_factory=dict)
    known_columns: Mapping[str, list[str]] = field(default_factory=dict)  # declared view -> column names
    log: Log | None = None
    secrets: frozenset[str] = frozenset()  # masked in every event and every stored or logged error
    backoff: float = 0.5  # seconds before the first retry in `drain`; doubles each round
    _down: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        outbox.ensure(self.engine)
        self.known_columns = KnownColumns.of(self.known_columns)

    # ------------------------------------------------------------- building
    def event(self, run_id: str, seq: int, event_type: str, subject: str, data: Mapping[str, Any]) -> dict[str, Any]:
        return model.cloud_event(self.project, event_type, model.event_id(run_id, seq, event_type), subject, data,
                                 secrets=self.secrets)

    def pre_event(self, action: Any, *, run_id: str, seq: int, actor: str, git: Mapping[str, Any],
                  before_digest: str | None, after_digest: str | None, after: Mapping[str, Any] | None,
                  changes: list[dict[str, Any]]) -> dict[str, Any]:
        """The pre-event of one plan action (`action` is a plan.Action). `after` (the desired
        spec in canonical form, None for a drop) and `changes` (as JSON) are the caller's, made
        once for every record of the action."""
        data = model.action_data(
            run_id=run_id, seq=seq, actor=actor, git=git, action=action.action, view=action.view.to_json(),
            catalog_kind=self.catalog_kinds.get(action.view.catalog, ""), strategy=action.strategy,
            changes=changes, before_digest=before_digest, after_digest=after_digest, after=after)
        if after is not None:
            data["lineage"] = lineage_of_spec(str(action.view), after, self.known_columns).to_json()
        return self.event(run_id, seq, model.pre_type(action.action), str(action.view), data)

    def outcome_event(self, pre: Mapping[str, Any], event_type: str, run_id: str, seq: int, outcome: str,
                      error: str | None = None, repaired: bool = False) -> dict[str, Any]:
        """The post-event of the action `pre` announced: the same data (already masked, lineage
        included) with the outcome. Only what is new is masked: the error. `repaired`: the outcome
        was found by a later apply (reconciler.apply.repair), the announcing process having died."""
        data = dict(pre["data"])
        data["outcome"] = outcome
        if error is not None:
            data["error"] = redact(error, self.secrets)
        if repaired:
            data["repaired"] = True
        return model.cloud_event(self.project, event_type, model.event_id(run_id, seq, event_type),
                                 str(pre["subject"]), data, masked=True)

    # ------------------------------------------------------------- storing
    def targets(self, event: Mapping[str, Any]) -> list[str]:
        return [s.name for s in self.sinks if s.accepts(str(event["type"]), str(event["subject"]))]

    def enqueue(self, conn: Connection, event: dict[str, Any]) -> None:
        """Store the event in the caller's transaction, unless an event with its id is stored."""
        outbox.enqueue(conn, event, self.targets(event))

    def enqueue_new(self, conn: Connection, events: list[dict[str, Any]]) -> None:
        """Store events of this run never stored before, in the caller's transaction (the audit rows')."""
        outbox.enqueue_new(conn, [(e, self.targets(e)) for e in events])

    def stored(self, conn: Connection, event_id: str) -> dict[str, Any] | None:
        """The event stored under this id, read in the caller's transaction."""
        return outbox.stored(conn, event_id)

    def emit(self, event: dict[str, Any]) -> None:
        """Store an event not tied to an audit row (run.started / run.finished) in its own transaction."""
        with self.engine.begin() as conn:
            self.enqueue(conn, event)

    # ------------------------------------------------------------- hooks
    def has_vetoes(self) -> bool:
        """Whether any blocking hook may refuse an action."""
        return any(isinstance(s, CommandSink) and s.blocking for s in self.sinks)

    def veto(self, event: dict[str, Any]) -> str | None:
        """Run the blocking hooks that take this pre-event; the first refusal wins."""
        for sink in self.sinks:
            if isinstance(sink, CommandSink) and sink.blocking and sink.accepts(event["type"], event["subject"]):
                reason = sink.veto(event)
                if reason is not None:
                    return reason
        return None

    # ------------------------------------------------------------- delivery
    def flush(self) -> DeliveryReport:
        """One attempt per pending delivery, sinks that failed this run skipped."""
        report = DeliveryReport()
        live = {s.name: s for s in self.sinks if s.name not in self._down}
        if not live:  # nothing to read: a dead sink's backlog is not re-read after every action
            return report
        for d in outbox.pending(self.engine, list(live)):
            if d.sink in self._down:
                report.pending += 1
                continue
            if not self._attempt(live[d.sink], d, report):
                self._down.add(d.sink)
        return report

    def drain(self, rounds: int | None = None) -> DeliveryReport:
        """Deliver everything pending (this run's and earlier runs'), retrying with backoff."""
        by_name = {s.name: s for s in self.sinks}
        report = DeliveryReport()
        self._down.clear()
        if not self.sinks:
            return report
        wait = self.backoff
        max_rounds = rounds if rounds is not None else max((s.retries for s in self.sinks), default=1)
        for attempt in range(max(1, max_rounds)):
            round_report = DeliveryReport()
            failed: set[str] = set()
            for d in outbox.pending(self.engine):
                sink = by_name.get(d.sink)
                if sink is None or d.sink in failed or attempt >= max(1, sink.retries):
                    continue
                if not self._attempt(sink, d, round_report):
                    failed.add(d.sink)
            report.delivered += round_report.delivered
            report.rejected += round_report.rejected
            report.errors += round_report.errors
            if not failed:
                break
            if attempt + 1 < max_rounds:
                time.sleep(wait)
                wait *= 2
        # Deliveries to sinks no longer configured stay listed by `viewsync events`, never retried.
        report.pending = sum(1 for d in outbox.pending(self.engine) if d.sink in by_name)
        return report

    def _attempt(self, sink: Sink, d: outbox.Delivery, report: DeliveryReport) -> bool:
        """Deliver one; False when the sink should not be tried again for now (order is kept)."""
        try:
            sink.send(d.event)
        except DeliveryError as err:
            error = redact(str(err), self.secrets)
            message = f"{sink.name}: event {d.event['id']} ({d.event['type']} {d.event['subject']}): {error}"
            report.errors.append(message)
            if self.log is not None:
                self.log(f"Warning: event delivery failed: {message}")
            if err.retryable:
                outbox.mark(self.engine, d.id, "pending", error)
                return False
            outbox.mark(self.engine, d.id, "rejected", error)
            report.rejected += 1
            return True
        outbox.mark(self.engine, d.id, "delivered")
        report.delivered += 1
        return True
