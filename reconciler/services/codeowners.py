"""`viewsync codeowners`: .github/CODEOWNERS derived from the access policy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError

if TYPE_CHECKING:
    from reconciler.workspace import Workspace


def write_codeowners(ws: Workspace) -> tuple[Path, int]:
    """Write CODEOWNERS at the top of the git repository: each view file to its schemas' owners.

    Args:
        ws: the repository, opened.

    Returns:
        The file's path relative to the git top, and how many view files it covers.

    Raises:
        UserError: there is no access policy to derive it from.
        ValidationFailed: the declarations are bad (nothing is written).
    """
    from reconciler.access import codeowners as co
    from reconciler.access import gitauthors
    from reconciler.access import hooks as access_hooks

    decl = ws.declarations()
    text = access_hooks.codeowners_text(ws.root, ws.config.path, decl.files)
    if text is None:
        raise UserError("no access policy (access: in viewsync.yaml or access.yaml): nothing to derive "
                        "CODEOWNERS from")
    path = gitauthors.git_top(ws.root) / co.CODEOWNERS_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return Path(co.CODEOWNERS_PATH), len(decl.files)
