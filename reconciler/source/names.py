"""Names that reach a catalog (catalog, schema, view, column): no control or
invisible characters, by Unicode category. Catalog, schema and view names also
have no surrounding white space; a column name may begin or end with spaces
(U+0020), as Spark allows (`count(*) AS `order count ``), never with other
white space.

The JSON Schema says the same with explicit character lists (both schema
engines read those alike); this check is the one that knows Unicode."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

# Cc controls, Cf format (zero-width, BOM, bidi), Zl/Zp separators, Cs/Co/Cn.
_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def _edge_space(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) == "Zs"


def problem(name: str, *, column: bool = False) -> str | None:
    """Why `name` is unusable, or None; `column`: a column name, which may have surrounding spaces."""
    for ch in name:
        if unicodedata.category(ch) in _INVISIBLE:
            return f"invalid name {name!r}: invisible or control character U+{ord(ch):04X}"
    if column:
        if not name.strip(" "):
            return f"invalid name {name!r}: only spaces" if name else "invalid name '': empty"
        inner = name.strip(" ")
        if _edge_space(inner[0]) or _edge_space(inner[-1]):
            return f"invalid name {name!r}: surrounding white space other than spaces (U+0020)"
        return None
    if name and (_edge_space(name[0]) or _edge_space(name[-1])):
        return f"invalid name {name!r}: surrounding white space"
    return None


def surrounding_spaces(name: str) -> bool:
    """A (valid) column name that begins or ends with a space: worth a warning, as every
    query must quote it with its spaces."""
    return name != name.strip(" ")


def problems(data: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(field path, message) for every bad name in a schema-valid view file."""
    for key in ("catalog", "schema"):
        for part in str(data[key]).split("."):
            msg = problem(part)
            if msg:
                yield (key,), msg
                break
    for i, view in enumerate(data["views"]):
        msg = problem(view["name"])
        if msg:
            yield ("views", i, "name"), msg
        for j, col in enumerate(view.get("columns") or []):
            msg = problem(col["name"], column=True)
            if msg:
                yield ("views", i, "columns", j, "name"), msg
