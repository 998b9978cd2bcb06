"""Plan options: what the command line asks for, combined with the config's policy."""

from __future__ import annotations

from reconciler.core.errors import UserError
from reconciler.plan.planner import PlanOptions, PlanScope
from reconciler.source.config import Config


def plan_options(config: Config, scope: PlanScope) -> PlanOptions:
    """The policy turns prune/adopt on for every run; flags can only add to it."""
    for name in scope.catalogs:
        if name not in config.catalogs:
            raise UserError(f"--catalog {name}: unknown catalog (defined: {', '.join(sorted(config.catalogs))})")
    pol = config.policy
    return PlanOptions(
        project=config.project,
        prune=scope.prune or pol.prune,
        adopt=scope.adopt or pol.adopt,
        max_drop_fraction=pol.max_drop_fraction,
        allow_mass_drop=scope.allow_mass_drop,
        select=scope.select,
        catalogs=scope.catalogs,
    )
