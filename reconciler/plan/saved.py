"""Saved plans (`plan --out`): reading one back, and refusing one that no longer
matches the repository it is applied in."""

from __future__ import annotations

import json
from pathlib import Path

from reconciler.core.errors import UserError
from reconciler.plan.planner import Plan, PlanOptions
from reconciler.plan.scope import plan_options
from reconciler.source.declarations import Declarations
from reconciler.workspace import Workspace


def load(path: Path) -> Plan:
    """A saved plan as it was made; raises UserError when the file is missing, is not a
    plan, or was edited since (its digest covers the actions, declarations, schema owners
    and the access section)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        plan = Plan.from_json(data)
    except FileNotFoundError:
        raise UserError(f"{path}: no such plan file") from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise UserError(f"{path}: not a viewsync plan ({e})") from None
    if data.get("digest") != plan.digest():
        raise UserError(f"stale plan: {path} was changed after it was made (its digest does not match what it "
                        "holds); nothing was applied. Run `viewsync plan --out` again")
    return plan


def verify(ws: Workspace, plan: Plan, path: Path, decl: Declarations | None = None) -> PlanOptions:
    """The options the saved plan was made with; raises UserError when it is for another
    project or the declarations it covers changed since. (Live catalog changes are
    checked by apply, under its lock.)"""
    if plan.project != ws.config.project:
        raise UserError(f"{path}: plan is for project {plan.project!r}, not {ws.config.project!r}")
    opts = plan_options(ws.config, plan.scope)
    decl = ws.declarations() if decl is None else decl
    if ws.declarations_digest(decl, opts) != plan.declarations_digest:
        raise UserError(f"stale plan: the declarations changed since {path} was made; nothing was "
                        "applied. Run `viewsync plan` again")
    return opts
