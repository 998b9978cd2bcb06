"""The access policy: loading with located errors, and the pure evaluation rules."""

from __future__ import annotations

import pytest

from reconciler.access.codeowners import render
from reconciler.access.evaluate import Identity, denials, holds, policy_change_denial, required
from reconciler.access.load import from_texts
from reconciler.access.model import AccessPolicy, Privilege, Securable
from reconciler.core.errors import ValidationFailed
from reconciler.core.model import ViewId

POLICY = """\
owners: [platform@example.com]
groups:
  team-a: {members: [alice@example.com, alice-gh], codeowners: "@acme/team-a"}
  team-b: {members: [bob@example.com, bob-gh]}
  readers: {members: [team-b, carol@example.com]}
grants:
  - {to: [team-a], privileges: [OWNER], schema: local.sales}
  - {to: [team-b], privileges: [OWNER], schema: local.analytics}
  - {to: [readers], privileges: [USE_SCHEMA, SELECT_VIEW], schema: "local.sal*"}
  - {to: [dave-gh], privileges: [USE_CATALOG], catalog: local}
  - {to: [dave-gh], privileges: [USE_SCHEMA, CREATE_VIEW], schema: local.scratch}
  - {to: [dave-gh], privileges: [ALTER_VIEW], view: local.scratch.mine_*}
"""

SALES_V = ViewId("local", "sales", "completed_orders")
ANALYTICS_V = ViewId("local", "analytics", "customer_summary")


def policy(text: str = POLICY) -> AccessPolicy:
    got = from_texts("viewsync.yaml", "version: 1\n", "access.yaml", text)
    assert got is not None
    return got


def errors(text: str, in_config: bool = False) -> list[str]:
    with pytest.raises(ValidationFailed) as exc:
        if in_config:
            from_texts("viewsync.yaml", text, "access.yaml", None)
        else:
            from_texts("viewsync.yaml", None, "access.yaml", text)
    return [str(p) for p in exc.value.problems]


def who(*names: str) -> Identity:
    return Identity.of(f"actor {names[0]}", *names)


def test_no_policy_means_everyone_may_do_everything() -> None:
    assert from_texts("viewsync.yaml", "version: 1\nproject: p\n", "access.yaml", None) is None
    assert denials(None, who("anyone"), "drop", SALES_V) == []


def test_policy_in_config_section_and_located_schema_errors() -> None:
    cfg = "version: 1\nproject: p\naccess:\n  owners: [root@example.com]\n"
    got = from_texts("viewsync.yaml", cfg, "access.yaml", None)
    assert got is not None and got.owners == ("root@example.com",) and got.source == "viewsync.yaml"
    bad = "version: 1\nproject: p\naccess:\n  grants:\n    - {to: [a], privileges: [WRITE], schema: c.s}\n"
    assert errors(bad, in_config=True) == [
        "viewsync.yaml:5:30: access.grants[0].privileges[0]: 'WRITE' is not one of ['USE_CATALOG', 'USE_SCHEMA', "
        "'CREATE_VIEW', 'ALTER_VIEW', 'DROP_VIEW', 'SELECT_VIEW', 'OWNER']"]
    assert errors("grants:\n  - {to: [a], privileges: [OWNER], schema: c.s, colour: red}\n") == [
        "access.yaml:2:49: grants[0].colour: unknown key 'colour'"]


def test_semantic_errors_are_located() -> None:
    text = ("grants:\n"
            "  - {to: [a], privileges: [OWNER]}\n"
            "  - {to: [a], privileges: [OWNER], schema: c.s, view: c.s.v}\n"
            "  - {to: [a], privileges: [OWNER], schema: nodot}\n"
            "  - {to: [a], privileges: [ALTER_VIEW, USE_CATALOG], schema: c.s}\n")
    assert errors(text) == [
        "access.yaml:2:5: grants[0]: name exactly one of catalog, schema or view (what the grant is on)",
        "access.yaml:3:5: grants[1]: grants one object: use only one of schema, view",
        "access.yaml:4:44: grants[2].schema: expected a catalog.schema pattern, got 'nodot'",
        "access.yaml:5:40: grants[3].privileges[1]: USE_CATALOG is checked on a catalog, so a grant on a schema "
        "never gives it; grant it with `catalog:`",
    ]


def test_policy_in_both_places_is_an_error() -> None:
    cfg = "version: 1\naccess: {owners: [x@example.com]}\n"
    with pytest.raises(ValidationFailed, match="access.yaml:1:1: the access policy is also in viewsync.yaml"):
        from_texts("viewsync.yaml", cfg, "access.yaml", "owners: [y@example.com]\n")


def test_owner_of_a_schema_may_change_its_views_and_nothing_else() -> None:
    p = policy()
    alice, bob = who("alice@example.com"), who("bob-gh")
    for action in ("create", "update", "adopt", "drop"):
        assert denials(p, alice, action, SALES_V) == []
    got = [d.message for d in denials(p, bob, "update", SALES_V)]
    assert got == ["actor bob-gh lacks ALTER_VIEW on view local.sales.completed_orders"]
    assert [d.message for d in denials(p, who("erin@example.com"), "drop", SALES_V)] == [
        "actor erin@example.com lacks USE_CATALOG on catalog local",
        "actor erin@example.com lacks USE_SCHEMA on schema local.sales",
        "actor erin@example.com lacks DROP_VIEW on view local.sales.completed_orders"]
    # bob reaches the catalog because he owns a schema in it; e-mail and login match case-insensitively
    assert holds(p, who("BOB@Example.com"), Privilege.USE_CATALOG, Securable.catalog_of("local"))
    assert denials(p, who("Bob <BOB@example.com>"), "drop", ANALYTICS_V) == []


def test_reading_a_declared_view_needs_select_view_on_it() -> None:
    p = policy()
    bob, alice = who("bob@example.com"), who("alice-gh")
    assert denials(p, bob, "update", ANALYTICS_V, reads=[SALES_V]) == []  # readers (via team-b) may select
    got = [d.message for d in denials(p, alice, "create", ANALYTICS_V, reads=[SALES_V])]
    assert got == ["actor alice-gh lacks USE_SCHEMA on schema local.analytics",
                   "actor alice-gh lacks CREATE_VIEW on schema local.analytics"]
    other = ViewId("local", "hr", "salaries")
    got = [d.message for d in denials(p, bob, "create", ANALYTICS_V, reads=[other])]
    assert got == ["actor bob@example.com lacks USE_SCHEMA on schema local.hr",
                   "actor bob@example.com lacks SELECT_VIEW on view local.hr.salaries"]
    assert denials(p, bob, "drop", ANALYTICS_V, reads=[other]) == []  # a drop reads nothing


def test_fine_grained_grants_and_patterns() -> None:
    p = policy()
    dave = who("dave-gh")
    assert denials(p, dave, "create", ViewId("local", "scratch", "anything")) == []
    assert denials(p, dave, "update", ViewId("local", "scratch", "mine_1")) == []
    assert [d.privilege for d in denials(p, dave, "update", ViewId("local", "scratch", "yours"))] == [
        Privilege.ALTER_VIEW]
    assert [d.privilege for d in denials(p, dave, "drop", ViewId("local", "scratch", "mine_1"))] == [
        Privilege.DROP_VIEW]
    assert [d.privilege for d in denials(p, dave, "create", ViewId("other", "scratch", "x"))] == [
        Privilege.USE_CATALOG, Privilege.USE_SCHEMA, Privilege.CREATE_VIEW]


def test_project_owners_hold_everything_and_alone_change_the_policy() -> None:
    p = policy()
    root = who("platform@example.com")
    assert denials(p, root, "drop", ViewId("any", "where", "v"), reads=[SALES_V]) == []
    assert policy_change_denial(p, root, "proj") is None
    d = policy_change_denial(p, who("alice-gh"), "proj")
    assert d is not None and d.message == "actor alice-gh lacks OWNER on project proj"
    assert policy_change_denial(None, who("alice-gh"), "proj") is None


def test_required_privileges_per_action() -> None:
    assert [p for p, _ in required("create", SALES_V)] == ["USE_CATALOG", "USE_SCHEMA", "CREATE_VIEW"]
    assert [str(o) for _, o in required("drop", SALES_V)] == [
        "catalog local", "schema local.sales", "view local.sales.completed_orders"]
    with pytest.raises(ValueError):
        required("rename", SALES_V)


def test_codeowners_maps_view_files_to_schema_owners() -> None:
    text = render(policy(), ["views/local/sales.yaml", "views/local/analytics.yaml", "views/local/hr.yaml"],
                  ["viewsync.yaml", "access.yaml"])
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert lines == [
        "/views/ platform@example.com",
        "/.github/CODEOWNERS platform@example.com",
        "/access.yaml platform@example.com",
        "/viewsync.yaml platform@example.com",
        "/views/local/analytics.yaml @bob-gh bob@example.com",
        "/views/local/hr.yaml platform@example.com",
        "/views/local/sales.yaml @acme/team-a",
    ]
    sub = render(policy(), ["views/local/sales.yaml"], ["viewsync.yaml"], prefix="warehouse/")
    assert "/warehouse/views/local/sales.yaml @acme/team-a" in sub.splitlines()
