"""`validate`, `test`, `diff` and `check`: the pending change checked offline, by the views'
tests, and on live data (data review)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reconciler.cli import progress
from reconciler.cli.app import AlsoOut, Format, Ref, Selects, app, exit_if, session
from reconciler.core.output import Definition, OutputFormat, TestFormat

TestFormats = Annotated[TestFormat, typer.Option("--format", "-f", help="Output format.")]


@app.command("validate")
def validate(ctx: typer.Context, ref: Annotated[str | None, typer.Option(help="Git ref to read.")] = None,
             spark: Annotated[bool, typer.Option("--spark", help="Also analyse every view with Spark (offline: "
                                                                  "tables from sources/).")] = False,
             write_columns: Annotated[bool, typer.Option("--write-columns", help="With --spark: write Spark's "
                                                         "columns into views that omit them.")] = False) -> None:
    """Check config and declarations offline: YAML, JSON Schema, semantics, SQL (one query, no cycles)."""
    from reconciler.services.validate import ValidateRequest
    from reconciler.services.validate import validate as validate_service
    s = session(ctx)
    ws = s.open()
    decl = validate_service(ws, ValidateRequest(ref, spark, write_columns), s.out, s.err)
    s.out(f"Valid: {len(decl.views)} view(s) in {len(decl.files)} file(s), {len(ws.config.catalogs)} catalog(s).\n")


@app.command("test")
def test_views(ctx: typer.Context, select: Annotated[str | None, typer.Option(
                   help="Glob over catalog.schema.view or catalog.schema.view.test.")] = None,
               fmt: TestFormats = TestFormat.TEXT,
               out_file: Annotated[Path | None, typer.Option("--out", help="Write the report here (stdout gets "
                                                             "the summary).")] = None, ref: Ref = None,
               engine: Annotated[str | None, typer.Option(
                   help="spark, trino, flink or all (default: every configured engine, each on the views with a "
                        "representation in its dialect).")] = None) -> None:
    """Run the views' tests: each view's SQL on the test's fixture rows, on each engine; nothing is written.
    Exit 1 when any fails."""
    from reconciler.services import viewtests
    s = session(ctx)
    run = viewtests.test(s.open(), viewtests.TestRequest(select, ref, engine), s.err)
    if out_file:
        s.write(out_file, s.render("test", fmt, run))
        s.out(s.render("test", "summary", run) + "\n")
    else:
        s.out(s.render("test", fmt, run))
    exit_if(not run.ok)


@app.command("diff")
def diff(
    ctx: typer.Context,
    select: Selects = None,
    base: Annotated[str | None, typer.Option(help="Only views whose declarations changed since this git ref.")] = None,
    where: Annotated[str | None, typer.Option(help="Spark SQL condition restricting both sides' rows.")] = None,
    sample: Annotated[int, typer.Option(help="Example rows per class (added, removed, changed...).")] = 5,
    dependents: Annotated[bool, typer.Option("--dependents", help="Also diff declared views that read a "
                                                                  "changed view.")] = False,
    fmt: Format = OutputFormat.TEXT,
    out_file: AlsoOut = None,
) -> None:
    """What the pending change does to each view's rows: live vs declared SQL on live data (Spark, read-only)."""
    from reconciler.services import datareview
    s = session(ctx)
    with progress.data_review(s.err) as shown:
        request = datareview.DiffRequest(tuple(select or ()), base, where, sample, dependents)
        report = datareview.diff(s.open(), request, shown)
    s.show("diff", fmt, report, out_file)
    exit_if(report.errors)


@app.command("check")
def check(ctx: typer.Context, select: Selects = None,
          definition: Annotated[Definition, typer.Option(help="declared: the pending SQL (before apply); live: "
                                                              "what is deployed.")] = Definition.DECLARED,
          fmt: TestFormats = TestFormat.TEXT, out_file: AlsoOut = None) -> None:
    """Evaluate the views' `checks:` on live data (Spark, read-only); exit 1 when an error check fails."""
    from reconciler.services import datareview
    s = session(ctx)
    with progress.data_review(s.err) as shown:
        report = datareview.check(s.open(), datareview.CheckRequest(tuple(select or ()), definition.value), shown)
    s.show("check", fmt, report, out_file)
    exit_if(report.failed)
