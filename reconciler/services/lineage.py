"""`viewsync lineage`: the upstream tables and columns of a declared view, from its SQL; the lineage
graph of one view (`--format mermaid`) and of a plan (the Markdown plan's Mermaid block)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.core.errors import UserError

if TYPE_CHECKING:
    from reconciler.core.model import ViewId
    from reconciler.events.lineage import Lineage
    from reconciler.plan.model import Plan
    from reconciler.render.lineage_graph import LineageGraph
    from reconciler.source.declarations import Declarations
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

    return declared_lineage(_declared(ws, view, ref).views, view)


def graph(ws: Workspace, view: ViewId, ref: str | None = None) -> LineageGraph:
    """The lineage graph of `view` as declared: what it reads and the declared views that read it
    (no catalog is contacted).

    Args:
        ws: the repository, opened.
        view: the view.
        ref: read the declarations at this git ref (None: the working tree).

    Returns:
        The graph, for `render.mermaid.draw`.

    Raises:
        ValidationFailed: the declarations are bad.
        UserError: `view` is not declared; `ref` is not a git ref.
    """
    from reconciler.render.lineage_graph import view_graph

    return view_graph(view, _declared(ws, view, ref).views)


def _declared(ws: Workspace, view: ViewId, ref: str | None) -> Declarations:
    """The declarations at `ref`, which must declare `view`."""
    decl = ws.declarations_at(ref)
    if view not in decl.views:
        raise UserError(f"{view}: not declared")
    return decl


def plan_graph(ws: Workspace, plan: Plan, decl: Declarations) -> LineageGraph:
    """The lineage graph of `plan`'s changes: the changed views, what they read, and every view that
    reads one, declared or live (the live views the workspace's last `plan` read; none when it
    read none).

    Args:
        ws: the repository, opened, after `ws.plan` made `plan`.
        plan: the plan (its Spark verification, when it has one, marks broken readers).
        decl: the declarations it was made from.

    Returns:
        The graph, for `render.mermaid` (and `Plan.lineage`).
    """
    from reconciler.render.lineage_graph import plan_graph as build

    live = {lv.id: lv for snap in (ws.last_snapshots or {}).values() for lv in snap.views.values()}
    return build(plan.actions, decl.views, live, plan.verification)
