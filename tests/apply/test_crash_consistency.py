"""Kill at every step: an apply is SIGKILLed after each of its writes (state store
and catalog), on SQLite and PostgreSQL state. The next apply, with no
force-unlock, takes over the dead process's lock and says so, repairs the
records (pending audit rows, the dead run, missing version rows) against the
live catalog, says so, converges, and the audit trail matches the catalog
exactly."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers.cli import run_cli
from tests.helpers.dbs import PG_ADMIN_URL
from tests.helpers.paths import ROOT
from tests.helpers.repos import view_yaml as _view
from tests.helpers.repos import write_repo

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

# Wraps every write of an apply and SIGKILLs the process right after the N-th one.
KILLER = """
import os, signal, sys
kill_at = int(os.environ["VS_KILL_AT"])
count = [0]

def wrap(cls, name):
    orig = getattr(cls, name)
    def wrapped(*args, **kwargs):
        result = orig(*args, **kwargs)
        count[0] += 1
        if count[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    setattr(cls, name, wrapped)

from reconciler.state.store import StateStore
from reconciler.adapters.managed.adapter import ManagedAdapter
for name in ("acquire_lock", "start_run", "audit_starts", "record_unattempted", "finish_actions",
             "record_version", "finish_run", "release_lock"):
    wrap(StateStore, name)
for name in ("create", "update", "drop"):
    wrap(ManagedAdapter, name)
sys.argv = ["viewsync", "--repo", sys.argv[1], "apply", "--auto-approve", "--allow-dirty", "--prune",
            "--allow-mass-drop"]
from reconciler.cli import main
main()
"""

VIEWS = """\
catalog: local
schema: s
views:
{views}"""


def _repo(base: Path, state_url: str) -> Path:
    # Baseline: keep (updated next), old (dropped next), base (read by the new view).
    repo = write_repo(base / f"repo-{uuid.uuid4().hex[:8]}",
                      f"version: 1\nproject: p\nstate: '{state_url}'\n"
                      "catalogs:\n  local: {type: managed, url: 'sqlite:///.viewsync/catalog.db'}\n",
                      {"views/local/s.yaml": VIEWS.format(views=_view("keep", "SELECT 1 AS x")
                                                          + _view("old", "SELECT 2 AS y")
                                                          + _view("base", "SELECT 3 AS z"))})
    assert run_cli(repo, "apply", "--auto-approve", "--allow-dirty").code == 0
    # The change the killed apply carries out: an update, a create, a drop.
    (repo / "views/local/s.yaml").write_text(VIEWS.format(views=_view("keep", "SELECT 10 AS x")
                                                          + _view("base", "SELECT 3 AS z")
                                                          + _view("new1", "SELECT * FROM base")))
    return repo


def _killed_apply(repo: Path, step: int) -> int:
    env = {**os.environ, "VS_KILL_AT": str(step), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", KILLER, str(repo)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode


def _recover(repo: Path) -> str:
    """The next apply, with no force-unlock: it takes over the dead run's lock (saying so) and succeeds."""
    res = run_cli(repo, "apply", "--auto-approve", "--allow-dirty", "--prune", "--allow-mass-drop")
    assert res.code == 0, res.text
    return res.out


def _lock_left(repo: Path, state_url: str) -> str | None:
    """The holder of a lock the killed apply left behind, if any."""
    state = _state_engine(repo, state_url)
    with state.connect() as conn:
        holder = conn.execute(sa.text("SELECT holder FROM vs_locks")).scalar()
    state.dispose()
    return str(holder) if holder is not None else None


def _state_engine(repo: Path, state_url: str) -> sa.Engine:
    return sa.create_engine(f"sqlite:///{repo}/.viewsync/state.db" if state_url.startswith("sqlite:///.")
                            else state_url)


def _running_runs(repo: Path, state_url: str) -> int:
    state = _state_engine(repo, state_url)
    with state.connect() as conn:
        n = conn.execute(sa.text("SELECT count(*) FROM vs_runs WHERE outcome = 'running'")).scalar()
    state.dispose()
    return int(n or 0)


def _check_records(repo: Path, state_url: str) -> None:
    assert run_cli(repo, "plan", "--detailed-exitcode", "--prune").code == 0  # converged
    catalog = sa.create_engine(f"sqlite:///{repo}/.viewsync/catalog.db")
    state = _state_engine(repo, state_url)
    with catalog.connect() as conn:
        live = {r.view_name: r.spec_digest for r in conn.execute(sa.text(
            "SELECT view_name, spec_digest FROM view_meta WHERE deleted_at = 0"))}
    with state.connect() as conn:
        runs = [dict(r._mapping) for r in conn.execute(sa.text("SELECT run_id, outcome FROM vs_runs"))]
        audit = [dict(r._mapping) for r in conn.execute(sa.text(
            "SELECT run_id, view_name, action, outcome, after_digest FROM vs_audit ORDER BY id"))]
        versions = [dict(r._mapping) for r in conn.execute(sa.text(
            "SELECT run_id, view_name, version, action, digest FROM vs_versions ORDER BY view_name, version"))]
    catalog.dispose()
    state.dispose()
    assert live.keys() == {"keep", "base", "new1"}
    assert not [r for r in runs if r["outcome"] == "running"], runs
    assert not [a for a in audit if a["outcome"] == "pending"], audit
    latest: dict[str, dict[str, object]] = {}
    for v in versions:
        latest[v["view_name"]] = v
    # Every live view's last version is what the catalog holds; the dropped one ends with a drop.
    for name, digest in live.items():
        assert latest[name]["digest"] == digest and latest[name]["action"] != "drop", (name, versions)
    assert latest["old"]["action"] == "drop"
    # Audit and versions agree exactly: one version per applied audit row, none without one.
    applied = sorted((a["run_id"], a["view_name"], a["action"]) for a in audit if a["outcome"] == "applied")
    recorded = sorted((v["run_id"], v["view_name"], v["action"]) for v in versions)
    assert applied == recorded, (audit, versions)
    assert [v["version"] for v in versions if v["view_name"] == "keep"] == [1, 2]  # nothing applied twice


def _kill_every_step(base: Path, state_url: Iterator[str] | str) -> None:
    step = 0
    while True:
        step += 1
        url = next(state_url) if not isinstance(state_url, str) else state_url
        repo = _repo(base, url)
        code = _killed_apply(repo, step)
        if code == 0:  # fewer writes than `step`: every step has been covered
            assert step > 10
            break
        assert code == -signal.SIGKILL, code
        dead = _running_runs(repo, url)
        held = _lock_left(repo, url)
        out = _recover(repo)
        # The dead process's lock is taken over by the next apply that takes the lock: one
        # with a dead run to repair or a change to make (one with nothing to do leaves it).
        if held and (dead or "Nothing to apply." not in out):
            m = re.search(r":(\d+)/\d+$", held)
            assert m is not None, held
            line = f"(pid {m.group(1)} on {socket.gethostname()})"
            takeovers = [t for t in out.splitlines() if t.startswith("Took over the apply lock of dead run ")]
            assert len(takeovers) == 1 and takeovers[0].endswith(line), (step, out)
        else:
            assert "Took over" not in out, (step, out)
        if dead:  # a run left `running`: the next apply repairs it and says so
            assert "Repaired:" in out and "died mid-apply" in out, (step, out)
        _check_records(repo, url)
        shutil.rmtree(repo)


def test_kill_at_every_step_sqlite_state(tmp_path: Path) -> None:
    _kill_every_step(tmp_path, "sqlite:///.viewsync/state.db")


@pytest.fixture
def pg_databases() -> Iterator[Iterator[str]]:
    """Fresh PostgreSQL databases on demand, all dropped afterwards."""
    from tests.helpers.dbs import require_server

    require_server(PG_ADMIN_URL, "PostgreSQL at 127.0.0.1:5432")
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    made: list[str] = []

    def fresh() -> Iterator[str]:
        while True:
            name = f"vs_kill_{uuid.uuid4().hex[:10]}"
            with admin.connect() as conn:
                conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
            made.append(name)
            yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"

    try:
        yield fresh()
    finally:
        for name in made:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_kill_at_every_step_postgres_state(tmp_path: Path, pg_databases: Iterator[str]) -> None:
    _kill_every_step(tmp_path, pg_databases)


def test_repair_reports_and_history_shows_versions(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "sqlite:///.viewsync/state.db")
    # Kill right after the first catalog write (acquire_lock, start_run, audit_starts, update -> 4).
    assert _killed_apply(repo, 4) == -signal.SIGKILL
    out = _recover(repo)
    assert "marked applied (found in the catalog; version recorded)" in out, out
    audit = json.loads(run_cli(repo, "audit", "--format", "json").out)
    assert {a["outcome"] for a in audit} <= {"applied", "failed", "skipped"}
    # the audit says the first run was interrupted, beside its rows that read `applied` (issue 38, item 6)
    runs = {a["run_id"]: a["run_outcome"] for a in audit}
    [dead] = [r for r, outcome in runs.items() if outcome == "interrupted"]
    assert set(runs.values()) == {"interrupted", "success"}, runs
    text = run_cli(repo, "audit").out
    assert all("(run interrupted)" in ln for ln in text.splitlines() if dead[:8] in ln), text
    assert not any("(run" in ln for ln in text.splitlines() if dead[:8] not in ln), text
