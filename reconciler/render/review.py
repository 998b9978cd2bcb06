"""`viewsync review`'s report, the whole pull-request story from one run, and its renderings:
text, the Markdown PR comment, JSON (schemas/pr-review.schema.json). The JUnit files are the
view tests' and the checks' own renderings of the same run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.datareview.model import CheckReport, DiffReport
    from reconciler.plan.planner import Plan
    from reconciler.viewtests.result import TestRun

STEPS = ("plan", "tests", "diff", "checks")


@dataclass(frozen=True)
class StepFailure:
    """A step of the review that could not run at all (the others ran): its name, and why."""

    step: str  # one of STEPS
    message: str


@dataclass
class Review:
    """Everything one `viewsync review` run found. A step that could not run has no report and
    a StepFailure instead."""

    base: str
    plan: Plan | None = None
    tests: TestRun | None = None  # every declared view test (the plan holds those of the change)
    diff: DiffReport | None = None
    checks: CheckReport | None = None
    failures: list[StepFailure] = field(default_factory=list)
    spark_starts: int = 0  # Spark children this run started (the scratch one, the live one)
    seconds: float = 0.0

    def outcome(self) -> dict[str, bool]:
        """Which parts failed: plan errors, a failing view test, a diff in error, a failing check, a step."""
        return {"plan": bool(self.plan is not None and self.plan.errors),
                "tests": bool(self.tests is not None and not self.tests.ok),
                "diff": bool(self.diff is not None and self.diff.errors),
                "checks": bool(self.checks is not None and self.checks.failed),
                "steps": bool(self.failures)}

    @property
    def failed(self) -> bool:
        return any(self.outcome().values())

    def to_json(self) -> dict[str, Any]:
        return {"kind": "review", "base": self.base, "failed": self.failed,
                "outcome": self.outcome(),
                "plan": self.plan.to_json() if self.plan is not None else None,
                "tests": self.tests.to_json() if self.tests is not None else None,
                "diff": self.diff.to_json() if self.diff is not None else None,
                "checks": self.checks.to_json() if self.checks is not None else None,
                "failures": [{"step": f.step, "message": f.message} for f in self.failures],
                "spark": {"starts": self.spark_starts}, "seconds": round(self.seconds, 3)}


def _failures_lines(review: Review, markdown: bool) -> list[str]:
    if not review.failures:
        return []
    head = "### Steps that could not run" if markdown else "Steps that could not run:"
    return [head, "", *(f"- **{f.step}**: {_md(f.message)}" if markdown else f"  {f.step}: {f.message}"
                        for f in review.failures), ""]


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def _all_tests_markdown(run: TestRun) -> list[str]:
    """Every declared test's outcome in one line; the failing ones listed (those of the change
    are in the plan's section)."""
    c = run.counts()
    if not c["tests"]:
        return ["No view tests are declared.", ""]
    lines = [f"All view tests: {c['passed']} passed, {c['failed']} failed, {c['error']} error(s).", ""]
    if not run.ok:
        lines += [f"- ❌ `{r.view}` `{r.name}` (`{r.where}`): {_md(r.message)}" for r in run.failures()] + [""]
    return lines


def markdown(review: Review) -> str:
    """The PR comment: the plan (it starts with the comment's marker; its Markdown holds the lineage
    graph, `render.mermaid`), every
    view test's outcome, the data diff, the checks and any step that could not run, sized to
    GitHub's comment limit (the plan's change blocks give way first)."""
    from reconciler.datareview import render as review_render
    from reconciler.render import plan as plan_render

    rest: list[str] = []
    if review.tests is not None:
        rest += _all_tests_markdown(review.tests)
    if review.diff is not None:
        rest.append(review_render.diff_markdown(review.diff))
    if review.checks is not None:
        rest.append(review_render.checks_markdown(review.checks))
    rest += _failures_lines(review, markdown=True)
    after = "\n".join(rest)
    if review.plan is not None:
        head = plan_render.markdown(review.plan, max(plan_render.GITHUB_COMMENT_LIMIT - len(after) - 200, 4000))
    else:
        head = plan_render.MARKDOWN_MARKER + "\n### viewsync review\n\nThe plan could not be made (below).\n"
    return head + "\n" + after.rstrip("\n") + "\n"


def text(review: Review) -> str:
    from reconciler.datareview import render as review_render
    from reconciler.render import plan as plan_render
    from reconciler.viewtests import render as tests_render

    parts = [plan_render.text(review.plan) if review.plan is not None else ""]
    if review.tests is not None:
        parts.append("View tests: " + tests_render.summary(review.tests) + "\n")
    if review.diff is not None:
        parts.append(review_render.diff_text(review.diff))
    if review.checks is not None:
        parts.append(review_render.checks_text(review.checks))
    parts.append("\n".join(_failures_lines(review, markdown=False)))
    parts.append(summary(review))
    return "\n".join(p for p in parts if p)


def summary(review: Review) -> str:
    """One line for standard output when the report went to a file."""
    said = [name for name, failed in review.outcome().items() if failed]
    return (f"Review {'FAILED (' + ', '.join(said) + ')' if said else 'passed'} in {review.seconds:.1f} s, "
            f"{review.spark_starts} Spark start(s).\n")


def as_json(review: Review) -> str:
    return json.dumps(review.to_json(), indent=2, default=str) + "\n"
