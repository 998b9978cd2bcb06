"""The copy of each view of a preview set: where it lives and what it holds."""

from __future__ import annotations

from collections.abc import Iterable

from reconciler.core.errors import UserError
from reconciler.core.model import Representation, ViewId, ViewSpec
from reconciler.preview.names import preview_schema
from reconciler.preview.rewrite import RewriteError, rewrite


def copy_ids(views: Iterable[ViewId], env: str, pattern: str, catalog: str | None = None) -> dict[ViewId, ViewId]:
    """Each view -> its copy: schema through `pattern`, in `catalog` when one is given (else
    in the view's own catalog).

    Raises:
        UserError: a preview schema name is too long.
    """
    return {v: ViewId(catalog or v.catalog, preview_schema(v.schema, env, pattern), v.name) for v in views}


def copy_spec(view: ViewId, spec: ViewSpec, copies: dict[ViewId, ViewId]) -> ViewSpec:
    """The declared spec of `view` as its copy holds it: every representation's SQL
    rewritten (see `rewrite`), the default namespace left to the copy's own schema (every
    reference is qualified now); comment, columns, security, owner and properties as declared.

    Raises:
        UserError: a representation's SQL cannot be rewritten (names the view and dialect).
    """
    reps = []
    for rep in spec.representations:
        try:
            reps.append(Representation(dialect=rep.dialect, sql=rewrite(rep.sql, rep.dialect, view, spec, copies)))
        except RewriteError as exc:
            raise UserError(f"cannot preview {view}: representations.{rep.dialect}.sql: {exc}") from None
    return spec.model_copy(update={"representations": reps, "default_namespace": None})
