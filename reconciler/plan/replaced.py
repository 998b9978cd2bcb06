"""Declared views an engine replaced, losing viewsync's ownership marker, that are still ours.

Trino's `CREATE OR REPLACE VIEW` on the Hive Metastore writes a whole new table (Spark's drops
and creates one): the marker parameters viewsync stamped are gone, and the view would read as
unmanaged, taken back only with `--adopt`. The state store still knows better: when the last
version row of the view is a write of ours (create, update or adopt, not a drop), the view is
read as ours, stamped with the digest of that version. Plan then updates it (the update stamps
the marker again) and drift reports it changed out of band, like any other edit made outside
viewsync.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from reconciler.adapters.base import SchemaSnapshot
from reconciler.core.model import ViewId

WRITES = ("create", "update", "adopt")  # version-row actions after which the view is ours


def reclaim(snapshots: Mapping[tuple[str, str], SchemaSnapshot], declared: Iterable[ViewId], project: str,
            last_versions: Callable[[], Mapping[ViewId, Mapping[str, Any]]],
            folds: Callable[[str], bool]) -> list[str]:
    """Marks, in `snapshots`, every declared view without a marker that our state shows
    applied and not dropped as managed by `project`, stamped with its last version's digest.

    Args:
        snapshots: the live views of a plan, changed in place.
        declared: the declared views in scope (a view no longer declared is left unmanaged:
            nothing drops a view that someone else replaced).
        project: this project.
        last_versions: reads the last version row of every view (called only when there is
            a view without a marker to look up).
        folds: whether a catalog matches names case-insensitively.

    Returns:
        One line per view taken back, for the plan's warnings.
    """
    found: list[tuple[ViewId, SchemaSnapshot, str]] = []
    for vid in declared:
        snap = snapshots.get((vid.catalog, vid.schema))
        live = snap.find(vid.name, folds(vid.catalog)) if snap is not None else None
        if snap is not None and live is not None and live.writable and live.managed_by is None:
            found.append((vid, snap, live.id.name))
    if not found:
        return []
    versions = last_versions()
    notes = []
    for vid, snap, name in found:
        live = snap.views[name]
        row = versions.get(vid) or versions.get(live.id)
        if row is None or row.get("action") not in WRITES or not row.get("digest"):
            continue
        # model_copy keeps the adapter's fingerprint and handle: apply's staleness check and
        # the update see the table this plan read.
        snap.views[name] = live.model_copy(update={"managed_by": project, "spec_digest": str(row["digest"])})
        notes.append(f"{vid}: viewsync's ownership marker is gone (the view was replaced outside viewsync, "
                     f"e.g. by CREATE OR REPLACE VIEW in an engine); the state shows this project applied it "
                     f"(version {row.get('version')}), so it is still managed and an apply writes it back")
    return notes
