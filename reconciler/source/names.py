"""Names that reach a catalog (catalog, schema, view, column): no control or
invisible characters and no surrounding white space, by Unicode category.

The JSON Schema says the same with explicit character lists (both schema
engines read those alike); this check is the one that knows Unicode."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any

# Cc controls, Cf format (zero-width, BOM, bidi), Zl/Zp separators, Cs/Co/Cn.
_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def problem(name: str) -> str | None:
    """Why `name` is unusable, or None."""
    for ch in name:
        if unicodedata.category(ch) in _INVISIBLE:
            return f"invalid name {name!r}: invisible or control character U+{ord(ch):04X}"
    if name != name.strip() or (name and (unicodedata.category(name[0]) == "Zs"
                                          or unicodedata.category(name[-1]) == "Zs")):
        return f"invalid name {name!r}: surrounding white space"
    return None


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
            msg = problem(col["name"])
            if msg:
                yield ("views", i, "columns", j, "name"), msg
