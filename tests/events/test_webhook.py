"""Issue 15 acceptance: events reach a real HTTP receiver process once each, in
order, signed; a receiver that dies mid-run or an apply that is killed
between its audit row and delivery loses nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers.cli import run_cli
from tests.helpers.events import Receiver, edit_views, set_events
from tests.helpers.paths import ROOT

SECRET = "hook-signing-key-5b1e"


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VS_TEST_HOOK_SECRET", SECRET)


def _webhook(receiver: Receiver) -> dict[str, object]:
    return {"type": "webhook", "url": receiver.url, "secret": "${VS_TEST_HOOK_SECRET}", "timeout": 2}


def _outbox(repo: Path) -> list[tuple[str, str, str]]:
    """(event id, type, subject) of every stored event, in outbox order."""
    eng = sa.create_engine(f"sqlite:///{repo / '.viewsync' / 'state.db'}")
    with eng.connect() as conn:
        rows = conn.execute(sa.text("SELECT event_id, type, subject FROM vs_events ORDER BY id")).all()
    eng.dispose()
    return [tuple(r) for r in rows]  # type: ignore[misc]


def _pending(repo: Path) -> list[dict]:  # type: ignore[type-arg]
    res = run_cli(repo, "events", "--pending", "--format", "json")
    assert res.code == 0, res.text
    return json.loads(res.out)  # type: ignore[no-any-return]


def test_apply_delivers_every_event_once_in_order_signed(sample_repo: Path, receiver: Receiver) -> None:
    set_events(sample_repo, {"hook": _webhook(receiver)})
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0

    def edit(doc: dict) -> None:  # type: ignore[type-arg]
        doc["views"][0]["comment"] = "Orders that are completed"  # completed_orders: update
        doc["views"].pop(2)  # refunds: drop

    edit_views(sample_repo, "views/local/sales.yaml", edit)
    res = run_cli(sample_repo, "apply", "--auto-approve", "--prune")
    assert res.code == 0, res.text
    assert "pending" not in res.err

    received = receiver.received()
    stored = _outbox(sample_repo)
    # Each event once, in the order the outbox holds them (= the order they happened).
    assert [json.loads(r["body"])["id"] for r in received] == [s[0] for s in stored]
    for r in received:
        body = r["body"].encode()
        want = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        assert r["headers"]["X-Viewsync-Signature"] == want
        assert r["headers"]["Content-Type"] == "application/cloudevents+json"
    events = receiver.events()
    for e in events:
        assert e["specversion"] == "1.0" and e["source"] == "/viewsync/demo-analytics"
        assert {"id", "type", "time", "subject", "data"} <= set(e)
    second = [e for e in events if e["data"]["run_id"] == events[-1]["data"]["run_id"]]
    assert [(e["type"], e["subject"]) for e in second][1:-1] == [
        ("view.update.pre", "local.sales.completed_orders"), ("view.updated", "local.sales.completed_orders"),
        ("view.drop.pre", "local.sales.refunds"), ("view.dropped", "local.sales.refunds")]
    assert second[0]["type"] == "run.started" and second[-1]["type"] == "run.finished"
    assert second[-1]["data"]["summary"] == {"applied": 2, "failed": 0, "skipped": 0}
    updated = second[2]["data"]
    assert updated["view"] == {"catalog": "local", "schema": "sales", "name": "completed_orders"}
    assert updated["catalog_kind"] == "managed" and updated["strategy"] == "managed"
    assert [c["field"] for c in updated["changes"]] == ["comment"]
    assert updated["before_digest"].startswith("sha256:") and updated["after_digest"] != updated["before_digest"]
    assert updated["after"]["comment"] == "Orders that are completed"
    assert updated["lineage"]["tables"] == ["local.sales.orders"]
    assert second[4]["data"]["after"] is None  # a drop has no after-spec
    created = [e for e in events if e["type"] == "view.created"]
    assert len(created) == 6 and len({e["id"] for e in events}) == len(events)
    assert _pending(sample_repo) == []


def _killer(pid: int, view: str) -> dict[str, object]:
    """A blocking pre-create hook that SIGKILLs process `pid` (0: its own parent) on one view."""
    target = "os.getppid()" if pid == 0 else str(pid)
    return {"type": "command", "blocking": True, "types": ["view.create.pre"], "views": [view],
            "command": [sys.executable, "-c", f"import os, signal; os.kill({target}, signal.SIGKILL)"]}


def test_receiver_killed_mid_run_leaves_apply_successful_and_events_pending(
        sample_repo: Path, receiver: Receiver) -> None:
    assert receiver.proc is not None
    # Killed at a view of the third wave: the first two waves' events are delivered by then
    # (a wave's actions are begun together, so a hook on the first wave would run before any).
    set_events(sample_repo, {"hook": _webhook(receiver),
                             "kill-receiver": _killer(receiver.proc.pid, "local.analytics.top_customers")})
    res = run_cli(sample_repo, "apply", "--auto-approve")
    assert res.code == 0, res.text
    assert "6 applied, 0 failed" in res.out
    assert "event deliveries pending" in res.err

    before = [e["id"] for e in receiver.events()]
    stored = _outbox(sample_repo)
    assert 0 < len(before) < len(stored)
    pending = _pending(sample_repo)
    assert [p["event_id"] for p in pending] == [s[0] for s in stored][len(before):]
    first = next(d for d in pending[0]["deliveries"] if d["sink"] == "hook")
    assert first["status"] == "pending" and first["attempts"] >= 1 and "cannot reach" in first["last_error"]

    receiver.stop()
    receiver.start()
    deliver = run_cli(sample_repo, "events", "deliver")
    assert deliver.code == 0, deliver.text
    ids = [e["id"] for e in receiver.events()]
    assert ids == [s[0] for s in stored]  # every event exactly once, in order, over both receiver lives
    assert _pending(sample_repo) == []
    again = run_cli(sample_repo, "events", "deliver")
    assert again.code == 0 and "0 delivered" in again.out
    assert Counter(e["id"] for e in receiver.events()).most_common(1)[0][1] == 1


def test_next_apply_delivers_what_an_earlier_run_left_pending(sample_repo: Path, receiver: Receiver) -> None:
    assert receiver.proc is not None
    set_events(sample_repo, {"hook": _webhook(receiver),
                             "kill-receiver": _killer(receiver.proc.pid, "local.sales.completed_orders")})
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    assert _pending(sample_repo)
    receiver.stop()
    receiver.start()
    res = run_cli(sample_repo, "apply", "--auto-approve")  # nothing to apply; delivers the backlog
    assert res.code == 0 and "Nothing to apply" in res.out
    assert [e["id"] for e in receiver.events()] == [s[0] for s in _outbox(sample_repo)]
    assert _pending(sample_repo) == []


def test_apply_killed_between_audit_row_and_delivery_loses_nothing(sample_repo: Path, receiver: Receiver) -> None:
    # The hook kills the apply process itself right after the audit row (and, in the same
    # transaction, the pre-event) of local.analytics.top_customers was committed.
    set_events(sample_repo, {"hook": _webhook(receiver), "kill-apply": _killer(0, "local.analytics.top_customers")})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "reconciler.cli", "--repo", str(sample_repo), "apply",
                           "--auto-approve"], capture_output=True, env=env, timeout=120, check=False)
    assert proc.returncode == -9, proc.stderr.decode()

    eng = sa.create_engine(f"sqlite:///{sample_repo / '.viewsync' / 'state.db'}")
    with eng.connect() as conn:
        audit = conn.execute(sa.text("SELECT view_name, outcome FROM vs_audit ORDER BY id")).all()
    eng.dispose()
    assert audit[-1] == ("top_customers", "pending")
    stored = _outbox(sample_repo)
    assert stored[-1][1:] == ("view.create.pre", "local.analytics.top_customers")
    # Every audit row has its pre-event; every finished one its post-event.
    pre = [s[2] for s in stored if s[1] == "view.create.pre"]
    assert len(pre) == len(audit) and len([s for s in stored if s[1] == "view.created"]) == len(audit) - 1
    received = [e["id"] for e in receiver.events()]
    assert received == [s[0] for s in stored][:-1]  # the last one was never delivered

    deliver = run_cli(sample_repo, "events", "deliver")
    assert deliver.code == 0, deliver.text
    assert [e["id"] for e in receiver.events()] == [s[0] for s in stored]
    assert _pending(sample_repo) == []


def test_4xx_is_rejected_for_good_and_5xx_is_retried(sample_repo: Path, tmp_path: Path) -> None:
    from tests.helpers.servers import free_port

    rejecting = Receiver(free_port(), tmp_path / "r400.jsonl", status=400)
    failing = Receiver(free_port(), tmp_path / "r503.jsonl", status=503)
    rejecting.start()
    failing.start()
    try:
        set_events(sample_repo, {"strict": {"type": "webhook", "url": rejecting.url, "types": ["view.created"]},
                                 "flaky": {"type": "webhook", "url": failing.url, "types": ["run.finished"],
                                           "retries": 2}})
        res = run_cli(sample_repo, "apply", "--auto-approve")
        assert res.code == 0, res.text
        assert len(rejecting.received()) == 6  # each tried once, none retried
        assert len(failing.received()) == 3  # one inline attempt + two at the end of the run
        listed = json.loads(run_cli(sample_repo, "events", "--format", "json").out)
        states = Counter(d["status"] for e in listed for d in e["deliveries"])
        assert states == {"rejected": 6, "pending": 1}
        failing.stop()
        failing.status = 200
        failing.start()
        deliver = run_cli(sample_repo, "events", "deliver")
        assert deliver.code == 0 and "1 delivered, 0 rejected, 0 pending" in deliver.out
        assert len(rejecting.received()) == 6
    finally:
        rejecting.stop()
        failing.stop()
