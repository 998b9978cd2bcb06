"""`viewsync history` and `viewsync audit`: the versions of one view (ours and its catalog's),
and the audit trail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.adapters.base import NativeVersion
    from reconciler.core.model import ViewId
    from reconciler.workspace import Workspace


@dataclass(frozen=True)
class ViewHistory:
    view: ViewId
    versions: list[dict[str, Any]]  # our version rows, oldest first
    native: list[NativeVersion]  # the catalog's own versions (none when it keeps none)


def history(ws: Workspace, view: ViewId) -> ViewHistory:
    """The versions viewsync recorded for `view` and those its catalog keeps.

    Args:
        ws: the repository, opened.
        view: the view (its catalog need not be configured any more).

    Returns:
        Both histories; the native one is empty for a catalog no longer configured.

    Raises:
        UserError: `view` is unknown: not declared, and neither viewsync nor its catalog recorded it.
        ViewsyncError: the state store or the catalog cannot be read.
    """
    rows = ws.state(create=False).versions_of(view)
    native = ws.adapter(view.catalog).native_history(view) if view.catalog in ws.config.catalogs else []
    if not rows and not native:
        _known_or_raise(ws, view)
    return ViewHistory(view, rows, native)


def _known_or_raise(ws: Workspace, view: ViewId) -> None:
    """An empty history of a declared view (not applied yet) is an answer; of a name nothing
    knows (a typo) it would mislead, so that is an error, as in `lineage`."""
    from reconciler.core.errors import UserError, ValidationFailed

    try:
        if view in ws.declarations().views:
            return
    except ValidationFailed:  # broken declarations are validate's to report, not history's
        return
    if ws.state(create=False).audit_rows(view):
        return
    raise UserError(f"{view}: not declared, and viewsync recorded nothing for it")


def audit(ws: Workspace, view: ViewId | None = None, since: str | None = None,
          run: str | None = None) -> list[dict[str, Any]]:
    """The audit trail: one row per attempted action, with its run's outcome.

    Args:
        ws: the repository, opened.
        view: only this view's rows.
        since: an ISO time or a duration back from now (7d, 12h); None: all.
        run: a run id, or its prefix.

    Returns:
        The rows, oldest first (none when the state store was never written).

    Raises:
        UserError: `since` is neither a time nor a duration; `view` is unknown (not declared,
            nothing recorded).
        ViewsyncError: the state store cannot be read.
    """
    from reconciler.state.history import parse_since

    state = ws.state(create=False)
    rows = state.audit_rows(view, parse_since(since), run)
    if view is not None and not rows:
        _known_or_raise(ws, view)
    return rows
