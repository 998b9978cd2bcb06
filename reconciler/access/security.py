"""`security: definer | invoker` per catalog: which engines enforce it and where it is only
kept as metadata. Pure: the plan and the catalog configuration in, plan warnings out.

Trino honours both modes (Trino-format views on HMS, Athena/Presto views on Glue); Glue
multi-dialect views are definer views enforced through Lake Formation; Spark, Hive, Flink,
Iceberg REST and the managed store keep the mode as metadata that no engine enforces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.plan.planner import Plan

# (catalog type, engine format option value or None) -> the modes an engine enforces there
_ENFORCED: dict[tuple[str, str | None], frozenset[str]] = {
    ("hms", "trino"): frozenset({"definer", "invoker"}),
    ("glue", "athena"): frozenset({"definer", "invoker"}),
    ("glue", "multi-dialect"): frozenset({"definer"}),
}
# the engine format option (and its deprecated name) and its default, per catalog type
_FORMAT_OPTION = {"hms": ("write_format", "spark"), "glue": ("view_format", "athena")}


def enforced(catalog_type: str, options: Mapping[str, Any]) -> frozenset[str]:
    """The security modes an engine enforces for views viewsync writes in this catalog."""
    if catalog_type not in _FORMAT_OPTION:
        return frozenset()
    legacy, default = _FORMAT_OPTION[catalog_type]
    fmt = str(options.get("engine_format") or options.get(legacy) or default)
    return _ENFORCED.get((catalog_type, fmt), frozenset())


def notes(plan: Plan, catalogs: Mapping[str, tuple[str, Mapping[str, Any]]]) -> list[str]:
    """One warning per catalog whose planned creates/updates declare (in their YAML) a mode it only
    records; views that leave `security` at its default are not counted."""
    recorded: dict[str, dict[str, int]] = {}
    for action in plan.actions:
        if action.desired is None or action.view.catalog not in catalogs:
            continue
        if "security" not in action.desired.model_fields_set:  # the default, never chosen: nothing to note
            continue
        kind, options = catalogs[action.view.catalog]
        mode = action.desired.security
        if mode not in enforced(kind, options):
            counts = recorded.setdefault(action.view.catalog, {})
            counts[mode] = counts.get(mode, 0) + 1
    out = []
    for name, counts in sorted(recorded.items()):
        kind = catalogs[name][0]
        modes = ", ".join(f"{m} ({n} view(s))" for m, n in sorted(counts.items()))
        out.append(f"catalog {name!r} ({kind}) only records `security` as metadata, no engine enforces it "
                   f"there: {modes} in this plan")
    return out
