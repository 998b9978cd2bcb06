"""View dependencies: which declared views a view's SQL reads, dependency
order and cycles. Iterative and linear in views + references (a 100,000-view
chain orders like a flat list); SQL is parsed only for the views visited."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from reconciler.core import sql as vsql
from reconciler.core.model import ViewId, ViewSpec

Key = tuple[str, str, str]
N = TypeVar("N")


def index(universe: Iterable[ViewId]) -> dict[Key, ViewId]:
    """Case-insensitive lookup of views by (catalog, namespace, name)."""
    return {(v.catalog.lower(), v.schema.lower(), v.name.lower()): v for v in universe}


def dependencies(view: ViewId, spec: ViewSpec, by_key: Mapping[Key, ViewId]) -> set[ViewId]:
    """Views in `by_key` that `spec`'s SQL reads (any representation), itself included
    when it reads itself (a cycle)."""
    namespace = ".".join(spec.default_namespace) if spec.default_namespace else view.schema
    catalog = spec.default_catalog or view.catalog
    found: set[ViewId] = set()
    for rep in spec.representations:
        for parts in vsql.referenced_tables(rep.sql, rep.dialect):
            lowered = [p.lower() for p in parts]
            if len(lowered) == 1:
                candidates = [(catalog.lower(), namespace.lower(), lowered[0]),
                              (view.catalog.lower(), namespace.lower(), lowered[0])]
            elif len(lowered) == 2:
                candidates = [(catalog.lower(), lowered[0], lowered[1]),
                              (view.catalog.lower(), lowered[0], lowered[1])]
            else:
                candidates = [(lowered[0], ".".join(lowered[1:-1]), lowered[-1])]
            for key in candidates:
                if key in by_key:
                    found.add(by_key[key])
                    break
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
