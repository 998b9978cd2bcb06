"""A view on Iceberg REST whose trino SQL names tables by one or two parts, with no default catalog,
is one Trino cannot read (tests/engines measured it): the plan warns, naming the view and the
tables; a default catalog, three-part names, or another catalog kind give no warning."""

from __future__ import annotations

from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.model import Action, Plan
from reconciler.plan.portability import trino_notes


def plan_of(catalog: str, sql: str, **extra: object) -> Plan:
    spec = ViewSpec.model_validate({"representations": [{"dialect": "spark", "sql": "SELECT 1 AS x"},
                                                        {"dialect": "trino", "sql": sql}], **extra})
    plan = Plan(project="p", declarations_digest="sha256:" + "0" * 64)
    plan.actions.append(Action("create", ViewId(catalog, "sales", "v"), "delegate", [], None, spec))
    return plan


KINDS = {"lake": "iceberg-rest", "hive": "hms"}


def test_unqualified_trino_names_on_iceberg_rest_without_a_default_catalog_are_warned() -> None:
    [note] = trino_notes(plan_of("lake", "SELECT * FROM orders JOIN sales.customers USING (id)"), KINDS)
    assert note.startswith("lake.sales.v: Trino resolves orders, sales.customers only under a default catalog")


def test_no_warning_where_trino_can_resolve_the_names() -> None:
    assert trino_notes(plan_of("lake", "SELECT * FROM orders", default_catalog="lake"), KINDS) == []
    assert trino_notes(plan_of("lake", "SELECT * FROM lake.sales.orders"), KINDS) == []
    assert trino_notes(plan_of("hive", "SELECT * FROM orders"), KINDS) == []  # HMS: the view JSON names them
