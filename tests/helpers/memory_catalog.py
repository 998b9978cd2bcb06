"""An in-memory catalog for unit tests of the planner, staleness and drift.

It follows the adapter contract the way the real catalogs do (one bulk fetch per
schema, ownership markers in the view, a fingerprint that moves on every write)
without any server, so each planner branch can be set up in a line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reconciler.adapters.base import (
    AdapterError,
    Capabilities,
    CatalogAdapter,
    Marker,
    SchemaSnapshot,
    WriteContext,
)
from reconciler.core.model import LiveView, ViewId, ViewSpec


@dataclass
class StoredView:
    spec: ViewSpec
    managed_by: str | None = None
    spec_digest: str | None = None
    version: int = 1
    writable: bool = True  # False: an object viewsync must never touch (e.g. a materialized view)
    format: str = "memory"


@dataclass
class Store:
    """What the catalog holds: views and tables per schema."""

    views: dict[str, dict[str, StoredView]] = field(default_factory=dict)
    tables: dict[str, set[str]] = field(default_factory=dict)


class MemoryCatalog(CatalogAdapter):
    """Options: `writable` (default True), `fold_names` (default False),
    `dialects` (the dialects it can store; default any), `parallel_writes` (default
    False), `creates_sent_ahead` (default False: creates are sent ahead of their answers, as
    on a Thrift connection), `fail_on` (view names whose write fails with an AdapterError)."""

    kind = "memory"

    def __init__(self, name: str, options: dict[str, Any] | None = None) -> None:
        super().__init__(name, dict(options or {}))
        self.store = Store()
        self.writes: list[tuple[str, ViewId]] = []

    # ------------------------------------------------------------ test set-up
    def add_schema(self, schema: str) -> None:
        self.store.views.setdefault(schema, {})
        self.store.tables.setdefault(schema, set())

    def put(self, view: ViewId, spec: ViewSpec, managed_by: str | None = None, stamp: str | None = None,
            **extra: Any) -> StoredView:
        """A view as if written by someone (stamp defaults to the spec's digest when managed)."""
        self.add_schema(view.schema)
        spec = spec.resolved(view)
        if managed_by is not None and stamp is None:
            stamp = spec.digest()
        stored = StoredView(spec, managed_by, stamp, **extra)
        self.store.views[view.schema][view.name] = stored
        return stored

    def add_table(self, schema: str, name: str) -> None:
        self.add_schema(schema)
        self.store.tables[schema].add(name)

    # -------------------------------------------------------------- contract
    @property
    def capabilities(self) -> Capabilities:
        dialects = self.options.get("dialects")
        writable = bool(self.options.get("writable", True))
        return Capabilities(strategy="managed" if writable else "read-only", writable=writable,
                            writable_dialects=frozenset(dialects) if dialects is not None else None,
                            io_bound_fetch=False, fold_names=bool(self.options.get("fold_names", False)),
                            parallel_writes=bool(self.options.get("parallel_writes", False)),
                            creates_sent_ahead=bool(self.options.get("creates_sent_ahead", False)))

    def list_schemas(self) -> list[str]:
        self.count_call()
        return sorted(self.store.views)

    def fetch(self, schema: str) -> SchemaSnapshot:
        self.count_call()
        if schema not in self.store.views:
            return SchemaSnapshot(self.name, schema, exists=False)
        snap = SchemaSnapshot(self.name, schema, tables=set(self.store.tables.get(schema, set())))
        for name, stored in self.store.views[schema].items():
            snap.views[name] = LiveView(
                id=ViewId(self.name, schema, name), spec=stored.spec, format=stored.format,
                managed_by=stored.managed_by, spec_digest=stored.spec_digest, native_version=str(stored.version),
                fingerprint=f"memory:v{stored.version}:{stored.spec.digest()}:{stored.managed_by}",
                writable=stored.writable)
        return snap

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        self._writable(view)
        if view.name in self.store.views.get(view.schema, {}):
            raise AdapterError(f"{view}: already exists")
        self.put(view, spec, marker.project, marker.spec_digest)
        self.writes.append(("create", view))

    def send_create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> Callable[[], None]:
        """As on a Thrift connection: the create is carried out when it arrives, and its answer
        (a refusal included) is taken later."""
        try:
            self.create(view, spec, marker, ctx)
        except AdapterError as err:
            refusal = err

            def refused() -> None:
                raise refusal
            return refused
        return lambda: None

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        self._writable()
        old = self.store.views[live.id.schema][live.id.name]
        self.put(live.id, spec, marker.project, marker.spec_digest).version = old.version + 1
        self.writes.append(("update", live.id))

    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        self._writable()
        self.store.views.get(live.id.schema, {}).pop(live.id.name, None)
        self.writes.append(("drop", live.id))

    def _writable(self, view: ViewId | None = None) -> None:
        if view is not None and view.name in self.options.get("fail_on", ()):
            raise AdapterError(f"catalog {self.name!r}: writing {view} failed (injected)")
        if not self.capabilities.writable:
            raise AdapterError(f"catalog {self.name!r} (memory) is read-only")
