"""Pinned jars for the tests, through the product's own fetcher (reconciler/jars): the tests may
download; a machine that cannot reach Maven Central skips (fails in CI) with the fetcher's line."""

from __future__ import annotations

from pathlib import Path

from reconciler.jars import maven
from tests.helpers.servers import backend_unavailable


def fetched(*names: str) -> list[Path]:
    """The cached jars of these pinned names, downloaded first when missing."""
    try:
        return [maven.fetch(maven.artifact(name)) for name in names]
    except maven.FetchError as exc:
        backend_unavailable(str(exc))
