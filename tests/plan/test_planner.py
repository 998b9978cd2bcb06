"""Unit tests of the planner, staleness and drift classification, one decision
branch each, against the in-memory catalog (no server, no CLI)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from reconciler.apply.run import stale_actions
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.drift import classify
from reconciler.plan.planner import Plan, PlanErrorCode, PlanOptions, build_plan
from tests.helpers.memory_catalog import MemoryCatalog
from tests.helpers.planning import DIGEST, plan, snapshots
from tests.helpers.specs import spec

S = ViewId("cat", "s", "v")


def kinds(p: Plan) -> list[tuple[str, str]]:
    return [(a.action, a.view.name) for a in p.actions]


def codes(p: Plan) -> list[PlanErrorCode]:
    return [e.code for e in p.errors]


@pytest.fixture
def cat() -> MemoryCatalog:
    c = MemoryCatalog("cat")
    c.add_schema("s")
    return c


# ------------------------------------------------------------ declared views
def test_a_declared_view_that_is_missing_is_created_with_every_field(cat: MemoryCatalog) -> None:
    p = plan({S: spec(comment="c", properties={"k": "v"})}, cat)
    assert kinds(p) == [("create", "v")] and p.errors == []
    (action,) = p.actions
    assert action.live_fingerprint is None and action.before is None
    assert action.desired == spec(comment="c", properties={"k": "v"}).resolved(S)
    assert [c.field for c in action.changes] == ["comment", "default_namespace", "representations.spark",
                                                 "properties.k"]


def test_a_view_stamped_with_its_spec_is_unchanged(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), "p")
    p = plan({S: spec()}, cat)
    assert p.actions == [] and p.errors == [] and p.unchanged == 1


def test_a_stale_stamp_over_an_equal_spec_is_not_an_update(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), "p", stamp="sha256:" + "1" * 64)
    p = plan({S: spec()}, cat)
    assert p.actions == [] and p.unchanged == 1


def test_a_changed_declaration_is_an_update_naming_the_fields(cat: MemoryCatalog) -> None:
    cat.put(S, spec("SELECT 1"), "p")
    p = plan({S: spec("SELECT 2", owner="o")}, cat)
    assert kinds(p) == [("update", "v")]
    (action,) = p.actions
    assert [c.field for c in action.changes] == ["owner", "representations.spark.sql"]
    assert action.before is not None and action.before.sql_for("spark") == "SELECT 1"
    assert action.live_fingerprint == cat.fetch("s").views["v"].fingerprint


def test_a_missing_schema_is_an_error(cat: MemoryCatalog) -> None:
    p = plan({ViewId("cat", "nope", "v"): spec()}, cat)
    assert p.actions == [] and codes(p) == [PlanErrorCode.SCHEMA_MISSING]
    assert p.errors[0].view == ViewId("cat", "nope", "v")


def test_a_dialect_the_catalog_cannot_store_is_an_error() -> None:
    cat = MemoryCatalog("cat", {"dialects": ["trino"]})
    cat.add_schema("s")
    p = plan({S: spec()}, cat)
    assert p.actions == [] and codes(p) == [PlanErrorCode.DIALECT_NOT_STORABLE]


def test_a_table_holding_the_name_is_an_error(cat: MemoryCatalog) -> None:
    cat.add_table("s", "v")
    assert codes(plan({S: spec()}, cat)) == [PlanErrorCode.NAME_IS_TABLE]


def test_an_object_viewsync_must_not_touch_is_an_error(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), writable=False, format="materialized-view")
    p = plan({S: spec()}, cat)
    assert codes(p) == [PlanErrorCode.NOT_A_VIEW] and p.actions == []


def test_an_unmanaged_view_is_adopted_only_when_asked(cat: MemoryCatalog) -> None:
    cat.put(S, spec("SELECT 1"))
    refused = plan({S: spec("SELECT 2")}, cat)
    assert codes(refused) == [PlanErrorCode.UNMANAGED_DECLARED] and refused.actions == []
    adopted = plan({S: spec("SELECT 2")}, cat, adopt=True)
    assert kinds(adopted) == [("adopt", "v")] and adopted.errors == []
    assert [c.field for c in adopted.actions[0].changes] == ["representations.spark.sql"]


def test_another_projects_view_is_an_error(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), "q")
    p = plan({S: spec()}, cat, adopt=True)
    assert codes(p) == [PlanErrorCode.OWNED_BY_OTHER] and p.actions == []


# ------------------------------------------------------- read-only catalogs
@pytest.fixture
def ro() -> MemoryCatalog:
    c = MemoryCatalog("ro", {"writable": False})
    c.add_schema("r")
    return c


def test_read_only_expectation_met_is_unchanged(ro: MemoryCatalog) -> None:
    v = ViewId("ro", "r", "v")
    ro.put(v, spec(columns=[{"name": "a", "type": "int"}]))
    p = plan({v: spec()}, ro)  # declares no columns: they are not constrained
    assert p.errors == [] and p.drift == [] and p.unchanged == 1 and p.unmanaged == []


def test_read_only_difference_is_an_error_and_drift(ro: MemoryCatalog) -> None:
    v = ViewId("ro", "r", "v")
    ro.put(v, spec("SELECT 1"))
    p = plan({v: spec("SELECT 2")}, ro)
    assert p.actions == [] and codes(p) == [PlanErrorCode.READ_ONLY_CATALOG]
    assert [(m.view, [c.field for c in m.changes]) for m in p.drift] == [(v, ["representations.spark.sql"])]


def test_read_only_missing_view_is_an_error(ro: MemoryCatalog) -> None:
    p = plan({ViewId("ro", "r", "v"): spec()}, ro)
    assert codes(p) == [PlanErrorCode.READ_ONLY_CATALOG] and p.drift == []


def test_read_only_views_that_are_not_declared_are_unmanaged(ro: MemoryCatalog) -> None:
    ro.put(ViewId("ro", "r", "x"), spec(), "p")  # even with our marker: we cannot write there
    p = plan({}, ro, prune=True)
    assert p.actions == [] and [u.view.name for u in p.unmanaged] == ["x"]


# ------------------------------------------------------- live, not declared
def test_unmanaged_views_are_listed_never_touched(cat: MemoryCatalog) -> None:
    cat.put(ViewId("cat", "s", "theirs"), spec(), "q")
    cat.put(ViewId("cat", "s", "bare"), spec())
    p = plan({}, cat, prune=True)
    assert p.actions == [] and sorted((u.view.name, u.managed_by) for u in p.unmanaged) == [
        ("bare", None), ("theirs", "q")]


def test_our_undeclared_view_is_kept_without_prune_and_dropped_with_it(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), "p")
    kept = plan({}, cat)
    assert kept.actions == [] and kept.undeclared == [S] and "no longer declared" in kept.warnings[0]
    cat.put(ViewId("cat", "s", "w"), spec(), "p")
    cat.put(ViewId("cat", "s", "x"), spec(), "p")
    cat.put(ViewId("cat", "s", "y"), spec(), "p")
    declared = {ViewId("cat", "s", n): spec() for n in ("w", "x", "y")}
    pruned = plan(declared, cat, prune=True)
    assert kinds(pruned) == [("drop", "v")] and pruned.undeclared == [] and pruned.errors == []
    assert pruned.actions[0].desired is None and pruned.actions[0].before is not None


def test_our_view_we_cannot_manage_is_kept_with_a_warning(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), "p", writable=False, format="odd")
    p = plan({}, cat, prune=True)
    assert p.actions == [] and [u.view for u in p.unmanaged] == [S]
    assert "cannot manage it (odd)" in p.warnings[0]


def test_select_limits_what_is_dropped(cat: MemoryCatalog) -> None:
    cat.put(ViewId("cat", "s", "a"), spec(), "p")
    cat.put(ViewId("cat", "s", "b"), spec(), "p")
    p = plan({}, cat, prune=True, allow_mass_drop=True, select=("cat.s.a",))
    assert kinds(p) == [("drop", "a")]


def test_a_folding_catalog_matches_declarations_case_insensitively() -> None:
    cat = MemoryCatalog("cat", {"fold_names": True})
    cat.put(ViewId("cat", "s", "orders"), spec(), "p")
    p = plan({ViewId("cat", "s", "Orders"): spec()}, cat, prune=True)
    assert p.actions == [] and p.errors == [] and p.unchanged == 1


# --------------------------------------------------------- mass-drop guard
@pytest.mark.parametrize(("drops", "fraction", "allow", "refused"), [
    (1, 0.25, False, False),  # 1 of 4 = 25%: at the limit
    (2, 0.25, False, True),  # 2 of 4 = 50%
    (2, 0.5, False, False),
    (4, 0.25, True, False),  # --allow-mass-drop
])
def test_mass_drop_guard(cat: MemoryCatalog, drops: int, fraction: float, allow: bool, refused: bool) -> None:
    names = ["a", "b", "c", "d"]
    for n in names:
        cat.put(ViewId("cat", "s", n), spec(), "p")
    declared = {ViewId("cat", "s", n): spec() for n in names[drops:]}
    p = plan(declared, cat, prune=True, max_drop_fraction=fraction, allow_mass_drop=allow)
    assert len(p.actions) == drops
    assert (codes(p) == [PlanErrorCode.MASS_DROP]) is refused
    if refused:
        assert p.errors[0].view is None and f"drops {drops} of 4" in p.errors[0].message


# ----------------------------------------------------------------- ordering
def test_creates_follow_dependencies_and_drops_run_in_reverse(cat: MemoryCatalog) -> None:
    base, top = ViewId("cat", "s", "z_base"), ViewId("cat", "s", "a_top")
    p = plan({top: spec("SELECT * FROM z_base"), base: spec("SELECT 1")}, cat)
    assert kinds(p) == [("create", "z_base"), ("create", "a_top")]
    for vid, sql in ((base, "SELECT 1"), (top, "SELECT * FROM z_base")):
        cat.put(vid, spec(sql), "p")
    dropped = plan({}, cat, prune=True, allow_mass_drop=True)
    assert kinds(dropped) == [("drop", "a_top"), ("drop", "z_base")]


def test_a_dependency_cycle_is_an_error(cat: MemoryCatalog) -> None:
    a, b = ViewId("cat", "s", "a"), ViewId("cat", "s", "b")
    p = plan({a: spec("SELECT * FROM b"), b: spec("SELECT * FROM a")}, cat)
    assert codes(p) == [PlanErrorCode.DEPENDENCY_CYCLE] and "cat.s.a -> cat.s.b -> cat.s.a" in p.errors[0].message


# ---------------------------------------------------------------- staleness
def _folds(_catalog: str) -> bool:
    return False


def test_a_fresh_plan_is_not_stale(cat: MemoryCatalog) -> None:
    cat.put(ViewId("cat", "s", "old"), spec(), "p")
    p = plan({S: spec(), ViewId("cat", "s", "old"): spec("SELECT 2")}, cat)
    assert stale_actions(p, snapshots(cat), _folds) == []


def test_staleness_reasons(cat: MemoryCatalog) -> None:
    upd, gone = ViewId("cat", "s", "upd"), ViewId("cat", "s", "gone")
    cat.put(upd, spec(), "p")
    cat.put(gone, spec(), "p")
    p = plan({S: spec(), upd: spec("SELECT 2"), gone: spec("SELECT 2")}, cat)
    cat.put(S, spec(), "q")  # someone created it
    cat.put(upd, spec("SELECT 3"), "p").version = 2  # someone changed it
    cat.store.views["s"].pop("gone")  # someone dropped it
    assert stale_actions(p, snapshots(cat), _folds) == [
        "cat.s.gone: planned as update, but the view no longer exists",
        "cat.s.upd: changed in the catalog since the plan was made",
        "cat.s.v: planned as create, but a view now exists",
    ]


# -------------------------------------------------------------------- drift
def _drift(desired: Mapping[ViewId, ViewSpec], *catalogs: MemoryCatalog,
           last: Mapping[ViewId, dict[str, Any]] | None = None) -> list[tuple[str, str, tuple[str, ...]]]:
    snaps = snapshots(*catalogs, also=tuple((v.catalog, v.schema) for v in desired))
    p = build_plan(desired, snaps, {c.name: c for c in catalogs},
                   PlanOptions(project="p", prune=True, allow_mass_drop=True), DIGEST)
    report = classify(p, snaps, last or {})
    return [(i.kind, i.view.name, i.fields) for i in report.items]


def test_drift_pending_create_and_update(cat: MemoryCatalog) -> None:
    cat.put(ViewId("cat", "s", "u"), spec("SELECT 1"), "p")
    assert _drift({S: spec(), ViewId("cat", "s", "u"): spec("SELECT 2")}, cat) == [
        ("pending", "u", ("representations.spark.sql",)), ("pending", "v", ())]


def test_drift_deleted_out_of_band(cat: MemoryCatalog) -> None:
    assert _drift({S: spec()}, cat, last={S: {"action": "create", "version": 3}}) == [
        ("deleted_out_of_band", "v", ())]
    assert _drift({S: spec()}, cat, last={S: {"action": "drop", "version": 4}}) == [("pending", "v", ())]


def test_drift_changed_out_of_band(cat: MemoryCatalog) -> None:
    cat.put(S, spec("SELECT 1"), "p", stamp=spec("SELECT 2").resolved(S).digest())  # stamped 2, holds 1
    assert _drift({S: spec("SELECT 2")}, cat) == [("changed_out_of_band", "v", ("representations.spark.sql",))]


def test_drift_reverted_out_of_band(cat: MemoryCatalog) -> None:
    """Live as `revert --apply` wrote it (the digest of its run's version row), Git declaring another
    version: its own kind, until Git declares it (or an apply or a hand edit changes the view)."""
    cat.put(S, spec("SELECT 1"), "p")
    row = {"action": "update", "version": 3, "digest": spec("SELECT 1").resolved(S).digest(), "run_id": "0a1b2c3d4e",
           "run_command": "revert"}
    assert _drift({S: spec("SELECT 2")}, cat, last={S: row}) == [
        ("reverted_out_of_band", "v", ("representations.spark.sql",))]
    assert _drift({S: spec("SELECT 1")}, cat, last={S: row}) == []
    assert _drift({S: spec("SELECT 2")}, cat, last={S: {**row, "run_command": "apply"}}) == [
        ("pending", "v", ("representations.spark.sql",))]
    assert _drift({S: spec("SELECT 2")}, cat, last={S: {**row, "digest": "sha256:other"}}) == [
        ("pending", "v", ("representations.spark.sql",))]


def test_drift_undeclared_and_unmanaged(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), "p")
    cat.put(ViewId("cat", "s", "bare"), spec())
    assert _drift({}, cat) == [("undeclared", "v", ()), ("unmanaged", "bare", ())]


def test_drift_read_only_mismatch_is_an_item_not_an_error(ro: MemoryCatalog) -> None:
    v = ViewId("ro", "r", "v")
    ro.put(v, spec("SELECT 1"))
    snaps = snapshots(ro)
    p = build_plan({v: spec("SELECT 2")}, snaps, {"ro": ro}, PlanOptions(project="p"), DIGEST)
    report = classify(p, snaps, {})
    assert [(i.kind, i.view) for i in report.items] == [("changed_out_of_band", v)] and report.errors == []


def test_drift_reports_other_plan_errors(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), "q")
    snaps = snapshots(cat)
    p = build_plan({S: spec()}, snaps, {"cat": cat}, PlanOptions(project="p"), DIGEST)
    assert classify(p, snaps, {}).errors == [f"[owned_by_other] {p.errors[0].message}"]


def test_no_drift_when_everything_matches(cat: MemoryCatalog) -> None:
    cat.put(S, spec(), "p")
    assert _drift({S: spec()}, cat) == []
