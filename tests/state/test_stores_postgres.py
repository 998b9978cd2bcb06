"""The managed catalog and the state store on the machine's real PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.adapters.base import ConflictError, Marker, WriteContext
from reconciler.adapters.managed.adapter import ManagedAdapter
from reconciler.core.model import ViewId, ViewSpec
from reconciler.state.store import LockHeld, StateStore
from tests.helpers.cli import run_cli
from tests.helpers.specs import spec


def _spec(sql: str) -> ViewSpec:
    return spec(sql, default_namespace=["s"])


def test_managed_catalog_versions_on_postgres(pg_url: str) -> None:
    adapter = ManagedAdapter("pgcat", {"url": pg_url})
    vid = ViewId("pgcat", "s", "v")
    adapter.create(vid, _spec("SELECT 1"), Marker("p", _spec("SELECT 1").digest()), WriteContext(actor="a"))
    live = adapter.fetch("s").views["v"]
    assert live.spec.digest() == _spec("SELECT 1").digest() and live.native_version == "1"
    adapter.update(live, _spec("SELECT 2"), Marker("p", _spec("SELECT 2").digest()), WriteContext(actor="b"))
    with pytest.raises(ConflictError):  # stale read: version 1 is no longer current
        adapter.update(live, _spec("SELECT 3"), Marker("p", "x"), WriteContext())
    assert [v.version for v in adapter.native_history(vid)] == ["1", "2"]
    adapter.drop(adapter.fetch("s").views["v"], WriteContext())
    assert adapter.fetch("s").views == {}
    adapter.create(vid, _spec("SELECT 4"), Marker("p", "d"), WriteContext())  # soft delete frees the name
    assert adapter.fetch("s").views["v"].spec.representations[0].sql == "SELECT 4"


def test_state_store_and_lock_on_postgres(pg_url: str) -> None:
    from reconciler.state.store import GitInfo

    state = StateStore(pg_url)
    run = state.start_run("p", "apply", "alice", GitInfo(commit="abc"), None, None)
    state.acquire_lock("apply:p", "alice@h:1", run)
    other = state.start_run("p", "apply", "bob", GitInfo(), None, None)
    with pytest.raises(LockHeld, match="alice@h:1"):
        state.acquire_lock("apply:p", "bob@h:2", other)
    assert state.force_unlock(run) == 1
    state.acquire_lock("apply:p", "bob@h:2", other)
    state.release_lock("apply:p", other)
    vid = ViewId("c", "s", "v")
    assert state.record_version(run, vid, "create", {"a": 1}, "sha256:x", [], "alice", "abc") == 1
    assert state.record_version(run, vid, "update", {"a": 2}, "sha256:y", [], "alice", "abc") == 2
    assert [r["version"] for r in state.versions_of(vid)] == [1, 2]


def test_sample_workflow_with_postgres_catalog_and_state(sample_repo: Path, pg_url: str) -> None:
    cfg = (sample_repo / "viewsync.yaml").read_text()
    cfg = cfg.replace("state: sqlite:///.viewsync/state.db", f"state: {pg_url}")
    cfg = cfg.replace("url: sqlite:///.viewsync/catalog.db", f"url: {pg_url}")
    (sample_repo / "viewsync.yaml").write_text(cfg)
    assert run_cli(sample_repo, "plan", "--detailed-exitcode").code == 2
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    assert run_cli(sample_repo, "plan", "--detailed-exitcode").code == 0
    assert not (sample_repo / ".viewsync").exists()
