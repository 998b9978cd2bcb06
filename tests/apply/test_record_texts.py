"""Apply encodes each action's desired spec and changes once (state.store.RecordTexts) and
stores that text in both the audit row and the version row. Each row must still hold its
own action's spec and changes, exactly as json.dumps(..., sort_keys=True) writes them:
a text shared with the wrong action, or with a stale spec, fails here."""

from __future__ import annotations

import json
from pathlib import Path

from reconciler.apply.run import apply_plan
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId
from reconciler.plan.planner import Plan
from reconciler.source.config import load_config
from reconciler.state.store import RecordTexts, StateStore
from reconciler.workspace import Workspace
from tests.helpers.memory_catalog import MemoryCatalog
from tests.helpers.planning import plan
from tests.helpers.specs import spec


def _run(tmp_path: Path, cat: MemoryCatalog, p: Plan, parallelism: int) -> StateStore:
    (tmp_path / "viewsync.yaml").write_text(
        "version: 1\nproject: p\nstate: sqlite:///.viewsync/state.db\n"
        "catalogs:\n  cat: {type: managed, url: 'sqlite:///.viewsync/unused.db'}\n")
    ws = Workspace(root=tmp_path, config=load_config(tmp_path), parallelism=parallelism)
    ws._adapters["cat"] = cat  # the memory catalog stands in for the configured one
    state = StateStore(ws.config.state_url)
    assert apply_plan(ws, p, state, "tester", GitInfo(commit="c0ffee")).ok
    return state


def _check_rows(state: StateStore, p: Plan) -> None:
    rows = {r["view_name"]: r for r in state.audit_rows() if r["run_id"] == state.audit_rows()[-1]["run_id"]}
    assert sorted(rows) == sorted(a.view.name for a in p.actions)
    for a in p.actions:
        assert a.desired is not None
        row = rows[a.view.name]
        after = json.dumps(a.desired.canonical(), sort_keys=True)
        changes = json.dumps([c.to_json() for c in a.changes], sort_keys=True)
        assert row["after_spec"] == after and row["changes"] == changes, a.view
        last = state.versions_of(a.view)[-1]
        assert last["spec"] == after and last["changes"] == changes, a.view


def test_audit_and_version_rows_hold_each_actions_own_spec_and_changes(tmp_path: Path) -> None:
    cat = MemoryCatalog("cat", {"parallel_writes": True})
    cat.add_schema("s")
    views = {ViewId("cat", "s", f"v{i}"): spec(f"SELECT {i} AS x", comment=f"vue nº{i} ✓",
                                               columns=[{"name": "x", "type": "int", "comment": f"c{i}"}])
             for i in range(6)}
    first = plan(views, cat)
    _check_rows(_run(tmp_path, cat, first, parallelism=3), first)

    # updates: their changes are not empty, and differ per view
    changed = {v: spec(f"SELECT {i} + 1 AS x", comment=f"autre {i}",
                       columns=[{"name": "x", "type": "int", "comment": f"c{i}"}])
               for i, v in enumerate(views)}
    second = plan(changed, cat)
    assert {a.action for a in second.actions} == {"update"} and all(a.changes for a in second.actions)
    _check_rows(_run(tmp_path, cat, second, parallelism=1), second)


def test_record_texts_are_what_json_dumps_writes() -> None:
    after = {"b": [1, {"z": "é", "a": None}], "a": "x"}
    changes = [{"field": "sql", "to": "ü"}]
    texts = RecordTexts.of(after, changes)
    assert texts.after == json.dumps(after, sort_keys=True)
    assert texts.changes == json.dumps(changes, sort_keys=True)
    assert RecordTexts.of(None, []).after is None
