"""`viewsync force-unlock`: release the apply lock of a run that died holding it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.core.errors import UserError

if TYPE_CHECKING:
    from reconciler.workspace import Workspace


def force_unlock(ws: Workspace, run_id: str) -> None:
    """Delete the lock rows held by `run_id`.

    Args:
        ws: the repository, opened.
        run_id: the run that holds the lock (as `viewsync audit` or a failed apply names it).

    Raises:
        UserError: no lock is held by that run.
        ViewsyncError: the state store cannot be opened.
    """
    if not ws.state(create=False).force_unlock(run_id):
        raise UserError(f"no lock is held by run {run_id}")
