"""Issue 42, item 3: `viewsync review --base REF` on a pull request of the sample (a copy with
its data in sources/data/, applied on `main`): the plan, every view test, the data diff and
the checks from one run, Spark started at most twice; each format written from that run; a
view or a step that fails leaves the others to run, and says so in the comment."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from tests.helpers.cli import run_cli
from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow  # starts Spark


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def edit(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.fixture
def pr(sample_repo: Path, spark_verifier: None) -> Path:
    """The sample applied on `main`, and a branch `pr` changing completed_orders' filter
    (daily_revenue, customer_summary and top_customers read it)."""
    repo = sample_repo
    (repo / ".gitignore").write_text(".viewsync/\n*.md\n*.json\njunit/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Dana Declarer")
    git(repo, "config", "user.email", "dana@example.com")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sample")
    applied = run_cli(repo, "apply", "--auto-approve")
    assert applied.code == 0, applied.text
    git(repo, "checkout", "-q", "-b", "pr")
    edit(repo, "views/local/sales.yaml", "WHERE status = 'completed'\n      - dialect: trino",
         "WHERE status IN ('completed', 'shipped')\n      - dialect: trino")
    assert run_cli(repo, "generate", "--dialect", "trino").code == 0  # its trino SQL follows the spark SQL
    git(repo, "commit", "-qam", "completed_orders: shipped orders count too")
    return repo


def validate_review_json(doc: dict) -> None:  # type: ignore[type-arg]
    schemas = [json.loads(p.read_text()) for p in (ROOT / "schemas").glob("*.schema.json")]
    registry = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in schemas])
    schema = json.loads((ROOT / "schemas" / "pr-review.schema.json").read_text())
    jsonschema.Draft202012Validator(schema, registry=registry).validate(doc)


REVIEW = ("review", "--base", "main", "--format", "markdown", "--out", "comment.md", "--junit", "junit",
          "--json", "review.json")


def test_one_run_writes_the_comment_junit_and_json_and_starts_spark_at_most_twice(pr: Path) -> None:
    # A fresh process, as CI runs it: every Spark child it needs is started by this run.
    res = run_cli(pr, *[a if a not in ("comment.md", "junit", "review.json") else str(pr / a) for a in REVIEW],
                  "--dependents", process=True)
    assert res.code == 0, res.text
    assert "Review passed" in res.out and "Spark start(s)" in res.out
    doc = json.loads((pr / "review.json").read_text())
    validate_review_json(doc)
    assert 1 <= doc["spark"]["starts"] <= 2  # the scratch child (verify, tests), the live one (diff, checks)

    md = (pr / "comment.md").read_text()
    assert md.startswith("<!-- viewsync-plan -->")
    assert "**changed** `local.sales.completed_orders` (representations.spark.sql, representations.trino.sql)" in md
    assert "#### Spark verification" in md and "0 with errors" in md
    assert "View tests: 6 passed, 0 failed" in md  # the plan's: the changed view and its readers
    assert "All view tests: 8 passed, 0 failed" in md  # every test, the same run
    assert "#### ~ `local.sales.completed_orders` (update, key `order_id`)" in md
    assert "`local.sales.daily_revenue` (dependent, key `order_date`)" in md  # --dependents
    assert "### Data checks" in md and "12 passed, 0 failed" in md
    assert md.index("### viewsync plan") < md.index("### Data diff") < md.index("### Data checks")
    graph = md[md.index("```mermaid"):md.index("```", md.index("```mermaid") + 3)]  # the plan's lineage graph
    assert md.index("```mermaid") < md.index("### Data diff")
    assert all(name in graph for name in ("completed_orders", "daily_revenue", "customer_summary"))

    # Each format is that run's: the same counts everywhere, nothing re-run.
    assert doc["tests"]["summary"]["passed"] == 8 and doc["plan"]["tests"]["summary"]["passed"] == 6
    diffed = {(v["view"]["name"], v["action"]) for v in doc["diff"]["views"]}
    assert diffed == {("completed_orders", "update"), ("daily_revenue", "dependent"),
                      ("customer_summary", "dependent"), ("top_customers", "dependent")}
    [orders] = [v for v in doc["diff"]["views"] if v["view"]["name"] == "completed_orders"]
    added = orders["counts"]["added"]
    assert added > 0 and f"| {orders['rows_before']} | {orders['rows_after']} | {added} |" in md
    tests_xml = (pr / "junit" / "viewsync-tests.xml").read_text()
    assert tests_xml.count("<testcase") == 8 and "<failure" not in tests_xml
    checks_xml = (pr / "junit" / "checks.xml").read_text()
    assert checks_xml.count("<testcase") == 12 and "<failure" not in checks_xml


def test_a_view_that_fails_leaves_the_others_to_run_and_is_in_the_comment(pr: Path) -> None:
    # refunds' declared SQL fails when Spark runs it (its analysis passes: the plan verifies it),
    # and a check of completed_orders cannot run (no such column).
    edit(pr, "views/local/sales.yaml", "FROM sales.refund_events GROUP BY order_id",
         "FROM sales.refund_events GROUP BY order_id HAVING assert_true(SUM(amount) < 0, 'refunds boom') IS NULL")
    edit(pr, "views/local/sales.yaml", '      - expression: "amount > 0"\n', '      - expression: "no_such > 0"\n')
    git(pr, "commit", "-qam", "refunds fail at run time; a check that cannot run")
    res = run_cli(pr, *REVIEW[:5], "--out", str(pr / "comment.md"), "--json", str(pr / "review.json"))
    assert res.code == 1, res.text
    assert "Review FAILED (plan, tests, diff, checks)" in res.out
    md = (pr / "comment.md").read_text()
    doc = json.loads((pr / "review.json").read_text())
    validate_review_json(doc)
    by_view = {v["view"]["name"]: v for v in doc["diff"]["views"]}
    assert by_view["refunds"]["status"] == "error" and "refunds boom" in by_view["refunds"]["message"]
    assert by_view["completed_orders"]["status"] == "ok"  # the other view's diff went on
    assert "#### ~ `local.sales.refunds` (update, key `order_id`)\n\n**error**:" in md
    assert "#### ~ `local.sales.completed_orders` (update, key `order_id`)\n\n| rows before |" in md
    checks = {v["view"]["name"]: v for v in doc["checks"]["views"]}
    [bad] = [c for c in checks["completed_orders"]["checks"] if c["kind"] == "expression"]
    assert bad["status"] == "error"
    assert all(c["status"] == "pass" for c in checks["daily_revenue"]["checks"])  # the other views' checks ran
    assert "`expression: no_such > 0`" in md
    assert doc["outcome"] == {"plan": True, "tests": True, "diff": True, "checks": True, "steps": False}


def test_a_step_that_cannot_run_is_said_and_the_rest_is_written(pr: Path) -> None:
    # The live Spark cannot start (its interpreter does not exist): diff and checks cannot run.
    edit(pr, "viewsync.yaml", "policy:", "spark:\n  live:\n    python: /nonexistent/bin/python\npolicy:")
    git(pr, "commit", "-qam", "a live Spark that cannot start")
    res = run_cli(pr, *REVIEW[:5], "--out", str(pr / "comment.md"), "--junit", str(pr / "junit"))
    assert res.code == 1, res.text
    md = (pr / "comment.md").read_text()
    assert md.startswith("<!-- viewsync-plan -->") and "All view tests: 8 passed" in md  # plan and tests written
    assert "### Steps that could not run" in md
    assert "- **diff**: " in md and "- **checks**: " in md and "/nonexistent/bin/python" in md
    assert (pr / "junit" / "viewsync-tests.xml").exists() and not (pr / "junit" / "checks.xml").exists()


def test_a_base_that_is_not_a_git_ref_is_refused_before_any_work(pr: Path) -> None:
    res = run_cli(pr, "review", "--base", "no-such-branch")
    assert res.code == 1 and "unknown git ref 'no-such-branch'" in res.err
