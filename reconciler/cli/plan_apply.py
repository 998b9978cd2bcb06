"""`plan`, `show`, `apply` and `revert`: a plan made, shown again, carried out, and undone."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from reconciler.cli.app import Catalogs, Format, Ref, Selects, Session, app, exit_if, session, view_id
from reconciler.core.errors import UserError
from reconciler.core.output import OutputFormat

if TYPE_CHECKING:
    from reconciler.plan.planner import Plan
    from reconciler.services.apply import ApplyUI

Prune = Annotated[bool, typer.Option(help="Drop managed views no longer declared.")]
Adopt = Annotated[bool, typer.Option(help="Adopt declared unmanaged views.")]
MassDrop = Annotated[bool, typer.Option(help="Allow drops beyond max_drop_fraction.")]
Spark = Annotated[bool, typer.Option("--spark", help="Verify with Spark (also spark.verify in config).")]
Breaking = Annotated[bool, typer.Option(help="Allow changes that break dependent views.")]
AutoApprove = Annotated[bool, typer.Option("--auto-approve", help="Do not ask for confirmation.")]
Actor = Annotated[str | None, typer.Option(help="Who applies (default $GITHUB_ACTOR, git user).")]
LockTimeout = Annotated[float, typer.Option(help="Seconds to wait for the apply lock.")]


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
    auto_approve: AutoApprove = False,
    prune: Prune = False,
    adopt: Adopt = False,
    allow_mass_drop: MassDrop = False,
    catalog: Catalogs = None,
    select: Selects = None,
    actor: Actor = None,
    allow_dirty: Annotated[bool, typer.Option(help="Apply uncommitted declarations.")] = False,
    lock_timeout: LockTimeout = 0,
    spark: Spark = False,
    allow_breaking: Breaking = False,
) -> None:
    """Carry out the plan: write views, versions and audit records."""
    from reconciler.services import apply as apply_service
    from reconciler.services.plan import Scope
    s = session(ctx)
    scope = Scope(tuple(catalog or ()), tuple(select or ()), prune, adopt, allow_mass_drop)
    request = apply_service.ApplyRequest(plan_file, scope, actor, allow_dirty, lock_timeout, spark, allow_breaking)
    outcome = apply_service.apply(s.open(), request, _apply_ui(s, auto_approve))
    if outcome.status is apply_service.Status.CANCELLED:
        s.out("Apply cancelled.\n")
    exit_if(not outcome.ok)


@app.command("revert")
def revert(
    ctx: typer.Context,
    view: Annotated[str, typer.Argument(help="catalog.schema.view")],
    to: Annotated[str, typer.Option("--to", metavar="VERSION", help="The version: one viewsync recorded (3 or "
                                    "v3) or the catalog's own (native:3, Iceberg); `viewsync history` lists both.")],
    apply_now: Annotated[bool, typer.Option("--apply", help="Emergencies: apply that version now (a run of "
                                            "kind revert) instead of writing it into the YAML.")] = False,
    auto_approve: AutoApprove = False,
    actor: Actor = None,
    lock_timeout: LockTimeout = 0,
    allow_breaking: Breaking = False,
) -> None:
    """Write a recorded version of VIEW back into its YAML file (a change to commit), or apply it at once."""
    from reconciler.services import revert as revert_service
    s = session(ctx)
    request = revert_service.RevertRequest(view_id(view), to, apply_now, actor, lock_timeout, allow_breaking)
    outcome = revert_service.revert(s.open(), request, _apply_ui(s, auto_approve))
    s.out(s.render("revert", "text", outcome))
    if refused := s.render("revert refused", "text", outcome):
        s.err(refused)
    exit_if(not outcome.ok)


def _apply_ui(s: Session, auto_approve: bool) -> ApplyUI:
    """The prompts and printers of `apply` (and `revert --apply`)."""
    from reconciler.cli import progress
    from reconciler.services import apply as apply_service

    def confirm(_: Plan) -> bool:
        if auto_approve:
            return True
        if not sys.stdin.isatty():
            raise UserError("refusing to apply without confirmation: no terminal to ask on; "
                            "pass --auto-approve (e.g. in CI)")
        answer: str = typer.prompt("Apply these actions? Only 'yes' will be accepted", default="", show_default=False)
        return answer.strip() == "yes"

    return apply_service.ApplyUI(show_plan=lambda plan: s.out(s.render("plan", "text", plan)), confirm=confirm,
                                 progress=progress.actions(lambda line: s.out(line + "\n")),
                                 note=lambda note: s.out(note + "\n"), warn=s.err,
                                 done=lambda outcome: s.out(s.render("apply", "text", outcome)))
