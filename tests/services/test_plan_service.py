"""The plan service on its own (no CLI): a plan with errors is returned, not raised, its
access errors located in the YAML; the YAML changes since a base are listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.plan.model import PlanErrorCode
from reconciler.services.plan import PlanRequest, Scope, plan
from reconciler.workspace import Workspace
from tests.helpers.access import POLICY, edit, git


@pytest.fixture
def repo(sample_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Team A owns local.sales, team B local.analytics; bob (team B) edits a sales view on a branch."""
    monkeypatch.delenv("GITHUB_ACTOR", raising=False)
    git(sample_repo, "init", "-q", "-b", "main")
    (sample_repo / ".gitignore").write_text(".viewsync/\n")
    (sample_repo / "access.yaml").write_text(POLICY)
    git(sample_repo, "add", "-A")
    git(sample_repo, "commit", "-qm", "views and access policy")
    git(sample_repo, "checkout", "-qb", "b-change")
    edit(sample_repo, "views/local/sales.yaml", "completed_orders", "edited by team B")
    git(sample_repo, "commit", "-qam", "B edits a sales view", who="bob")
    return sample_repo


def test_access_errors_are_returned_located_in_the_yaml(repo: Path) -> None:
    ws = Workspace.open(repo)
    try:
        result = plan(ws, PlanRequest(base="main", actor="bob@example.com"))
    finally:
        ws.close()

    assert result.errors, "bob may not change team A's views"
    for error in result.errors:
        assert error.code is PlanErrorCode.NOT_PERMITTED
        assert error.view is not None and error.view.schema == "sales"
        assert error.location is not None and error.location.file == "views/local/sales.yaml"
    first = next(e for e in result.errors if e.view is not None and e.view.name == "completed_orders")
    assert first.location is not None and (first.location.line, first.location.column) == (4, 3)
    assert result.access is not None
    assert [str(c.view) for c in result.yaml_changes or []] == ["local.sales.completed_orders"]


def test_without_base_there_are_no_yaml_changes_and_scope_narrows_the_plan(repo: Path) -> None:
    ws = Workspace.open(repo)
    try:
        result = plan(ws, PlanRequest(Scope(select=("local.analytics.*",)), actor="platform@example.com"))
    finally:
        ws.close()

    assert result.yaml_changes is None
    assert not result.errors
    assert {a.view.schema for a in result.actions} == {"analytics"}
