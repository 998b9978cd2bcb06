"""`viewsync drift`: where the live catalogs differ from the declarations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.services.plan import Scope

if TYPE_CHECKING:
    from reconciler.plan.drift import DriftReport
    from reconciler.workspace import Workspace


def drift(ws: Workspace, catalogs: tuple[str, ...] = (), select: tuple[str, ...] = ()) -> DriftReport:
    """Classify every difference between the working tree's declarations and the catalogs.

    Args:
        ws: the repository, opened.
        catalogs: only these catalogs (all when empty).
        select: globs over catalog.schema.view (all when empty).

    Returns:
        The report: drifted views (with whether our last apply wrote what is live) and the
        errors met reading the catalogs.

    Raises:
        ValidationFailed: the declarations are bad.
        ViewsyncError: the state store cannot be read.
    """
    ws.prefetch(catalogs)  # the catalogs answer while the rest loads
    from reconciler.plan import drift as drift_mod
    from reconciler.services import plan as plan_service

    decl = ws.declarations()
    # Every difference counts, undeclared views and mass drops included.
    opts = plan_service.options(ws, Scope(catalogs, select, prune=True, adopt=False, allow_mass_drop=True))
    result, snapshots = ws.plan(opts, decl)
    state = ws.state(create=False)
    return drift_mod.classify(result, snapshots, state.last_versions(list(ws.config.catalogs)))
