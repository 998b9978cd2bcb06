"""`security: definer | invoker`: the plan says when a catalog would only record it."""

from __future__ import annotations

from reconciler.access.security import enforced, notes
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.planner import Action, Plan


def _plan(*specs: tuple[str, str]) -> Plan:
    plan = Plan(project="p", declarations_digest="sha256:x")
    for i, (catalog, security) in enumerate(specs):
        desired = ViewSpec.model_validate({"representations": [{"dialect": "spark", "sql": "SELECT 1"}],
                                           "security": security})
        plan.actions.append(Action("create", ViewId(catalog, "s", f"v{i}"), "x", desired=desired))
    plan.actions.append(Action("drop", ViewId("hive", "s", "gone"), "x"))  # a drop sets no mode
    return plan


def test_which_engines_enforce_which_mode() -> None:
    assert enforced("hms", {"engine_format": "trino"}) == {"definer", "invoker"}
    assert enforced("hms", {"write_format": "trino"}) == {"definer", "invoker"}  # the deprecated name
    assert enforced("hms", {}) == set()  # spark by default: metadata only
    assert enforced("glue", {}) == {"definer", "invoker"}  # athena by default: Trino/Presto envelope
    assert enforced("glue", {"engine_format": "multi-dialect"}) == {"definer"}
    assert enforced("iceberg-rest", {}) == enforced("managed", {}) == set()


def test_one_note_per_catalog_that_only_records_the_mode() -> None:
    catalogs = {"trino_hms": ("hms", {"write_format": "trino"}), "hive": ("hms", {"write_format": "spark"}),
                "glue": ("glue", {"view_format": "multi-dialect"}), "lake": ("iceberg-rest", {})}
    plan = _plan(("trino_hms", "invoker"), ("hive", "definer"), ("hive", "invoker"), ("hive", "invoker"),
                 ("glue", "definer"), ("glue", "invoker"), ("lake", "definer"))
    assert notes(plan, catalogs) == [
        "catalog 'glue' (glue) only records `security` as metadata, no engine enforces it there: "
        "invoker (1 view(s)) in this plan",
        "catalog 'hive' (hms) only records `security` as metadata, no engine enforces it there: "
        "definer (1 view(s)), invoker (2 view(s)) in this plan",
        "catalog 'lake' (iceberg-rest) only records `security` as metadata, no engine enforces it there: "
        "definer (1 view(s)) in this plan",
    ]
    assert notes(_plan(("trino_hms", "definer")), catalogs) == []


def test_views_that_leave_security_at_its_default_are_not_noted() -> None:
    """Issue 43: a plan warned about `security` once per catalog for views that never set it."""
    catalogs = {"hive": ("hms", {"write_format": "spark"})}
    plan = Plan(project="p", declarations_digest="sha256:x")
    for i in range(3):
        desired = ViewSpec.model_validate({"representations": [{"dialect": "spark", "sql": "SELECT 1"}]})
        plan.actions.append(Action("create", ViewId("hive", "s", f"v{i}"), "x", desired=desired))
    assert notes(plan, catalogs) == []
    plan.actions.append(Action("create", ViewId("hive", "s", "chosen"), "x", desired=ViewSpec.model_validate(
        {"representations": [{"dialect": "spark", "sql": "SELECT 1"}], "security": "definer"})))
    assert notes(plan, catalogs) == [
        "catalog 'hive' (hms) only records `security` as metadata, no engine enforces it there: "
        "definer (1 view(s)) in this plan"]
