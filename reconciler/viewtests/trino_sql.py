"""View tests in Trino's SQL: fixture rows as inline `VALUES` relations typed by the input's
columns (`FLAVOR`), and how the shared runner reads Trino's answers (`PROFILE`).

A cell is a literal Trino reads exactly (`DECIMAL '1.50'`, `TIMESTAMP '... UTC'`, `X'..'`), and
each column is cast once to its type, so the view reads the rows the test gives. Nothing here
touches a catalog: a test's query reads only these relations.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from reconciler.core import coltypes
from reconciler.core import sql as vsql
from reconciler.core.coltypes import Array, Map, Prim, Struct, Type
from reconciler.core.model import Column
from reconciler.source.declarations import Declarations
from reconciler.viewtests import trino_order
from reconciler.viewtests.build import Flavor, Prepared
from reconciler.viewtests.runner import POS, TAG, Profile

ident = vsql.quoted_ident  # `name` as a Trino identifier


def string(text: str) -> str:
    """A Trino string literal: no backslash escapes, a quote doubled."""
    return "'" + text.replace("'", "''") + "'"


def trino_type(t: Type) -> str:
    return coltypes.to_trino(t)


def cell(value: Any, t: Type) -> str:  # noqa: C901 - one branch per type family
    """A canonical value (viewtests.values.coerce) as a Trino literal of exactly that value."""
    if value is None:
        return "NULL"
    if isinstance(t, Array):
        return f"CAST(ARRAY[{', '.join(cell(v, t.element) for v in value)}] AS {trino_type(t)})"
    if isinstance(t, Map):
        keys = ", ".join(cell(k, t.key) for k, _ in value)
        vals = ", ".join(cell(v, t.value) for _, v in value)
        return f"CAST(MAP(ARRAY[{keys}], ARRAY[{vals}]) AS {trino_type(t)})"
    if isinstance(t, Struct):
        return f"CAST(ROW({', '.join(cell(v, f.type) for f, v in zip(t.fields, value, strict=True))}) " \
               f"AS {trino_type(t)})"
    assert isinstance(t, Prim)
    name = t.name
    if name == "boolean":
        return "TRUE" if value else "FALSE"
    if name in ("tinyint", "smallint", "int", "bigint"):
        return str(value)
    if name in ("float", "double"):
        if math.isnan(value):
            return "nan()"
        if math.isinf(value):
            return "infinity()" if value > 0 else "-infinity()"
        return f"DOUBLE '{value!r}'"
    if name == "decimal":
        return f"DECIMAL '{value}'"
    if name == "binary":
        return f"X'{value.hex()}'"
    if name == "date":
        return f"DATE '{value.isoformat()}'"
    if name == "timestamp":
        return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='microseconds')}'"
    if name == "timestamp_ltz":  # the canonical value is the instant in UTC
        return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='microseconds')} UTC'"
    if name == "json":
        return f"JSON {string(value)}"
    return string(value)


def text(value: Any, t: Prim) -> str | None:
    """A canonical value as the text `CAST(text AS type)` reads back exactly (binary: base64)."""
    if value is None:
        return None
    name = t.name
    if name == "boolean":
        return "true" if value else "false"
    if name in ("float", "double"):
        return "NaN" if math.isnan(value) else ("Infinity" if value == math.inf else
                                                 "-Infinity" if value == -math.inf else repr(value))
    if name == "binary":
        return base64.b64encode(value).decode("ascii")
    if name == "timestamp":
        return str(value.isoformat(sep=" ", timespec="microseconds"))
    if name == "timestamp_ltz":
        return str(value.isoformat(sep=" ", timespec="microseconds")) + " UTC"
    if name == "date":
        return str(value.isoformat())
    return str(value)


def _by_function(t: Prim) -> str | None:
    """The function that reads a column's text, for the types a CAST from text cannot read."""
    return {"binary": "from_base64", "json": "json_parse"}.get(t.name)


def _read(i: int, t: Prim) -> str:
    function = _by_function(t)
    return f"{function}(t._c{i})" if function else f"t._c{i}"


def _inline(cols: list[Column], types: list[Type], typed_rows: list[list[Any]]) -> str:
    if all(isinstance(t, Prim) for t in types):
        return _unnested(cols, [t for t in types if isinstance(t, Prim)], typed_rows)
    body = ",\n  ".join("(" + ", ".join(cell(v, t) for v, t in zip(r, types, strict=True)) + ")"
                        for r in typed_rows)
    casts = ", ".join(f"CAST(_c{i} AS {trino_type(t)}) AS {ident(c.name)}"
                      for i, (c, t) in enumerate(zip(cols, types, strict=True)))
    raw = ", ".join(f"_c{i}" for i in range(len(cols)))
    return f"SELECT {casts} FROM (VALUES\n  {body}\n) AS t({raw})"


def _unnested(cols: list[Column], types: list[Prim], typed_rows: list[list[Any]]) -> str:
    """Flat rows as one JSON literal of text cells, read as rows of text and cast to the typed rows
    at once (a row cast casts field by field, as CAST(text AS type) does). Planning is nearly all
    of a test's time on Trino, hence the shape (Trino 476, benchmarks/view_tests.py --engine trino):
    - a VALUES list is planned literal by literal (most of a test's time with thousands of cells);
    - a cast per column over the unnested rows is an expression every optimizer pass rewrites
      (~5% slower than one row cast);
    - a constant expression is folded while planning, and the folded rows then travel through
      every pass and into the predicates they infer: `random() >= 0`, always true, keeps the rows
      from being folded, so they are read once when the query runs (~9% less planning)."""
    cells = [[text(v, t) for v, t in zip(r, types, strict=True)] for r in typed_rows]
    payload = json.dumps(cells, ensure_ascii=False, separators=(",", ":"))
    texts = ", ".join(f"_c{i} varchar" for i in range(len(cols)))
    typed = ", ".join(f"_c{i} {'varchar' if _by_function(t) else trino_type(t)}" for i, t in enumerate(types))
    names = ", ".join(f"{_read(i, t)} AS {ident(c.name)}" for i, (c, t) in enumerate(zip(cols, types, strict=True)))
    raw = ", ".join(f"_c{i}" for i in range(len(cols)))
    rows = f"IF(random() >= 0, CAST(CAST(json_parse({string(payload)}) AS array(row({texts}))) AS array(row({typed}))))"
    return f"SELECT {names} FROM UNNEST({rows}) AS t({raw})"


def _empty(cols: list[Column], types: list[Type]) -> str:
    nulls = ", ".join(f"CAST(NULL AS {trino_type(t)}) AS {ident(c.name)}" for c, t in zip(cols, types, strict=True))
    return f"SELECT {nulls} WHERE FALSE"


FLAVOR = Flavor("trino", "Trino", ident, _inline, _empty)


def _branch(i: int, sql: str) -> str:
    # Trino keeps no row order through UNION ALL: position 0 for all (an `ordered` test: below)
    return f"SELECT {i} AS {TAG}, 0 AS {POS}, * FROM (\n{sql}\n)"


def _ordered_branch(i: int, sql: str) -> str | None:
    keys = trino_order.window_order(sql)
    if keys is None:
        return None  # the test runs alone
    return f"SELECT {i} AS {TAG}, row_number() OVER (ORDER BY {keys}) AS {POS}, * FROM (\n{sql}\n)"


def type_of(field: dict[str, Any]) -> Type:
    text = str(field.get("type", ""))
    if text.startswith("time") and not text.startswith("timestamp"):
        return Prim("string")  # time of day: fixtures cannot hold it, compared as text
    try:
        return coltypes.from_trino(text)
    except coltypes.ColumnTypeError:
        return Prim("string")  # a type fixtures cannot hold (interval...): compared as text


def error(e: dict[str, Any], p: Prepared, decl: Declarations) -> str:
    message = (str(e.get("message", "")).splitlines() or [""])[0].strip()
    return f"Trino: [{e.get('class')}] {message}"


PROFILE = Profile("trino", _branch, type_of, error, ordered_in_union=False, ordered_branch=_ordered_branch)
