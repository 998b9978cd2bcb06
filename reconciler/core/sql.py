"""sqlglot helpers: normalisation for comparison, referenced tables; and Spark SQL's quoting of
identifiers and string literals (the one copy).

sqlglot is imported on first use: a no-op plan never parses SQL, and the
import is a tenth of its start-up. Each query is parsed at most once per
process (`facts`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # ('$' also allows a final newline, as before)


def spark_ident(name: str) -> str:
    """`name` as a Spark SQL identifier: back-quoted, a back quote doubled."""
    return "`" + name.replace("`", "``") + "`"


def quoted_ident(name: str) -> str:
    """`name` as a standard SQL identifier (Trino, PostgreSQL): double-quoted, a double quote doubled."""
    return '"' + name.replace('"', '""') + '"'


def spark_name(name: str) -> str:
    """`name` as Spark SQL reads it: plain when it is a plain identifier, else back-quoted."""
    return name if _PLAIN.match(name) else spark_ident(name)


def spark_string(text: str) -> str:
    """`text` as a Spark SQL string literal (the default parser: backslash escapes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

# viewsync dialect name -> sqlglot dialect (None = sqlglot's generic dialect)
_DIALECTS: dict[str, str | None] = {
    "spark": "spark", "trino": "trino", "presto": "presto", "athena": "athena", "hive": "hive",
    "flink": "hive", "postgres": "postgres", "mysql": "mysql", "sqlite": "sqlite",
    "redshift": "redshift", "snowflake": "snowflake", "bigquery": "bigquery", "duckdb": "duckdb",
    "databricks": "databricks", "ansi": None,
}


def known_dialects() -> frozenset[str]:
    """The dialects viewsync names itself (sqlglot knows more: `knows`)."""
    return frozenset(_DIALECTS)


@lru_cache(maxsize=256)
def _sqlglot_names() -> frozenset[str]:
    from sqlglot.dialects.dialect import Dialects

    return frozenset(d.value for d in Dialects if d.value)


def knows(dialect: str) -> bool:
    """Whether sqlglot reads `dialect` (viewsync's own names, then sqlglot's: `oracle`, `tsql`...)."""
    return dialect in _DIALECTS or dialect in _sqlglot_names()


def sqlglot_dialect(dialect: str) -> str | None:
    if dialect in _DIALECTS:
        return _DIALECTS[dialect]
    return dialect if dialect in _sqlglot_names() else None


def closest_dialect(dialect: str, custom: frozenset[str] | set[str] = frozenset()) -> str | None:
    """The known or custom dialect a typo most likely meant (`trinoo` -> `trino`), or None."""
    import difflib

    names = sorted({*_DIALECTS, *_sqlglot_names(), *custom})
    close = difflib.get_close_matches(dialect, names, n=1, cutoff=0.75)
    return close[0] if close else None


@lru_cache(maxsize=4096)
def normalize(sql: str, dialect: str) -> str:
    """A canonical text of `sql` for comparison; falls back to whitespace-collapsed text."""
    text = _key(sql)
    parsed = _parsed(text, sqlglot_dialect(dialect))
    if len(parsed.statements) != 1:
        return " ".join(text.split())
    # Generating text reads the shared tree without changing it.
    return str(parsed.statements[0].sql(dialect=sqlglot_dialect(dialect), normalize=True, comments=False))


@dataclass(frozen=True)
class Facts:
    """What the project needs from one parse of a query (kept small: no syntax tree)."""

    error: str | None  # parse error with line/col, None when sqlglot reads the query
    is_query: bool
    named_selects: tuple[str, ...]
    tables: tuple[tuple[str, ...], ...]  # (catalog?, db?, name), CTEs excluded, first-seen order
    outputs: tuple[str, ...] | None = None  # output names ("" = unnamed expression); None = a star or unknown
    problem: str | None = None  # why the SQL is not exactly one query (see query_problem)
    error_offset: int | None = None  # where the parse error is: 0-based offset into the trimmed SQL


def _key(sql: str) -> str:
    return sql.strip().rstrip(";").strip()


@dataclass(frozen=True)
class Parsed:
    """One parse of a text: its statements (sqlglot trees shared by every caller in the
    process, so copy one before changing it), or the parse error."""

    statements: tuple[Any, ...]
    error: str | None
    empty: bool = False  # read, but no statement in it (only comments or semicolons)
    error_offset: int | None = None  # 0-based offset into the text of the token at fault


@lru_cache(maxsize=4096)  # ~7 KB a simple query: an apply's views stay parsed between plan and writes
def _parsed(text: str, dialect: str | None) -> Parsed:
    import sqlglot

    try:
        statements = tuple(s for s in sqlglot.parse(text, read=dialect) if s is not None)
    except sqlglot.errors.ParseError as err:
        first = err.errors[0] if err.errors else {}
        desc = first.get("description") or str(err).splitlines()[0]
        return Parsed((), f"line {first.get('line', '?')}, col {first.get('col', '?')}: {desc}",
                      error_offset=_offset(text, first))
    except sqlglot.errors.TokenError as err:
        return Parsed((), str(err))
    if not statements:
        return Parsed((), f"line ?, col ?: No expression was parsed from '{text}'", empty=True)
    return Parsed(statements, None)


def _offset(text: str, error: dict[str, Any]) -> int | None:
    """The offset of the token sqlglot stopped at: its `col` is the 1-based column of the
    token's last character on `line`."""
    line, col, token = error.get("line"), error.get("col"), str(error.get("highlight") or "")
    if not isinstance(line, int) or not isinstance(col, int) or line < 1:
        return None
    lines = text.split("\n")
    if line > len(lines):
        return None
    start = sum(len(x) + 1 for x in lines[:line - 1])
    return min(start + max(0, col - len(token.split("\n")[-1])), len(text))


def tree(sql: str, dialect: str | None) -> Any | None:
    """A fresh copy of the syntax tree of a one-statement `sql` (None when sqlglot cannot
    read it or it holds several statements), for callers that change the tree."""
    shared = shared_tree(sql, dialect)
    return shared.copy() if shared is not None else None


def shared_tree(sql: str, dialect: str | None) -> Any | None:
    """The process's own syntax tree of a one-statement `sql` (None as for `tree`), not
    copied: for readers only, never to be changed."""
    parsed = _parsed(_key(sql), dialect)
    return parsed.statements[0] if len(parsed.statements) == 1 else None


def first_select(node: Any) -> Any:
    """The SELECT that names a query's output (the leftmost one of a UNION), or None."""
    from sqlglot import exp

    while isinstance(node, exp.SetOperation):
        node = node.this
    while isinstance(node, exp.Subquery):
        node = node.this
    return node if isinstance(node, exp.Select) else None


def _outputs(node: Any) -> tuple[str, ...] | None:
    from sqlglot import exp

    first = first_select(node)
    if first is None:
        return None
    names = []
    for sel in first.selects:
        if isinstance(sel, exp.Star) or (isinstance(sel, exp.Column) and isinstance(sel.this, exp.Star)):
            return None
        names.append(sel.alias_or_name if isinstance(sel, (exp.Alias, exp.Column)) else "")
    return tuple(names)


def _problem(statements: tuple[Any, ...]) -> str | None:
    from sqlglot import exp

    if len(statements) != 1:
        return f"a view is exactly one query; this SQL holds {len(statements)} statements"
    node = statements[0]
    if not isinstance(node, (exp.Query, exp.Values)):
        kind = node.key.upper() if isinstance(node, (exp.Drop, exp.Insert, exp.Create, exp.Delete, exp.Update,
                                                      exp.Command, exp.Alter)) else "not a query"
        return f"a view is one SELECT, WITH or VALUES query; this SQL is {kind}"
    return None


@lru_cache(maxsize=65536)
def _facts(text: str, dialect: str | None) -> Facts:
    from sqlglot import exp

    parsed = _parsed(text, dialect)
    if parsed.error is not None:
        return Facts(parsed.error, False, (), (), None, _problem(()) if parsed.empty else None,
                     parsed.error_offset)
    tables: list[tuple[str, ...]] = []
    for statement in parsed.statements:
        ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
        for table in statement.find_all(exp.Table):
            if not table.name:
                continue
            parts = tuple(p for p in (table.catalog, table.db, table.name) if p)
            if len(parts) == 1 and parts[0].lower() in ctes:
                continue
            if parts not in tables:
                tables.append(parts)
    problem = _problem(parsed.statements)
    only = parsed.statements[0] if len(parsed.statements) == 1 else None
    if isinstance(only, exp.Query):
        return Facts(None, True, tuple(only.named_selects), tuple(tables), _outputs(only), problem)
    return Facts(None, False, (), tuple(tables), None, problem)


def facts(sql: str, dialect: str | None) -> Facts:
    """One parse per (query, sqlglot dialect) per process: plan's checks, dependency
    ordering, the engine encoders, lineage and apply all share it."""
    return _facts(_key(sql), dialect)


def output_names(sql: str, dialect: str | None, count: int) -> list[str] | None:
    """Names of the query's `count` output columns ("" for an expression without a name);
    None when sqlglot cannot tell (a star, a different column count, unparsable SQL)."""
    names = facts(sql, dialect).outputs
    return list(names) if names is not None and len(names) == count else None


def output_offset(sql: str, dialect: str | None, index: int, count: int) -> int | None:
    """0-based offset in `sql` of output column `index` of `count` (where its expression
    starts); None when sqlglot cannot tell (a star, a different column count...)."""
    node = shared_tree(sql, dialect)
    first = first_select(node) if node is not None else None
    if first is None or output_names(sql, dialect, count) is None:
        return None
    starts = [n.meta["start"] for n in first.selects[index].walk() if "start" in n.meta]
    # sqlglot's offsets are into the trimmed text (_key); the spec's SQL is trimmed alike.
    return min(starts) + (len(sql) - len(sql.lstrip())) if starts else None


def table_parts(table: Any) -> tuple[str, ...]:
    """A sqlglot table reference's name parts (catalog?, schema parts..., name), nested namespaces included."""
    return tuple(p.name for p in table.parts if p.name)


def referenced_tables(sql: str, dialect: str) -> list[tuple[str, ...]]:
    """Tables and views a query reads, as name parts (catalog?, db?, name), CTEs excluded."""
    return list(facts(sql, sqlglot_dialect(dialect)).tables)


def parse_error(sql: str, dialect: str) -> str | None:
    """A parse error message (with line/col) or None when sqlglot reads the query."""
    return facts(sql, sqlglot_dialect(dialect)).error


def query_problem(sql: str, dialect: str) -> str | None:
    """Why `sql` is not exactly one query (SELECT / WITH / VALUES / set operation), or
    None. SQL that sqlglot cannot parse in a dialect it knows is not a query either (a
    `WHERE` without its condition must not reach a catalog); a dialect sqlglot does not
    know is not judged here."""
    if not knows(dialect):
        return None
    found = facts(sql, sqlglot_dialect(dialect))
    if found.error is not None and found.problem is None:
        return f"the {dialect} SQL does not parse ({found.error})"
    return found.problem


def parse_error_offset(sql: str, dialect: str | None) -> int | None:
    """Where in `query_text(sql)` sqlglot (in its `dialect`, None: generic) stopped reading, or None."""
    return facts(sql, dialect).error_offset


def query_text(sql: str) -> str:
    """The text sqlglot reads of a view's SQL: trimmed, without a final semicolon. Offsets of
    `table_references` are into it."""
    return _key(sql)


@dataclass(frozen=True)
class TableReference:
    parts: tuple[str, ...]  # (catalog?, db?, name) as written, unquoted
    start: int  # offsets into query_text(sql): the reference's first and last character
    end: int
    aliased: bool  # followed by an alias of its own (`FROM sales.orders o`)


def table_references(sql: str, dialect: str | None) -> list[TableReference] | None:
    """Every place the query reads a table or view (CTE names excluded), with its span in
    the text, so a caller can point one reference elsewhere and keep the rest of the SQL as
    written. None when sqlglot cannot read the query or cannot place a reference."""
    from sqlglot import exp

    node = shared_tree(sql, dialect)
    if node is None:
        return None
    text = _key(sql)
    ctes = {cte.alias_or_name.lower() for cte in node.find_all(exp.CTE)}
    out: list[TableReference] = []
    for table in node.find_all(exp.Table):
        if not table.name or not isinstance(table.this, exp.Identifier):
            continue
        parts = tuple(p for p in (table.catalog, table.db, table.name) if p)
        if len(parts) == 1 and parts[0].lower() in ctes:
            continue
        idents = [p for p in table.parts if isinstance(p, exp.Identifier)]
        if not idents or any("start" not in p.meta for p in idents):
            return None
        start, end = idents[0].meta["start"], idents[-1].meta["end"]
        # A quoted identifier's span may or may not cover its quotes: take them in.
        if start > 0 and text[start - 1] in "`\"" and text[start] not in "`\"":
            start -= 1
        if end + 1 < len(text) and text[end + 1] in "`\"" and text[end] not in "`\"":
            end += 1
        out.append(TableReference(parts, start, end, bool(table.alias)))
    out.sort(key=lambda r: r.start)
    return out
