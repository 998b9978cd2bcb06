"""An `ordered: true` test's order on Trino, as a position its view's UNION ALL keeps.

Trino keeps no row order through UNION ALL (and drops an ORDER BY inside a subquery), so such a
test would need a query of its own: most of a test's time on Trino is planning its query. When
every key of the query's outermost ORDER BY is one of its output columns (by name, by ordinal, or
as the same expression), the same order is `row_number() OVER (ORDER BY those columns)`: the
window sorts the rows the query returns by the keys it sorted them by, with the same directions
and NULL placement, so the test joins its view's query and is still checked in order. Anything
else (a key the output does not carry, `*`, no ORDER BY) gives None: the test runs alone.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from reconciler.core.sql import quoted_ident


def window_order(sql: str) -> str | None:
    """The ORDER BY list, over the output columns of `sql`, that orders its rows as `sql` does;
    None when it cannot be said over the outputs alone."""
    try:
        tree = sqlglot.parse_one(sql, read="trino")
    except sqlglot.errors.SqlglotError:
        return None
    query, renamed = _ordering_query(tree)
    order = query.args.get("order") if isinstance(query, exp.Query) else None
    if not isinstance(order, exp.Order) or not isinstance(query, exp.Query):
        return None
    selects = query.selects
    if any(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and s.is_star) for s in selects):
        return None
    names = [s.alias_or_name for s in selects]
    outputs = renamed if renamed is not None else names
    if len(outputs) != len(names) or any(not n for n in outputs) or len({n.lower() for n in outputs}) != len(outputs):
        return None  # an unnamed or repeated output cannot be named in the window
    keys = []
    for ordered in order.expressions:
        at = _output_of(ordered.this, selects, names)
        if at is None:
            return None
        direction = "DESC" if ordered.args.get("desc") else "ASC"
        nulls = "NULLS FIRST" if ordered.args.get("nulls_first") else "NULLS LAST"
        keys.append(f"{quoted_ident(outputs[at])} {direction} {nulls}")
    return ", ".join(keys)


def _ordering_query(tree: exp.Expr) -> tuple[exp.Expr, list[str] | None]:
    """The query whose ORDER BY orders the rows, through `SELECT * FROM cte` as a test's query
    reads its view (build.prepare), and the names its outputs get on the way out (a CTE's column
    list renames them by position; None: their own)."""
    ctes = {c.alias_or_name.lower(): c for c in tree.ctes} if isinstance(tree, exp.Query) else {}
    renamed: list[str] | None = None
    while isinstance(tree, exp.Select) and not tree.args.get("order"):
        source = tree.args.get("from_") or tree.args.get("from")
        plain = all(not tree.args.get(k) for k in ("where", "group", "having", "limit", "joins", "distinct", "qualify"))
        if not (plain and len(tree.selects) == 1 and isinstance(tree.selects[0], exp.Star)
                and isinstance(source, exp.From) and isinstance(source.this, exp.Table)
                and not source.this.db and source.this.name.lower() in ctes):
            break
        cte = ctes[source.this.name.lower()]
        alias = cte.args.get("alias")
        columns = [c.name for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
        if columns and renamed is None:  # the outermost list is the one the rows leave with
            renamed = columns
        tree = cte.this
        ctes.update({c.alias_or_name.lower(): c for c in tree.ctes} if isinstance(tree, exp.Query) else {})
    return tree, renamed


def _output_of(key: exp.Expr, selects: list[exp.Expr], names: list[str]) -> int | None:
    """The position of the output that `key` of ORDER BY is."""
    if isinstance(key, exp.Literal) and key.is_int:  # ORDER BY 2
        n = int(key.this)
        return n - 1 if 1 <= n <= len(names) else None
    if isinstance(key, exp.Column) and not key.table:  # an output's name first, as Trino resolves it
        hits = [i for i, n in enumerate(names) if n.lower() == key.name.lower()]
        if hits:
            return hits[0]
    same = [i for i, s in enumerate(selects) if _same(s.unalias(), key)]
    return same[0] if len(same) == 1 else None


def _same(output: exp.Expr, key: exp.Expr) -> bool:
    """`o.cid` in ORDER BY is the output `cid` read from `o` (written qualified or not)."""
    if isinstance(output, exp.Column) and isinstance(key, exp.Column) and key.table:
        return output.name.lower() == key.name.lower() and output.table.lower() in ("", key.table.lower())
    return output == key
