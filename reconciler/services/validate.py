"""`viewsync validate`: the offline checks of the config and declarations (YAML, JSON
Schema, semantics, SQL, a stale CODEOWNERS), and Spark's analysis when asked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError, ValidationFailed

if TYPE_CHECKING:
    from reconciler.source.declarations import Declarations
    from reconciler.workspace import Workspace


@dataclass(frozen=True)
class ValidateRequest:
    ref: str | None = None  # read the declarations at this git ref
    spark: bool = False  # also analyse every view with Spark (tables from sources/)
    write_columns: bool = False  # with spark: write Spark's columns into views that omit them


def validate(ws: Workspace, request: ValidateRequest, out: Callable[[str], None],
             warn: Callable[[str], None]) -> Declarations:
    """Check the declarations offline; nothing is contacted but Spark (when asked), which
    analyses the views even when offline checks failed, so its own findings are shown too.

    Args:
        ws: the repository, opened.
        request: the ref to read and whether Spark analyses the views.
        out: Spark's report lines and the files `write_columns` wrote.
        warn: warning lines (each already prefixed "Warning: "), and Spark's errors ("Error: ")
            when Spark runs beside problems found offline.

    Returns:
        The declarations, valid.

    Raises:
        ValidationFailed: every problem found (a stale CODEOWNERS among them).
        UserError: `write_columns` without `spark`, or problems Spark found.
    """
    from reconciler.access import hooks as access_hooks
    from reconciler.core import deps
    from reconciler.plan import validity

    if request.spark:
        from reconciler.services import spark as spark_service

        spark_service.prestart(ws)  # Spark starts while the declarations load
    decl = ws.declarations_at(request.ref)
    problems, warnings = validity.check(decl)
    from reconciler.services import viewtests

    if request.ref is None:  # sources/ files (columns, where data is): located errors without tests too
        from reconciler.verify import sources as vsources

        try:
            vsources.read(ws.root)
        except ValidationFailed as exc:
            problems += exc.problems
    problems += viewtests.problems(ws, decl, request.ref)  # tests: inputs, columns, values, CSV
    warnings += _unknown_tables(ws, decl)
    policy = access_hooks.policy_at(ws.root, ws.config.path, request.ref)
    if policy is not None and request.ref is None:
        stale, missing = access_hooks.codeowners_problem(ws.root, ws.config.path, decl.files)
        if stale is not None:
            problems.append(stale)
        if missing:
            warnings.append(missing)
    for w in warnings:
        warn(f"Warning: {w}")
    if problems:
        if request.spark and deps.find_cycle(decl.views) is None:
            _spark_beside(ws, decl, request.ref, out, warn)  # Spark's own words, e.g. TABLE_OR_VIEW_NOT_FOUND
        raise ValidationFailed(problems)
    if request.write_columns and not request.spark:
        raise UserError("--write-columns needs --spark (the columns come from Spark's analysis)")
    if request.spark:
        from reconciler.services import spark as spark_service

        spark_service.validate(ws, decl, request.ref, request.write_columns, out, warn)
    return decl


def _unknown_tables(ws: Workspace, decl: Declarations) -> list[str]:
    """Located warnings for tables no declaration or sources/ file knows (the working tree's
    sources/, as Spark's analysis reads them)."""
    from reconciler.verify import references, sources

    try:
        kept = sources.read(ws.root)
    except ValidationFailed:
        return []  # a broken sources/ file is Spark's analysis's to report (validate --spark)
    return references.unknown(decl, kept, sorted(ws.config.catalogs))


def _spark_beside(ws: Workspace, decl: Declarations, ref: str | None, out: Callable[[str], None],
                  warn: Callable[[str], None]) -> None:
    """Spark's analysis of declarations that have static problems too: its findings are
    printed, then the static problems fail the command."""
    from reconciler.services import spark as spark_service

    try:
        spark_service.validate(ws, decl, ref, False, out, warn)
    except UserError as err:
        warn(f"Error: {err}")
