"""Issue 14: the apply lock of a provably dead holder (a process of this host that
no longer runs, or whose pid now belongs to another process) is taken over, in one
transaction so only one taker wins; a live holder, or one on another host, still
refuses with the message pointing at force-unlock."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.state.lockholder import holder_string, is_dead, parse, process_start
from reconciler.state.store import GitInfo, LockHeld, StateStore

LOCK = "apply:p"
HOST = socket.gethostname()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StateStore]:
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else f"sqlite:///{tmp_path}/state.db"
    state = StateStore(url)
    yield state
    state.close()


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def _dead_pid() -> tuple[int, int]:
    """Pid and start time of a process that ran on this host and is gone (reaped)."""
    child = _sleeper()
    start = None
    while start is None:  # /proc shows the child as soon as it is forked
        start = process_start(child.pid)
    child.kill()
    child.wait()
    return child.pid, start


def _locked_by(state: StateStore, holder: str) -> str:
    run = state.start_run("p", "apply", "ghost", GitInfo(), None, None)
    state.acquire_lock(LOCK, holder, run)
    return run


def test_holder_records_host_pid_and_start() -> None:
    who = parse(holder_string("ci@example.com:bot", "repair"))
    assert who is not None and (who.host, who.pid, who.start) == (HOST, os.getpid(), process_start(os.getpid()))
    assert holder_string("x" * 400).startswith("x" * 160 + "@")  # fits VARCHAR(255)
    old = parse("alice@box:12")  # written by the previous release: no start time
    assert old is not None and (old.host, old.pid, old.start) == ("box", 12, None)
    assert parse("hand-made") is None and is_dead("hand-made") is None


def test_live_holder_on_this_host_is_not_taken_over(store: StateStore) -> None:
    child = _sleeper()
    try:
        start = None
        while start is None:
            start = process_start(child.pid)
        for holder in (holder_string("me"), f"kid@{HOST}:{child.pid}/{start}", f"kid@{HOST}:{child.pid}"):
            run = _locked_by(store, holder)
            with pytest.raises(LockHeld, match=f"held by {holder} .*force-unlock {run}"):
                store.acquire_lock(LOCK, holder_string("next"), "r2")
            store.release_lock(LOCK, run)
    finally:
        child.kill()
        child.wait()


def test_holder_on_another_host_is_not_taken_over(store: StateStore) -> None:
    pid, start = _dead_pid()
    run = _locked_by(store, f"ghost@not-{HOST}.invalid:{pid}/{start}")
    with pytest.raises(LockHeld, match=f"force-unlock {run}"):
        store.acquire_lock(LOCK, holder_string("next"), "r2")
    assert store.lock_info(LOCK)["run_id"] == run  # type: ignore[index]


@pytest.mark.parametrize("start", [True, False], ids=["with-start", "previous-release"])
def test_dead_holder_is_taken_over(store: StateStore, start: bool) -> None:
    pid, started = _dead_pid()
    dead = _locked_by(store, f"ghost@{HOST}:{pid}" + (f"/{started}" if start else ""))
    note = store.acquire_lock(LOCK, holder_string("next"), "r2")
    assert note == f"Took over the apply lock of dead run {dead} (pid {pid} on {HOST})"
    assert store.lock_info(LOCK)["run_id"] == "r2"  # type: ignore[index]


def test_reused_pid_is_taken_over(store: StateStore) -> None:
    """Our own pid, alive, but recorded with another start time: the holder was an earlier process."""
    start = process_start(os.getpid())
    assert start is not None
    dead = _locked_by(store, f"ghost@{HOST}:{os.getpid()}/{start - 1}")
    note = store.acquire_lock(LOCK, holder_string("next"), "r2")
    assert note == f"Took over the apply lock of dead run {dead} (pid {os.getpid()} on {HOST})"


def test_racing_takers_one_wins(store: StateStore) -> None:
    pid, start = _dead_pid()
    dead = _locked_by(store, f"ghost@{HOST}:{pid}/{start}")
    takers = [StateStore(store.url) for _ in range(6)]  # one engine each: they race in the database
    gate = threading.Barrier(len(takers))
    outcomes: list[str] = []

    def take(i: int) -> None:
        gate.wait()
        try:
            outcomes.append(f"took {i}" if takers[i].acquire_lock(LOCK, holder_string(f"t{i}"), f"r{i}") else "fresh")
        except LockHeld:
            outcomes.append("refused")

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(takers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in takers:
        t.close()
    winners = [o for o in outcomes if o.startswith("took")]
    assert len(winners) == 1 and outcomes.count("refused") == len(takers) - 1, outcomes
    assert store.lock_info(LOCK)["run_id"] == f"r{winners[0].split()[1]}"  # type: ignore[index]
    # A taker that read the dead row before the winner replaced it deletes nothing and does not win.
    now = store.lock_info(LOCK)["acquired_at"]  # type: ignore[index]
    assert not store._take_over(LOCK, dead, holder_string("late"), "late", now, now)
