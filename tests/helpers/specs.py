"""The one ViewSpec builder of the unit tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reconciler.core.model import ViewSpec


def spec(sql: str = "SELECT 1", *, dialects: Sequence[str] = ("spark",), **fields: Any) -> ViewSpec:
    """A view with `sql` in each of `dialects` (Spark alone by default); any other field by keyword,
    as in a view file (`columns=[{"name": "id", "type": "bigint"}]`; `representations=` overrides)."""
    return ViewSpec.model_validate({"representations": [{"dialect": d, "sql": sql} for d in dialects], **fields})
