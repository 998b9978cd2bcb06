"""Apply's pipelined path: on a catalog that takes parallel writes, run with one
writer, the catalog writes stay one at a time in plan order while a second thread
writes the records (the next action's pending audit row, the last action's
outcome). The records must be exactly those of the plain sequential path: one
audit row per action, a version row per applied change, the first failure stops
the run and the rest is recorded as skipped, never applied."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.apply.run import apply_plan
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId
from reconciler.source.config import load_config
from reconciler.state.store import StateStore
from reconciler.workspace import Workspace
from tests.helpers.memory_catalog import MemoryCatalog
from tests.helpers.planning import plan
from tests.helpers.specs import spec

N = 12


def _workspace(tmp_path: Path, catalog: MemoryCatalog, parallelism: int) -> Workspace:
    (tmp_path / "viewsync.yaml").write_text(
        "version: 1\nproject: p\nstate: sqlite:///.viewsync/state.db\n"
        "catalogs:\n  cat: {type: managed, url: 'sqlite:///.viewsync/unused.db'}\n")
    ws = Workspace(root=tmp_path, config=load_config(tmp_path), parallelism=parallelism)
    ws._adapters["cat"] = catalog  # the memory catalog stands in for the configured one
    return ws


def _apply(tmp_path: Path, fail_on: tuple[str, ...], parallelism: int = 1) -> tuple[MemoryCatalog, StateStore, list]:
    cat = MemoryCatalog("cat", {"parallel_writes": True, "fail_on": fail_on})
    cat.add_schema("s")
    desired = {ViewId("cat", "s", f"v{i:02d}"): spec(f"SELECT {i} AS x") for i in range(N)}
    p = plan(desired, cat)
    assert [a.action for a in p.actions] == ["create"] * N
    ws = _workspace(tmp_path, cat, parallelism)
    state = StateStore(ws.config.state_url)
    seen: list = []
    result = apply_plan(ws, p, state, "tester", GitInfo(commit="c0ffee"),
                        on_action=lambda a, outcome, error: seen.append((a.view.name, outcome)))
    return cat, state, [result, seen, p]


def test_pipelined_writes_keep_plan_order_and_record_every_action_once(tmp_path: Path) -> None:
    cat, state, (result, seen, p) = _apply(tmp_path, ())
    assert result.ok and len(result.applied) == N
    assert [v.name for _, v in cat.writes] == [a.view.name for a in p.actions]
    rows = state.audit_rows()
    assert sorted(r["view_name"] for r in rows) == sorted(f"v{i:02d}" for i in range(N))
    assert {r["outcome"] for r in rows} == {"applied"}
    assert sorted(r["seq"] for r in rows) == list(range(N))
    for a in p.actions:
        assert [v["version"] for v in state.versions_of(a.view)] == [1]
    assert seen == [(a.view.name, "applied") for a in p.actions]


@pytest.mark.parametrize("parallelism", [1, 4])
def test_first_failure_stops_the_run_and_the_rest_is_skipped_never_written(tmp_path: Path,
                                                                            parallelism: int) -> None:
    cat, state, (result, seen, p) = _apply(tmp_path, ("v05",), parallelism)
    order = [a.view.name for a in p.actions]
    failed_at = order.index("v05")
    rows = {r["view_name"]: r for r in state.audit_rows()}
    assert len(rows) == N and len(state.audit_rows()) == N  # one row per action, none twice
    assert rows["v05"]["outcome"] == "failed" and "injected" in rows["v05"]["error"]
    written = {v.name for _, v in cat.writes}
    for name, row in rows.items():
        # the audit matches the catalog exactly: applied <=> written, with its version row
        assert (row["outcome"] == "applied") == (name in written), (name, row["outcome"])
        assert bool(state.versions_of(ViewId("cat", "s", name))) == (name in written)
        assert row["outcome"] in ("applied", "failed", "skipped")
    if parallelism == 1:  # one writer: everything before the failure applied, everything after skipped
        assert [v.name for _, v in cat.writes] == order[:failed_at]
        assert [rows[n]["outcome"] for n in order[failed_at + 1:]] == ["skipped"] * (N - failed_at - 1)
    assert not result.ok and [a.view.name for a, _ in result.failed] == ["v05"]
    assert {a.view.name for a in result.skipped} == {n for n, r in rows.items() if r["outcome"] == "skipped"}
    assert state.lock_info("apply:p") is None
