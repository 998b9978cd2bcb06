"""sqlglot helpers: normalisation for comparison, referenced tables.

sqlglot is imported on first use: a no-op plan never parses SQL, and the
import is a tenth of its start-up. Each query is parsed at most once per
process (`facts`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

# viewsync dialect name -> sqlglot dialect (None = sqlglot's generic dialect)
_DIALECTS: dict[str, str | None] = {
    "spark": "spark", "trino": "trino", "presto": "presto", "athena": "athena", "hive": "hive",
    "flink": "hive", "postgres": "postgres", "mysql": "mysql", "sqlite": "sqlite",
    "redshift": "redshift", "snowflake": "snowflake", "bigquery": "bigquery", "duckdb": "duckdb",
    "databricks": "databricks", "ansi": None,
}


def known_dialects() -> frozenset[str]:
    return frozenset(_DIALECTS)


def sqlglot_dialect(dialect: str) -> str | None:
    return _DIALECTS.get(dialect)


@lru_cache(maxsize=4096)
def normalize(sql: str, dialect: str) -> str:
    """A canonical text of `sql` for comparison; falls back to whitespace-collapsed text."""
    import sqlglot

    text = sql.strip().rstrip(";").strip()
    try:
        tree = sqlglot.parse_one(text, read=sqlglot_dialect(dialect))
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return " ".join(text.split())
    if tree is None:
        return " ".join(text.split())
    return tree.sql(dialect=sqlglot_dialect(dialect), normalize=True, comments=False)


@dataclass(frozen=True)
class Facts:
    """What the project needs from one parse of a query (kept small: no syntax tree)."""

    error: str | None  # parse error with line/col, None when sqlglot reads the query
    is_query: bool
    named_selects: tuple[str, ...]
    tables: tuple[tuple[str, ...], ...]  # (catalog?, db?, name), CTEs excluded, first-seen order


def _key(sql: str) -> str:
    return sql.strip().rstrip(";").strip()


@lru_cache(maxsize=65536)
def _facts(text: str, dialect: str | None) -> Facts:
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(text, read=dialect)
    except sqlglot.errors.ParseError as err:
        first = err.errors[0] if err.errors else {}
        desc = first.get("description") or str(err).splitlines()[0]
        return Facts(f"line {first.get('line', '?')}, col {first.get('col', '?')}: {desc}", False, (), ())
    except sqlglot.errors.TokenError as err:
        return Facts(str(err), False, (), ())
    if tree is None:
        return Facts(None, False, (), ())
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    tables: list[tuple[str, ...]] = []
    for table in tree.find_all(exp.Table):
        if not table.name:
            continue
        parts = tuple(p for p in (table.catalog, table.db, table.name) if p)
        if len(parts) == 1 and parts[0].lower() in ctes:
            continue
        if parts not in tables:
            tables.append(parts)
    if isinstance(tree, exp.Query):
        return Facts(None, True, tuple(tree.named_selects), tuple(tables))
    return Facts(None, False, (), tuple(tables))


def facts(sql: str, dialect: str | None) -> Facts:
    """One parse per (query, sqlglot dialect) per process: plan's checks, dependency
    ordering, the engine encoders and apply all share it."""
    return _facts(_key(sql), dialect)


def referenced_tables(sql: str, dialect: str) -> list[tuple[str, ...]]:
    """Tables and views a query reads, as name parts (catalog?, db?, name), CTEs excluded."""
    return list(facts(sql, sqlglot_dialect(dialect)).tables)


def parse_error(sql: str, dialect: str) -> str | None:
    """A parse error message (with line/col) or None when sqlglot reads the query."""
    return facts(sql, sqlglot_dialect(dialect)).error


def query_problem(sql: str, dialect: str) -> str | None:
    """Why `sql` is not exactly one query (SELECT / WITH / VALUES / set operation), or
    None. SQL that sqlglot cannot parse, or a dialect it does not know, is not judged
    here (validate warns about it)."""
    import sqlglot
    from sqlglot import exp

    if dialect not in _DIALECTS:
        return None
    try:
        parsed = [s for s in sqlglot.parse(sql, read=sqlglot_dialect(dialect)) if s is not None]
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return None
    if len(parsed) != 1:
        return f"a view is exactly one query; this SQL holds {len(parsed)} statements"
    tree = parsed[0]
    if not isinstance(tree, (exp.Query, exp.Values)):
        kind = tree.key.upper() if isinstance(tree, (exp.Drop, exp.Insert, exp.Create, exp.Delete, exp.Update,
                                                      exp.Command, exp.Alter)) else "not a query"
        return f"a view is one SELECT, WITH or VALUES query; this SQL is {kind}"
    return None
