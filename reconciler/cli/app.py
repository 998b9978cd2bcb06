"""The Typer app, the session a command runs in, and `main`: where errors become messages and
exit codes (0 ok / no changes, 1 error, 2 changes or drift). Whatever a command prints, or writes
with `--out`, goes through its session: the secrets of every config it opened are masked."""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from reconciler.core.errors import UserError, ValidationFailed, ViewsyncError
from reconciler.core.output import OutputFormat
from reconciler.core.secrets import redact
from reconciler.render.registry import render

if TYPE_CHECKING:
    from reconciler.core.model import ViewId
    from reconciler.workspace import Workspace

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="viewsync: SQL views under review, versioned and reconciled across catalogs.")

# Options several commands share, worded alike.
Format = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]
Catalogs = Annotated[list[str] | None, typer.Option(help="Only this catalog (repeatable).")]
Selects = Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view (repeatable).")]
Ref = Annotated[str | None, typer.Option(help="Read declarations from this git ref.")]
AlsoOut = Annotated[Path | None, typer.Option("--out", help="Also write the report here.")]
Since = Annotated[str | None, typer.Option(help="ISO time or duration (7d, 12h).")]
Run = Annotated[str | None, typer.Option(help="Run id (prefix).")]


@dataclass
class Session:
    """Handed to click as the context object: main() sees the global options (verbose) even
    when a command fails, and closes the workspaces commands opened."""

    repo: Path | None = None  # None: the nearest directory up from here that holds viewsync.yaml
    config: Path | None = None
    parallelism: int = 8
    verbose: bool = False
    color: bool = False
    workspaces: list[Workspace] = field(default_factory=list)

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset().union(*(ws.config.secrets for ws in self.workspaces))

    def open(self) -> Workspace:
        """The repository, opened: config warnings said, catalog progress shown on a terminal."""
        from reconciler.cli import progress
        from reconciler.workspace import Workspace

        ws = Workspace.open(self.root(), self.config, self.parallelism)
        self.workspaces.append(ws)
        for warning in ws.config.warnings:
            self.err(f"Warning: {warning}")
        if sys.stderr.isatty():  # progress on a terminal, nothing in CI logs
            ws.progress = progress.catalogs
        return ws

    def root(self) -> Path:
        """`--repo`; else, without `--config`, the nearest directory up from here with viewsync.yaml
        (as git and Terraform find theirs); else here."""
        from reconciler.source.config import CONFIG_NAME, find_root

        here = Path.cwd()
        if self.repo is not None or self.config is not None:
            return self.repo or here
        found = find_root(here)
        if found is None:
            raise UserError(f"no {CONFIG_NAME} in {here} or any parent directory (pass --repo DIR or --config FILE)")
        return found

    def render(self, kind: str, fmt: str, value: Any) -> str:
        return render(kind, fmt, value, self)

    def show(self, kind: str, fmt: str, value: Any, out_file: Path | None = None) -> None:
        """`value` rendered on stdout and, with `--out`, into that file too."""
        text = self.render(kind, fmt, value)
        if out_file:
            self.write(out_file, text)
        self.out(text)

    def out(self, text: str) -> None:
        sys.stdout.write(redact(text, self.secrets))
        sys.stdout.flush()

    def err(self, text: str) -> None:
        text = redact(text, self.secrets)
        sys.stderr.write(text + ("" if text.endswith("\n") else "\n"))

    def write(self, path: Path, text: str) -> None:
        """The one `--out` writer: masked like standard output."""
        path.write_text(redact(text, self.secrets), encoding="utf-8")

    def close(self) -> None:
        while self.workspaces:
            self.workspaces.pop().close()


def session(ctx: typer.Context) -> Session:
    found = ctx.find_object(Session)
    assert found is not None
    return found


def exit_if(failed: object, code: int = 1) -> None:
    """End the command with `code` when `failed` holds (1: something failed; 2: changes or drift)."""
    if failed:
        raise typer.Exit(code)


def view_id(text: str) -> ViewId:
    """A catalog.schema.view argument."""
    from reconciler.core.model import ViewId

    try:
        return ViewId.parse(text)
    except ValueError as e:
        raise UserError(str(e)) from None


def _version(shown: bool) -> None:
    if shown:
        from reconciler import __version__
        sys.stdout.write(f"viewsync {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def main_options(
    ctx: typer.Context,
    repo: Annotated[Path | None, typer.Option(metavar="DIR", help="Repository root (holds viewsync.yaml and views/; "
                                              "default: the nearest one up from here).")] = None,
    config: Annotated[Path | None, typer.Option(metavar="FILE", help="Config file (default: viewsync.yaml in the "
                                                "repository root).")] = None,
    parallelism: Annotated[int, typer.Option(
        help="Concurrent catalog reads and, where the catalog allows, apply writers.")] = 8,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="More detail on errors.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="No ANSI colours.")] = False,
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                          help="Print viewsync's version and exit.")] = False,
) -> None:
    s = ctx.ensure_object(Session)
    s.repo, s.config = repo and repo.resolve(), config and config.resolve()
    s.parallelism, s.verbose = parallelism, verbose
    s.color = not no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ


MAX_ERROR_LINE = 2000  # a server's or an input's huge text never fills a terminal or a CI log


def _message(e: Exception) -> str:
    """What an error says, on one line per problem, each clipped to MAX_ERROR_LINE."""
    if isinstance(e, ValidationFailed):
        text = f"Error: {len(e.problems)} problem(s) found:\n" + "\n".join(f"  {p}" for p in e.problems)
    elif isinstance(e, ViewsyncError | typer.Abort):  # the errors we expect
        text = f"Error: {e}" if isinstance(e, ViewsyncError) else "Aborted."
    else:
        text = f"Error: unexpected {type(e).__name__}: {e} (re-run with -v for details)"
    return "\n".join(line if len(line) <= MAX_ERROR_LINE else line[:MAX_ERROR_LINE - 1] + "…"
                     for line in text.split("\n"))


def _is_usage_error(e: Exception) -> bool:
    """click's own errors (bad option, bad value...): they explain themselves. Matched by
    name: typer may bring click or a vendored copy of it."""
    return any(c.__name__ == "ClickException" for c in type(e).__mro__) and hasattr(e, "show")


# What a value is, in help (`--select GLOB`), by parameter name; any other is its name in capitals.
METAVARS = {"select": "GLOB", "base": "REF", "out": "FILE", "out_file": "FILE", "plan_file": "PLAN", "actor": "NAME",
            "lock_timeout": "SECONDS", "env": "NAME", "ttl": "DURATION", "since": "WHEN", "run": "RUN_ID",
            "where": "SQL", "sample": "N", "parallelism": "N", "names": "NAME..."}


def _metavars(command: Any) -> Any:
    """Help written for users: `--select GLOB`, `VIEW`, every choice listed (`text|json`), where
    typer would print `<list[str]>` and `{view}`."""
    for param in (p for p in command.params if p.metavar is None and not getattr(p, "is_flag", False)):
        kind = getattr(param, "type_descriptor", None)  # typer's own click: no click.Choice
        param.metavar = ("|".join(str(getattr(c, "value", c)) for c in kind.choices or ()) if kind and kind.is_choice
                         else METAVARS.get(param.name, param.name.upper()))
        if param.param_type_name == "argument":  # `VIEW`, `[PLAN]`: not typer's `{view}`, `VIEW <str>`
            usage = param.metavar if param.required else f"[{param.metavar}]"
            param.get_usage_pieces, param.display_type_rich = lambda ctx, usage=usage: [usage], lambda ctx: None
    for sub in getattr(command, "commands", {}).values():
        _metavars(sub)
    return command


def command() -> Any:
    """The command line as click runs it."""
    return _metavars(typer.main.get_command(app))


def main() -> None:
    current = Session()
    if sys.stderr.isatty():  # a Spark child's start and archive said on a terminal, nothing in CI logs
        from reconciler.cli import progress
        from reconciler.spark import client
        client.notify(progress.spark)
    try:
        code = command()(standalone_mode=False, obj=current)
        sys.exit(code if isinstance(code, int) else 0)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except Exception as e:  # the one place errors become output
        if _is_usage_error(e):
            e.show()  # type: ignore[attr-defined]
        else:
            if current.verbose and not isinstance(e, ViewsyncError | typer.Abort):
                current.err(traceback.format_exc())
            current.err(_message(e))
        sys.exit(1)
    finally:
        current.close()


def run() -> NoReturn:
    """The `viewsync` program (the console script, `python -m reconciler`): `main`, then the
    interpreter's own exit steps, without its teardown of every object one by one."""
    try:
        main()
        code = 0
    except SystemExit as e:  # main exits with an int status, always
        code = int(e.code or 0)
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    """End the process as the interpreter's exit does, up to its teardown: wait for the other
    non-daemon threads (and stop idle executor workers), run the atexit handlers (Spark and
    Trino children, temporary directories), flush stdout and stderr. The teardown after that
    frees each object of the run one by one (every decoded view, syntax tree and record):
    ~0.1 s of a no-op plan over 1,000 views, a tenth of it, for memory the process is about
    to hand back anyway. A stream that cannot be flushed (a reader gone) exits 120, as the
    interpreter's exit does."""
    import atexit
    import threading

    getattr(threading, "_shutdown")()  # noqa: B009 - what the interpreter's exit calls first; not in typeshed
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120
    os._exit(code)
