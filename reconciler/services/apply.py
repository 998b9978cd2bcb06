"""`viewsync apply`: the dirty check, repair of dead runs, a saved plan read back and
verified (or a fresh plan), the access re-check, then the run under the apply lock and the
delivery of the outbox. Prompts and printing are the caller's, through `ApplyUI`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError
from reconciler.services.plan import Scope

if TYPE_CHECKING:
    from reconciler.apply.run import ApplyResult
    from reconciler.core.model import ViewId, ViewSpec
    from reconciler.events.dispatch import Emitter
    from reconciler.plan.planner import Action, Plan, PlanOptions
    from reconciler.source.declarations import Declarations
    from reconciler.workspace import Workspace


@dataclass(frozen=True)
class ApplyRequest:
    plan_file: Path | None = None  # apply exactly this saved plan
    scope: Scope = Scope()  # without a saved plan: what to plan
    actor: str | None = None  # who applies (default $GITHUB_ACTOR, then the git user)
    allow_dirty: bool = False  # apply uncommitted declarations
    lock_timeout: float = 0  # seconds to wait for the apply lock
    spark: bool = False
    allow_breaking: bool = False
    kind: str = "apply"  # the run's command in the records (`revert` for `viewsync revert --apply`)
    # Specs that stand in for these views' declarations in this run (a revert's recorded version).
    replace: Mapping[ViewId, ViewSpec] = field(default_factory=dict)


class Status(Enum):
    ERRORS = "errors"  # the plan has errors: nothing was applied
    NOTHING = "nothing"  # no changes to make
    CANCELLED = "cancelled"  # the user did not confirm
    APPLIED = "applied"  # the run took place (see `ApplyOutcome.run` for how it went)


@dataclass
class ApplyOutcome:
    plan: Plan
    status: Status
    run: ApplyResult | None = None  # with APPLIED

    @property
    def ok(self) -> bool:
        """Nothing went wrong: no errors, not cancelled, every action applied."""
        if self.status is Status.APPLIED:
            return self.run is not None and self.run.ok
        return self.status is Status.NOTHING


@dataclass(frozen=True)
class ApplyUI:
    """How the service talks to its user."""

    show_plan: Callable[[Plan], None]  # the plan about to be applied (also one with errors)
    confirm: Callable[[Plan], bool]  # may the plan's changes be made? (may raise UserError)
    progress: Callable[[Action, str, str | None], None]  # an action's outcome, as it happens
    note: Callable[[str], None]  # a line for the user: repair, lock take-over
    warn: Callable[[str], None]  # a warning line (event sinks, pending deliveries)
    done: Callable[[ApplyOutcome], None]  # the plan is carried out (or empty); before the outbox drains


def verify_saved(ws: Workspace, plan: Plan, path: Path, decl: Declarations) -> PlanOptions:
    """Check that a saved plan still matches the repository it is applied in.

    Args:
        ws: the repository, opened.
        plan: the saved plan, as `plan.saved.load` read it.
        path: where it was read from (named in errors).
        decl: the working tree's declarations.

    Returns:
        The options the saved plan was made with.

    Raises:
        UserError: the plan is for another project, or the declarations it covers changed
            since. (Live catalog changes are checked by the run, under its lock.)
    """
    from reconciler.plan.scope import plan_options

    if plan.project != ws.config.project:
        raise UserError(f"{path}: plan is for project {plan.project!r}, not {ws.config.project!r}")
    opts = plan_options(ws.config, plan.scope)
    if ws.declarations_digest(decl, opts) != plan.declarations_digest:
        raise UserError(f"stale plan: the declarations changed since {path} was made; nothing was "
                        "applied. Run `viewsync plan` again")
    return opts


def check_clean(ws: Workspace, allow_dirty: bool) -> None:
    """Refuse uncommitted declarations unless `allow_dirty`.

    Raises:
        UserError: view files or the config differ from the commit (the first ten named).
    """
    from reconciler.source import gitsrc

    dirty = gitsrc.dirty_paths(ws.root)
    if dirty and not allow_dirty:
        raise UserError("uncommitted changes to declarations: " + ", ".join(dirty[:10])
                        + "; commit them or pass --allow-dirty")


def apply(ws: Workspace, request: ApplyRequest, ui: ApplyUI) -> ApplyOutcome:
    """Apply the declarations (or the saved plan `request.plan_file`) to the live catalogs.

    Steps: the dirty check, the declarations (bad input stops here, before anything is
    written), repair of dead runs' records, the plan (saved and verified, or fresh and
    located), `ui.show_plan`, the access re-check, `ui.confirm`, the run with its schema
    owners, `ui.done`, then the delivery of pending events.

    Args:
        ws: the repository, opened.
        request: the plan to apply and how.
        ui: the prompts and printers.

    Returns:
        The outcome: ERRORS (the plan has errors), NOTHING (no changes), CANCELLED (not
        confirmed) or APPLIED with the run's result (which may hold failures).

    Raises:
        UserError: dirty declarations, a stale or foreign saved plan, an access refusal,
            schema owners not all written (after the run's views are applied).
        ValidationFailed: the declarations are bad.
        ViewsyncError: a catalog, the state store or the apply lock fails.
    """
    if request.plan_file is None:
        ws.prefetch(request.scope.catalogs)  # the catalogs answer while the rest loads
    from reconciler.access import hooks as access_hooks
    from reconciler.apply.run import apply_plan, repair_before_plan
    from reconciler.events.commands import open_emitter
    from reconciler.plan import saved as saved_plan
    from reconciler.plan import validity
    from reconciler.services import plan as plan_service
    from reconciler.source import gitsrc

    check_clean(ws, request.allow_dirty)
    info = gitsrc.info(ws.root)
    who = gitsrc.actor(request.actor, ws.root)
    decl = ws.declarations()  # bad input stops here, before anything is written
    if request.replace:
        decl = dataclasses.replace(decl, views={**decl.views, **request.replace})
    # Records left by a dead apply are repaired before planning (nothing is created when there are none).
    repair_before_plan(ws, ws.state(create=False), who, request.lock_timeout, ui.note,
                       lambda store: open_emitter(ws.config, ws.root, store.engine, decl.views, ui.warn))
    if request.plan_file is not None:
        result = saved_plan.load(request.plan_file)
        verify_saved(ws, result, request.plan_file, decl)
    else:
        opts = plan_service.options(ws, request.scope)
        result = plan_service.build(ws, opts, decl, info, None, request.spark, request.allow_breaking)
        if request.spark or ws.config.spark.verify:  # as `plan --spark`: a view whose tests fail is not written
            plan_service.run_tests(ws, result, decl, None)
        validity.locate(result, decl)
    ui.show_plan(result)
    if result.errors:
        return ApplyOutcome(result, Status.ERRORS)
    access_hooks.check_apply(result, decl.views, ws.root, ws.config.path, request.actor, who,
                             ws.config.state_url, info, request.kind)
    if not result.has_changes:
        outcome = ApplyOutcome(result, Status.NOTHING)
        ui.done(outcome)
        _deliver_pending(open_emitter(ws.config, ws.root, ws.state().engine, log=ui.warn), ui.warn)
        return outcome
    if not ui.confirm(result):
        return ApplyOutcome(result, Status.CANCELLED)
    state = ws.state()
    emitter = open_emitter(ws.config, ws.root, state.engine, decl.views, ui.warn)
    run = apply_plan(ws, result, state, who, info, request.lock_timeout, ui.progress, events=emitter,
                     on_note=ui.note, kind=request.kind)
    outcome = ApplyOutcome(result, Status.APPLIED, run)
    ui.done(outcome)
    _deliver_pending(emitter, ui.warn)
    if run.owner_errors:
        raise UserError("schema owners not all written: " + "; ".join(run.owner_errors))
    return outcome


def _deliver_pending(emitter: Emitter, warn: Callable[[str], None]) -> None:
    """Every apply ends by retrying what is in the outbox; a sink that is down never fails it."""
    report = emitter.drain()
    if report.pending:
        warn(f"Warning: {report.pending} event deliveries pending; the next apply or `viewsync events deliver` "
             "retries them")
