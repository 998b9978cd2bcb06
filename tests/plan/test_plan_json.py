"""The plan as a value: every section reaches its JSON form, the JSON Schema
describes all of it, and a saved plan loads back to the same plan."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.planner import Plan, PlanErrorCode, PlanOptions, YamlChange, build_plan
from tests.helpers.cli import run_cli
from tests.helpers.memory_catalog import MemoryCatalog
from tests.helpers.paths import ROOT
from tests.helpers.specs import spec as _spec

SCHEMA = json.loads((ROOT / "schemas" / "plan.schema.json").read_text(encoding="utf-8"))
DIGEST = "sha256:" + "0" * 64


def _plan(opts: PlanOptions, desired: dict[ViewId, ViewSpec], *catalogs: MemoryCatalog) -> Plan:
    adapters = {c.name: c for c in catalogs}
    snaps = {(c.name, s): c.fetch(s) for c in catalogs for s in c.list_schemas()}
    for vid in desired:
        snaps.setdefault((vid.catalog, vid.schema), adapters[vid.catalog].fetch(vid.schema))
    return build_plan(desired, snaps, adapters, opts, DIGEST, GitInfo("c0ffee", "main", "A <a@x>"))


def _round_trip(plan: Plan) -> dict:  # type: ignore[type-arg]
    data = plan.to_json()
    jsonschema.validate(data, SCHEMA)
    loaded = Plan.from_json(json.loads(json.dumps(data)))
    assert loaded.to_json() == data
    return data


def test_every_section_is_emitted_valid_and_loads_back() -> None:
    cat, ro = MemoryCatalog("cat"), MemoryCatalog("ro", {"writable": False})
    cat.put(ViewId("cat", "s", "old"), _spec("SELECT 0"), "p")  # ours, undeclared
    cat.put(ViewId("cat", "s", "upd"), _spec("SELECT 1"), "p")
    cat.put(ViewId("cat", "s", "theirs"), _spec("SELECT 1"), "q")  # unmanaged (another project)
    cat.put(ViewId("cat", "s", "bare"), _spec("SELECT 1"))  # unmanaged, declared: adopt
    ro.put(ViewId("ro", "r", "exp"), _spec("SELECT 1"))
    desired = {ViewId("cat", "s", "new"): _spec("SELECT 1"), ViewId("cat", "s", "upd"): _spec("SELECT 2"),
               ViewId("cat", "s", "bare"): _spec("SELECT 1"), ViewId("cat", "missing", "v"): _spec("SELECT 1"),
               ViewId("ro", "r", "exp"): _spec("SELECT 9")}
    plan = _plan(PlanOptions(project="p", adopt=True), desired, cat, ro)
    plan.yaml_changes = [YamlChange(ViewId("cat", "s", "new"), "added"),
                         YamlChange(ViewId("cat", "s", "upd"), "changed", ("representations.spark.sql",))]
    data = _round_trip(plan)
    assert [(a["action"], a["view"]["name"]) for a in data["actions"]] == [
        ("adopt", "bare"), ("create", "new"), ("update", "upd")]
    assert data["undeclared"] == [{"catalog": "cat", "schema": "s", "name": "old"}]
    assert data["drift"] == [{"view": {"catalog": "ro", "schema": "r", "name": "exp"}, "changes": [
        {"field": "representations.spark.sql", "before": "SELECT 1", "after": "SELECT 9"}]}]
    assert sorted(e["code"] for e in data["errors"]) == ["read_only_catalog", "schema_missing"]
    assert [u["name"] for u in data["unmanaged"]] == ["theirs"]
    assert data["declarations"]["git"] == {"commit": "c0ffee", "ref": "main", "author": "A <a@x>"}
    assert data["yaml_changes"][1] == {"view": "cat.s.upd", "change": "changed",
                                       "fields": ["representations.spark.sql"]}


def test_drops_and_a_plan_wide_error_load_back() -> None:
    cat = MemoryCatalog("cat")
    for n in range(3):
        cat.put(ViewId("cat", "s", f"v{n}"), _spec("SELECT 1"), "p")
    plan = _plan(PlanOptions(project="p", prune=True), {}, cat)
    data = _round_trip(plan)
    assert [a["action"] for a in data["actions"]] == ["drop"] * 3
    assert [(e["code"], e["view"]) for e in data["errors"]] == [("mass_drop", None)]
    assert Plan.from_json(data).errors[0].code is PlanErrorCode.MASS_DROP


def test_the_schema_lists_exactly_the_plan_error_codes() -> None:
    codes = SCHEMA["properties"]["errors"]["items"]["properties"]["code"]["enum"]
    assert codes == [c.value for c in PlanErrorCode]


def test_an_unknown_error_code_is_not_a_plan() -> None:
    data = _plan(PlanOptions(project="p"), {}, MemoryCatalog("cat")).to_json()
    data["errors"] = [{"view": None, "code": "made_up", "message": "x"}]
    with pytest.raises(ValueError, match="made_up"):
        Plan.from_json(data)


def test_a_saved_plan_shows_as_the_plan_it_was(sample_repo: Path, tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    made = run_cli(sample_repo, "plan", "--format", "json", "--out", str(saved))
    assert made.code == 0, made.text
    shown = run_cli(sample_repo, "show", str(saved), "--format", "json")
    assert shown.code == 0, shown.text
    assert json.loads(shown.out) == json.loads(made.out) == json.loads(saved.read_text())
