"""`review`: the pull request's whole comment, JUnit reports and JSON from one run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reconciler.cli import progress
from reconciler.cli.app import Format, app, session
from reconciler.core.output import OutputFormat


@app.command("review")
def review(
    ctx: typer.Context,
    base: Annotated[str, typer.Option(help="The git ref the pull request is reviewed against.")],
    dependents: Annotated[bool, typer.Option("--dependents", help="Also diff declared views that read a "
                                                                  "changed view.")] = False,
    fmt: Format = OutputFormat.TEXT,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the report (--format) here; stdout gets "
                                                  "a summary.")] = None,
    junit: Annotated[Path | None, typer.Option("--junit", metavar="DIR", help="Write viewsync-tests.xml (every "
                                               "view test) and checks.xml into this directory.")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", metavar="FILE", help="Also write the report as "
                                                   "JSON here.")] = None,
    actor: Annotated[str | None, typer.Option(help="Who the access policy is checked for (default "
                                              "$GITHUB_ACTOR, then the commit author).")] = None,
    allow_breaking: Annotated[bool, typer.Option(help="Allow changes that break dependent views.")] = False,
) -> None:
    """Plan (with Spark), view tests, data diff and checks of a pull request, in one run; exit 1 when any fails."""
    from reconciler.services import review as review_service
    s = session(ctx)
    with progress.data_review(s.err) as shown:
        request = review_service.ReviewRequest(base, dependents, actor, allow_breaking)
        result = review_service.review(s.open(), request, shown, s.err)
    if out_file:
        s.write(out_file, s.render("review", fmt, result))
        s.out(s.render("review", "summary", result))
    else:
        s.out(s.render("review", fmt, result))
    if json_file:
        s.write(json_file, s.render("review", "json", result))
    if junit:
        junit.mkdir(parents=True, exist_ok=True)
        if result.tests is not None:
            s.write(junit / "viewsync-tests.xml", s.render("test", "junit", result.tests))
        if result.checks is not None:
            s.write(junit / "checks.xml", s.render("check", "junit", result.checks))
    if result.failed:
        raise typer.Exit(1)
