"""`viewsync revert VIEW --to VERSION`: a recorded version of a view written back into its
declaration, a change to commit and review; with `--apply` (emergencies), applied at once
through apply's own path as a run of kind `revert`.

The version is one of our version rows (`3`, `v3`) or the catalog's native version
(`native:3`, Iceberg), as `viewsync history` lists them. Either way the revert is planned
with Spark's impact check first: a version whose columns would break a dependent is refused
as a plan refuses it, and nothing is written."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError

if TYPE_CHECKING:
    from reconciler.core.model import ViewId, ViewSpec
    from reconciler.plan.planner import Plan
    from reconciler.services.apply import ApplyOutcome, ApplyUI
    from reconciler.services.history import ViewHistory
    from reconciler.source.declarations import Declarations
    from reconciler.workspace import Workspace

KIND = "revert"  # the run's command in the records
_TO = re.compile(r"(?:(?P<native>native:)|v?)(?P<number>\d+)")


@dataclass(frozen=True)
class RevertRequest:
    view: ViewId
    to: str  # `3` or `v3`: our version row; `native:3`: the catalog's version
    apply: bool = False  # apply at once instead of writing the YAML
    actor: str | None = None  # who applies (default $GITHUB_ACTOR, then the git user)
    lock_timeout: float = 0  # seconds to wait for the apply lock
    allow_breaking: bool = False


@dataclass
class RevertOutcome:
    view: ViewId
    version: str  # the version reverted to, as history names it: `v3` or `native 3`
    plan: Plan | None  # the reverting change (with its errors when refused); None when unchanged
    file: str | None = None  # the view file written (without --apply)
    applied: ApplyOutcome | None = None  # with --apply
    unchanged: bool = False  # the declaration already is that version: nothing written
    asked: str = ""  # the version as `--to` gave it

    @property
    def ok(self) -> bool:
        if self.applied is not None:
            return self.applied.ok
        return self.plan is None or not self.plan.errors


def revert(ws: Workspace, request: RevertRequest, ui: ApplyUI) -> RevertOutcome:
    """Write a recorded version of a declared view into its YAML file, or apply it at once.

    Args:
        ws: the repository, opened.
        request: the view, the version and how.
        ui: the prompts and printers (`show_plan` alone without --apply).

    Returns:
        The outcome: the plan of the reverting change, and the file written or the apply's
        outcome. A plan with errors (a breaking revert) writes nothing.

    Raises:
        UserError: `--to` is not a version; the view is unknown or not declared; it has no
            such version, or that version is its drop or cannot be read; the file cannot be
            rewritten; access refused (with --apply).
        ValidationFailed: the declarations are bad.
        ViewsyncError: the state store, a catalog or Spark fails.
    """
    from reconciler.services.history import history

    native, number = _parse_to(request.to)
    view = request.view
    decl = ws.declarations()
    found = history(ws, view)  # the same reader as `viewsync history`; unknown views raise here
    if view not in decl.views:
        raise UserError(f"{view} is not declared under views/: revert writes a recorded version into the view's "
                        "declaration; declare the view again first")
    label, target = (_native(found, number) if native else _ours(found, number))
    target = target.resolved(view)
    if request.apply:
        return _apply_now(ws, request, label, target, ui)
    current = decl.views[view]
    if target.digest() == current.digest():
        return RevertOutcome(view, label, None, unchanged=True, asked=request.to)
    plan = _plan(ws, dataclasses.replace(decl, views={**decl.views, view: target}), view, request.allow_breaking)
    ui.show_plan(plan)
    if plan.errors:
        return RevertOutcome(view, label, plan, asked=request.to)
    rel = _write(ws, decl.where[view], decl.texts, view, current, target)
    return RevertOutcome(view, label, plan, file=rel, asked=request.to)


def _parse_to(text: str) -> tuple[bool, int]:
    m = _TO.fullmatch(text.strip())
    if m is None:
        raise UserError(f"--to {text!r}: expected a version viewsync recorded (3 or v3) or a native catalog "
                        "version (native:3); `viewsync history` lists both")
    return m.group("native") is not None, int(m.group("number"))


def _ours(found: ViewHistory, number: int) -> tuple[str, ViewSpec]:
    from reconciler.core.model import ViewSpec

    row = next((r for r in found.versions if int(r["version"]) == number), None)
    if row is None:
        known = ", ".join(f"v{r['version']}" for r in found.versions) or "none"
        raise UserError(f"{found.view} has no version {number} recorded by viewsync (recorded: {known}); "
                        "`viewsync history` lists them")
    if row["spec"] is None:
        raise UserError(f"version {number} of {found.view} is its drop: there is no definition to revert to")
    return f"v{number}", ViewSpec.model_validate(json.loads(row["spec"]))


def _native(found: ViewHistory, number: int) -> tuple[str, ViewSpec]:
    if not found.native:
        raise UserError(f"catalog {found.view.catalog!r} keeps no native versions of {found.view} (Iceberg views "
                        f"do); revert to a version viewsync recorded (--to {number})")
    version = next((n for n in found.native if n.version == str(number)), None)
    if version is None:
        known = ", ".join(n.version for n in found.native)
        raise UserError(f"{found.view} has no native version {number} in catalog {found.view.catalog!r} "
                        f"(native versions: {known})")
    if version.spec is None:
        raise UserError(f"catalog {found.view.catalog!r} does not keep a definition viewsync can read for native "
                        f"version {number} of {found.view}; revert to a version viewsync recorded")
    return f"native {number}", version.spec


def _plan(ws: Workspace, decl: Declarations, view: ViewId, allow_breaking: bool) -> Plan:
    """The plan of `view` alone with the reverted declaration, verified by Spark (the impact
    check on dependents), as `plan --spark --select VIEW` would make it."""
    from reconciler.plan import validity
    from reconciler.services import plan as plan_service
    from reconciler.source import gitsrc

    opts = plan_service.options(ws, plan_service.Scope((view.catalog,), (str(view),)))
    result = plan_service.build(ws, opts, decl, gitsrc.info(ws.root), None, True, allow_breaking)
    validity.locate(result, decl)
    return result


def _write(ws: Workspace, where: tuple[str, int], texts: dict[str, str], view: ViewId, current: ViewSpec,
           target: ViewSpec) -> str:
    """Rewrite the view's fields in its file (the one YAML writer) and check the file now
    declares exactly `target` before it is written."""
    from reconciler.source.declarations import load
    from reconciler.verify.writeback import write_spec

    rel, index = where
    text = write_spec(texts[rel], index, view.namespace, current.canonical(), target.canonical(), rel)
    written = load([(rel, text)], ws.config).views.get(view)
    if written is None or written.digest() != target.digest():
        raise UserError(f"{rel}: could not write {view}'s recorded version so that it reads back the same; "
                        "nothing was written")
    (ws.root / rel).write_bytes(text.encode("utf-8"))
    return rel


def _apply_now(ws: Workspace, request: RevertRequest, label: str, target: ViewSpec, ui: ApplyUI) -> RevertOutcome:
    """Apply's own path, with the version in place of the declaration, for this view alone:
    Spark's impact check, the access re-check (ALTER_VIEW), the lock, audit and version rows
    (a run of kind `revert`). The working tree need not be clean: it is not what is applied."""
    from reconciler.services import apply as apply_service
    from reconciler.services.plan import Scope

    view = request.view
    outcome = apply_service.apply(ws, apply_service.ApplyRequest(
        scope=Scope((view.catalog,), (str(view),)), actor=request.actor, allow_dirty=True,
        lock_timeout=request.lock_timeout, spark=True, allow_breaking=request.allow_breaking, kind=KIND,
        replace={view: target}), ui)
    return RevertOutcome(view, label, outcome.plan, applied=outcome, asked=request.to)
