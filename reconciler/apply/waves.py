"""Apply in waves: which planned actions may run at the same time.

A wave holds actions none of which reads another's view, so their writes can
go to the catalog concurrently. Creates and updates come first, a view in the
wave after the last view it reads; drops come after every write, a view in the
wave after the last view that reads it. Pure: no I/O; SQL is read through the
per-process parse cache, so this costs no extra parse after planning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from reconciler.core import sql as vsql
from reconciler.core.model import ViewId, ViewSpec
from reconciler.plan.planner import Action, dependencies


def _reads(items: list[tuple[ViewId, ViewSpec]]) -> Callable[[ViewId, ViewSpec], set[ViewId]]:
    """dependencies() over these views, asked with only the views a query names (by last
    name part), so building every wave stays linear in views and references."""
    by_name: dict[str, list[ViewId]] = {}
    for view, _ in items:
        by_name.setdefault(view.name.lower(), []).append(view)

    def reads(view: ViewId, spec: ViewSpec) -> set[ViewId]:
        named: set[ViewId] = set()
        for rep in spec.representations:
            for parts in vsql.referenced_tables(rep.sql, rep.dialect):
                named.update(by_name.get(parts[-1].lower(), ()))
        named.discard(view)
        return dependencies(view, spec, named) if named else set()

    return reads


def _levels(order: list[int], waits_for: Mapping[int, Iterable[int]]) -> list[list[int]]:
    """Group `order` (a valid sequential order) into levels: each index one level after
    the latest of the indices it waits for."""
    level: dict[int, int] = {}
    for i in order:
        level[i] = 1 + max((level[j] for j in waits_for.get(i, ()) if j in level), default=-1)
    out: list[list[int]] = []
    for i in order:
        while len(out) <= level[i]:
            out.append([])
        out[level[i]].append(i)
    return out


def waves(actions: list[Action], spec_of: Callable[[Action], ViewSpec | None]) -> list[list[int]]:
    """Indices into `actions` (in plan order, which is a valid sequential order), grouped
    into waves to run one after another; `spec_of` gives the SQL-bearing spec of an
    action (desired for writes, before for drops)."""
    writes = [i for i, a in enumerate(actions) if a.action != "drop"]
    drops = [i for i, a in enumerate(actions) if a.action == "drop"]
    out: list[list[int]] = []
    for group, reverse in ((writes, False), (drops, True)):
        specs = {i: s for i in group if (s := spec_of(actions[i])) is not None}
        items = [(actions[i].view, specs[i]) for i in group if i in specs]
        reads = _reads(items)
        index_of = {actions[i].view: i for i in group}
        waits_for: dict[int, list[int]] = {}
        for i in group:
            if i not in specs:
                continue
            for dep in reads(actions[i].view, specs[i]):
                j = index_of[dep]
                # a write waits for the views it reads; a drop waits for the drops of its readers
                waits, on = (j, i) if reverse else (i, j)
                waits_for.setdefault(waits, []).append(on)
        out += _levels(group, waits_for)
    return out
