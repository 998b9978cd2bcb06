"""Column lineage of a view's SQL, read with sqlglot. Pure: no I/O.

For every output column: the upstream (table, column) pairs it is computed
from, each tagged IDENTITY (copied as is), TRANSFORMATION (an expression of
it) or AGGREGATION (under an aggregate function). Columns that influence every
row without being copied (join keys, filters, grouping, sorting) are listed as
indirect inputs. CTEs and subqueries are followed down to the tables and views
the query reads; `SELECT *` over a declared view is expanded with the columns
it declares (`known_columns`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler.core import sql as vsql

_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}


@dataclass(frozen=True, order=True)
class InputColumn:
    table: str  # catalog.schema.name as the query names it, defaults filled in
    column: str
    kind: str  # IDENTITY | TRANSFORMATION | AGGREGATION (direct); JOIN | FILTER | GROUP_BY | SORT (indirect)


@dataclass
class Lineage:
    view: str
    tables: list[str] = field(default_factory=list)
    columns: dict[str, list[InputColumn]] = field(default_factory=dict)
    indirect: list[InputColumn] = field(default_factory=list)
    error: str | None = None
    sql: str | None = None  # the representation it was read from
    dialect: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "view": self.view, "sql": self.sql, "dialect": self.dialect, "tables": self.tables,
            "columns": {name: [{"table": i.table, "column": i.column, "transformation": i.kind} for i in inputs]
                        for name, inputs in self.columns.items()},
            "indirect": [{"table": i.table, "column": i.column, "subtype": i.kind} for i in self.indirect],
            **({"error": self.error} if self.error else {}),
        }


class KnownColumns(dict[str, list[str]]):
    """Column names of known objects by full name, keys lowered once (lookups are
    case-insensitive): built once per run, not once per view."""

    @classmethod
    def of(cls, known: Mapping[str, list[str]]) -> KnownColumns:
        return known if isinstance(known, KnownColumns) else cls((k.lower(), v) for k, v in known.items())


# One resolved output column: its name and inputs.
_Out = list[tuple[str, set[InputColumn]]]


class _Resolver:
    """Reads a query's tree without changing it (the tree is the process's shared parse):
    table names the query leaves partial get the view's defaults as they are named."""

    def __init__(self, known: Mapping[str, list[str]], catalog: str | None = None, schema: str | None = None,
                 ctes: frozenset[str] = frozenset()) -> None:
        self.known = KnownColumns.of(known)
        self.catalog, self.schema, self.ctes = catalog, schema, ctes  # ctes: every CTE name in the query
        self.tables: list[str] = []
        self.indirect: set[InputColumn] = set()

    def _full_name(self, table: Any) -> str:
        catalog, db = table.catalog, table.db
        if table.name and (db or table.name.lower() not in self.ctes):
            db = db or self.schema or ""
            catalog = catalog or (self.catalog if db else "") or ""
        return ".".join(p for p in (catalog, db, table.name) if p)

    def query(self, node: Any, ctes: dict[str, _Out]) -> _Out:
        from sqlglot import exp

        if isinstance(node, exp.Subquery):
            return self.query(node.this, ctes)
        if isinstance(node, exp.SetOperation):
            left = self.query(node.left, ctes)
            right = self.query(node.right, ctes)
            merged = []
            for i, (name, inputs) in enumerate(left):
                extra = right[i][1] if i < len(right) else set()
                merged.append((name, inputs | extra))
            return merged
        if not isinstance(node, exp.Select):
            return []
        env = dict(ctes)
        with_ = node.args.get("with_")
        if with_ is not None:
            for cte in with_.expressions:
                env[cte.alias_or_name.lower()] = self.query(cte.this, env)
        sources: dict[str, str | _Out] = {}
        from_ = node.args.get("from_")
        items = ([from_.this] if from_ is not None else []) + [j.this for j in node.args.get("joins") or []]
        for item in items:
            self._source(item, env, sources)
        out: _Out = []
        for proj in node.expressions:
            if isinstance(proj, exp.Star):
                for src in sources.values():
                    out.extend(self._star(src))
                continue
            if isinstance(proj, exp.Column) and isinstance(proj.this, exp.Star):
                star_src = sources.get(proj.table.lower())
                if star_src is not None:
                    out.extend(self._star(star_src))
                continue
            inner = proj.this if isinstance(proj, exp.Alias) else proj
            base = "AGGREGATION" if inner.find(exp.AggFunc) is not None else (
                "IDENTITY" if isinstance(inner, exp.Column) else "TRANSFORMATION")
            found: set[InputColumn] = set()
            for col in inner.find_all(exp.Column):
                if _in_subquery(col, inner):
                    continue  # a scalar subquery's own columns: its tables are read below
                for got in self._column(col, sources):
                    kind = max(base, got.kind, key=lambda k: _RANK.get(k, 0)) if base != "IDENTITY" else got.kind
                    found.add(InputColumn(got.table, got.column, kind))
            out.append((proj.alias_or_name, found))
        for key, subtype in (("where", "FILTER"), ("having", "FILTER"), ("qualify", "FILTER"),
                             ("group", "GROUP_BY"), ("order", "SORT")):
            part = node.args.get(key)
            if part is not None:
                self._indirect(part, sources, subtype)
        for join in node.args.get("joins") or []:
            for key in ("on", "using"):
                part = join.args.get(key)
                if part is None:
                    continue
                if key == "using":
                    for ident in part:
                        for src in sources.values():
                            for got in self._named(src, ident.name):
                                self.indirect.add(InputColumn(got.table, got.column, "JOIN"))
                else:
                    self._indirect(part, sources, "JOIN")
        # Tables read only in subqueries (IN (SELECT ...), EXISTS) still count as inputs.
        for sub in node.find_all(exp.Subquery):
            if sub.parent is not None and not isinstance(sub.parent, (exp.From, exp.Join)):
                self.query(sub.this, env)
        return out

    def _source(self, item: Any, env: dict[str, _Out], sources: dict[str, str | _Out]) -> None:
        from sqlglot import exp

        alias = item.alias_or_name.lower()
        if isinstance(item, exp.Table):
            if not item.db and item.name.lower() in env:
                sources[alias] = env[item.name.lower()]
                return
            name = self._full_name(item)
            if name not in self.tables:
                self.tables.append(name)
            sources[alias] = name
        elif isinstance(item, exp.Subquery):
            sources[alias] = self.query(item.this, env)

    def _star(self, src: str | _Out) -> _Out:
        if isinstance(src, str):
            return [(c, {InputColumn(src, c, "IDENTITY")}) for c in self.known.get(src.lower(), [])]
        return [(name, set(inputs)) for name, inputs in src]

    def _named(self, src: str | _Out, column: str) -> set[InputColumn]:
        if isinstance(src, str):
            return {InputColumn(src, column, "IDENTITY")}
        for name, inputs in src:
            if name.lower() == column.lower():
                return set(inputs)
        return set()

    def _column(self, col: Any, sources: Mapping[str, str | _Out]) -> set[InputColumn]:
        table = col.table.lower()
        if table:
            src = sources.get(table)
            return self._named(src, col.name) if src is not None else set()
        # Unqualified: the sources that have it by their declared columns; when none is known to,
        # every source whose columns are unknown might (derived sources always say).
        if len(sources) == 1:
            return self._named(next(iter(sources.values())), col.name)
        maybe: set[InputColumn] = set()
        for src in sources.values():
            if isinstance(src, str):
                cols = self.known.get(src.lower())
                if cols is not None and col.name.lower() in (c.lower() for c in cols):
                    return self._named(src, col.name)
                if cols is None:
                    maybe |= self._named(src, col.name)
            else:
                found = self._named(src, col.name)
                if found:
                    return found
        return maybe

    def _indirect(self, part: Any, sources: Mapping[str, str | _Out], subtype: str) -> None:
        from sqlglot import exp

        for col in part.find_all(exp.Column):
            if _in_subquery(col, part):
                continue
            for got in self._column(col, sources):
                self.indirect.add(InputColumn(got.table, got.column, subtype))


def _in_subquery(node: Any, stop: Any) -> bool:
    from sqlglot import exp

    while node is not None and node is not stop:
        if isinstance(node, exp.Subquery):
            return True
        node = node.parent
    return False


def view_lineage(view: str, sql: str, dialect: str, default_catalog: str | None, default_schema: str | None,
                 known_columns: Mapping[str, list[str]] | None = None) -> Lineage:
    """Lineage of `view` (catalog.schema.name) from its SQL. Table names the query leaves
    partial get the view's default catalog and schema; `known_columns` maps such full names
    (e.g. declared views) to their column lists, to expand `SELECT *`."""
    result = Lineage(view)
    glot = vsql.sqlglot_dialect(dialect)
    error = vsql.facts(sql, glot).error
    if error is not None:
        result.error = f"sqlglot cannot parse the SQL: {error}"
        return result
    tree = vsql.shared_tree(sql, glot)
    if tree is None:
        result.error = "the SQL is not one statement"
        return result
    from sqlglot import exp

    ctes = frozenset(cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE))
    resolver = _Resolver(known_columns or {}, default_catalog, default_schema, ctes)
    try:
        outputs = resolver.query(tree, {})
    except (ValueError, AttributeError, TypeError) as err:  # unusual syntax: keep what we can say
        result.error = f"column lineage unavailable: {err}"
        outputs = []
    result.tables = resolver.tables
    result.columns = {name: sorted(inputs) for name, inputs in outputs}
    result.indirect = sorted(resolver.indirect)
    return result


def lineage_of_spec(view: str, spec: Mapping[str, Any], known_columns: Mapping[str, list[str]] | None = None,
                    dialect: str | None = None) -> Lineage:
    """Lineage of a canonical spec dict (as plans and audit rows hold it): the first
    representation sqlglot can read, unless `dialect` picks one."""
    catalog, _, rest = view.partition(".")
    schema = rest.rpartition(".")[0]
    reps: dict[str, str] = {str(r["dialect"]): str(r["sql"]) for r in spec.get("representations") or []}
    order = [dialect] if dialect is not None and dialect in reps else sorted(
        reps, key=lambda d: vsql.sqlglot_dialect(d) is None)
    if not order:
        return Lineage(view, error="no SQL")
    chosen = order[0]
    ns = spec.get("default_namespace")
    default_schema = ".".join(ns) if ns else schema
    result = view_lineage(view, reps[chosen], chosen, spec.get("default_catalog") or catalog, default_schema,
                          known_columns)
    result.sql, result.dialect = reps[chosen], chosen
    return result


def diff(before: Lineage | None, after: Lineage | None) -> list[str]:
    """What changes in the lineage, one line each ('+ reads t', '- c <- t.x', ...)."""
    lines: list[str] = []
    a_tables = set(before.tables) if before else set()
    b_tables = set(after.tables) if after else set()
    lines += [f"+ reads {t}" for t in sorted(b_tables - a_tables)]
    lines += [f"- reads {t}" for t in sorted(a_tables - b_tables)]
    a_cols = before.columns if before else {}
    b_cols = after.columns if after else {}
    for name in list(b_cols) + [n for n in a_cols if n not in b_cols]:
        old, new = a_cols.get(name), b_cols.get(name)
        if old == new:
            continue
        text = ", ".join(f"{i.table}.{i.column}" for i in new or []) or "(no column)"
        if old is None:
            lines.append(f"+ {name} <- {text}")
        elif new is None:
            lines.append(f"- {name}")
        else:
            lines.append(f"~ {name} <- {text}")
    return lines


def change_of(view: str, before: Any, after: Any) -> list[str]:
    """The lineage change of one plan action (ViewSpecs before/after; None = absent)."""
    def spec(value: Any) -> Mapping[str, Any]:
        return value if isinstance(value, Mapping) else value.canonical()

    old = lineage_of_spec(view, spec(before)) if before is not None else None
    new = lineage_of_spec(view, spec(after)) if after is not None else None
    return diff(old, new)
