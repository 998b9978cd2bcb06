"""Fixture rows as a Flink SQL query: an inline `VALUES` table whose every cell is cast to its
column's Flink type, so Flink reads the rows the test gives, not the types it would infer.

Values are canonical (`reconciler.viewtests.values.coerce`): Decimal, date, naive datetime
(a timestamp with local time zone in UTC, the child's session zone), bytes, tuples for arrays,
maps (key, value pairs) and structs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from reconciler.core import coltypes
from reconciler.core.coltypes import Array, Map, Prim, Struct, Type
from reconciler.core.model import Column

_NUMERIC = {"tinyint", "smallint", "int", "bigint", "float", "double", "decimal"}


def ident(name: str) -> str:
    """A Flink identifier in backquotes (a backquote in it doubled)."""
    return "`" + name.replace("`", "``") + "`"


def string(text: str) -> str:
    """A Flink string literal: standard SQL, a quote doubled, no backslash escapes."""
    return "'" + text.replace("'", "''") + "'"


def _plain(value: Any, t: Type) -> str:
    if isinstance(t, Array):
        if not value:  # Flink's ARRAY[] needs an element: one NULL, removed
            null = literal(None, t.element)
            return f"ARRAY_REMOVE(ARRAY[{null}], {null})"
        return "ARRAY[" + ", ".join(literal(v, t.element) for v in value) + "]"
    if isinstance(t, Map):
        if not value:  # MAP[] needs an entry: a map of two empty arrays, each one NULL removed
            return f"MAP_FROM_ARRAYS({_plain((), Array(t.key))}, {_plain((), Array(t.value))})"
        return "MAP[" + ", ".join(f"{literal(k, t.key)}, {literal(v, t.value)}" for k, v in value) + "]"
    if isinstance(t, Struct):
        return "ROW(" + ", ".join(literal(v, f.type) for f, v in zip(t.fields, value, strict=True)) + ")"
    name = t.name
    if name == "boolean":
        return "TRUE" if value else "FALSE"
    if name in ("float", "double") and not math.isfinite(value):
        return "'NaN'" if math.isnan(value) else ("'Infinity'" if value > 0 else "'-Infinity'")
    if name in _NUMERIC:
        return string(repr(value) if isinstance(value, float) else str(value))
    if name == "binary":
        return f"X'{bytes(value).hex()}'"
    if name == "date":
        return string(value.isoformat())
    if name in ("timestamp", "timestamp_ltz"):
        return string(value.isoformat(sep=" "))
    if name == "time":
        return string(value.isoformat())
    return string(str(value))


def literal(value: Any, t: Type) -> str:
    """A canonical value as a constant Flink SQL expression of exactly type `t`."""
    if value is None:
        return f"CAST(NULL AS {coltypes.to_flink(t)})"
    if isinstance(t, Prim) and t.name == "boolean":
        return _plain(value, t)
    return f"CAST({_plain(value, t)} AS {coltypes.to_flink(t)})"


def inline(columns: Sequence[Column], types: Sequence[Type], rows: Sequence[Sequence[Any]]) -> str:
    """A query returning `rows` (canonical values in column order, at least one) as columns of `types`."""
    names = ", ".join(ident(c.name) for c in columns)
    body = ",\n  ".join("(" + ", ".join(literal(v, t) for v, t in zip(r, types, strict=True)) + ")" for r in rows)
    return f"SELECT * FROM (VALUES\n  {body}\n) AS t({names})"


def empty(columns: Sequence[Column], types: Sequence[Type]) -> str:
    """A query of columns of `types` returning no row."""
    nulls = ", ".join(f"{literal(None, t)} AS {ident(c.name)}" for c, t in zip(columns, types, strict=True))
    return f"SELECT {nulls} FROM (VALUES (1)) AS t(`_`) WHERE FALSE"


def values_query(columns: Sequence[Column], rows: Sequence[Sequence[Any]]) -> str:
    """A query returning `rows` (canonical values in column order) as columns of their declared
    types; no rows: one typed row of NULLs, filtered out."""
    if not columns:
        raise ValueError("a relation needs at least one column")
    types = [coltypes.parse(c.type) for c in columns]
    return inline(columns, types, rows) if rows else empty(columns, types)
