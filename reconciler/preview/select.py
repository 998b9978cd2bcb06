"""The preview set: the views a branch creates or changes since its base, plus every
declared view that reads one of them, directly or through others (they must read the
branch's version, so they get copies too)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from reconciler.core import deps
from reconciler.core.model import ViewId, ViewSpec


@dataclass(frozen=True)
class Member:
    """A view of the preview set and why it is in it."""

    view: ViewId
    reason: str  # "created", "changed", or "reads <view>"


def changed(base: Mapping[ViewId, ViewSpec], head: Mapping[ViewId, ViewSpec]) -> dict[ViewId, str]:
    """Views of `head` that `base` lacks ("created") or declares differently ("changed")."""
    out: dict[ViewId, str] = {}
    for view, spec in head.items():
        before = base.get(view)
        if before is None:
            out[view] = "created"
        elif before.canonical() != spec.canonical():
            out[view] = "changed"
    return out


def preview_set(head: Mapping[ViewId, ViewSpec], roots: Mapping[ViewId, str],
                eligible: Callable[[ViewId], bool] = lambda _: True) -> list[Member]:
    """`roots` (with their reasons) plus every view of `head` that reads one of them,
    transitively; only views `eligible` (writable catalogs) are taken or followed.

    Returns:
        The members, sorted by view.
    """
    by_key = deps.index(head)
    readers: dict[ViewId, set[ViewId]] = {}
    for view, spec in head.items():
        if not eligible(view):
            continue
        for dep in deps.dependencies(view, spec, by_key):
            if dep != view:
                readers.setdefault(dep, set()).add(view)
    found: dict[ViewId, str] = {v: r for v, r in roots.items() if eligible(v)}
    todo = sorted(found)
    while todo:
        view = todo.pop(0)
        for reader in sorted(readers.get(view, ())):
            if reader not in found:
                found[reader] = f"reads {view}"
                todo.append(reader)
    return [Member(v, found[v]) for v in sorted(found)]
