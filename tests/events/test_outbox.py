"""The outbox shares the audit row's transaction: both commit or neither does
(SQLite and PostgreSQL state stores)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from reconciler.core.model import ViewId
from reconciler.events import model, outbox
from reconciler.state.store import GitInfo, PendingAction, StateStore, audit


def _event(n: int) -> dict:  # type: ignore[type-arg]
    return model.cloud_event("p", "view.create.pre", model.event_id("run", n, "view.create.pre"), "c.s.v",
                             {"run_id": "run"})


def _check(url: str) -> None:
    state = StateStore(url)
    outbox.ensure(state.engine)
    view = ViewId("c", "s", "v")

    def start(seq: int, also):  # type: ignore[no-untyped-def]
        pending = PendingAction("run", seq, "me", "create", view, None, None, None, None, [], GitInfo())
        return state.audit_starts([pending], also=also)[0]

    start(0, lambda conn: outbox.enqueue(conn, _event(0), ["hook"]))

    def broken(conn: sa.Connection) -> None:
        outbox.enqueue(conn, _event(1), ["hook"])
        raise RuntimeError("crash before commit")

    with pytest.raises(RuntimeError):
        start(1, broken)
    with state.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(audit)).scalar() == 1
    assert [d.event["id"] for d in outbox.pending(state.engine)] == [_event(0)["id"]]
    # Enqueuing the same event again (a retried step) keeps one event and one delivery.
    with state.engine.begin() as conn:
        outbox.enqueue(conn, _event(0), ["hook"])
    assert len(outbox.pending(state.engine)) == 1
    # An action's event is enqueued as new, without the look-up: a second copy is refused, never stored.
    with pytest.raises(sa.exc.IntegrityError), state.engine.begin() as conn:
        outbox.enqueue(conn, _event(0), ["hook"], new=True)
    assert len(outbox.pending(state.engine)) == 1
    (d,) = outbox.pending(state.engine)
    outbox.mark(state.engine, d.id, "delivered")
    assert outbox.pending(state.engine) == []
    (row,) = outbox.listing(state.engine)
    assert row["deliveries"] == [{"sink": "hook", "status": "delivered", "attempts": 1, "last_error": None}]


def test_outbox_rolls_back_with_the_audit_row_on_sqlite(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'state.db'}")


def test_outbox_rolls_back_with_the_audit_row_on_postgres(pg_url: str) -> None:
    _check(pg_url)
