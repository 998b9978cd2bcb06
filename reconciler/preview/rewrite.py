"""A preview copy's SQL: every table or view a query reads, rewritten with sqlglot in the
representation's own dialect. A reference to a view that has a copy in the environment
points to the copy; every other reference points to the live object, qualified with its
schema (and its catalog when the reference named one, or when the copies live in another
catalog), so the copy reads the same tables wherever its own default schema is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.core import deps
from reconciler.core import sql as vsql
from reconciler.core.model import ViewId, ViewSpec


class RewriteError(ValueError):
    """The SQL cannot be rewritten (sqlglot cannot read it, or it is not one query)."""


def _set_parts(table: Any, parts: list[str], dialect: str | None) -> None:
    """Point `table` at `parts` (catalog?, schema..., name), keeping its alias and the rest."""
    from sqlglot import exp

    text = ".".join(exp.to_identifier(p).sql(dialect=dialect) for p in parts)
    target = exp.to_table(text, dialect=dialect)
    for key in ("this", "db", "catalog"):
        table.set(key, target.args.get(key))


def rewrite(sql: str, dialect: str, view: ViewId, spec: ViewSpec, copies: Mapping[ViewId, ViewId]) -> str:
    """`sql` (a representation of `view`, whose spec is `spec`) with its references rewritten.

    Args:
        sql: the query.
        dialect: its viewsync dialect (read and written in the matching sqlglot dialect).
        view: the view it belongs to (resolves unqualified references).
        spec: the view's declared spec (its default catalog and namespace).
        copies: every view of the environment -> its copy.

    Returns:
        The query in `dialect`, references rewritten.

    Raises:
        RewriteError: sqlglot cannot read the query, or it is not exactly one query.
    """
    from sqlglot import exp

    problem = vsql.parse_error(sql, dialect) or vsql.query_problem(sql, dialect)
    if problem:
        raise RewriteError(problem)
    glot = vsql.sqlglot_dialect(dialect)
    tree = vsql.tree(sql, glot)
    if tree is None:
        raise RewriteError("not exactly one query")
    by_key = deps.index(copies)
    other_catalog = any(c.catalog != v.catalog for v, c in copies.items())
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in list(tree.find_all(exp.Table)):
        if not table.name:
            continue
        parts = vsql.table_parts(table)
        if len(parts) == 1 and parts[0].lower() in ctes:
            continue
        found = deps.lookup(parts, view, spec, by_key)
        if found is not None:
            copy = copies[found]
            named_catalog = len(parts) >= 3 or copy.catalog != found.catalog
            _set_parts(table, [copy.catalog] * named_catalog + copy.namespace + [copy.name], glot)
            continue
        if len(parts) == 1 or (other_catalog and len(parts) == 2):
            namespace = (spec.default_namespace or view.namespace) if len(parts) == 1 else [parts[0]]
            catalog = [spec.default_catalog or view.catalog] if other_catalog else []
            _set_parts(table, catalog + list(namespace) + [parts[-1]], glot)
    return str(tree.sql(dialect=glot, comments=False))
