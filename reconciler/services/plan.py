"""`viewsync plan` and `viewsync show`: a plan of the declarations against the live catalogs, with Spark's
verification when asked, the declaration changes since a base, the access check, security
notes and every error located in the YAML."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from reconciler.core.gitinfo import GitInfo
    from reconciler.plan.planner import Plan, PlanOptions, PlanScope
    from reconciler.source.declarations import Declarations
    from reconciler.viewtests.result import TestRun
    from reconciler.workspace import Workspace


@dataclass(frozen=True)
class Scope:
    """The part of the catalogs a plan covers, as the options name it (`--catalog`,
    `--select`, `--prune`, `--adopt`, `--allow-mass-drop`)."""

    catalogs: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    prune: bool = False
    adopt: bool = False
    allow_mass_drop: bool = False

    def plan_scope(self) -> PlanScope:
        from reconciler.plan.planner import PlanScope

        return PlanScope(catalogs=self.catalogs, select=self.select, prune=self.prune, adopt=self.adopt,
                         allow_mass_drop=self.allow_mass_drop)


@dataclass(frozen=True)
class PlanRequest:
    scope: Scope = Scope()
    ref: str | None = None  # read the declarations at this git ref
    base: str | None = None  # also list the declaration changes since this git ref (a PR plan)
    spark: bool = False  # verify with Spark (also when the config's spark.verify says so)
    allow_breaking: bool = False
    actor: str | None = None  # who the access policy is checked for
    skip_tests: bool = False  # with Spark: do not run the view tests of the changed views


def options(ws: Workspace, scope: Scope) -> PlanOptions:
    """The options a plan of `scope` is made with (the config's policy filled in)."""
    from reconciler.plan.scope import plan_options

    return plan_options(ws.config, scope.plan_scope())


def build(ws: Workspace, opts: PlanOptions, decl: Declarations, git: GitInfo | None, ref: str | None,
          spark: bool, allow_breaking: bool) -> Plan:
    """The planner's plan, verified by Spark when `spark` or the config's `spark.verify` asks;
    with the errors and warnings about generated representations (`plan` and `apply` alike).

    Raises:
        ViewsyncError: a catalog cannot be read, or Spark cannot start.
    """
    if spark or ws.config.spark.verify:
        from reconciler.services import spark as spark_service

        result = spark_service.plan(ws, opts, decl, git, ref, allow_breaking)
    else:
        result, _ = ws.plan(opts, decl, git)
    _generated(result, decl, opts)
    return result


def run_tests(ws: Workspace, result: Plan, decl: Declarations, ref: str | None, every: bool = False) -> TestRun:
    """The view tests of every view the plan creates or changes and of the declared views that
    read one (they are computed from it), on every configured engine that has the view's
    representation, into `result.tests`, with the engine matrix per view in `result.engines`.
    A failing test is a `test_failed` error at the test; two engines returning different rows
    for one test is `representations_disagree`, with both row sets. `every`: run every declared
    test in the same call (for `viewsync review`'s JUnit report); the plan still holds only
    those of the change.

    Returns:
        The run: every test that ran.

    Raises:
        ViewsyncError: an engine cannot start or be reached, or fails as a whole.
    """
    from reconciler.plan.planner import PlanError, PlanErrorCode
    from reconciler.services import viewtests
    from reconciler.verify import impact
    from reconciler.viewtests import engines as test_engines
    from reconciler.viewtests import proof
    from reconciler.viewtests.result import TestRun

    changed = [a.view for a in result.actions if a.action != "drop" and a.view in decl.views]
    readers = impact.dependents(changed, decl.views, {})
    targets = set(changed).union(*readers.values()) if readers else set(changed)
    configured = test_engines.chosen(ws.config, None)
    tests = viewtests.selected(decl, views=targets)
    run = viewtests.run(ws, decl, viewtests.selected(decl, views=None if every else targets), ref, configured)
    mine = TestRun([r for r in run.results if r.view in targets], run.seconds, run.spark_start_seconds,
                   run.start_seconds)
    result.tests = mine.to_json()
    shown = [*test_engines.KNOWN, *(e for e in configured if e not in test_engines.KNOWN)]
    order = list(dict.fromkeys(v for v, _ in tests))
    result.engines = proof.matrix(mine, order, decl.views, configured, shown)
    for r in mine.failures():
        result.errors.append(PlanError(PlanErrorCode.TEST_FAILED,
                                       f"test {r.name!r} of {r.view} on {r.engine}: {r.message}",
                                       r.view, ("tests", r.index, "name")))
    for d in proof.disagreements(mine):
        result.errors.append(PlanError(PlanErrorCode.REPRESENTATIONS_DISAGREE, d.message, d.view,
                                       ("tests", d.index, "name")))
    return run


def plan(ws: Workspace, request: PlanRequest) -> Plan:
    """Plan the declarations (at `request.ref`) against the live catalogs: `plan_and_tests`'s plan."""
    return plan_and_tests(ws, request)[0]


def plan_and_tests(ws: Workspace, request: PlanRequest, every_test: bool = False) -> tuple[Plan, TestRun | None]:
    """Plan the declarations (at `request.ref`) against the live catalogs.

    Args:
        ws: the repository, opened.
        request: scope, git refs, verification and the actor the access policy is checked for.
        every_test: with Spark, run every declared view test, not only those of the change.

    Returns:
        The plan, with its YAML changes (when `base` is given), the `access` section and
        `not_permitted` errors, security notes among its warnings, and every error located
        at its file and line. A plan with errors is returned, not raised: it is rendered.
        And the view tests that ran (None when none ran: no Spark, or `skip_tests`).

    Raises:
        ValidationFailed: the declarations are bad (nothing is planned).
        ViewsyncError: a git ref, a catalog, the access policy or Spark fails.
    """
    if request.ref is None:
        ws.prefetch(request.scope.catalogs)  # the catalogs answer while the rest loads
    from reconciler.access import hooks as access_hooks
    from reconciler.access.security import notes as security_notes
    from reconciler.plan import portability, validity
    from reconciler.plan.yaml_changes import declaration_changes
    from reconciler.source import gitsrc

    decl = ws.declarations_at(request.ref)
    info = gitsrc.info(ws.root, request.ref)
    opts = options(ws, request.scope)
    result = build(ws, opts, decl, info, request.ref, request.spark, request.allow_breaking)
    tests = None
    if (request.spark or ws.config.spark.verify) and not request.skip_tests:
        tests = run_tests(ws, result, decl, request.ref, every_test)
    if request.base:
        result.yaml_changes = declaration_changes(ws.declarations(gitsrc.files_at(ws.root, request.base)), decl)
    access_hooks.check_plan(result, decl.views, ws.root, ws.config.path, request.actor, request.ref, request.base)
    result.warnings += security_notes(result, {n: (c.type, c.options) for n, c in ws.config.catalogs.items()})
    result.warnings += portability.trino_notes(result, {n: c.type for n, c in ws.config.catalogs.items()})
    validity.locate(result, decl)  # errors added since the planner's (verification, access)
    if result.actions:
        from reconciler.services.lineage import plan_graph

        result.lineage = plan_graph(ws, result, decl).to_json()
    return result, tests


def _generated(result: Plan, decl: Declarations, opts: PlanOptions) -> None:
    """Generated representations whose source changed or that were edited by hand are errors
    (every declared view in scope); the dialect differences of the views the plan creates or
    changes that have spark and trino SQL are warnings at file:line:col."""
    from reconciler.plan import generation
    from reconciler.plan.planner import selected

    result.errors += generation.check(decl, [v for v in decl.views if selected(v, opts)])
    written = {a.view for a in result.actions if a.action != "drop" and a.view in decl.views}
    result.warnings += generation.difference_warnings(decl, written)


def load_saved(path: Path) -> Plan:
    """`viewsync show`: a plan saved by `plan --out`, as it was made (no catalog is contacted).

    Args:
        path: the saved plan.

    Returns:
        The plan.

    Raises:
        UserError: the file is missing, is not a plan, or was edited since it was made.
    """
    from reconciler.plan import saved

    return saved.load(path)
