"""Declaration changes between two versions of the repository (`plan --base`)."""

from __future__ import annotations

from reconciler.plan.planner import YamlChange, diff_specs
from reconciler.source.declarations import Declarations


def declaration_changes(before: Declarations, head: Declarations) -> list[YamlChange]:
    """Views added, removed or changed (with the fields) from `before` to `head`."""
    changes: list[YamlChange] = []
    for vid in sorted(set(before.views) | set(head.views)):
        a, b = before.views.get(vid), head.views.get(vid)
        if a is None:
            changes.append(YamlChange(vid, "added"))
        elif b is None:
            changes.append(YamlChange(vid, "removed"))
        elif a.canonical() != b.canonical():
            changes.append(YamlChange(vid, "changed", tuple(c.field for c in diff_specs(b, a))))
    return changes
