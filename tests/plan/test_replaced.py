"""A declared view an engine replaced (its viewsync marker gone) that the state shows this project
applied is still ours: plan updates it and drift calls it changed out of band, no --adopt needed.
(The real case, Trino's CREATE OR REPLACE VIEW on the Hive Metastore: tests/engines/test_trino_writes.py.)"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.core.model import ViewId
from reconciler.plan.drift import classify
from reconciler.plan.planner import PlanErrorCode, PlanOptions, build_plan
from reconciler.plan.replaced import reclaim
from tests.helpers.memory_catalog import MemoryCatalog
from tests.helpers.planning import DIGEST, snapshots
from tests.helpers.specs import spec

V = ViewId("cat", "s", "v")


def _catalog() -> MemoryCatalog:
    cat = MemoryCatalog("cat")
    cat.put(V, spec("SELECT 2"))  # replaced by an engine: no marker
    return cat


def _reclaimed(cat: MemoryCatalog, versions: Mapping[ViewId, Mapping[str, Any]],
               declared: tuple[ViewId, ...] = (V,)) -> tuple[Any, list[str], list[int]]:
    reads: list[int] = []

    def last() -> Mapping[ViewId, Mapping[str, Any]]:
        reads.append(1)
        return versions

    snaps = snapshots(cat)
    notes = reclaim(snaps, declared, "p", last, lambda _c: False)
    return snaps, notes, reads


def test_a_view_we_applied_that_lost_its_marker_is_updated_and_is_drift() -> None:
    cat = _catalog()
    stamped = spec("SELECT 1").resolved(V).digest()
    snaps, notes, _ = _reclaimed(cat, {V: {"action": "update", "digest": stamped, "version": 3}})
    assert len(notes) == 1 and "version 3" in notes[0] and "marker is gone" in notes[0]
    live = snaps[("cat", "s")].views["v"]
    assert (live.managed_by, live.spec_digest) == ("p", stamped)
    assert live.fingerprint == cat.fetch("s").views["v"].fingerprint  # what apply compares under its lock

    plan = build_plan({V: spec("SELECT 1")}, snaps, {"cat": cat}, PlanOptions(project="p"), DIGEST)
    assert plan.errors == []
    assert [(a.action, a.view) for a in plan.actions] == [("update", V)]
    report = classify(plan, snaps, {V: {"action": "update", "version": 3}})
    assert [(i.kind, i.view) for i in report.items] == [("changed_out_of_band", V)]


def test_without_our_last_write_it_stays_unmanaged() -> None:
    stamped = spec("SELECT 1").resolved(V).digest()
    for versions in ({}, {V: {"action": "drop", "digest": None, "version": 4}}):
        snaps, notes, _ = _reclaimed(_catalog(), versions)
        assert notes == [] and snaps[("cat", "s")].views["v"].managed_by is None
        plan = build_plan({V: spec("SELECT 1")}, snaps, {"cat": _catalog()}, PlanOptions(project="p"), DIGEST)
        assert [e.code for e in plan.errors] == [PlanErrorCode.UNMANAGED_DECLARED]
    # Not declared any more: never taken back (nothing drops a view someone else replaced).
    snaps, notes, _ = _reclaimed(_catalog(), {V: {"action": "create", "digest": stamped, "version": 1}},
                                 declared=())
    assert notes == [] and snaps[("cat", "s")].views["v"].managed_by is None


def test_the_state_is_read_only_when_a_declared_view_has_no_marker() -> None:
    cat = MemoryCatalog("cat")
    cat.put(V, spec("SELECT 1"), "p")
    _, notes, reads = _reclaimed(cat, {})
    assert notes == [] and reads == []
    other = MemoryCatalog("cat")
    other.put(V, spec("SELECT 1"), "someone-else")  # another project's view is never taken
    snaps, notes, reads = _reclaimed(other, {V: {"action": "create", "digest": DIGEST, "version": 1}})
    assert notes == [] and reads == [] and snaps[("cat", "s")].views["v"].managed_by == "someone-else"
