"""JSON read from a catalog (view metadata, Spark schemas in table parameters...).

CPython's JSON decoder recurses: a document nested about 1,000 levels deep raises
RecursionError. Coming from a catalog that is unreadable content, not a bug, so it
becomes a ValueError like any other malformed JSON, which every reader already turns
into its own decode error."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None
