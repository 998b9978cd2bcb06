"""What an apply needs of the repository it runs for: its config, its catalogs' adapters and
their bulk reads. `Workspace` is one; apply never imports it (it sits above apply)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from reconciler.adapters.base import CatalogAdapter, SchemaSnapshot
from reconciler.source.config import Config

Snapshots = dict[tuple[str, str], SchemaSnapshot]


class Target(Protocol):
    @property
    def config(self) -> Config: ...

    @property
    def parallelism(self) -> int: ...

    def adapter(self, name: str) -> CatalogAdapter: ...

    def fetch(self, catalogs: Iterable[str], declared_schemas: set[tuple[str, str]],
              all_schemas: bool = True) -> Snapshots: ...

    def fetch_views(self, names: dict[tuple[str, str], list[str]]) -> Snapshots: ...
