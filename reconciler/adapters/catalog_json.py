"""JSON exchanged with a catalog (view metadata, Spark schemas in table parameters...).

CPython's JSON decoder and encoder recurse (so do pydantic's model validation and
serialisation): a document nested about 1,000 levels deep raises RecursionError.
Read from a catalog, that is unreadable content, not a bug, so it becomes a
ValueError like any other malformed JSON, which every reader already turns into its
own decode error. Written to a catalog (a column type nested that deep), it is a
value the catalog cannot be sent: `TooDeep`, which the codecs turn into their own
"not storable" error (see formats.common.too_deep)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class TooDeep(ValueError):
    """A value nested too deeply for the (recursive) serialiser that writes it."""


def loads(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to read") from None


@contextmanager
def writing(what: str = "JSON") -> Iterator[None]:
    """Around a recursive serialisation of catalog-bound data (json.dumps, a pydantic
    model_validate / model_dump): RecursionError becomes TooDeep."""
    try:
        yield
    except RecursionError:
        raise TooDeep(f"{what} nested too deeply to write") from None


def dumps(value: Any, **kwargs: Any) -> str:
    """json.dumps for a catalog; raises TooDeep where CPython's encoder would recurse too deep."""
    with writing():
        return json.dumps(value, **kwargs)
