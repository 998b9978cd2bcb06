"""`viewsync review`'s renderings without Spark (issue 42, item 3): the comment keeps its marker
and order even when a step could not run, and the one-line summary names what failed."""

from __future__ import annotations

from reconciler.core.model import ViewId
from reconciler.datareview.model import CheckReport, DiffReport, ViewDiff
from reconciler.render import review as render
from reconciler.render.review import Review, StepFailure
from reconciler.viewtests import result as vt


def failing_run() -> vt.TestRun:
    vid = ViewId("local", "sales", "refunds")
    return vt.TestRun([vt.TestResult(vid, "sums", "views/local/sales.yaml", 110, vt.Status.PASSED),
                       vt.TestResult(vid, "nulls", "views/local/sales.yaml", 120, vt.Status.ERROR, error="boom")])


def test_a_plan_that_could_not_be_made_still_gives_the_comment_with_every_other_step() -> None:
    diff = DiffReport(views=[ViewDiff(ViewId("local", "sales", "refunds"), "update", status="error",
                                      message="declared definition: refunds boom")])
    r = Review(base="main", tests=failing_run(), diff=diff, checks=CheckReport(),
               failures=[StepFailure("plan", "catalog 'hive' cannot be read: timed out")])
    md = render.markdown(r)
    assert md.startswith("<!-- viewsync-plan -->")  # the workflow finds its comment by it
    assert "The plan could not be made" in md
    assert md.index("The plan could not be made") < md.index("All view tests") < md.index("### Data diff") \
        < md.index("### Data checks") < md.index("### Steps that could not run")
    assert "All view tests: 1 passed, 0 failed, 1 error(s)." in md
    assert "- ❌ `local.sales.refunds` `nulls` (`views/local/sales.yaml:120`): boom" in md
    assert "**error**: declared definition: refunds boom" in md
    assert "- **plan**: catalog 'hive' cannot be read: timed out" in md
    assert r.failed and render.summary(r).startswith("Review FAILED (tests, diff, steps)")


def test_without_a_graph_the_comment_has_no_empty_graph_section() -> None:
    r = Review(base="main", tests=vt.TestRun(), diff=DiffReport(), checks=CheckReport())
    md = render.markdown(r)
    assert "mermaid" not in md and "No view tests are declared." in md
    assert not r.failed and render.summary(r).startswith("Review passed")
    assert r.to_json()["outcome"]["steps"] is False
