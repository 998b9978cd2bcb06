"""View dependencies: which declared views a view's SQL reads, dependency
order and cycles. Iterative and linear in views + references (a 100,000-view
chain orders like a flat list); SQL is parsed only for the views visited."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TypeVar

from reconciler.core import sql as vsql
from reconciler.core.model import ViewId, ViewSpec

Key = tuple[str, str, str]
N = TypeVar("N")
V = TypeVar("V")


def index(universe: Iterable[ViewId]) -> dict[Key, ViewId]:
    """Case-insensitive lookup of views by (catalog, namespace, name)."""
    return {(v.catalog.lower(), v.schema.lower(), v.name.lower()): v for v in universe}


def candidates(parts: tuple[str, ...] | list[str], view: ViewId, spec: ViewSpec,
               catalogs: Collection[str] | None = None) -> list[Key]:
    """The (catalog, namespace, name) keys, lower case, that a table reference `parts` in `view`'s
    SQL may mean, first match wins. The one resolution of references: the dependency order, the
    preview rewrite and the data review's dependents all use it.

    One part is a name in the view's default namespace (its own schema unless it declares one);
    two parts are namespace.name; three or more are catalog.namespace....name. One or two parts
    look in the view's default catalog first, then in its own.

    With `catalogs` (the configured ones), a default catalog that is not configured is not
    looked in, and three or more parts whose first is not a configured catalog are a nested
    namespace in the view's default catalog, as Spark reads them.
    """
    namespace = ".".join(spec.default_namespace) if spec.default_namespace else view.schema
    catalog = spec.default_catalog or view.catalog
    low = [p.lower() for p in parts]
    known = None if catalogs is None else {c.lower() for c in catalogs}
    if known is not None and catalog.lower() not in known:
        catalog = view.catalog
    if len(low) == 1:
        return [(catalog.lower(), namespace.lower(), low[0]), (view.catalog.lower(), namespace.lower(), low[0])]
    if len(low) == 2:
        return [(catalog.lower(), low[0], low[1]), (view.catalog.lower(), low[0], low[1])]
    if known is not None and low[0] not in known:
        return [(catalog.lower(), ".".join(low[:-1]), low[-1])]
    return [(low[0], ".".join(low[1:-1]), low[-1])]


def lookup(parts: tuple[str, ...] | list[str], view: ViewId, spec: ViewSpec, by_key: Mapping[Key, V]) -> V | None:
    """What `by_key` holds for the first of `candidates(parts, view, spec)` it has, else None."""
    return next((by_key[k] for k in candidates(parts, view, spec) if k in by_key), None)


def dependencies(view: ViewId, spec: ViewSpec, by_key: Mapping[Key, ViewId]) -> set[ViewId]:
    """Views in `by_key` that `spec`'s SQL reads (any representation), itself included
    when it reads itself (a cycle)."""
    found: set[ViewId] = set()
    for rep in spec.representations:
        for parts in vsql.referenced_tables(rep.sql, rep.dialect):
            hit = lookup(parts, view, spec, by_key)
            if hit is not None:
                found.add(hit)
    return found


def topological(roots: Iterable[N], edges: Callable[[N], Iterable[N]],
                key: Callable[[N], object]) -> tuple[list[N], list[N] | None]:
    """Every node reachable from `roots`, each after the nodes it points to, and the
    first cycle found (as a path that returns to its start) or None. Iterative DFS;
    edges(n) is asked once per node. Deterministic: roots and edges visited sorted by key."""
    done: set[N] = set()
    on_path: dict[N, int] = {}  # node -> position on the current path
    path: list[N] = []
    order: list[N] = []
    for root in sorted(roots, key=key):  # type: ignore[arg-type]
        if root in done:
            continue
        stack: list[tuple[N, list[N]]] = [(root, sorted(edges(root), key=key, reverse=True))]  # type: ignore[arg-type]
        on_path[root] = 0
        path.append(root)
        while stack:
            node, todo = stack[-1]
            if todo:
                nxt = todo.pop()
                if nxt in done:
                    continue
                if nxt in on_path:
                    return order, path[on_path[nxt]:] + [nxt]
                on_path[nxt] = len(path)
                path.append(nxt)
                stack.append((nxt, sorted(edges(nxt), key=key, reverse=True)))  # type: ignore[arg-type]
                continue
            stack.pop()
            path.pop()
            del on_path[node]
            done.add(node)
            order.append(node)
    return order, None


def order_views(roots: Iterable[ViewId], specs: Mapping[ViewId, ViewSpec]) -> tuple[list[ViewId], list[ViewId] | None]:
    """Views reachable from `roots` through the SQL of `specs`, dependencies first; and a cycle."""
    by_key = index(specs)

    def edges(v: ViewId) -> Iterable[ViewId]:
        spec = specs.get(v)
        return dependencies(v, spec, by_key) if spec is not None else ()

    return topological(roots, edges, ViewId.key)


def find_cycle(specs: Mapping[ViewId, ViewSpec]) -> list[ViewId] | None:
    """A dependency cycle among all these views (parses every view's SQL)."""
    return order_views(specs, specs)[1]
