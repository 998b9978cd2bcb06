"""sqlglot helpers: normalisation for comparison, referenced tables.

sqlglot is imported on first use: a no-op plan never parses SQL, and the
import is a tenth of its start-up."""

from __future__ import annotations

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


def referenced_tables(sql: str, dialect: str) -> list[tuple[str, ...]]:
    """Tables and views a query reads, as name parts (catalog?, db?, name), CTEs excluded."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql.strip().rstrip(";"), read=sqlglot_dialect(dialect))
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return []
    if tree is None:
        return []
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    out: list[tuple[str, ...]] = []
    for table in tree.find_all(exp.Table):
        if not table.name:
            continue
        parts = tuple(p for p in (table.catalog, table.db, table.name) if p)
        if len(parts) == 1 and parts[0].lower() in ctes:
            continue
        if parts not in out:
            out.append(parts)
    return out


def parse_error(sql: str, dialect: str) -> str | None:
    """A parse error message (with line/col) or None when sqlglot reads the query."""
    import sqlglot

    try:
        sqlglot.parse_one(sql, read=sqlglot_dialect(dialect))
    except sqlglot.errors.ParseError as err:
        first = err.errors[0] if err.errors else {}
        desc = first.get("description") or str(err).splitlines()[0]
        return f"line {first.get('line', '?')}, col {first.get('col', '?')}: {desc}"
    except sqlglot.errors.TokenError as err:
        return str(err)
    return None


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
