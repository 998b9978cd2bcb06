"""Issue 28 item 7: .github/workflows/ are valid for GitHub and pass zizmor's offline audits
with no medium or high finding (actions pinned to commits, no persisted checkout credentials,
least-privilege permissions). .ci/run runs the same two commands."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(str(p) for p in WORKFLOWS.glob("*.yml"))


def tool(name: str) -> str:
    """The test extra installs it beside this Python; else from PATH; else skip."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_workflows_match_githubs_workflow_schema() -> None:
    res = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *FILES],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_zizmor_finds_nothing_of_medium_or_high_severity() -> None:
    res = subprocess.run([tool("zizmor"), "--offline", "--min-severity", "medium", str(WORKFLOWS)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_action_is_pinned_to_a_commit_with_its_version() -> None:
    """What zizmor's unpinned-uses asks, plus the `# vX.Y.Z` comment a reviewer reads."""
    for path in FILES:
        for line in Path(path).read_text().splitlines():
            if "uses:" in line:
                assert re.search(r"uses: [\w.-]+/[\w./-]+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$", line), (path, line)


def test_every_job_states_its_permissions_and_only_the_plan_and_preview_jobs_may_comment() -> None:
    for path in FILES:
        doc = yaml.safe_load(Path(path).read_text())
        assert doc["permissions"] == {}, path
        for name, job in doc["jobs"].items():
            want = {"contents": "read"}
            if Path(path).name == "viewsync-plan.yml" or (Path(path).name, name) == ("viewsync-preview.yml", "up"):
                want["pull-requests"] = "write"
            assert job["permissions"] == want, (path, name)
            checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
            assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts), (path, name)


def test_the_preview_workflow_brings_envs_up_on_push_and_down_on_close() -> None:
    doc = yaml.safe_load((WORKFLOWS / "viewsync-preview.yml").read_text())
    triggers = doc[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers["pull_request"]["types"]) >= {"opened", "synchronize", "closed"} and "schedule" in triggers
    runs = {name: " ".join(s.get("run", "") for s in job["steps"]) for name, job in doc["jobs"].items()}
    assert 'preview up --env "pr${PR_NUMBER}" --base "$BASE_REF"' in runs["up"] and "--format markdown" in runs["up"]
    assert 'preview down --env "pr${PR_NUMBER}"' in runs["down"] and "preview gc" in runs["gc"]
    assert "closed" not in doc["jobs"]["up"]["if"].replace("!= 'closed'", "")


def test_the_plan_workflow_reviews_in_one_run_and_runs_nothing_twice() -> None:
    """Issue 42 item 3: one `viewsync review` writes the comment, the JUnit reports and the JSON;
    no step plans, diffs, checks or tests on its own any more."""
    doc = yaml.safe_load((WORKFLOWS / "viewsync-plan.yml").read_text())
    runs = [s["run"] for job in doc["jobs"].values() for s in job["steps"] if "run" in s]
    commands = [m.group(1) for r in runs for m in re.finditer(r"viewsync (?:--no-color )?([a-z-]+)", r)]
    assert sorted(commands) == ["review", "validate"], commands
    [review] = [r for r in runs if "viewsync --no-color review" in r]
    for option in ('--base "$BASE_REF"', "--format markdown --out plan.md", "--junit junit", "--json review.json"):
        assert option in review
    steps = [s for job in doc["jobs"].values() for s in job["steps"]]
    post = next(s for s in steps if s.get("name") == "Post or update the PR comment")
    assert "always()" in post["if"] and "readFileSync('plan.md'" in post["with"]["script"]
