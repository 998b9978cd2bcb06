"""The apply service on its own (no CLI): what it refuses before writing anything, the
order in which it calls its UI, and the saved-plan checks it owns."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.core.errors import UserError
from reconciler.plan import saved
from reconciler.plan.planner import Action, Plan
from reconciler.services.apply import ApplyOutcome, ApplyRequest, ApplyUI, Status, apply, verify_saved
from reconciler.services.plan import PlanRequest, plan
from reconciler.workspace import Workspace


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Dana", "-c", "user.email=dana@example.com", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.fixture
def repo(sample_repo: Path) -> Path:
    git(sample_repo, "init", "-q", "-b", "main")
    (sample_repo / ".gitignore").write_text(".viewsync/\n")
    git(sample_repo, "add", "-A")
    git(sample_repo, "commit", "-qm", "sample views")
    return sample_repo


@pytest.fixture
def ws(repo: Path) -> Iterator[Workspace]:
    ws = Workspace.open(repo)
    yield ws
    ws.close()


class Recorder:
    """An ApplyUI that records its calls; `answer` is what confirm says."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.calls: list[str] = []
        self.outcomes: list[ApplyOutcome] = []

    def ui(self) -> ApplyUI:
        def done(outcome: ApplyOutcome) -> None:
            self.calls.append("done")
            self.outcomes.append(outcome)

        def confirm(_: Plan) -> bool:
            self.calls.append("confirm")
            return self.answer

        def progress(action: Action, outcome: str, _: str | None) -> None:
            self.calls.append(f"{action.action} {action.view}: {outcome}")

        return ApplyUI(show_plan=lambda _: self.calls.append("show_plan"), confirm=confirm, progress=progress,
                       note=lambda line: self.calls.append(f"note {line}"),
                       warn=lambda line: self.calls.append(f"warn {line}"), done=done)


def test_dirty_declarations_are_refused_before_anything_is_read_or_written(repo: Path, ws: Workspace) -> None:
    sales = repo / "views" / "local" / "sales.yaml"
    sales.write_text(sales.read_text().replace("Orders that reached", "Orders that did reach"))
    ui = Recorder()

    with pytest.raises(UserError, match=r"^uncommitted changes to declarations: views/local/sales\.yaml; "
                                        r"commit them or pass --allow-dirty$"):
        apply(ws, ApplyRequest(), ui.ui())

    assert ui.calls == []  # no plan shown, nothing asked
    assert not (repo / ".viewsync" / "state.db").exists()
    assert all(a.action == "create" for a in plan(ws, PlanRequest()).actions)


def test_allow_dirty_applies_and_calls_the_ui_in_order(repo: Path, ws: Workspace) -> None:
    (repo / "views" / "local" / "sales.yaml").write_text(
        (repo / "views" / "local" / "sales.yaml").read_text().replace("Orders that reached", "Orders that did reach"))
    ui = Recorder()

    outcome = apply(ws, ApplyRequest(allow_dirty=True), ui.ui())

    assert outcome.status is Status.APPLIED and outcome.ok
    assert outcome.run is not None and len(outcome.run.applied) == 6
    assert ui.calls[:2] == ["show_plan", "confirm"]
    assert ui.calls[-1] == "done" and ui.outcomes == [outcome]
    assert sorted(ui.calls[2:-1]) == sorted(f"create {a.view}: applied" for a in outcome.plan.actions)

    again = Recorder()
    nothing = apply(ws, ApplyRequest(allow_dirty=True), again.ui())
    assert nothing.status is Status.NOTHING and nothing.ok and nothing.run is None
    assert again.calls == ["show_plan", "done"]  # nothing to confirm


def test_not_confirming_writes_nothing(repo: Path, ws: Workspace) -> None:
    ui = Recorder(answer=False)

    outcome = apply(ws, ApplyRequest(), ui.ui())

    assert outcome.status is Status.CANCELLED and not outcome.ok and outcome.run is None
    assert ui.calls == ["show_plan", "confirm"]
    assert not (repo / ".viewsync" / "state.db").exists()
    assert len([a for a in plan(ws, PlanRequest()).actions if a.action == "create"]) == 6


def test_a_saved_plan_is_verified_against_the_repository(repo: Path, ws: Workspace, tmp_path: Path) -> None:
    made = plan(ws, PlanRequest())
    path = tmp_path / "plan.json"
    from reconciler.render.plan import as_json

    path.write_text(as_json(made))
    decl = ws.declarations()
    assert verify_saved(ws, saved.load(path), path, decl).project == "demo-analytics"

    foreign = dataclasses.replace(saved.load(path), project="someone-else")
    with pytest.raises(UserError, match=r"plan is for project 'someone-else', not 'demo-analytics'"):
        verify_saved(ws, foreign, path, decl)

    sales = repo / "views" / "local" / "sales.yaml"
    sales.write_text(sales.read_text().replace("Orders that reached", "Orders that did reach"))
    with pytest.raises(UserError, match=r"^stale plan: the declarations changed since .* was made"):
        verify_saved(ws, saved.load(path), path, ws.declarations())
