"""Schema owners: a view file's top-level `owner`; the pure diff, the located error and the
access rule (setting a schema's owner needs OWNER of the schema)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.access.evaluate import Identity
from reconciler.access.guard import Who, check
from reconciler.access.load import from_texts
from reconciler.apply.schema_owners import diff
from reconciler.core.errors import ValidationFailed
from reconciler.plan.model import SchemaOwnerChange
from reconciler.plan.planner import Plan
from reconciler.source.config import load_config
from reconciler.source.declarations import load
from tests.helpers.paths import ROOT

FILE = "catalog: local\nschema: sales\nowner: {owner}\nviews:\n  - name: v\n    representations:\n" \
       "      - {{dialect: spark, sql: SELECT 1}}\n"


def test_diff_compares_declared_owners_only() -> None:
    declared = {("hive", "a"): "team-a", ("hive", "b"): "team-b", ("hive", "gone"): "x"}
    live = {("hive", "a"): "team-a", ("hive", "b"): None, ("hive", "c"): "root"}
    assert diff(declared, live) == [SchemaOwnerChange("hive", "b", None, "team-b")]


def test_view_file_owner_is_the_schema_owner_and_bad_values_are_located() -> None:
    config = load_config(ROOT)
    decl = load([("views/local/sales.yaml", FILE.format(owner="team-a"))], config)
    assert decl.schema_owners == {("local", "sales"): "team-a"}
    unowned = FILE.format(owner="x").replace("owner: x\n", "")
    assert load([("views/local/sales.yaml", unowned)], config).schema_owners == {}
    with pytest.raises(ValidationFailed) as exc:
        load([("views/local/sales.yaml", FILE.format(owner="[1, 2]"))], config)
    assert [str(p) for p in exc.value.problems] == [
        "views/local/sales.yaml:3:8: owner: [1, 2] is not of type 'string'"]


def test_setting_a_schema_owner_needs_owner_of_the_schema(tmp_path: Path) -> None:
    policy = from_texts("viewsync.yaml", None, "access.yaml",
                        "grants:\n  - {to: [alice-gh], privileges: [OWNER], schema: hive.sales}\n"
                        "  - {to: [bob-gh], privileges: [USE_CATALOG], catalog: hive}\n"
                        "  - {to: [bob-gh], privileges: [USE_SCHEMA, CREATE_VIEW, ALTER_VIEW], schema: hive.sales}\n")
    plan = Plan(project="p", declarations_digest="sha256:x")
    plan.schema_owners = [SchemaOwnerChange("hive", "sales", "root", "team-a")]
    assert check(plan, {}, policy, Who(Identity.of("actor alice-gh", "alice-gh"))) == []
    ((subject, denial),) = check(plan, {}, policy, Who(Identity.of("actor bob-gh", "bob-gh")))
    assert subject == plan.schema_owners[0]
    assert denial.message == "actor bob-gh lacks OWNER on schema hive.sales"
