"""Issue 16 acceptance, in a real git repository: team A owns `local.sales`, team B owns
`local.analytics`; plan checks the actor and the PR's commit authors, apply re-checks and
audits refusals, CODEOWNERS follows the policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.access import POLICY, commit_all, edit, git
from tests.helpers.cli import run_cli


@pytest.fixture
def repo(sample_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GITHUB_ACTOR", raising=False)
    git(sample_repo, "init", "-q", "-b", "main")
    (sample_repo / ".gitignore").write_text(".viewsync/\nplan.json\n")
    (sample_repo / "access.yaml").write_text(POLICY)
    assert run_cli(sample_repo, "codeowners").code == 0
    commit_all(sample_repo, "views, access policy, CODEOWNERS", "platform")
    first = run_cli(sample_repo, "apply", "--auto-approve")  # actor: the commit's author, a project owner
    assert first.code == 0, first.text
    return sample_repo


def test_b_editing_a_sales_view_is_not_permitted(repo: Path) -> None:
    git(repo, "checkout", "-qb", "b-change")
    edit(repo, "views/local/sales.yaml", "completed_orders", "edited by team B")
    commit_all(repo, "B edits a sales view", "bob")

    res = run_cli(repo, "plan", "--base", "main")
    assert res.code == 1
    assert ("[not_permitted] views/local/sales.yaml:4:3: not permitted: actor bob@example.com (author of "
            in res.out)
    assert "lacks ALTER_VIEW on view local.sales.completed_orders (needed to update " \
           "local.sales.completed_orders)" in res.out

    # A team-A member running the plan does not launder B's commit.
    res = run_cli(repo, "plan", "--base", "main", "--actor", "alice-gh", "--format", "json")
    assert res.code == 1
    doc = json.loads(res.out)
    (error,) = doc["errors"]
    assert error["code"] == "not_permitted" and error["view"]["name"] == "completed_orders"
    assert error["message"].startswith("not permitted: commit author bob@example.com (")
    assert doc["access"]["policy"] == "access.yaml@main"
    assert doc["access"]["actor"]["names"] == ["alice-gh"]
    assert [a["names"] for a in doc["access"]["authors"]["views/local/sales.yaml"]] == [["bob@example.com"]]

    # B's own schema is fine, and reading a sales view from it is granted.
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-qb", "b-own")
    edit(repo, "views/local/analytics.yaml", "customer_summary", "edited by team B")
    commit_all(repo, "B edits an analytics view", "bob")
    res = run_cli(repo, "plan", "--base", "main")
    assert res.code == 0, res.text
    assert "Access: checked against access.yaml@main for actor bob@example.com" in res.out


def test_a_plans_and_applies_but_b_cannot_apply_a_saved_plan_of_a(repo: Path) -> None:
    git(repo, "checkout", "-qb", "a-change")
    edit(repo, "views/local/sales.yaml", "completed_orders", "edited by team A")
    commit_all(repo, "A edits a sales view", "alice")
    res = run_cli(repo, "plan", "--base", "main", "--detailed-exitcode")
    assert res.code == 2, res.text
    assert "not_permitted" not in res.text

    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "a-change")
    saved = str(repo / "plan.json")
    assert run_cli(repo, "plan", "--actor", "alice-gh", "--out", saved).code == 0

    refused = run_cli(repo, "apply", saved, "--actor", "bob-gh", "--auto-approve")
    assert refused.code == 1
    assert "not permitted, nothing was applied" in refused.err
    assert "actor bob-gh lacks ALTER_VIEW on view local.sales.completed_orders" in refused.err
    rows = json.loads(run_cli(repo, "audit", "--format", "json").out)
    last = [r for r in rows if r["actor"] == "bob-gh"]
    assert [(r["action"], r["view_name"], r["outcome"]) for r in last] == [
        ("update", "completed_orders", "refused")]
    assert "lacks ALTER_VIEW on view local.sales.completed_orders" in last[0]["error"]
    still = run_cli(repo, "plan", "--detailed-exitcode")
    assert still.code == 2  # nothing was applied

    done = run_cli(repo, "apply", saved, "--actor", "alice-gh", "--auto-approve")
    assert done.code == 0, done.text
    assert run_cli(repo, "plan", "--detailed-exitcode").code == 0


def test_policy_changes_need_a_project_owner_and_are_judged_by_the_base_policy(repo: Path) -> None:
    git(repo, "checkout", "-qb", "a-grab")
    (repo / "access.yaml").write_text(POLICY + "  - {to: [team-a], privileges: [OWNER], schema: local.analytics}\n")
    edit(repo, "views/local/analytics.yaml", "customer_summary", "taken over by A")
    commit_all(repo, "A grants itself analytics", "alice")
    res = run_cli(repo, "plan", "--base", "main", "--format", "json")
    assert res.code == 1
    messages = [e["message"] for e in json.loads(res.out)["errors"]]
    assert any("actor alice@example.com" in m and "lacks OWNER on project demo-analytics" in m
               and "needed to change the access policy" in m for m in messages)
    assert any("lacks ALTER_VIEW on view local.analytics.customer_summary" in m for m in messages)

    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-qb", "platform-grant")
    (repo / "access.yaml").write_text(POLICY + "  - {to: [team-a], privileges: [SELECT_VIEW], catalog: local}\n")
    assert run_cli(repo, "codeowners").code == 0
    commit_all(repo, "platform widens reads", "platform")
    res = run_cli(repo, "plan", "--base", "main")
    assert res.code == 0, res.text

    # Deleting the policy is a policy change too: the deleting commit's author needs project OWNER.
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-qb", "b-drop-policy")
    (repo / "access.yaml").unlink()
    commit_all(repo, "B removes the policy", "bob")
    res = run_cli(repo, "plan", "--base", "main", "--actor", "platform@example.com", "--format", "json")
    assert res.code == 1
    (error,) = json.loads(res.out)["errors"]
    assert error["message"].startswith("not permitted: commit author bob@example.com (")
    assert error["message"].endswith("lacks OWNER on project demo-analytics (needed to change the access policy)")


def test_codeowners_follows_the_policy_and_validate_catches_drift(repo: Path) -> None:
    owners = (repo / ".github" / "CODEOWNERS").read_text()
    lines = [ln for ln in owners.splitlines() if ln and not ln.startswith("#")]
    assert "/views/local/sales.yaml @acme/team-a" in lines
    assert "/views/local/analytics.yaml @bob-gh bob@example.com" in lines
    assert "/access.yaml platform@example.com" in lines
    assert run_cli(repo, "validate").code == 0

    (repo / "access.yaml").write_text(POLICY.replace("schema: local.analytics}", "schema: local.analytics}\n"
                                                     "  - {to: [carol@example.com], privileges: [OWNER], "
                                                     "schema: local.analytics}", 1))
    res = run_cli(repo, "validate")
    assert res.code == 1
    assert ".github/CODEOWNERS:1:1: out of date with the access policy; run `viewsync codeowners`" in res.err
    assert run_cli(repo, "codeowners").code == 0
    assert run_cli(repo, "validate").code == 0
    assert "/views/local/analytics.yaml @bob-gh bob@example.com carol@example.com" in (
        repo / ".github" / "CODEOWNERS").read_text().splitlines()


def test_without_a_policy_the_plan_says_everyone_may_change_everything(sample_repo: Path) -> None:
    res = run_cli(sample_repo, "plan")
    assert "Access: no access policy: everyone may change every view." in res.out
    doc = json.loads(run_cli(sample_repo, "plan", "--format", "json").out)
    assert doc["access"] == {"policy": None, "note": "no access policy: everyone may change every view"}
    assert run_cli(sample_repo, "codeowners").code == 1


def test_a_bad_policy_is_a_located_error_and_nothing_runs(repo: Path) -> None:
    (repo / "access.yaml").write_text(POLICY + "  - {to: [team-a], privileges: [OWNER]}\n")
    dirty = run_cli(repo, "apply", "--auto-approve")
    assert dirty.code == 1 and "uncommitted changes to declarations: access.yaml" in dirty.err
    for args in (("validate",), ("plan",), ("apply", "--auto-approve", "--allow-dirty")):
        res = run_cli(repo, *args)
        assert res.code == 1
        assert "access.yaml:10:5: grants[3]: name exactly one of catalog, schema or view" in res.err


def test_a_saved_plan_whose_authors_were_edited_is_refused(repo: Path) -> None:
    """The access section names the commit authors apply re-checks; the plan's digest covers
    it, so swapping B for A in a saved plan (and dropping its error) is refused as stale."""
    git(repo, "checkout", "-qb", "b-change")
    edit(repo, "views/local/sales.yaml", "completed_orders", "edited by team B")
    commit_all(repo, "B edits a sales view", "bob")
    saved = repo / "plan.json"
    assert run_cli(repo, "plan", "--base", "main", "--actor", "alice-gh", "--out", str(saved)).code == 1

    doc = json.loads(saved.read_text())
    assert [a["names"] for a in doc["access"]["authors"]["views/local/sales.yaml"]] == [["bob@example.com"]]
    (author,) = doc["access"]["authors"]["views/local/sales.yaml"]
    doc["access"]["authors"]["views/local/sales.yaml"] = [
        json.loads(json.dumps(author).replace("bob@example.com", "alice@example.com").replace("bob", "alice"))]
    doc["errors"] = []
    saved.write_text(json.dumps(doc))
    res = run_cli(repo, "apply", str(saved), "--actor", "alice-gh", "--auto-approve")
    assert res.code == 1
    assert f"stale plan: {saved} was changed after it was made" in res.err
    assert "~ update local.sales.completed_orders" in run_cli(repo, "plan").out  # nothing was applied

    # The untouched file still applies as far as the policy allows: B's commit stays refused.
    assert run_cli(repo, "plan", "--base", "main", "--actor", "alice-gh", "--out", str(saved)).code == 1
    assert "stale plan" not in run_cli(repo, "apply", str(saved), "--actor", "alice-gh", "--auto-approve").err
