"""Apply's one path (reconciler.apply.run, reconciler.apply.stream) on every kind of catalog:
one that takes parallel writes, one that does not, and one whose creates are sent ahead of
their answers (one writer, as on the Hive Metastore), with and without a blocking hook.
What a user relies on, whichever: no view is written before its pending audit row is
committed; a blocking hook's veto refuses that action only (outcome `refused`, catalog
untouched); the first failure stops the run with everything before it recorded; actions
begun ahead and not written are recorded `skipped` with their post-event, the others
`skipped` without events; each view's events in order; and only the thread that called
apply touches the state store (the writers make only hook and catalog calls)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from reconciler.adapters.base import LiveView, Marker, WriteContext
from reconciler.apply.run import ApplyResult, apply_plan
from reconciler.apply.stream import SENT_AHEAD
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId, ViewSpec
from reconciler.events import model as ev
from reconciler.events import outbox
from reconciler.events.dispatch import Emitter
from reconciler.events.sinks import CommandSink
from reconciler.source.config import load_config
from reconciler.state.store import StateStore, audit
from reconciler.workspace import Workspace
from tests.helpers.memory_catalog import MemoryCatalog
from tests.helpers.planning import plan
from tests.helpers.specs import spec

N = 40
# A blocking hook refusing the views whose name ends in 7.
HOOK = "import json, sys; e = json.load(sys.stdin); sys.exit(1 if e['subject'].endswith('7') else 0)"


class Checked(MemoryCatalog):
    """Checks, at each write, that the view's pending audit row is already committed (read
    on another connection of the store, which sees only committed rows)."""

    def __init__(self, options: dict[str, Any], state_url: str) -> None:
        super().__init__("cat", options)
        self.engine = sa.create_engine(state_url)
        self.violations: list[str] = []
        self.lock = threading.Lock()

    def _check(self, view: ViewId) -> None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(audit.c.outcome).where(audit.c.view_name == view.name)).first()
        if row is None or row.outcome != "pending":
            with self.lock:
                self.violations.append(f"{view} written with its audit row {row}")

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        self._check(view)
        with self.lock:
            super().create(view, spec, marker, ctx)

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        self._check(live.id)
        with self.lock:
            super().update(live, spec, marker, ctx)


def _apply(tmp_path: Path, parallel: bool, hook: bool, parallelism: int = 4, fail_on: tuple[str, ...] = (),
           ahead: bool = False) -> tuple[ApplyResult, Checked, StateStore, list[dict[str, Any]], Any]:
    (tmp_path / "viewsync.yaml").write_text(
        "version: 1\nproject: p\nstate: sqlite:///.viewsync/state.db\n"
        "catalogs:\n  cat: {type: managed, url: 'sqlite:///.viewsync/unused.db'}\n")
    ws = Workspace(root=tmp_path, config=load_config(tmp_path), parallelism=parallelism)
    state = StateStore(ws.config.state_url)
    cat = Checked({"parallel_writes": parallel, "fail_on": fail_on, "creates_sent_ahead": ahead}, ws.config.state_url)
    cat.add_schema("s")
    ws._adapters["cat"] = cat  # the memory catalog stands in for the configured one
    p = plan({ViewId("cat", "s", f"v{i:02d}"): spec(f"SELECT {i} AS x") for i in range(N)}, cat)
    sinks = [CommandSink("guard", types=["view.create.pre"], command=[sys.executable, "-c", HOOK], block=True)] \
        if hook else []
    emitter = Emitter(state.engine, "p", sinks)

    touched: set[str] = set()  # the threads that called the store
    for name in ("start_run", "audit_starts", "record_unattempted", "finish_actions", "finish_run"):
        original = getattr(state, name)

        def spy(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            touched.add(threading.current_thread().name)
            return _original(*args, **kwargs)
        setattr(state, name, spy)
    result = apply_plan(ws, p, state, "tester", GitInfo(commit="c0ffee"), events=emitter)
    assert touched == {threading.current_thread().name}, touched
    assert not cat.violations, cat.violations
    with state.engine.connect() as conn:  # every event stored, in the order stored
        events = [json.loads(b) for b in conn.execute(sa.select(outbox.events.c.body).order_by(outbox.events.c.id))
                  .scalars()]
    return result, cat, state, events, p


# (parallel catalog, blocking hook, creates sent ahead)
CASES = [(False, False, False), (False, True, False), (True, False, False), (True, True, False),
         (False, False, True), (False, True, True)]


@pytest.mark.parametrize(("parallel", "hook", "ahead"), CASES)
def test_every_action_recorded_once_and_hooks_veto(tmp_path: Path, parallel: bool, hook: bool, ahead: bool) -> None:
    result, cat, state, events, p = _apply(tmp_path, parallel, hook, ahead=ahead)
    vetoed = {f"v{i:02d}" for i in range(N) if hook and i % 10 == 7}
    assert sorted(a.view.name for a, _ in result.refused) == sorted(vetoed)
    assert all(why.startswith("refused by hook 'guard' (exit 1)") for _, why in result.refused)
    assert sorted(a.view.name for a in result.applied) == sorted(f"v{i:02d}" for i in range(N) if f"v{i:02d}"
                                                                 not in vetoed)
    assert not result.failed and not result.skipped
    assert {v.name for _, v in cat.writes} == {a.view.name for a in result.applied}  # vetoed: untouched
    if not parallel:  # one writer: the catalog calls in plan order
        assert [v.name for _, v in cat.writes] == [a.view.name for a in p.actions if a.view.name not in vetoed]
    rows = state.audit_rows()
    assert sorted(r["seq"] for r in rows) == list(range(N))
    assert {r["view_name"]: r["outcome"] for r in rows} == {
        a.view.name: "refused" if a.view.name in vetoed else "applied" for a in p.actions}
    _check_events(events, rows)


def _check_events(events: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    """run.started first, run.finished last; each audited view a pre-event, then one post-event
    carrying its outcome."""
    types = [e["type"] for e in events]
    assert types[0] == ev.RUN_STARTED and types[-1] == ev.RUN_FINISHED
    for r in rows:
        mine = [e for e in events if e["subject"] == f"cat.s.{r['view_name']}"]
        if not mine:
            continue
        assert [e["type"] for e in mine][0] == ev.pre_type("create"), mine
        assert len(mine) == 2 and mine[1]["data"]["outcome"] == r["outcome"], mine
        if r["outcome"] == "applied":
            assert mine[1]["type"] == ev.post_type("create", True)
        else:
            assert mine[1]["type"] == ev.FAILED


@pytest.mark.parametrize(("parallel", "hook", "ahead"), CASES)
def test_a_failure_stops_the_run_and_every_action_is_recorded(tmp_path: Path, parallel: bool, hook: bool,
                                                              ahead: bool) -> None:
    result, cat, state, events, p = _apply(tmp_path, parallel, hook, parallelism=4 if parallel else 1,
                                           fail_on=("v05",), ahead=ahead)
    order = [a.view.name for a in p.actions]
    assert [a.view.name for a, _ in result.failed] == ["v05"]
    rows = {r["view_name"]: r for r in state.audit_rows()}
    assert sorted(rows) == sorted(order)  # one audit row per action
    assert not [r for r in rows.values() if r["outcome"] == "pending"]
    written = {v.name for _, v in cat.writes}
    for name, r in rows.items():
        assert (name in written) == (r["outcome"] == "applied"), (name, r["outcome"])
    if not parallel:  # one writer: everything before the failure applied, everything after skipped,
        # but what was sent ahead before its answer came (at most SENT_AHEAD - 1), carried out
        writes = [v.name for _, v in cat.writes]
        after = [rows[n]["outcome"] for n in order[6:]]
        sent_after = next((i for i, outcome in enumerate(after) if outcome == "skipped"), len(after))
        assert writes[:5] == order[:5] and writes[5:] == [n for n in order[6:6 + sent_after]
                                                          if rows[n]["outcome"] == "applied"]
        assert sent_after <= (SENT_AHEAD - 1 if ahead else 0)
        assert after[sent_after:] == ["skipped"] * (N - 6 - sent_after)
    skipped = [n for n, r in rows.items() if r["outcome"] == "skipped"]
    assert skipped and {a.view.name for a in result.skipped} == set(skipped)
    assert all(rows[n]["error"] == "not attempted: an earlier action failed" for n in skipped)
    # Begun ahead: a pre-event and a post-event saying skipped; never begun: no event at all.
    announced = {e["subject"].rsplit(".", 1)[1] for e in events if e["type"] == ev.pre_type("create")}
    assert announced - set(skipped), "nothing before the failure announced"
    assert set(skipped) - announced, "every skipped action was begun ahead: the look-ahead is not bounded"
    _check_events(events, list(rows.values()))
    with state.engine.connect() as conn:
        run = conn.execute(sa.text("SELECT outcome FROM vs_runs")).scalar()
    assert run == "failed"
