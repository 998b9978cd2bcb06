"""The `viewsync` command line. Exit codes: 0 ok / no changes, 1 error, 2 changes (drift)."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reconciler.core.errors import UserError, ValidationFailed, ViewsyncError
from reconciler.core.output import EventsFormat, LineageFormat, OutputFormat, TestFormat
from reconciler.core.secrets import redact

# A command imports only what it uses: `viewsync --help` loads none of these, a plan loads
# no SQLAlchemy (unless a catalog needs it), no GitPython and no sqlglot.
if TYPE_CHECKING:
    from reconciler.core.model import ViewId
    from reconciler.plan.planner import Action, Plan
    from reconciler.services.apply import ApplyOutcome
    from reconciler.services.plan import Scope
    from reconciler.workspace import Workspace

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="viewsync: SQL views under review, versioned and reconciled across catalogs.")

Format = Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")]


@dataclass
class Globals:
    repo: Path
    config: Path | None
    parallelism: int
    verbose: bool
    color: bool


@dataclass
class Session:
    """Handed to click as the context object: main() sees the parsed global options
    (verbose) even when a command fails, and closes the workspaces commands opened."""

    globals: Globals | None = None
    workspaces: list[Workspace] = field(default_factory=list)

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset().union(*(ws.config.secrets for ws in self.workspaces))

    def close(self) -> None:
        while self.workspaces:
            self.workspaces.pop().close()


    def out(self, text: str) -> None:
        sys.stdout.write(redact(text, self.secrets))
        sys.stdout.flush()

    def err(self, text: str) -> None:
        text = redact(text, self.secrets)
        sys.stderr.write(text + ("" if text.endswith("\n") else "\n"))


def _session(ctx: typer.Context) -> Session:
    session = ctx.find_object(Session)
    assert session is not None
    return session


def _g(ctx: typer.Context) -> Globals:
    g = _session(ctx).globals
    assert g is not None
    return g


def out(ctx: typer.Context, text: str) -> None:
    """Standard output, with the secrets of every config the command opened masked."""
    _session(ctx).out(text)


def err(ctx: typer.Context, text: str) -> None:
    _session(ctx).err(text)


@app.callback()
def main_options(
    ctx: typer.Context,
    repo: Annotated[Path, typer.Option(help="Repository root (holds viewsync.yaml and views/).")] = Path("."),
    config: Annotated[Path | None, typer.Option(help="Config file (default: <repo>/viewsync.yaml).")] = None,
    parallelism: Annotated[int, typer.Option(
        help="Concurrent catalog reads and, where the catalog allows, apply writers.")] = 8,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="More detail on errors.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="No ANSI colours.")] = False,
) -> None:
    color = not no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    ctx.ensure_object(Session).globals = Globals(repo.resolve(), config.resolve() if config else None,
                                                 parallelism, verbose, color)


def _progress(done: int, total: int) -> None:
    sys.stderr.write(f"\rReading catalogs: {done}/{total} schema(s)" + ("\r\x1b[K" if done == total else ""))
    sys.stderr.flush()


def _open(ctx: typer.Context) -> Workspace:
    from reconciler.workspace import Workspace

    g = _g(ctx)
    ws = Workspace.open(g.repo, g.config, g.parallelism)
    _session(ctx).workspaces.append(ws)
    for warning in ws.config.warnings:
        err(ctx, f"Warning: {warning}")
    if sys.stderr.isatty():  # progress on a terminal, nothing in CI logs
        ws.progress = _progress
    return ws


# ----------------------------------------------------------------- commands
@app.command()
def validate(
    ctx: typer.Context,
    ref: Annotated[str | None, typer.Option(help="Git ref to read.")] = None,
    spark: Annotated[bool, typer.Option("--spark", help="Also analyse every view with Spark (offline: "
                                                         "tables from sources/).")] = False,
    write_columns: Annotated[bool, typer.Option("--write-columns", help="With --spark: write Spark's columns "
                                                "into views that omit them.")] = False,
) -> None:
    """Check config and declarations offline: YAML, JSON Schema, semantics, SQL (one query, no cycles)."""
    from reconciler.services.validate import ValidateRequest
    from reconciler.services.validate import validate as validate_service

    ws = _open(ctx)
    decl = validate_service(ws, ValidateRequest(ref, spark, write_columns), _session(ctx).out, _session(ctx).err)
    out(ctx, f"Valid: {len(decl.views)} view(s) in {len(decl.files)} file(s), "
        f"{len(ws.config.catalogs)} catalog(s).\n")


@app.command()
def plan(
    ctx: typer.Context,
    fmt: Format = OutputFormat.TEXT,
    out_file: Annotated[Path | None, typer.Option("--out", help="Save the plan (JSON) for `apply PLAN`.")] = None,
    detailed_exitcode: Annotated[bool, typer.Option("--detailed-exitcode",
                                                    help="Exit 2 when there are changes.")] = False,
    catalog: Annotated[list[str] | None, typer.Option(help="Only this catalog (repeatable).")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view (repeatable).")] = None,
    ref: Annotated[str | None, typer.Option(help="Read declarations from this git ref.")] = None,
    base: Annotated[str | None, typer.Option(help="Also list declaration changes since this git ref.")] = None,
    prune: Annotated[bool, typer.Option(help="Drop managed views no longer declared.")] = False,
    adopt: Annotated[bool, typer.Option(help="Adopt declared unmanaged views.")] = False,
    allow_mass_drop: Annotated[bool, typer.Option(help="Allow drops beyond max_drop_fraction.")] = False,
    spark: Annotated[bool, typer.Option("--spark", help="Verify with Spark (also spark.verify in config).")] = False,
    allow_breaking: Annotated[bool, typer.Option(help="Allow changes that break dependent views.")] = False,
    actor: Annotated[str | None, typer.Option(help="Who the access policy is checked for (default "
                                              "$GITHUB_ACTOR, then the commit author).")] = None,
    skip_tests: Annotated[bool, typer.Option("--skip-tests", help="With --spark: do not run the tests of "
                                             "the changed views.")] = False,
) -> None:
    """Diff declarations against the live catalogs."""
    g = _g(ctx)
    ws = _open(ctx)
    from reconciler.services import plan as plan_service

    request = plan_service.PlanRequest(_scope(catalog, select, prune, adopt, allow_mass_drop), ref, base, spark,
                                       allow_breaking, actor, skip_tests)
    result = plan_service.plan(ws, request)
    from reconciler.render import plan as render  # once the service has the catalogs' prefetch going

    if out_file:
        out_file.write_text(render.as_json(result), encoding="utf-8")
    out(ctx, render.render(result, fmt, g.color))
    if result.errors:
        raise typer.Exit(1)
    if detailed_exitcode and result.has_changes:
        raise typer.Exit(2)


def _scope(catalog: list[str] | None, select: list[str] | None, prune: bool = False, adopt: bool = False,
           allow_mass_drop: bool = False) -> Scope:
    from reconciler.services.plan import Scope

    return Scope(tuple(catalog or ()), tuple(select or ()), prune, adopt, allow_mass_drop)


@app.command("test")
def test_views(
    ctx: typer.Context,
    select: Annotated[str | None, typer.Option(help="Glob over catalog.schema.view or "
                                               "catalog.schema.view.test.")] = None,
    fmt: Annotated[TestFormat, typer.Option("--format", "-f", help="Output format.")] = TestFormat.TEXT,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write the report here (stdout gets "
                                                  "the summary).")] = None,
    ref: Annotated[str | None, typer.Option(help="Read declarations from this git ref.")] = None,
) -> None:
    """Run the views' tests: each view's Spark SQL on the test's fixture rows, offline. Exit 1 when any fails."""
    from reconciler.services import viewtests
    from reconciler.viewtests import render

    ws = _open(ctx)
    run = viewtests.test(ws, viewtests.TestRequest(select, ref), _session(ctx).err)
    renderers = {TestFormat.TEXT: lambda: render.text(run, _g(ctx).verbose),
                 TestFormat.MARKDOWN: lambda: render.markdown(run), TestFormat.JSON: lambda: render.as_json(run),
                 TestFormat.JUNIT: lambda: render.junit(run)}
    text = renderers[fmt]()
    if out_file:
        out_file.write_text(text, encoding="utf-8")
        out(ctx, render.summary(run) + "\n")
    else:
        out(ctx, text)
    if not run.ok:
        raise typer.Exit(1)


@app.command()
def show(ctx: typer.Context, plan_file: Annotated[Path, typer.Argument(help="A saved plan.")],
         fmt: Format = OutputFormat.TEXT) -> None:
    """Render a saved plan."""
    from reconciler.plan import saved as saved_plan
    from reconciler.render import plan as render

    saved = saved_plan.load(plan_file)
    out(ctx, render.render(saved, fmt, _g(ctx).color))


@app.command()
def apply(
    ctx: typer.Context,
    plan_file: Annotated[Path | None, typer.Argument(help="Apply exactly this saved plan.")] = None,
    auto_approve: Annotated[bool, typer.Option("--auto-approve", help="Do not ask for confirmation.")] = False,
    prune: Annotated[bool, typer.Option(help="Drop managed views no longer declared.")] = False,
    adopt: Annotated[bool, typer.Option(help="Adopt declared unmanaged views.")] = False,
    allow_mass_drop: Annotated[bool, typer.Option(help="Allow drops beyond max_drop_fraction.")] = False,
    catalog: Annotated[list[str] | None, typer.Option(help="Only this catalog (repeatable).")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view.")] = None,
    actor: Annotated[str | None, typer.Option(help="Who applies (default $GITHUB_ACTOR, git user).")] = None,
    allow_dirty: Annotated[bool, typer.Option(help="Apply uncommitted declarations.")] = False,
    lock_timeout: Annotated[float, typer.Option(help="Seconds to wait for the apply lock.")] = 0,
    spark: Annotated[bool, typer.Option("--spark", help="Verify with Spark (also spark.verify in config).")] = False,
    allow_breaking: Annotated[bool, typer.Option(help="Allow changes that break dependent views.")] = False,
) -> None:
    """Carry out the plan: write views, versions and audit records."""
    g = _g(ctx)
    ws = _open(ctx)
    from reconciler.services import apply as apply_service

    def show_plan(plan: Plan) -> None:
        from reconciler.render import plan as render  # once the service has the catalogs' prefetch going

        out(ctx, render.render(plan, OutputFormat.TEXT, g.color))

    def confirm(_: Plan) -> bool:
        if auto_approve:
            return True
        if not sys.stdin.isatty():
            raise UserError("refusing to apply without confirmation: no terminal to ask on; "
                            "pass --auto-approve (e.g. in CI)")
        answer: str = typer.prompt("Apply these actions? Only 'yes' will be accepted", default="", show_default=False)
        return answer.strip() == "yes"

    def progress(action: Action, outcome: str, error: str | None) -> None:
        from reconciler.render import plan as render

        line = f"{render.SYMBOL[action.action]} {action.action} {action.view}: {outcome}"
        out(ctx, line + (f" ({error})" if error else "") + "\n")

    def done(outcome: ApplyOutcome) -> None:
        res = outcome.run
        if res is None:
            out(ctx, "Nothing to apply.\n")
            return
        if res.ok:  # the owners were written inside the run, after its views
            for change in outcome.plan.schema_owners:
                out(ctx, f"~ schema {change.catalog}.{change.schema} owner: {change.after!r}\n")
        refused = f", {len(res.refused)} refused by hooks" if res.refused else ""
        out(ctx, f"Apply {'complete' if res.ok else 'FAILED'}: {len(res.applied)} applied, "
            f"{len(res.failed)} failed{refused}, {len(res.skipped)} skipped (run {res.run_id}).\n")

    ui = apply_service.ApplyUI(show_plan=show_plan, confirm=confirm, progress=progress,
                               note=lambda note: out(ctx, note + "\n"), warn=_session(ctx).err, done=done)
    request = apply_service.ApplyRequest(plan_file, _scope(catalog, select, prune, adopt, allow_mass_drop), actor,
                                         allow_dirty, lock_timeout, spark, allow_breaking)
    outcome = apply_service.apply(ws, request, ui)
    if outcome.status is apply_service.Status.CANCELLED:
        out(ctx, "Apply cancelled.\n")
    if not outcome.ok:
        raise typer.Exit(1)


@app.command()
def drift(
    ctx: typer.Context,
    fmt: Format = OutputFormat.TEXT,
    catalog: Annotated[list[str] | None, typer.Option(help="Only this catalog (repeatable).")] = None,
    select: Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the report here.")] = None,
) -> None:
    """Report where live catalogs differ from declarations; exit 2 on drift."""
    ws = _open(ctx)
    from reconciler.services.drift import drift as drift_service

    report = drift_service(ws, tuple(catalog or ()), tuple(select or ()))
    from reconciler.plan import drift as drift_mod  # once the service has the catalogs' prefetch going

    text = drift_mod.render(report, fmt)
    if out_file:
        out_file.write_text(redact(text, ws.config.secrets), encoding="utf-8")
    out(ctx, text)
    if report.errors and not report.items:
        raise typer.Exit(1)
    if report.drifted:
        raise typer.Exit(2)


def _parse_view(text: str) -> ViewId:
    from reconciler.core.model import ViewId

    try:
        return ViewId.parse(text)
    except ValueError as e:
        raise UserError(str(e)) from None


@app.command()
def history(ctx: typer.Context, view: Annotated[str, typer.Argument(help="catalog.schema.view")],
            fmt: Format = OutputFormat.TEXT) -> None:
    """Versions of a view: ours (with commit, actor, time) and the catalog's native ones."""
    from reconciler.services.history import history as history_service
    from reconciler.state import history as history_mod

    h = history_service(_open(ctx), _parse_view(view))
    if fmt is OutputFormat.JSON:
        out(ctx, json.dumps(history_mod.history_json(h.view, h.versions, h.native), indent=2) + "\n")
    else:
        out(ctx, history_mod.history_text(h.view, h.versions, h.native))


@app.command()
def audit(
    ctx: typer.Context,
    view: Annotated[str | None, typer.Option(help="catalog.schema.view")] = None,
    since: Annotated[str | None, typer.Option(help="ISO time or duration (7d, 12h).")] = None,
    run: Annotated[str | None, typer.Option(help="Run id (prefix).")] = None,
    fmt: Format = OutputFormat.TEXT,
) -> None:
    """The audit trail: one row per attempted action."""
    from reconciler.state import history as history_mod

    ws = _open(ctx)
    state = ws.state(create=False)
    rows = state.audit_rows(_parse_view(view) if view else None, history_mod.parse_since(since), run)
    if fmt is OutputFormat.JSON:
        out(ctx, json.dumps(history_mod.audit_json(rows), indent=2, default=str) + "\n")
    else:
        out(ctx, history_mod.audit_text(rows))


events_app = typer.Typer(help="Events announced by applies, and their delivery.", invoke_without_command=True)
app.add_typer(events_app, name="events")


@events_app.callback()
def events(
    ctx: typer.Context,
    pending: Annotated[bool, typer.Option("--pending", help="Only events some sink has not received.")] = False,
    since: Annotated[str | None, typer.Option(help="ISO time or duration (7d, 12h).")] = None,
    run: Annotated[str | None, typer.Option(help="Run id (prefix).")] = None,
    fmt: Annotated[EventsFormat, typer.Option("--format", "-f", help="Output format.")] = EventsFormat.TEXT,
) -> None:
    """List events from the outbox with each sink's delivery state."""
    from reconciler.events import commands as event_cmds
    from reconciler.events import outbox
    from reconciler.state import history as history_mod

    if ctx.invoked_subcommand:
        return
    engine = _open(ctx).state().engine
    outbox.ensure(engine)
    rows = outbox.listing(engine, pending, history_mod.parse_since(since), run)
    out(ctx, event_cmds.events_json(rows) if fmt is EventsFormat.JSON else event_cmds.events_text(rows))


@events_app.command("deliver")
def events_deliver(ctx: typer.Context) -> None:
    """Deliver every pending event now (with retries and backoff); exit 1 if some stay pending."""
    from reconciler.events.commands import open_emitter

    ws = _open(ctx)
    report = open_emitter(ws, ws.state().engine, log=_session(ctx).err).drain()
    out(ctx, f"Event deliveries: {report.delivered} delivered, {report.rejected} rejected, {report.pending} pending.\n")
    if report.pending:
        raise typer.Exit(1)


@app.command()
def lineage(
    ctx: typer.Context,
    view: Annotated[str, typer.Argument(help="catalog.schema.view")],
    fmt: Annotated[LineageFormat, typer.Option("--format", "-f", help="Output format.")] = LineageFormat.TEXT,
    ref: Annotated[str | None, typer.Option(help="Read declarations from this git ref.")] = None,
) -> None:
    """Upstream tables and columns of a declared view, read from its SQL (no catalog is contacted)."""
    from reconciler.events import commands as event_cmds
    from reconciler.services.plan import declarations

    decl = declarations(_open(ctx), ref)
    vid = _parse_view(view)
    if vid not in decl.views:
        raise UserError(f"{vid}: not declared")
    lin = event_cmds.declared_lineage(decl.views, vid)
    if fmt is LineageFormat.JSON:
        out(ctx, json.dumps(lin.to_json(), indent=2) + "\n")
    else:
        out(ctx, event_cmds.lineage_dot(lin) if fmt is LineageFormat.DOT else event_cmds.lineage_text(lin))


@app.command("import")
def import_(
    ctx: typer.Context,
    catalog: Annotated[str, typer.Option(help="Catalog to read.")],
    schema: Annotated[list[str] | None, typer.Option(help="Only this schema (repeatable).")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite existing view files.")] = False,
    sources: Annotated[bool, typer.Option("--sources", help="Write sources/ files (table columns for the "
                                                           "Spark verifier) instead of views.")] = False,
) -> None:
    """Write YAML declarations for the views that exist in a catalog."""
    from reconciler.services.importer import import_catalog

    if sources:
        from reconciler.services import spark as spark_service

        spark_service.import_sources(_open(ctx), catalog, schema, force, _session(ctx).out, _session(ctx).err)
        return
    result = import_catalog(_open(ctx), catalog, schema, force)
    for path in result.skipped:
        err(ctx, f"Skipped {path}: exists (use --force to overwrite)")
    for path, count in result.written:
        out(ctx, f"Wrote {path} ({count} view(s))\n")
    out(ctx, f"Imported {result.views} view(s) from catalog {catalog!r}.\n")


@app.command()
def codeowners(ctx: typer.Context) -> None:
    """Write .github/CODEOWNERS from the access policy (view files to their schemas' owners)."""
    from reconciler.services.codeowners import write_codeowners

    path, files = write_codeowners(_open(ctx))
    out(ctx, f"Wrote {path} ({files} view file(s)).\n")


@app.command()
def impact(
    ctx: typer.Context,
    view: Annotated[str, typer.Argument(help="catalog.schema.view")],
    fmt: Format = OutputFormat.TEXT,
) -> None:
    """The views that read VIEW (declared and live), and what its declared change or a drop does to them."""
    from reconciler.services import spark as spark_service

    out(ctx, spark_service.impact(_open(ctx), _parse_view(view), fmt))


def _review_progress(ctx: typer.Context) -> Any:
    """Data review progress on stderr: a line rewritten in place on a terminal (the view, then
    Spark's stages), plain lines otherwise (one per view, Spark's stages at most every 10 s)."""
    import time

    from reconciler.services.review import Progress

    tty = sys.stderr.isatty()
    state: dict[str, Any] = {"view": "", "last": 0.0}

    def view(i: int, n: int, vid: ViewId, what: str) -> None:
        state["view"] = f"{what} {i}/{n} {vid}"
        if tty:
            sys.stderr.write("\r\x1b[K" + str(state["view"]))
        else:
            err(ctx, f"{state['view']}")
        sys.stderr.flush()

    def stages(info: dict[str, Any]) -> None:
        text = ", ".join(f"stage {s['stage']}: {s['done']}/{s['total']} tasks" for s in info.get("stages", []))
        now = time.monotonic()
        if tty:
            sys.stderr.write(f"\r\x1b[K{state['view']}: {text}")
            sys.stderr.flush()
        elif now - float(state["last"]) >= 10:
            state["last"] = now
            err(ctx, f"{state['view']}: {text}")

    def done() -> None:
        if tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    return Progress(view=view, stages=stages), done


@app.command("diff")
def diff_(
    ctx: typer.Context,
    select: Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view (repeatable).")] = None,
    base: Annotated[str | None, typer.Option(help="Only views whose declarations changed since this git ref.")] = None,
    where: Annotated[str | None, typer.Option(help="Spark SQL condition restricting both sides' rows.")] = None,
    sample: Annotated[int, typer.Option(help="Example rows per class (added, removed, changed...).")] = 5,
    dependents: Annotated[bool, typer.Option("--dependents", help="Also diff declared views that read a "
                                                                  "changed view.")] = False,
    fmt: Format = OutputFormat.TEXT,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the report here.")] = None,
) -> None:
    """What the pending change does to each view's rows: live vs declared SQL on live data (Spark, read-only)."""
    from reconciler.services import review as review_service

    ws = _open(ctx)
    progress, done = _review_progress(ctx)
    try:
        report = review_service.diff(ws, review_service.DiffRequest(tuple(select or ()), base, where, sample,
                                                                    dependents), progress)
    finally:
        done()
    from reconciler.review import render as review_render

    review_service.announce(ws, report)
    text = {OutputFormat.JSON: review_render.as_json, OutputFormat.MARKDOWN: review_render.diff_markdown}.get(
        fmt, review_render.diff_text)(report)
    if out_file:
        out_file.write_text(redact(text, ws.config.secrets), encoding="utf-8")
    out(ctx, text)
    if report.errors:
        raise typer.Exit(1)


@app.command("check")
def check_(
    ctx: typer.Context,
    select: Annotated[list[str] | None, typer.Option(help="Glob over catalog.schema.view (repeatable).")] = None,
    definition: Annotated[str, typer.Option(help="declared: the pending SQL (before apply); live: what is "
                                                 "deployed.")] = "declared",
    fmt: Annotated[TestFormat, typer.Option("--format", "-f", help="Output format.")] = TestFormat.TEXT,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the report here.")] = None,
) -> None:
    """Evaluate the views' `checks:` on live data (Spark, read-only); exit 1 when an error check fails."""
    from reconciler.services import review as review_service

    ws = _open(ctx)
    progress, done = _review_progress(ctx)
    try:
        report = review_service.check(ws, review_service.CheckRequest(tuple(select or ()), definition), progress)
    finally:
        done()
    from reconciler.review import render as review_render

    review_service.announce(ws, report)
    text = {TestFormat.JSON: review_render.as_json, TestFormat.MARKDOWN: review_render.checks_markdown,
            TestFormat.JUNIT: review_render.checks_junit}.get(fmt, review_render.checks_text)(report)
    if out_file:
        out_file.write_text(redact(text, ws.config.secrets), encoding="utf-8")
    out(ctx, text)
    if report.failed:
        raise typer.Exit(1)


@app.command("force-unlock")
def force_unlock(ctx: typer.Context, run_id: Annotated[str, typer.Argument(help="Run id holding the lock.")]) -> None:
    """Release an apply lock left behind by a dead run."""
    ws = _open(ctx)
    n = ws.state(create=False).force_unlock(run_id)
    if not n:
        raise UserError(f"no lock is held by run {run_id}")
    out(ctx, f"Released the lock held by run {run_id}.\n")


preview_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                          help="Preview environments: a branch's changed views (and their readers) as copies "
                               "in preview schemas, queryable before merge.")
app.add_typer(preview_app, name="preview")
Env = Annotated[str, typer.Option("--env", help="Environment name: 1-32 lowercase letters, digits, '_' (e.g. pr42).")]
Actor = Annotated[str | None, typer.Option(help="Who acts (default $GITHUB_ACTOR, then the git user).")]
LockWait = Annotated[float, typer.Option(help="Seconds to wait for the locks.")]


def _preview_progress(ctx: typer.Context) -> Callable[[Action, str, str | None], None]:
    def progress(action: Action, outcome: str, error: str | None) -> None:
        from reconciler.render import plan as render

        line = f"{render.SYMBOL[action.action]} {action.action} {action.view}: {outcome}"
        err(ctx, line + (f" ({error})" if error else ""))
    return progress


@preview_app.command("up")
def preview_up(
    ctx: typer.Context,
    env: Env,
    base: Annotated[str | None, typer.Option(help="Compare with this git ref (default: the merge base "
                                             "with the branch's upstream).")] = None,
    ttl: Annotated[str | None, typer.Option(help="Time to live, e.g. 7d (default preview.ttl); restarts "
                                            "the clock.")] = None,
    fmt: Format = OutputFormat.TEXT,
    actor: Actor = None,
    allow_dirty: Annotated[bool, typer.Option(help="Preview uncommitted declarations.")] = False,
    lock_timeout: LockWait = 0,
    spark: Annotated[bool, typer.Option("--spark", help="Verify the preview set with Spark and run its view "
                                        "tests first (also spark.verify in config).")] = False,
    skip_tests: Annotated[bool, typer.Option("--skip-tests", help="With --spark: do not run the view tests.")] = False,
) -> None:
    """Create or update the env's copies of the views changed since the base, and of their readers."""
    from reconciler.preview import report
    from reconciler.services import preview as preview_service

    ws = _open(ctx)
    res = preview_service.up(ws, preview_service.UpRequest(env, base, ttl, actor, allow_dirty, lock_timeout,
                                                                 spark, skip_tests),
                             _preview_progress(ctx), lambda note: err(ctx, note))
    render = {OutputFormat.TEXT: report.up_text, OutputFormat.MARKDOWN: report.up_markdown,
              OutputFormat.JSON: report.up_json}[fmt]
    out(ctx, render(res))
    if not res.ok:
        raise typer.Exit(1)


@preview_app.command("down")
def preview_down(ctx: typer.Context, env: Env, fmt: Format = OutputFormat.TEXT, actor: Actor = None,
                 lock_timeout: LockWait = 0) -> None:
    """Drop the env's copies and the namespaces it created."""
    from reconciler.preview import report
    from reconciler.services import preview as preview_service

    res = preview_service.down(_open(ctx), preview_service.DownRequest(env, actor, lock_timeout),
                               _preview_progress(ctx), lambda note: err(ctx, note))
    out(ctx, json.dumps(report.down_json(res), indent=2, sort_keys=True) + "\n" if fmt is OutputFormat.JSON
        else report.down_text(res))
    if not res.ok:
        raise typer.Exit(1)


@preview_app.command("list")
def preview_list(ctx: typer.Context, fmt: Format = OutputFormat.TEXT) -> None:
    """The preview environments: views, age, expiry."""
    from reconciler.preview import report
    from reconciler.services import preview as preview_service
    from reconciler.state.store import now

    envs = preview_service.list_envs(_open(ctx))
    out(ctx, report.list_json(envs, now()) if fmt is OutputFormat.JSON else report.list_text(envs, now()))


@preview_app.command("gc")
def preview_gc(ctx: typer.Context, actor: Actor = None) -> None:
    """Remove every expired preview environment (run it on a schedule)."""
    from reconciler.preview import report
    from reconciler.services import preview as preview_service

    results = preview_service.gc(_open(ctx), actor, _preview_progress(ctx))
    for res in results:
        out(ctx, report.down_text(res))
    out(ctx, f"Removed {len(results)} expired preview environment(s).\n")
    if not all(r.ok for r in results):
        raise typer.Exit(1)


jars_app = typer.Typer(help="The pinned JVM jars data review puts on Spark's classpath (JDBC drivers, "
                       "Iceberg's runtime): list them, fetch them from Maven Central.", no_args_is_help=True)
app.add_typer(jars_app, name="jars")


@jars_app.command("list")
def jars_list(ctx: typer.Context) -> None:
    """Each pinned jar: name, Maven coordinate, size, and its path when it is cached."""
    from reconciler.jars import maven

    for art in sorted(maven.pinned().values(), key=lambda a: (a.used_by, a.name)):
        path = maven.cached(art)
        where = str(path) if path else "not fetched"
        out(ctx, f"{art.name:<28} {art.coordinate:<60} {art.size / 1e6:6.1f} MB  [{art.used_by}]  {where}\n")


@jars_app.command("fetch")
def jars_fetch(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(help="Pinned names (see `viewsync jars list`).")] = None,
    review: Annotated[bool, typer.Option("--review", help="Every jar data review can use.")] = False,
) -> None:
    """Download pinned jars from Maven Central ($VIEWSYNC_MAVEN_REPOSITORY: a mirror), check each one's
    SHA-256, and keep them under ~/.cache/viewsync/jars; print each one's path."""
    from reconciler.jars import maven

    wanted = list(names or [])
    if review:
        wanted += [a.name for a in maven.pinned().values() if a.used_by == "review" and a.name not in wanted]
    if not wanted:
        raise UserError("name the jars to fetch (`viewsync jars list`), or pass --review")
    try:
        arts = [maven.artifact(n) for n in wanted]
    except KeyError as exc:
        raise UserError(str(exc.args[0])) from None
    failed = 0
    for art in arts:
        try:
            out(ctx, f"{art.name}: {maven.fetch(art)}\n")
        except maven.FetchError as exc:
            failed += 1
            err(ctx, f"Error: {exc}")
    if failed:
        raise typer.Exit(1)


def _is_usage_error(e: Exception) -> bool:
    """click's own errors (bad option, bad value...): they explain themselves. Matched by
    name: typer may bring click or a vendored copy of it."""
    return any(c.__name__ == "ClickException" for c in type(e).__mro__) and hasattr(e, "show")


MAX_ERROR_LINE = 2000  # a server's or an input's huge text never fills a terminal or a CI log


def _clipped(text: str) -> str:
    return "\n".join(line if len(line) <= MAX_ERROR_LINE else line[:MAX_ERROR_LINE - 1] + "…"
                     for line in text.split("\n"))


def main() -> None:
    session = Session()
    try:
        code = app(standalone_mode=False, obj=session)
        sys.exit(code if isinstance(code, int) else 0)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except ValidationFailed as e:
        session.err(_clipped(f"Error: {len(e.problems)} problem(s) found:\n"
                             + "\n".join(f"  {p}" for p in e.problems)))
        sys.exit(1)
    except ViewsyncError as e:  # the one place expected errors become output
        session.err(_clipped(f"Error: {e}"))
        sys.exit(1)
    except typer.Abort:
        session.err("Aborted.")
        sys.exit(1)
    except Exception as e:  # click usage errors and the unexpected
        if _is_usage_error(e):
            e.show()  # type: ignore[attr-defined]
            sys.exit(1)
        if session.globals is not None and session.globals.verbose:
            session.err(traceback.format_exc())
        session.err(_clipped(f"Error: unexpected {type(e).__name__}: {e} (re-run with -v for details)"))
        sys.exit(1)
    finally:
        session.close()


if __name__ == "__main__":
    main()
