"""Issue 27.1: an apply SIGKILLed after writing a view and before recording its outcome
leaves a pending audit row. The next apply repairs it, and with it the events the dead
process never wrote: the post-event of the repaired action (its pre-event's data, the
outcome and `repaired: true`) and the dead run's `run.finished` (`interrupted`), stored in
the outbox and delivered by `viewsync events deliver`. Every applied audit row then has
exactly one post-event at the receiver."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from reconciler.events import model as ev
from tests.helpers.cli import run_cli
from tests.helpers.events import Receiver, set_events
from tests.helpers.paths import ROOT
from tests.helpers.repos import view_yaml as _view
from tests.helpers.repos import write_repo

# A blocking hook that holds the apply on its first call, until the test writes `go`.
HOLD = """
import pathlib, sys, time
d = pathlib.Path(sys.argv[1])
if not (d / "go").exists():
    (d / "held").touch()
    while not (d / "go").exists():
        time.sleep(0.02)
"""

VIEWS = "catalog: local\nschema: s\nviews:\n{views}"


def _repo(base: Path) -> Path:
    return write_repo(base / f"repo-{uuid.uuid4().hex[:8]}",
                      "version: 1\nproject: p\nstate: 'sqlite:///.viewsync/state.db'\n"
                      "catalogs:\n  local: {type: managed, url: 'sqlite:///.viewsync/catalog.db'}\n",
                      {"views/local/s.yaml": VIEWS.format(views=_view("keep", "SELECT 1 AS x")
                                                          + _view("old", "SELECT 2 AS y")
                                                          + _view("base", "SELECT 3 AS z"))})


def _live(repo: Path) -> dict[str, str]:
    with sqlite3.connect(repo / ".viewsync/catalog.db", timeout=30) as conn:
        return dict(conn.execute("SELECT view_name, spec_digest FROM view_meta WHERE deleted_at = 0").fetchall())


def _audit(repo: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(repo / ".viewsync/state.db", timeout=30) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute("SELECT run_id, seq, action, view_name, outcome FROM vs_audit "
                                              "ORDER BY id")]


def _wait(what: str, done: Any, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert proc.poll() is None, f"the apply ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _killed_between_catalog_and_record(repo: Path, hold: Path) -> None:
    """Run apply in a child process; the blocking hook holds it before its catalog write while
    the test locks the state store; released, it writes the view and waits on the store for
    its outcome record: there it is SIGKILLed."""
    proc = subprocess.Popen([sys.executable, "-m", "reconciler.cli", "--repo", str(repo), "apply",
                             "--auto-approve", "--allow-dirty", "--prune", "--allow-mass-drop"],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait("the hook holds the apply", (hold / "held").exists, proc)
        before = _live(repo)
        store = sqlite3.connect(repo / ".viewsync/state.db", isolation_level=None)
        store.execute("BEGIN IMMEDIATE")  # no writer gets through: the outcome cannot be recorded
        try:
            (hold / "go").touch()
            _wait("the catalog write", lambda: _live(repo) != before, proc)
            time.sleep(0.2)  # it is now waiting for the store (busy timeout 30 s)
            assert proc.poll() is None
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            store.execute("ROLLBACK")
            store.close()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("held", ["create", "update", "drop"])
def test_repaired_action_events_are_delivered(tmp_path: Path, receiver: Receiver, held: str) -> None:
    repo = _repo(tmp_path)
    set_events(repo, {"hook": {"type": "webhook", "url": receiver.url}})
    assert run_cli(repo, "apply", "--auto-approve", "--allow-dirty").code == 0
    # The change: update keep, drop old, create new1; the hook holds the apply at one of them.
    (repo / "views/local/s.yaml").write_text(VIEWS.format(views=_view("keep", "SELECT 10 AS x")
                                                          + _view("base", "SELECT 3 AS z")
                                                          + _view("new1", "SELECT * FROM base")))
    hold = tmp_path / "hold"
    hold.mkdir()
    script = tmp_path / "hold.py"
    script.write_text(HOLD)
    set_events(repo, {"hook": {"type": "webhook", "url": receiver.url, "retries": 1},
                      "hold": {"type": "command", "blocking": True, "types": [f"view.{held}.pre"],
                               "command": [sys.executable, str(script), str(hold)]}})
    _killed_between_catalog_and_record(repo, hold)
    # The held action is pending; so may be those begun with it in its wave (begun ahead in one
    # transaction, written by the same writer while the records wait on the locked store).
    deads = [a for a in _audit(repo) if a["outcome"] == "pending"]
    (dead,) = [a for a in deads if a["action"] == held]
    assert {a["run_id"] for a in deads} == {dead["run_id"]}

    receiver.stop()  # the repaired events wait in the outbox for `events deliver`
    res = run_cli(repo, "apply", "--auto-approve", "--allow-dirty", "--prune", "--allow-mass-drop")
    assert res.code == 0, res.text
    assert f"pending {held} of dead run {dead['run_id']} marked applied (found in the catalog" in res.out, res.out
    receiver.start()
    delivered = run_cli(repo, "events", "deliver")
    assert delivered.code == 0, delivered.text

    events = receiver.events()
    assert len({e["id"] for e in events}) == len(events), "an event was delivered twice"
    audit = _audit(repo)
    applied = [a for a in audit if a["outcome"] == "applied"]
    assert len(applied) == 3 + 3  # the first apply's creates, then the change
    for a in applied:
        posts = [e for e in events if e["type"] == ev.POST_TYPES[a["action"]] and e["data"]["run_id"] == a["run_id"]
                 and e["data"]["seq"] == a["seq"]]
        assert len(posts) == 1, (a, [e["type"] for e in events])
        assert posts[0]["subject"] == f"local.s.{a['view_name']}"
        assert posts[0]["data"]["outcome"] == "applied"
    assert not [e for e in events if e["type"] == ev.FAILED]

    # Each repaired post-event is shaped as a live one: its pre-event's data, the outcome, `repaired`.
    posts = [e for e in events if e["data"].get("repaired") and e["type"] != ev.RUN_FINISHED]
    assert sorted((p["data"]["run_id"], p["data"]["seq"]) for p in posts) == \
        sorted((d["run_id"], d["seq"]) for d in deads)
    for d in deads:
        (post,) = [p for p in posts if p["data"]["seq"] == d["seq"]]
        (pre,) = [e for e in events if e["id"] == ev.event_id(d["run_id"], d["seq"], ev.pre_type(d["action"]))]
        assert post["data"] == {**pre["data"], "outcome": "applied", "repaired": True}
        assert post["id"] == ev.event_id(d["run_id"], d["seq"], ev.post_type(d["action"], True))

    # Every announced run is finished exactly once; the dead one as interrupted.
    started = [e["data"]["run_id"] for e in events if e["type"] == ev.RUN_STARTED]
    finished = {e["data"]["run_id"]: e for e in events if e["type"] == ev.RUN_FINISHED}
    assert sorted(started) == sorted(finished) and dead["run_id"] in started
    assert finished[dead["run_id"]]["data"]["outcome"] == "interrupted"
    assert finished[dead["run_id"]]["data"]["repaired"] is True
    assert run_cli(repo, "plan", "--detailed-exitcode", "--prune").code == 0
