"""`plan`, `show` and `apply`: a plan made, shown again, and carried out."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reconciler.cli.app import Catalogs, Format, Ref, Selects, app, exit_if, session
from reconciler.core.errors import UserError
from reconciler.core.output import OutputFormat

if TYPE_CHECKING:
    from reconciler.plan.planner import Plan

Prune = Annotated[bool, typer.Option(help="Drop managed views no longer declared.")]
Adopt = Annotated[bool, typer.Option(help="Adopt declared unmanaged views.")]
MassDrop = Annotated[bool, typer.Option(help="Allow drops beyond max_drop_fraction.")]
Spark = Annotated[bool, typer.Option("--spark", help="Verify with Spark (also spark.verify in config).")]
Breaking = Annotated[bool, typer.Option(help="Allow changes that break dependent views.")]


@app.command("plan")
def plan(
    ctx: typer.Context,
    fmt: Format = OutputFormat.TEXT,
    out_file: Annotated[Path | None, typer.Option("--out", help="Save the plan (JSON) for `apply PLAN`.")] = None,
    detailed_exitcode: Annotated[bool, typer.Option("--detailed-exitcode",
                                                    help="Exit 2 when there are changes.")] = False,
    catalog: Catalogs = None,
    select: Selects = None,
    ref: Ref = None,
    base: Annotated[str | None, typer.Option(help="Also list declaration changes since this git ref.")] = None,
    prune: Prune = False,
    adopt: Adopt = False,
    allow_mass_drop: MassDrop = False,
    spark: Spark = False,
    allow_breaking: Breaking = False,
    actor: Annotated[str | None, typer.Option(help="Who the access policy is checked for (default "
                                              "$GITHUB_ACTOR, then the commit author).")] = None,
    skip_tests: Annotated[bool, typer.Option("--skip-tests", help="With --spark: do not run the tests of "
                                             "the changed views.")] = False,
) -> None:
    """Diff declarations against the live catalogs."""
    from reconciler.services import plan as plan_service
    s = session(ctx)
    scope = plan_service.Scope(tuple(catalog or ()), tuple(select or ()), prune, adopt, allow_mass_drop)
    result = plan_service.plan(s.open(), plan_service.PlanRequest(scope, ref, base, spark, allow_breaking, actor,
                                                                  skip_tests))
    if out_file:
        s.write(out_file, s.render("plan", "json", result))
    s.out(s.render("plan", fmt, result))
    exit_if(result.errors)
    exit_if(detailed_exitcode and result.has_changes, 2)


@app.command("show")
def show(ctx: typer.Context, plan_file: Annotated[Path, typer.Argument(help="A saved plan.")],
         fmt: Format = OutputFormat.TEXT) -> None:
    """Render a saved plan."""
    from reconciler.services.plan import load_saved
    s = session(ctx)
    s.out(s.render("plan", fmt, load_saved(plan_file)))


@app.command("apply")
def apply(
    ctx: typer.Context,
    plan_file: Annotated[Path | None, typer.Argument(help="Apply exactly this saved plan.")] = None,
    auto_approve: Annotated[bool, typer.Option("--auto-approve", help="Do not ask for confirmation.")] = False,
    prune: Prune = False,
    adopt: Adopt = False,
    allow_mass_drop: MassDrop = False,
    catalog: Catalogs = None,
    select: Selects = None,
    actor: Annotated[str | None, typer.Option(help="Who applies (default $GITHUB_ACTOR, git user).")] = None,
    allow_dirty: Annotated[bool, typer.Option(help="Apply uncommitted declarations.")] = False,
    lock_timeout: Annotated[float, typer.Option(help="Seconds to wait for the apply lock.")] = 0,
    spark: Spark = False,
    allow_breaking: Breaking = False,
) -> None:
    """Carry out the plan: write views, versions and audit records."""
    from reconciler.cli import progress
    from reconciler.services import apply as apply_service
    from reconciler.services.plan import Scope
    s = session(ctx)

    def confirm(_: Plan) -> bool:
        if auto_approve:
            return True
        if not sys.stdin.isatty():
            raise UserError("refusing to apply without confirmation: no terminal to ask on; "
                            "pass --auto-approve (e.g. in CI)")
        answer: str = typer.prompt("Apply these actions? Only 'yes' will be accepted", default="", show_default=False)
        return answer.strip() == "yes"

    ui = apply_service.ApplyUI(show_plan=lambda plan: s.out(s.render("plan", "text", plan)), confirm=confirm,
                               progress=progress.actions(lambda line: s.out(line + "\n")),
                               note=lambda note: s.out(note + "\n"), warn=s.err,
                               done=lambda outcome: s.out(s.render("apply", "text", outcome)))
    scope = Scope(tuple(catalog or ()), tuple(select or ()), prune, adopt, allow_mass_drop)
    request = apply_service.ApplyRequest(plan_file, scope, actor, allow_dirty, lock_timeout, spark, allow_breaking)
    outcome = apply_service.apply(s.open(), request, ui)
    if outcome.status is apply_service.Status.CANCELLED:
        s.out("Apply cancelled.\n")
    exit_if(not outcome.ok)
