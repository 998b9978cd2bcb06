"""The one interface every catalog kind implements.

The planner only ever calls `fetch(schema)` (one bulk read per schema, so a
plan costs O(schemas) catalog calls) and, in apply, `create/update/drop`.
A new catalog kind is one new module with one `CatalogAdapter` subclass,
registered by its `kind` in `reconciler.adapters.REGISTRY`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from reconciler.model import MANAGED_BY, SPEC_DIGEST, Column, LiveView, ViewId, ViewSpec

Strategy = Literal["managed", "delegate", "format-aware", "read-only"]


class AdapterError(Exception):
    """An expected backend failure; the message is shown to the user as-is (no secrets)."""


class SchemaMissing(AdapterError):
    """The schema / database / namespace does not exist in the catalog."""


class ConflictError(AdapterError):
    """The live view changed under us (optimistic concurrency failed)."""


@dataclass(frozen=True)
class Capabilities:
    strategy: Strategy
    writable: bool
    multi_dialect: bool  # stores several representations natively
    native_versions: bool  # the catalog keeps its own version history
    # dialects the catalog can store; None = any dialect
    writable_dialects: frozenset[str] | None = None
    # the catalog rewrites SQL (PostgreSQL, Glue): compare through sqlglot normalisation
    rewrites_sql: bool = False
    # the catalog needs explicit columns in every view it stores
    requires_columns: bool = False
    # fetches wait on a server (True) or are Python work in this process (False, e.g.
    # SQLite): only the former gains from the --parallelism thread pool.
    io_bound_fetch: bool = True
    # the catalog folds names to lower case (HMS, Glue): `Orders` and `orders` are one view.
    # Case-sensitive catalogs (Iceberg, PostgreSQL) must never match them to each other.
    fold_names: bool = False


@dataclass
class SchemaSnapshot:
    """Everything the planner needs to know about one schema, from one fetch."""

    catalog: str
    schema: str
    exists: bool = True
    views: dict[str, LiveView] = field(default_factory=dict)  # keyed by view name
    tables: set[str] = field(default_factory=set)  # names taken by non-view objects
    warnings: list[str] = field(default_factory=list)
    _folded: dict[str, str] | None = field(default=None, repr=False, compare=False)

    def find(self, name: str, fold: bool) -> LiveView | None:
        """The live view called `name`; with `fold` (catalogs that lowercase names,
        see Capabilities.fold_names) matched case-insensitively."""
        live = self.views.get(name)
        if live is not None or not fold:
            return live
        if self._folded is None:
            self._folded = {key.lower(): key for key in self.views}
        key = self._folded.get(name.lower())
        return self.views[key] if key is not None else None

    def has_table(self, name: str, fold: bool) -> bool:
        return name in self.tables or (fold and name.lower() in {t.lower() for t in self.tables})


@dataclass(frozen=True)
class Marker:
    """Ownership marker stamped on every view we write."""

    project: str
    spec_digest: str

    def as_properties(self) -> dict[str, str]:
        return {MANAGED_BY: self.project, SPEC_DIGEST: self.spec_digest}


@dataclass
class WriteContext:
    """Who and why, for adapters that record it natively (Iceberg summary, Glue...)."""

    actor: str = "unknown"
    git_commit: str | None = None
    run_id: str | None = None


@dataclass(frozen=True)
class NativeVersion:
    version: str
    timestamp_ms: int | None
    summary: dict[str, str]
    dialects: tuple[str, ...] = ()


class CatalogAdapter(ABC):
    kind: ClassVar[str]

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self.name = name
        self.options = options
        self.calls = 0  # catalog round trips, counted by the adapter
        self._calls_lock = threading.Lock()

    def count_call(self, n: int = 1) -> None:
        with self._calls_lock:
            self.calls += n

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    @abstractmethod
    def list_schemas(self) -> list[str]:
        """Schemas (dotted namespaces) that exist in the catalog."""

    @abstractmethod
    def fetch(self, schema: str) -> SchemaSnapshot:
        """All views (and the names of other objects) of one schema, in bulk."""

    def storable(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> ViewSpec:
        """What this catalog will hold (and read back) for `spec`, written over `live`
        (None for a create): types widened, defaults resolved. Plan compares this with
        the live spec."""
        return spec.resolved(view)

    def check(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> list[tuple[str, str]]:
        """Reasons this catalog cannot store `spec` (over `live`, the view it would
        replace, if any), as (code, message) plan errors."""
        return []

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        raise AdapterError(f"catalog {self.name!r} ({self.kind}) is read-only")

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        raise AdapterError(f"catalog {self.name!r} ({self.kind}) is read-only")

    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        raise AdapterError(f"catalog {self.name!r} ({self.kind}) is read-only")

    def native_history(self, view: ViewId) -> list[NativeVersion]:
        return []

    def table_schemas(self, tables: list[tuple[str, str]]) -> dict[tuple[str, str], list[Column]]:
        """Columns of the (schema, table) pairs that are tables in this catalog, read in bulk
        (the Spark verifier stubs them); names that are not tables here are left out."""
        return {}

    def describe(self) -> str:
        """Connection description safe to print (no secrets)."""
        return f"{self.name} ({self.kind})"

    def close(self) -> None:  # noqa: B027 - optional hook
        pass
