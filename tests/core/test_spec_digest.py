"""The spec digest is ours: views stamped by earlier releases keep planning as unchanged,
and a field added later with its default changes no digest."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from pydantic import Field

from reconciler.core.model import (
    Column,
    Representation,
    ViewSpec,
    canonical_bytes,
    stamp_matches,
    stamp_version,
)
from tests.helpers.cli import run_cli
from tests.helpers.paths import TESTS

FIXTURE = TESTS / "fixtures" / "stamped_by_release"
RECORDED = json.loads((FIXTURE / "digests.json").read_text(encoding="utf-8"))


@pytest.fixture
def stamped_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE / "repo", repo)
    return repo


@pytest.mark.parametrize("entry", RECORDED, ids=[f"{e['view']}:{e['as']}" for e in RECORDED])
def test_digest_stamped_by_the_release_is_reproduced(entry: dict) -> None:  # type: ignore[type-arg]
    spec = ViewSpec.model_validate(entry["spec"])
    assert spec.digest() == entry["digest"]
    assert stamp_matches(entry["digest"], spec)


def test_catalog_stamped_by_the_release_plans_unchanged_and_shows_no_drift(stamped_repo: Path) -> None:
    plan = run_cli(stamped_repo, "plan", "--format", "json", "--detailed-exitcode")
    assert plan.code == 0, plan.text
    data = json.loads(plan.out)
    assert data["actions"] == [] and data["errors"] == []
    assert data["summary"]["unchanged"] == 4
    drift = run_cli(stamped_repo, "drift", "--format", "json")
    assert drift.code == 0, drift.text
    assert json.loads(drift.out)["items"] == []


def test_stamps_in_the_release_catalog_equal_todays_digests(stamped_repo: Path) -> None:
    # Equal stamps mean plan takes its fast path (no diff) and apply re-stamps nothing.
    with sqlite3.connect(stamped_repo / "catalog.db") as conn:
        stamps = dict(conn.execute("SELECT view_name, spec_digest FROM view_meta"))
    resolved = {e["view"].rsplit(".", 1)[1]: e["digest"] for e in RECORDED if e["as"].startswith("resolved")}
    assert stamps == resolved


def test_an_edit_out_of_band_of_a_release_stamp_is_still_detected(stamped_repo: Path) -> None:
    with sqlite3.connect(stamped_repo / "catalog.db") as conn:
        conn.execute("UPDATE view_version_info SET representations = replace(representations, 'SELECT 1', "
                     "'SELECT 2') WHERE view_id = (SELECT view_id FROM view_meta WHERE view_name = 'minimal')")
    drift = run_cli(stamped_repo, "drift", "--format", "json")
    assert drift.code == 2, drift.text
    items = json.loads(drift.out)["items"]
    assert [(i["kind"], i["view"]["name"]) for i in items] == [("changed_out_of_band", "minimal")]
    assert items[0]["fields"] == ["representations.spark.sql"]


class _FutureColumn(Column):
    masked: bool = False


class _FutureRepresentation(Representation):
    engine_version: str | None = None


class _FutureSpec(ViewSpec):
    labels: list[str] = Field(default_factory=list)
    refresh: str | None = None
    columns: list[_FutureColumn] = Field(default_factory=list)  # type: ignore[assignment]
    representations: list[_FutureRepresentation] = Field(min_length=1)  # type: ignore[assignment]


@pytest.mark.parametrize("entry", RECORDED, ids=[f"{e['view']}:{e['as']}" for e in RECORDED])
def test_a_field_added_later_with_its_default_changes_no_digest(entry: dict) -> None:  # type: ignore[type-arg]
    future = _FutureSpec.model_validate(entry["spec"])
    assert future.digest() == entry["digest"]
    assert future.canonical() == entry["spec"]


def _json_of_canonical(spec: ViewSpec) -> bytes:
    return json.dumps(spec.canonical(), separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.parametrize("entry", RECORDED, ids=[f"{e['view']}:{e['as']}" for e in RECORDED])
def test_the_fast_encoder_writes_the_canonical_dict(entry: dict) -> None:  # type: ignore[type-arg]
    for cls in (ViewSpec, _FutureSpec):
        spec = cls.model_validate(entry["spec"])
        assert canonical_bytes(spec) == _json_of_canonical(spec)
    later = _FutureSpec.model_validate({**entry["spec"], "labels": ["a"], "columns": [
        {**c, "masked": True} for c in entry["spec"]["columns"]]})
    assert canonical_bytes(later) == _json_of_canonical(later)


def test_a_field_added_later_with_a_value_changes_the_digest() -> None:
    base = {"representations": [{"dialect": "spark", "sql": "SELECT 1"}], "columns": [{"name": "a", "type": "int"}]}
    plain = _FutureSpec.model_validate(base).digest()
    assert _FutureSpec.model_validate({**base, "labels": ["x"]}).digest() != plain
    assert _FutureSpec.model_validate(
        {**base, "columns": [{"name": "a", "type": "int", "masked": True}]}).digest() != plain
    assert _FutureSpec.model_validate(
        {**base, "representations": [{"dialect": "spark", "sql": "SELECT 1", "engine_version": "3.5"}]}
    ).digest() != plain


def test_canonical_form_v1_bytes_are_as_documented() -> None:
    spec = ViewSpec.model_validate({
        "comment": "é\t\"x\"",
        "columns": [{"name": "b", "type": "INT"}, {"name": "a", "type": "string", "comment": "c"}],
        "representations": [{"dialect": "trino", "sql": " SELECT 2 \n"}, {"dialect": "spark", "sql": "SELECT 1"}],
        "properties": {"z": "1", "a": "2"},
        "default_namespace": ["s"],
    })
    expected = ('{"comment":"é\\t\\"x\\"","columns":[{"name":"b","type":"int","comment":null},'
                '{"name":"a","type":"string","comment":"c"}],"representations":[{"dialect":"spark","sql":"SELECT 1"},'
                '{"dialect":"trino","sql":"SELECT 2"}],"default_catalog":null,"default_namespace":["s"],'
                '"security":"definer","owner":null,"properties":{"a":"2","z":"1"}}').encode()
    assert canonical_bytes(spec) == expected
    assert spec.digest() == "sha256:" + hashlib.sha256(expected).hexdigest()


def test_stamp_versions() -> None:
    spec = ViewSpec.model_validate({"representations": [{"dialect": "spark", "sql": "SELECT 1"}]})
    assert stamp_version(spec.digest()) == 1
    assert stamp_version("v2:sha256:00") == 2
    assert stamp_version("md5:00") is None
    assert not stamp_matches("v2:sha256:" + spec.digest().split(":")[1], spec)  # unknown version: unverifiable
