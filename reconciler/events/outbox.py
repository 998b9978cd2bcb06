"""The transactional outbox: events live in the state store next to the audit
trail, one delivery row per (event, sink).

`enqueue` takes the caller's connection, so an event commits or rolls back
with the audit row written in the same transaction: an event can never be
lost between "the catalog changed" and "someone was told". Delivery happens
after commit and only moves delivery rows from `pending` to `delivered` or
`rejected` (a sink that refused it for good, e.g. HTTP 4xx).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from reconciler.core.secrets import redact
from reconciler.db.engines import ensure_tables, insert_returning_ids

metadata = sa.MetaData()

events = sa.Table(
    "vs_events", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("event_id", sa.String(36), nullable=False, unique=True),
    sa.Column("run_id", sa.String(36), nullable=False, index=True),
    sa.Column("type", sa.String(64), nullable=False),
    sa.Column("subject", sa.String(1024), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("body", sa.Text, nullable=False),  # the CloudEvent JSON, secrets already masked
)

deliveries = sa.Table(
    "vs_event_deliveries", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("event", sa.Integer, sa.ForeignKey("vs_events.id"), nullable=False, index=True),
    sa.Column("sink", sa.String(255), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # pending | delivered | rejected
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("last_error", sa.Text),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("event", "sink", name="uk_vs_event_deliveries"),
)


@dataclass(frozen=True)
class Delivery:
    id: int
    outbox_id: int
    sink: str
    status: str
    attempts: int
    last_error: str | None
    event: dict[str, Any]


def _now() -> datetime:
    return datetime.now(UTC)


def ensure(engine: Engine) -> None:
    ensure_tables(metadata, engine)


# Built once: a statement made per call costs more to compile than to run.
_FIND = sa.select(events.c.id).where(events.c.event_id == sa.bindparam("event_id"))
_INSERT_EVENT = events.insert()
_INSERT_DELIVERY = deliveries.insert()


def enqueue(conn: Connection, event: dict[str, Any], sinks: list[str], new: bool = False) -> int:
    """Store `event` with a pending delivery per sink, inside the caller's transaction.
    Writing the same event id twice (a re-run of the same step) keeps the first. `new`:
    the caller never stored this id before (an action's event in its own run), so the
    look-up is skipped; the unique event id would still refuse a second copy."""
    if not new:
        existing = conn.execute(_FIND, {"event_id": event["id"]}).scalar()
        if existing is not None:
            return int(existing)
    return enqueue_new(conn, [(event, sinks)])[0]


def stored(conn: Connection, event_id: str) -> dict[str, Any] | None:
    """The event stored under this id, if any (read in the caller's transaction)."""
    body = conn.execute(sa.select(events.c.body).where(events.c.event_id == event_id)).scalar()
    return json.loads(body) if body is not None else None


def enqueue_new(conn: Connection, items: list[tuple[dict[str, Any], list[str]]]) -> list[int]:
    """Store events never stored before (each with its sinks) in the caller's transaction,
    one statement for the events and one for their deliveries: their outbox ids, in order."""
    at = _now()
    rows = [{"event_id": e["id"], "run_id": str(e["data"].get("run_id", "")), "type": e["type"],
             "subject": e["subject"], "at": at, "body": json.dumps(e, sort_keys=True)} for e, _ in items]
    if not any(sinks for _, sinks in items):  # nothing refers to the new ids
        conn.execute(_INSERT_EVENT, rows)
        return [0] * len(rows)
    ids = insert_returning_ids(conn, _INSERT_EVENT, events.c.id, rows)
    conn.execute(_INSERT_DELIVERY, [{"event": outbox_id, "sink": sink, "status": "pending", "attempts": 0,
                                     "updated_at": at} for outbox_id, (_, sinks) in zip(ids, items, strict=True)
                                    for sink in sinks])
    return ids


def _rows(conn: Connection, query: Any) -> list[Delivery]:
    return [Delivery(r.id, r.event, r.sink, r.status, r.attempts, r.last_error, json.loads(r.body))
            for r in conn.execute(query)]


def pending(engine: Engine, sinks: list[str] | None = None) -> list[Delivery]:
    """Undelivered deliveries (of these sinks) in event order (per sink, delivery order is event order)."""
    q = (sa.select(deliveries, events.c.body).join(events, events.c.id == deliveries.c.event)
         .where(deliveries.c.status == "pending").order_by(deliveries.c.event, deliveries.c.id))
    if sinks is not None:
        q = q.where(deliveries.c.sink.in_(sinks))
    with engine.connect() as conn:
        return _rows(conn, q)


def mark(engine: Engine, delivery_id: int, status: str, error: str | None = None,
         secrets: frozenset[str] = frozenset()) -> None:
    with engine.begin() as conn:
        conn.execute(deliveries.update().where(deliveries.c.id == delivery_id).values(
            status=status, attempts=deliveries.c.attempts + 1, updated_at=_now(),
            last_error=redact(error, secrets)[:2000] if error else None))


def listing(engine: Engine, pending_only: bool = False, since: datetime | None = None,
            run_id: str | None = None) -> list[dict[str, Any]]:
    """Events with the state of each of their deliveries, oldest first."""
    q = sa.select(events).order_by(events.c.id)
    if since is not None:
        q = q.where(events.c.at >= since)
    if run_id is not None:
        q = q.where(events.c.run_id.like(run_id + "%"))
    with engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(q)]
        ids = [r["id"] for r in rows]
        per: dict[int, list[dict[str, Any]]] = {}
        if ids:
            for d in conn.execute(sa.select(deliveries).where(deliveries.c.event.in_(ids))
                                  .order_by(deliveries.c.id)):
                per.setdefault(d.event, []).append(
                    {"sink": d.sink, "status": d.status, "attempts": d.attempts, "last_error": d.last_error})
    out = []
    for r in rows:
        ds = per.get(r["id"], [])
        if pending_only and not any(d["status"] == "pending" for d in ds):
            continue
        out.append({"event_id": r["event_id"], "run_id": r["run_id"], "type": r["type"], "subject": r["subject"],
                    "at": r["at"], "deliveries": ds, "event": json.loads(r["body"])})
    return out
