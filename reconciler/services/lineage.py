"""`viewsync lineage`: the upstream tables and columns of a declared view, from its SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.core.errors import UserError

if TYPE_CHECKING:
    from reconciler.core.model import ViewId
    from reconciler.events.lineage import Lineage
    from reconciler.workspace import Workspace


def lineage(ws: Workspace, view: ViewId, ref: str | None = None) -> Lineage:
    """The lineage of `view` as declared (no catalog is contacted).

    Args:
        ws: the repository, opened.
        view: the view.
        ref: read the declarations at this git ref (None: the working tree).

    Returns:
        Its input tables, and each output column's input columns.

    Raises:
        ValidationFailed: the declarations are bad.
        UserError: `view` is not declared; `ref` is not a git ref.
    """
    from reconciler.events.commands import declared_lineage

    decl = ws.declarations_at(ref)
    if view not in decl.views:
        raise UserError(f"{view}: not declared")
    return declared_lineage(decl.views, view)
