"""`generate`: the representations a view lacks, written by sqlglot into its view file."""

from __future__ import annotations

from typing import Annotated

import typer

from reconciler.cli.app import Format, Selects, app, session
from reconciler.core.output import OutputFormat


@app.command("generate")
def generate(ctx: typer.Context,
             dialect: Annotated[str, typer.Option(help="The dialect to generate (e.g. trino).")],
             select: Selects = None,
             force: Annotated[bool, typer.Option("--force", help="Also write again generated representations "
                                                                 "edited by hand.")] = False,
             fmt: Format = OutputFormat.TEXT) -> None:
    """Write the DIALECT representation selected views lack (or whose source changed), transpiled by
    sqlglot, into their view files; exit 1 when one cannot be generated."""
    from reconciler.services.generate import GenerateRequest
    from reconciler.services.generate import generate as generate_service
    s = session(ctx)
    report = generate_service(s.open(), GenerateRequest(dialect, tuple(select or ()), force))
    s.show("generate", fmt, report)
    if not report.ok:
        raise typer.Exit(1)
