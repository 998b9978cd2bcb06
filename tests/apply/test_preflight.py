"""A catalog's preflight (CatalogAdapter.preflight) sees every write of the run in it before the
first one, and its refusal refuses the whole run: nothing written, no audit row, the run
recorded as refused with the catalog's line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import sqlalchemy as sa

from reconciler.apply.run import CatalogRefused, apply_plan
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.planner import Plan
from reconciler.source.config import load_config
from reconciler.state.store import StateStore, runs
from reconciler.workspace import Workspace
from tests.helpers.memory_catalog import MemoryCatalog
from tests.helpers.planning import plan
from tests.helpers.specs import spec


class NoDrops(MemoryCatalog):
    """A catalog that cannot drop views (as a REST server whose /v1/config lists no drop)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.preflights: list[list[tuple[str, ViewId]]] = []

    def preflight(self, writes: Sequence[tuple[str, ViewId]]) -> None:
        self.preflights.append(list(writes))
        drops = [str(view) for action, view in writes if action == "drop"]
        if drops:
            raise self.error(f"catalog {self.name!r}: cannot drop views ({', '.join(drops)})")


def _run(tmp_path: Path, cat: NoDrops, desired: dict[ViewId, ViewSpec]) -> tuple[StateStore, Workspace, Plan]:
    (tmp_path / "viewsync.yaml").write_text(
        "version: 1\nproject: p\nstate: sqlite:///.viewsync/state.db\n"
        "catalogs:\n  cat: {type: managed, url: 'sqlite:///.viewsync/unused.db'}\n")
    ws = Workspace(root=tmp_path, config=load_config(tmp_path))
    ws._adapters["cat"] = cat  # the memory catalog stands in for the configured one
    return StateStore(ws.config.state_url), ws, plan(desired, cat, prune=True, max_drop_fraction=1.0)


def test_a_refused_preflight_refuses_the_whole_run_before_any_write(tmp_path: Path) -> None:
    cat = NoDrops("cat")
    cat.add_schema("s")
    old = ViewId("cat", "s", "old")
    cat.put(old, spec("SELECT 0 AS x"), managed_by="p")
    new = ViewId("cat", "s", "new")
    state, ws, p = _run(tmp_path, cat, {new: spec("SELECT 1 AS x")})
    assert sorted(a.action for a in p.actions) == ["create", "drop"]
    with pytest.raises(CatalogRefused) as err:
        apply_plan(ws, p, state, "tester", GitInfo(commit="c0ffee"))
    assert str(err.value) == "catalog 'cat': cannot drop views (cat.s.old); nothing was applied"
    assert sorted(cat.preflights[0]) == [("create", new), ("drop", old)]  # every write, at once
    assert cat.writes == [] and state.audit_rows() == []
    with state.engine.connect() as conn:
        outcome, summary = conn.execute(sa.select(runs.c.outcome, runs.c.summary)).one()
    assert outcome == "refused" and json.loads(summary)["details"] == [str(err.value)]


def test_writes_the_catalog_accepts_apply(tmp_path: Path) -> None:
    cat = NoDrops("cat")
    cat.add_schema("s")
    new = ViewId("cat", "s", "new")
    state, ws, p = _run(tmp_path, cat, {new: spec("SELECT 1 AS x")})
    result = apply_plan(ws, p, state, "tester", GitInfo(commit="c0ffee"))
    assert result.ok and cat.preflights == [[("create", new)]] and [v for _, v in cat.writes] == [new]
