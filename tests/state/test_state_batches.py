"""The records of a streamed wave are written in batches (StateStore.audit_starts,
finish_actions, outbox.enqueue_new): each row must get its own id back, each version
its next number, each event its own deliveries, on SQLite and PostgreSQL state stores,
and a batch commits or rolls back as a whole."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from reconciler.core.model import ViewId
from reconciler.events import model, outbox
from reconciler.state.store import Finish, GitInfo, Outcome, PendingAction, StateStore, VersionRecord, audit


def _pending(seq: int, view: ViewId) -> PendingAction:
    return PendingAction("run", seq, "me", "create", view, None, {"sql": f"SELECT {seq}"}, None, f"d{seq}", [],
                         GitInfo(commit="c0"))


def _version(view: ViewId, n: int) -> VersionRecord:
    return VersionRecord("run", view, "create", {"sql": f"SELECT {n}"}, f"d{n}", [], "me", "c0")


def _event(seq: int) -> dict:  # type: ignore[type-arg]
    kind = "view.create.pre"
    return model.cloud_event("p", kind, model.event_id("run", seq, kind), f"c.s.v{seq}", {"run_id": "run"})


def _check(url: str) -> None:
    state = StateStore(url)
    outbox.ensure(state.engine)
    views = [ViewId("c", "s", f"v{i}") for i in range(5)]
    state.record_version("old", views[2], "create", {"sql": "SELECT 0"}, "d", [], "me", None)  # v2 has version 1

    events = [_event(i) for i in range(5)]
    sinks = [["hook"], [], ["hook", "log"], ["log"], ["hook"]]  # each event its own sinks
    ids = state.audit_starts([_pending(i, v) for i, v in enumerate(views)],
                             also=lambda conn: [outbox.enqueue_new(conn, list(zip(events, sinks, strict=True)))])
    with state.engine.connect() as conn:
        rows = {r.id: r for r in conn.execute(sa.select(audit))}
    assert [(rows[i].seq, rows[i].view_name, rows[i].outcome) for i in ids] == \
        [(i, f"v{i}", "pending") for i in range(5)]  # each id is its own row's
    pending = {(d.event["id"], d.sink) for d in outbox.pending(state.engine)}
    assert pending == {(e["id"], s) for e, ss in zip(events, sinks, strict=True) for s in ss}

    # Outcomes: v0 applied, v1 failed (no version), v2 applied (its second version), v3 applied twice
    # in one batch (two numbers), v4 skipped.
    outcomes = [Finish(ids[0], Outcome.APPLIED, version=_version(views[0], 0)),
                Finish(ids[1], Outcome.FAILED, "boom at postgresql://u:hunter2@db/x"),
                Finish(ids[2], Outcome.APPLIED, version=_version(views[2], 2)),
                Finish(ids[3], Outcome.APPLIED, version=_version(views[3], 3)),
                Finish(ids[3], Outcome.APPLIED, version=_version(views[3], 33)),
                Finish(ids[4], Outcome.SKIPPED, "not attempted")]
    assert state.finish_actions(outcomes) == [1, None, 2, 1, 2, None]
    with state.engine.connect() as conn:
        rows = {r.id: r for r in conn.execute(sa.select(audit))}
    assert [rows[i].outcome for i in ids] == ["applied", "failed", "applied", "applied", "skipped"]
    assert "hunter2" not in (rows[ids[1]].error or "")
    assert [v["version"] for v in state.versions_of(views[2])] == [1, 2]
    assert [v["digest"] for v in state.versions_of(views[3])] == ["d3", "d33"]
    assert state.versions_of(views[1]) == []

    # A batch that fails leaves nothing of itself.
    def broken(conn: sa.Connection) -> None:
        raise RuntimeError("crash before commit")
    with pytest.raises(RuntimeError):
        state.audit_starts([_pending(9, ViewId("c", "s", "v9")), _pending(10, ViewId("c", "s", "v10"))],
                           also=broken)
    with state.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(audit)).scalar() == 5

    # Actions never begun are recorded in one batch, each with its outcome and reason (masked).
    state.record_unattempted([(_pending(5, ViewId("c", "s", "v5")), Outcome.SKIPPED, "not attempted"),
                              (_pending(6, ViewId("c", "s", "v6")), Outcome.REFUSED,
                               "not permitted at postgresql://u:hunter2@db/x")])
    with state.engine.connect() as conn:
        late = conn.execute(sa.select(audit.c.seq, audit.c.outcome, audit.c.error).where(audit.c.seq >= 5)
                            .order_by(audit.c.seq)).all()
    assert [(r.seq, r.outcome) for r in late] == [(5, "skipped"), (6, "refused")]
    assert late[0].error == "not attempted" and "hunter2" not in late[1].error
    state.close()


def test_batched_records_on_sqlite(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path}/state.db")


def test_batched_records_on_postgres(pg_url: str) -> None:
    _check(pg_url)
