"""Upkeep: files written from what exists (`import`, `codeowners`), the state store's outbox and
apply lock (`events`, `events deliver`, `force-unlock`), and the pinned JVM jars (`jars`)."""

from __future__ import annotations

from typing import Annotated

import typer

from reconciler.cli.app import Run, Since, app, exit_if, session
from reconciler.core.output import EventsFormat


@app.command("import")
def import_(
    ctx: typer.Context, catalog: Annotated[str, typer.Option(help="Catalog to read.")],
    schema: Annotated[list[str] | None, typer.Option(help="Only this schema (repeatable).")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite existing view files.")] = False,
    sources: Annotated[bool, typer.Option("--sources", help="Write sources/ files (table columns for the "
                                                           "Spark verifier) instead of views.")] = False,
) -> None:
    """Write YAML declarations for the views that exist in a catalog."""
    s = session(ctx)
    if sources:
        from reconciler.services import spark as spark_service
        spark_service.import_sources(s.open(), catalog, schema, force, s.out, s.err)
        return
    from reconciler.services.importer import import_catalog
    result = import_catalog(s.open(), catalog, schema, force)
    for path in result.skipped:
        s.err(f"Skipped {path}: exists (use --force to overwrite)")
    s.out("".join(f"Wrote {path} ({count} view(s))\n" for path, count in result.written)
          + f"Imported {result.views} view(s) from catalog {catalog!r}.\n")


@app.command("codeowners")
def codeowners(ctx: typer.Context) -> None:
    """Write .github/CODEOWNERS from the access policy (view files to their schemas' owners)."""
    from reconciler.services.codeowners import write_codeowners
    path, files = write_codeowners(session(ctx).open())
    session(ctx).out(f"Wrote {path} ({files} view file(s)).\n")


events_app = typer.Typer(help="Events announced by applies, and their delivery.", invoke_without_command=True)
app.add_typer(events_app, name="events")


@events_app.callback()
def events(
    ctx: typer.Context,
    pending: Annotated[bool, typer.Option("--pending", help="Only events some sink has not received.")] = False,
    since: Since = None,
    run: Run = None,
    fmt: Annotated[EventsFormat, typer.Option("--format", "-f", help="Output format.")] = EventsFormat.TEXT,
) -> None:
    """List events from the outbox with each sink's delivery state."""
    from reconciler.services import events as events_service
    if not ctx.invoked_subcommand:
        s = session(ctx)
        s.out(s.render("events", fmt, events_service.listing(s.open(), pending, since, run)))


@events_app.command("deliver")
def events_deliver(ctx: typer.Context) -> None:
    """Deliver every pending event now (with retries and backoff); exit 1 if some stay pending."""
    from reconciler.services import events as events_service
    s = session(ctx)
    report = events_service.deliver(s.open(), s.err)
    s.out(f"Event deliveries: {report.delivered} delivered, {report.rejected} rejected, {report.pending} pending.\n")
    exit_if(report.pending)


@app.command("force-unlock")
def force_unlock(ctx: typer.Context, run_id: Annotated[str, typer.Argument(help="Run id holding the lock.")]) -> None:
    """Release an apply lock left behind by a dead run."""
    from reconciler.services.lock import force_unlock as unlock
    unlock(session(ctx).open(), run_id)
    session(ctx).out(f"Released the lock held by run {run_id}.\n")


jars_app = typer.Typer(help="The pinned JVM jars data review puts on Spark's classpath (JDBC drivers, "
                       "Iceberg's runtime): list them, fetch them from Maven Central.", no_args_is_help=True)
app.add_typer(jars_app, name="jars")


@jars_app.command("list")
def jars_list(ctx: typer.Context) -> None:
    """Each pinned jar: name, Maven coordinate, size, and its path when it is cached."""
    from reconciler.services import jars
    session(ctx).out("".join(f"{a.name:<28} {a.coordinate:<60} {a.size / 1e6:6.1f} MB  [{a.used_by}]  "
                             f"{path or 'not fetched'}\n" for a, path in jars.pinned()))


@jars_app.command("fetch")
def jars_fetch(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(help="Pinned names (see `viewsync jars list`).")] = None,
    review: Annotated[bool, typer.Option("--review", help="Every jar data review can use.")] = False,
) -> None:
    """Download pinned jars from Maven Central ($VIEWSYNC_MAVEN_REPOSITORY: a mirror), check each one's
    SHA-256, and keep them under ~/.cache/viewsync/jars; print each one's path."""
    from reconciler.services import jars
    s = session(ctx)
    exit_if(jars.fetch(list(names or []), review, lambda art, path, error: s.err(f"Error: {error}") if error
                       else s.out(f"{art.name}: {path}\n")))
