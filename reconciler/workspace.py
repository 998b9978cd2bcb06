"""A repository opened for work: config, declarations, adapters, live state.

This is the I/O edge that plan/apply/drift share: it reads files, opens
adapters and fetches schemas in a thread pool (one bulk call per schema).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from reconciler import declarations as decl_mod
from reconciler import schema_owners
from reconciler.adapters import open_adapter
from reconciler.adapters.base import CatalogAdapter, SchemaSnapshot
from reconciler.config import Config, load_config
from reconciler.errors import UserError
from reconciler.gitinfo import GitInfo
from reconciler.plan import Plan, PlanOptions, build_plan, selected
from reconciler.state import StateStore

T = TypeVar("T")
R = TypeVar("R")


@contextmanager
def bulk_objects() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects.

    Declarations and snapshots are acyclic; with tens of thousands of them alive,
    each automatic full collection re-walks them all (measured: a third of a
    10,000-view no-op plan). Reference counting still frees everything."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class Workspace:
    root: Path
    config: Config
    parallelism: int = 8
    progress: Callable[[int, int], None] | None = None  # (schemas read, schemas to read)
    _adapters: dict[str, CatalogAdapter] = field(default_factory=dict)
    _state: StateStore | None = None

    @classmethod
    def open(cls, root: Path, config_file: Path | None = None, parallelism: int = 8) -> Workspace:
        return cls(root=root, config=load_config(root, config_file), parallelism=max(1, parallelism))

    # -------------------------------------------------------------- adapters
    def adapter(self, name: str) -> CatalogAdapter:
        if name not in self._adapters:
            cat = self.config.catalogs.get(name)
            if cat is None:
                raise UserError(f"unknown catalog {name!r} (viewsync.yaml defines: "
                                f"{', '.join(sorted(self.config.catalogs))})")
            self._adapters[name] = open_adapter(name, {"type": cat.type, **cat.options})
        return self._adapters[name]

    def adapters(self, names: Iterable[str]) -> dict[str, CatalogAdapter]:
        return {n: self.adapter(n) for n in names}

    def catalog_calls(self) -> int:
        return sum(a.calls for a in self._adapters.values())

    def state(self, create: bool = True) -> StateStore:
        """The state store, opened once. Readers pass create=False: an absent store
        reads as empty and nothing is created (plan, drift, history, audit write nothing)."""
        if self._state is None or (create and not self._state.ready):
            if self._state is not None:
                self._state.close()
            self._state = StateStore(self.config.state_url, create=create)
        return self._state

    def close(self) -> None:
        """Release every connection the workspace opened (adapters, state store)."""
        adapters, self._adapters = list(self._adapters.values()), {}
        for a in adapters:
            a.close()
        if self._state is not None:
            self._state.close()
            self._state = None

    # ---------------------------------------------------------- declarations
    def declarations(self, files: decl_mod.Files | None = None) -> decl_mod.Declarations:
        with bulk_objects():
            return decl_mod.load(files if files is not None else decl_mod.read_tree(self.root), self.config)

    # ------------------------------------------------------------------ live
    def fetch(self, catalogs: Iterable[str], declared_schemas: set[tuple[str, str]],
              all_schemas: bool = True) -> dict[tuple[str, str], SchemaSnapshot]:
        """Snapshots of every declared schema, plus every existing schema of the
        catalogs (to find managed views no longer declared and unmanaged ones)."""
        adapters = self.adapters(catalogs)
        targets: set[tuple[str, str]] = {s for s in declared_schemas if s[0] in adapters}
        if all_schemas:
            listed = self._map(lambda name: [(name, s) for s in adapters[name].list_schemas()],
                               sorted(adapters))
            for pairs in listed:
                targets.update(pairs)
        threaded = [t for t in sorted(targets) if adapters[t[0]].capabilities.io_bound_fetch]
        inline = [t for t in sorted(targets) if not adapters[t[0]].capabilities.io_bound_fetch]
        total, done = len(targets), [0]
        lock = threading.Lock()

        def one(t: tuple[str, str]) -> SchemaSnapshot:
            snap = adapters[t[0]].fetch(t[1])
            if self.progress is not None:
                with lock:
                    done[0] += 1
                    self.progress(done[0], total)
            return snap

        results = self._map(one, threaded) + self._map(one, inline, threads=False)
        return {(s.catalog, s.schema): s for s in results}

    def _map(self, fn: Callable[[T], R], items: list[T], threads: bool = True) -> list[R]:
        # AdapterErrors propagate as they are: the CLI translates every expected error once.
        if not threads or self.parallelism == 1 or len(items) < 2:
            return [fn(i) for i in items]
        with ThreadPoolExecutor(max_workers=min(self.parallelism, len(items))) as pool:
            return list(pool.map(fn, items))

    # ------------------------------------------------------------------ plan
    def plan(self, opts: PlanOptions, decl: decl_mod.Declarations,
             git: GitInfo | None = None) -> tuple[Plan, dict[tuple[str, str], SchemaSnapshot]]:
        catalogs = self.catalogs_in_scope(opts)
        desired = {v: s for v, s in decl.views.items() if v.catalog in catalogs}
        with bulk_objects():
            snapshots = self.fetch(catalogs, {(v.catalog, v.schema) for v in desired})
            plan = build_plan(desired, snapshots, self.adapters(catalogs), opts,
                              self.declarations_digest(decl, opts), git)
            self._plan_schema_owners(plan, decl, opts, catalogs)
        return plan, snapshots

    def _plan_schema_owners(self, plan: Plan, decl: decl_mod.Declarations, opts: PlanOptions,
                            catalogs: list[str]) -> None:
        """Declared schema owners that differ from the catalog's (none read when none is declared;
        a --select plan is about views and leaves them out)."""
        declared = {k: v for k, v in decl.schema_owners.items() if k[0] in catalogs}
        if not declared or opts.select:
            return
        plan.schema_owners, notes = schema_owners.plan_changes(declared, self.adapter, set(catalogs))
        plan.warnings.extend(notes)

    def catalogs_in_scope(self, opts: PlanOptions) -> list[str]:
        return [c for c in sorted(self.config.catalogs) if not opts.catalogs or c in opts.catalogs]

    def declarations_digest(self, decl: decl_mod.Declarations, opts: PlanOptions) -> str:
        """Digest of the declarations a plan with these options covers (saved plans compare it)."""
        catalogs = set(self.catalogs_in_scope(opts))
        return decl.digest(v for v in decl.views if v.catalog in catalogs and selected(v, opts))
