"""`drift`, `history`, `audit`, `lineage` and `impact`: reports on what is declared, live and recorded."""

from __future__ import annotations

from typing import Annotated

import typer

from reconciler.cli.app import AlsoOut, Catalogs, Format, Ref, Run, Selects, Since, app, exit_if, session, view_id
from reconciler.core.output import LineageFormat, OutputFormat

View = Annotated[str, typer.Argument(help="catalog.schema.view")]


@app.command("drift")
def drift(ctx: typer.Context, fmt: Format = OutputFormat.TEXT, catalog: Catalogs = None, select: Selects = None,
          out_file: AlsoOut = None) -> None:
    """Report where live catalogs differ from declarations; exit 2 on drift."""
    from reconciler.services.drift import drift as drift_service
    s = session(ctx)
    report = drift_service(s.open(), tuple(catalog or ()), tuple(select or ()))
    s.show("drift", fmt, report, out_file)
    exit_if(report.errors and not report.items)
    exit_if(report.drifted, 2)


@app.command("history")
def history(ctx: typer.Context, view: View, fmt: Format = OutputFormat.TEXT) -> None:
    """Versions of a view: ours (with commit, actor, time) and the catalog's native ones."""
    from reconciler.services.history import history as history_service
    s = session(ctx)
    s.out(s.render("history", fmt, history_service(s.open(), view_id(view))))


@app.command("audit")
def audit(ctx: typer.Context, view: Annotated[str | None, typer.Option(help="catalog.schema.view")] = None,
          since: Since = None, run: Run = None, fmt: Format = OutputFormat.TEXT) -> None:
    """The audit trail: one row per attempted action."""
    from reconciler.services.history import audit as audit_service
    s = session(ctx)
    s.out(s.render("audit", fmt, audit_service(s.open(), view_id(view) if view else None, since, run)))


@app.command("lineage")
def lineage(ctx: typer.Context, view: View,
            fmt: Annotated[LineageFormat, typer.Option("--format", "-f", help="Output format.")] = LineageFormat.TEXT,
            ref: Ref = None) -> None:
    """Upstream tables and columns of a declared view, read from its SQL (no catalog is contacted);
    `--format mermaid`: a graph of the view, what it reads and the declared views that read it."""
    from reconciler.services import lineage as lineage_service
    s = session(ctx)
    if fmt is LineageFormat.MERMAID:
        s.out(s.render("lineage graph", fmt, lineage_service.graph(s.open(), view_id(view), ref)))
        return
    s.out(s.render("lineage", fmt, lineage_service.lineage(s.open(), view_id(view), ref)))


@app.command("impact")
def impact(ctx: typer.Context, view: View, fmt: Format = OutputFormat.TEXT) -> None:
    """The views that read VIEW (declared and live), and what its declared change or a drop does to them.
    Needs the Spark extra (viewsync[spark]) and Java 17: Spark analyses each dependent."""
    from reconciler.services import spark as spark_service
    s = session(ctx)
    s.out(s.render("impact", fmt, spark_service.impact(s.open(), view_id(view))))
