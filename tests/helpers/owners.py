"""One owner round trip through the real CLI, shared by the HMS, Glue and Iceberg REST tests:
a declared view owner is written where the catalog keeps one, read back, changed and removed,
and every plan after an apply is empty."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.cli import run_cli


def _views(schema: str, catalog: str, dialects: list[str], owners: dict[str, str | None],
           security: str = "definer") -> dict[str, Any]:
    views = []
    for name, owner in owners.items():
        body: dict[str, Any] = {
            "name": name, "columns": [{"name": "id", "type": "bigint"}],
            "representations": [{"dialect": d, "sql": "SELECT 1 AS id"} for d in dialects],
            "security": security,
        }
        if owner is not None:
            body["owner"] = owner
        views.append(body)
    return {"catalog": catalog, "schema": schema, "views": views}


def _owners_repo(tmp_path: Path, catalog: str, options: dict[str, Any]) -> Path:
    """A repository of project `owners` with one catalog and its state store under tmp_path."""
    repo = tmp_path / "repo"
    (repo / "views" / catalog).mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "owners", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {catalog: options}}))
    return repo


def owner_roundtrip(tmp_path: Path, catalog: str, options: dict[str, Any], schema: str, dialects: list[str],
                    stored_owner: Callable[[str], str | None], security: str = "definer",
                    unnamed: str | None = None) -> None:
    """`unnamed`: what the catalog stores as the owner of a view whose declaration names none
    (None: nothing)."""
    repo = _owners_repo(tmp_path, catalog, options)
    path = repo / "views" / catalog / f"{schema}.yaml"

    def declare(owners: dict[str, str | None]) -> None:
        path.write_text(yaml.safe_dump(_views(schema, catalog, dialects, owners, security), sort_keys=False))

    def converge(expect_fields: list[tuple[str, str]] | None) -> None:
        plan = run_cli(repo, "plan", "--format", "json")
        assert plan.code == 0, plan.text
        doc = json.loads(plan.out)
        if expect_fields is not None:
            got = sorted((a["view"]["name"], c["field"]) for a in doc["actions"] for c in a["changes"]
                         if a["action"] == "update")
            assert got == sorted(expect_fields), doc["actions"]
        applied = run_cli(repo, "apply", "--auto-approve", "--allow-dirty")
        assert applied.code == 0, applied.text
        again = run_cli(repo, "plan", "--detailed-exitcode")
        assert again.code == 0, again.text  # no perpetual diff

    declare({"owned": "team-a", "unowned": None})
    converge(None)
    assert stored_owner("owned") == "team-a"
    assert (stored_owner("unowned") or None) == unnamed

    declare({"owned": "team-b", "unowned": "data-platform"})
    converge([("owned", "owner"), ("unowned", "owner")])
    assert stored_owner("owned") == "team-b"
    assert stored_owner("unowned") == "data-platform"

    declare({"owned": None, "unowned": "data-platform"})
    converge([("owned", "owner")])
    assert (stored_owner("owned") or None) == unnamed


def schema_owner_roundtrip(tmp_path: Path, catalog: str, options: dict[str, Any], schema: str,
                           dialects: list[str], stored_owner: Callable[[], str | None] | None) -> None:
    """A view file's top-level `owner` is its schema's owner: written, read back, changed, and
    converged; a catalog that keeps no schema owner (stored_owner None) warns and never diffs."""
    repo = _owners_repo(tmp_path, catalog, options)
    path = repo / "views" / catalog / f"{schema}.yaml"

    def declare(owner: str) -> None:
        doc = _views(schema, catalog, dialects, {"v": None})
        path.write_text(yaml.safe_dump({"catalog": catalog, "schema": schema, "owner": owner,
                                        "views": doc["views"]}, sort_keys=False))

    def converge(before: str | None, after: str) -> None:
        doc = json.loads(run_cli(repo, "plan", "--format", "json").out)
        if stored_owner is None:
            assert doc["schema_owners"] == []
            assert any("keeps no schema owner" in w for w in doc["warnings"]), doc["warnings"]
        else:
            assert doc["schema_owners"] == [{"catalog": catalog, "schema": schema, "before": before,
                                             "after": after}]
            text = run_cli(repo, "plan").out
            assert f"~ schema {catalog}.{schema} owner: {before!r} -> {after!r}" in text
        applied = run_cli(repo, "apply", "--auto-approve", "--allow-dirty")
        assert applied.code == 0, applied.text
        again = run_cli(repo, "plan", "--detailed-exitcode")
        assert again.code == 0, again.text

    first = stored_owner() if stored_owner is not None else None
    declare("team-a")
    converge(first, "team-a")
    if stored_owner is not None:
        assert stored_owner() == "team-a"
    declare("team-b")
    converge("team-a", "team-b")
    if stored_owner is not None:
        assert stored_owner() == "team-b"
        rows = json.loads(run_cli(repo, "audit", "--format", "json").out)
        assert [(r["action"], r["schema_name"], r["outcome"]) for r in rows if r["action"] == "schema_owner"] == [
            ("schema_owner", schema, "applied"), ("schema_owner", schema, "applied")]
