"""A repository opened for work: config, declarations, adapters, live state.

This is the I/O edge that plan/apply/drift share: it reads files, opens
adapters and fetches schemas on worker threads (one bulk call per schema).
A command can start that read first (`prefetch`), so the catalogs answer
while the command imports its code and loads the declarations.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reconciler.adapters import open_adapter
from reconciler.adapters.base import CatalogAdapter, SchemaSnapshot
from reconciler.core.errors import UserError
from reconciler.source.config import VIEWS_DIR, Config, load_config

# Declarations and planning load while a prefetch reads the catalogs (see Workspace.prefetch).
if TYPE_CHECKING:
    from reconciler.core.gitinfo import GitInfo
    from reconciler.plan.planner import Plan, PlanOptions
    from reconciler.source import declarations as decl_mod
    from reconciler.state.store import StateStore

Snapshots = dict[tuple[str, str], SchemaSnapshot]

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


def parallel_map(fn: Callable[[T], R], items: list[T], workers: int) -> list[R]:
    """fn over items on `workers` threads, results in item order; the first error in item
    order is raised once every item has ended. Daemon threads: a command that stops early
    (bad declarations, Ctrl-C) never waits at exit for the reads of a hung catalog."""
    results: list[Any] = [None] * len(items)
    errors: dict[int, BaseException] = {}
    pending = iter(enumerate(items))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                nxt = next(pending, None)
            if nxt is None:
                return
            i, item = nxt
            try:
                results[i] = fn(item)
            except BaseException as exc:  # handed to the caller below
                errors[i] = exc

    threads = [threading.Thread(target=work, name="viewsync-fetch", daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[min(errors)]
    return results


@dataclass(frozen=True)
class _Prefetch:
    """A whole-catalog fetch started ahead: taken by the `fetch` that asks for exactly it."""

    catalogs: tuple[str, ...]
    declared: frozenset[tuple[str, str]]
    result: Future[Snapshots]


@dataclass
class Workspace:
    root: Path
    config: Config
    parallelism: int = 8
    progress: Callable[[int, int], None] | None = None  # (schemas read, schemas to read)
    _adapters: dict[str, CatalogAdapter] = field(default_factory=dict)
    _state: StateStore | None = None
    _prefetch: _Prefetch | None = None
    last_snapshots: Snapshots | None = None  # what the last `plan` read: its lineage graph's live readers
    _opening: threading.Lock = field(default_factory=threading.Lock)  # a prefetch opens adapters too

    @classmethod
    def open(cls, root: Path, config_file: Path | None = None, parallelism: int = 8) -> Workspace:
        return cls(root=root, config=load_config(root, config_file), parallelism=max(1, parallelism))

    # -------------------------------------------------------------- adapters
    def adapter(self, name: str) -> CatalogAdapter:
        with self._opening:
            if name not in self._adapters:
                cat = self.config.catalogs.get(name)
                if cat is None:
                    raise UserError(f"unknown catalog {name!r} (viewsync.yaml defines: "
                                    f"{', '.join(sorted(self.config.catalogs))})")
                adapter = open_adapter(name, {"type": cat.type, **cat.options})
                adapter.concurrency = self.parallelism
                self._adapters[name] = adapter
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
            from reconciler.state.store import StateStore  # SQLAlchemy loads only for commands that use the store

            self._state = StateStore(self.config.state_url, create=create)
        return self._state

    def close(self) -> None:
        """Release every connection the workspace opened (adapters, state store). A prefetch
        still running is abandoned: its daemon threads end with the process."""
        self._take_prefetch()
        adapters, self._adapters = list(self._adapters.values()), {}
        for a in adapters:
            a.close()
        if self._state is not None:
            self._state.close()
            self._state = None

    # ---------------------------------------------------------- declarations
    def declarations(self, files: decl_mod.Files | None = None) -> decl_mod.Declarations:
        from reconciler.source import declarations as decl_mod

        with bulk_objects():
            return decl_mod.load(files if files is not None else decl_mod.read_tree(self.root), self.config)

    def declarations_at(self, ref: str | None) -> decl_mod.Declarations:
        """The declarations of the working tree, or at git `ref`.

        Raises:
            ValidationFailed: a view file or the config is bad (every problem located).
            UserError: `ref` is not a git ref of the repository.
        """
        from reconciler.source import gitsrc

        return self.declarations(gitsrc.files_at(self.root, ref)) if ref else self.declarations()

    # ------------------------------------------------------------------ live
    def prefetch(self, only: Iterable[str] = ()) -> None:
        """Start the fetch a plan of the working tree's declarations will ask for (its catalogs,
        `only` those when given; the schemas its view files name), on a daemon thread.
        The catalog's wait then overlaps the command's own start-up work. Reads only; a later
        fetch that asks for anything else waits for it to end and reads afresh, so a wrong
        guess (a view file with no views) costs a second read, never a wrong plan."""
        catalogs = tuple(self._in_scope(only))
        if not catalogs or self._prefetch is not None:
            return
        declared = frozenset((p.parent.name, p.stem) for p in (self.root / VIEWS_DIR).glob("*/*")
                             if p.suffix in (".yaml", ".yml") and p.parent.name in catalogs)
        for name in catalogs:  # opened here: the thread then imports nothing the command imports too
            self.adapter(name)
        result: Future[Snapshots] = Future()

        def run() -> None:
            try:
                result.set_result(self._fetch(catalogs, declared))
            except BaseException as exc:  # re-raised by the fetch that takes it
                result.set_exception(exc)

        self._prefetch = _Prefetch(catalogs, declared, result)
        threading.Thread(target=run, name="viewsync-prefetch", daemon=True).start()

    def _take_prefetch(self) -> _Prefetch | None:
        """The prefetch, no longer the workspace's."""
        pre, self._prefetch = self._prefetch, None
        return pre

    def _settle_prefetch(self, catalogs: Iterable[str] | None = None,
                         declared: set[tuple[str, str]] | None = None) -> Snapshots | None:
        """The prefetched snapshots when they are what is asked for (its error raised as the
        fetch's own); otherwise None, once the prefetch has ended (no two reads at once)."""
        pre = self._take_prefetch()
        if pre is None:
            return None
        if catalogs is not None and declared is not None and pre.catalogs == tuple(catalogs) \
                and pre.declared == {s for s in declared if s[0] in pre.catalogs}:
            return pre.result.result()
        pre.result.exception()  # wait; its outcome is not what was asked for
        return None

    def fetch(self, catalogs: Iterable[str], declared_schemas: set[tuple[str, str]],
              all_schemas: bool = True) -> Snapshots:
        """Snapshots of every declared schema, plus every existing schema of the
        catalogs (to find managed views no longer declared: there only our own views
        are needed, and catalogs that can filter on the marker read nothing else)."""
        catalogs = list(catalogs)
        ready = self._settle_prefetch(catalogs if all_schemas else None, declared_schemas)
        if ready is not None:
            return ready
        return self._fetch(catalogs, declared_schemas, all_schemas)

    def _fetch(self, catalogs: Iterable[str], declared_schemas: set[tuple[str, str]] | frozenset[tuple[str, str]],
               all_schemas: bool = True) -> Snapshots:
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

        project = self.config.project

        def one(t: tuple[str, str]) -> SchemaSnapshot:
            adapter = adapters[t[0]]
            snap = adapter.fetch(t[1]) if t in declared_schemas else adapter.fetch_owned(t[1], project)
            if self.progress is not None:
                with lock:
                    done[0] += 1
                    self.progress(done[0], total)
            return snap

        results = self._map(one, threaded) + self._map(one, inline, threads=False)
        return {(s.catalog, s.schema): s for s in results}

    def fetch_views(self, names: dict[tuple[str, str], list[str]]) -> Snapshots:
        """Snapshots holding at least the named views of each (catalog, schema), in bulk
        reads: what apply re-reads under its lock."""
        self._settle_prefetch()
        keys = sorted(names)
        adapters = self.adapters({c for c, _ in keys})
        threaded = [k for k in keys if adapters[k[0]].capabilities.io_bound_fetch]
        inline = [k for k in keys if not adapters[k[0]].capabilities.io_bound_fetch]

        def one(k: tuple[str, str]) -> SchemaSnapshot:
            return adapters[k[0]].fetch_views(k[1], names[k])

        results = self._map(one, threaded) + self._map(one, inline, threads=False)
        return {(s.catalog, s.schema): s for s in results}

    def _map(self, fn: Callable[[T], R], items: list[T], threads: bool = True) -> list[R]:
        # AdapterErrors propagate as they are: the CLI translates every expected error once.
        if not threads or self.parallelism == 1 or len(items) < 2:
            return [fn(i) for i in items]
        return parallel_map(fn, items, min(self.parallelism, len(items)))

    # ------------------------------------------------------------------ plan
    def plan(self, opts: PlanOptions, decl: decl_mod.Declarations,
             git: GitInfo | None = None) -> tuple[Plan, Snapshots]:
        from reconciler.plan.planner import build_plan, selected
        from reconciler.plan.replaced import reclaim

        catalogs = self.catalogs_in_scope(opts)
        desired = {v: s for v, s in decl.views.items() if v.catalog in catalogs}
        adapters = self.adapters(catalogs)
        with bulk_objects():
            snapshots = self.fetch(catalogs, {(v.catalog, v.schema) for v in desired})
            # Declared views an engine replaced without our marker that the state shows are ours.
            taken_back = reclaim(snapshots, [v for v in desired if selected(v, opts)], opts.project,
                                 lambda: self.state(create=False).last_versions(catalogs),
                                 lambda c: adapters[c].capabilities.fold_names)
            plan = build_plan(desired, snapshots, adapters, opts, self.declarations_digest(decl, opts), git)
            plan.warnings.extend(taken_back)
            self._plan_schema_owners(plan, decl, opts, catalogs)
        from reconciler.plan import validity

        validity.locate(plan, decl)
        self.last_snapshots = snapshots
        return plan, snapshots

    def _plan_schema_owners(self, plan: Plan, decl: decl_mod.Declarations, opts: PlanOptions,
                            catalogs: list[str]) -> None:
        """Declared schema owners that differ from the catalog's (none read when none is declared;
        a --select plan is about views and leaves them out)."""
        declared = {k: v for k, v in decl.schema_owners.items() if k[0] in catalogs}
        if not declared or opts.select:
            return
        from reconciler.apply import schema_owners

        plan.schema_owners, notes = schema_owners.plan_changes(declared, self.adapter, set(catalogs))
        plan.warnings.extend(notes)

    def catalogs_in_scope(self, opts: PlanOptions) -> list[str]:
        return self._in_scope(opts.catalogs)

    def _in_scope(self, only: Iterable[str]) -> list[str]:
        """The configured catalogs, sorted; `only` those when given (a prefetch must name
        exactly the catalogs its plan will ask for)."""
        wanted = set(only)
        return [c for c in sorted(self.config.catalogs) if not wanted or c in wanted]

    def declarations_digest(self, decl: decl_mod.Declarations, opts: PlanOptions) -> str:
        """Digest of the declarations a plan with these options covers (saved plans compare it)."""
        from reconciler.plan.planner import selected

        catalogs = set(self.catalogs_in_scope(opts))
        return decl.digest(v for v in decl.views if v.catalog in catalogs and selected(v, opts))
