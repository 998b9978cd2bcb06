"""`viewsync review --base REF`: a pull request's whole story from one run. The plan (verified by
Spark), every view test, the data diff of each changed view (and, asked, of its readers) and
the checks, each step done once: one scratch Spark child serves verification and the tests,
one live child serves the diff and the checks (the process's pools keep both for every step).
A step that cannot run is said in the report and the others go on."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconciler.core.errors import ValidationFailed, ViewsyncError
from reconciler.core.secrets import redact
from reconciler.render.review import Review, StepFailure
from reconciler.services.datareview import ReviewProgress

if TYPE_CHECKING:
    from reconciler.workspace import Workspace


@dataclass(frozen=True)
class ReviewRequest:
    base: str  # the git ref the pull request is reviewed against
    dependents: bool = False  # also diff the declared views that read a changed view
    actor: str | None = None  # who the access policy is checked for
    allow_breaking: bool = False


def review(ws: Workspace, request: ReviewRequest, progress: ReviewProgress | None = None,
           warn: Callable[[str], None] = lambda _: None) -> Review:
    """Plan, view tests, data diff and checks of the pull request against `request.base`.

    Args:
        ws: the repository, opened.
        request: the base ref, whether dependents are diffed, the actor, breaking changes allowed.
        progress: data review's per-view and Spark stage progress (None: none shown).
        warn: warning lines (event deliveries left pending).

    Returns:
        The review: each step's report, or a StepFailure for a step that could not run (a
        catalog, or a Spark that cannot start); one view's failed diff or checks is that view's
        row. `failed` says whether anything failed; `spark_starts` counts this run's children.

    Raises:
        ValidationFailed: the declarations are bad (nothing is reviewed).
        UserError: `base` is not a git ref.
    """
    from reconciler.services import datareview
    from reconciler.services import plan as plan_service
    from reconciler.source import gitsrc
    from reconciler.spark import client

    started, starts = time.monotonic(), client.starts()
    progress = progress or ReviewProgress()
    gitsrc.files_at(ws.root, request.base)  # a bad ref fails here, before any work
    out = Review(base=request.base)
    try:
        out.plan, out.tests = plan_service.plan_and_tests(
            ws, plan_service.PlanRequest(base=request.base, spark=True, allow_breaking=request.allow_breaking,
                                         actor=request.actor), every_test=True)
    except ValidationFailed:
        raise
    except ViewsyncError as exc:
        out.failures.append(StepFailure("plan", redact(str(exc))))
    if out.tests is not None and out.tests.results and ws.config.events:
        from reconciler.services import viewtests

        viewtests.announce(ws, out.tests, None, warn)
    try:
        out.diff = datareview.diff(ws, datareview.DiffRequest(base=request.base, dependents=request.dependents,
                                                              keep_going=True), progress)
    except ViewsyncError as exc:
        out.failures.append(StepFailure("diff", redact(str(exc))))
    try:
        out.checks = datareview.check(ws, datareview.CheckRequest(keep_going=True), progress)
    except ViewsyncError as exc:
        out.failures.append(StepFailure("checks", redact(str(exc))))
    out.spark_starts = client.starts() - starts
    out.seconds = time.monotonic() - started
    return out
