"""The `viewsync` command line, shaped like Terraform's internal/command: `app` (the Typer app,
the session, `main`, errors to messages and exit codes), a module per group of commands and
`progress`. A command parses options, opens the workspace, makes one `services/` call and
renders its value through `render.registry`. Nothing imports this package."""

from reconciler.cli import admin, checks, generate, plan_apply, preview, reports, review  # each registers its commands
from reconciler.cli.app import app, main, run

# `viewsync --help` lists the commands in this order; the modules group them by what they do.
ORDER = ("validate", "plan", "test", "generate", "show", "apply", "drift", "history", "revert", "audit", "lineage",
         "import", "codeowners", "impact", "diff", "check", "review", "force-unlock", "events", "preview", "jars")
app.registered_commands.sort(key=lambda c: ORDER.index(str(c.name)))
app.registered_groups.sort(key=lambda g: ORDER.index(str(g.name)))
__all__ = ["admin", "app", "checks", "generate", "main", "plan_apply", "preview", "reports", "review", "run"]
