"""What `viewsync events` and `viewsync lineage` print, and the emitter an
apply uses. Rendering is pure; opening things is at the top."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from reconciler.events.config import build_sinks, catalog_kinds, sink_secrets
from reconciler.events.dispatch import Emitter
from reconciler.events.lineage import Lineage, lineage_of_spec
from reconciler.source.config import Config


def open_emitter(config: Config, root: Path, engine: Engine, views: Mapping[Any, Any] | None = None,
                 log: Callable[[str], None] | None = None) -> Emitter:
    """The emitter of a repository: the sinks its `config` sets up (paths under `root`), over
    the state store `engine`; `views` (declared ViewId -> ViewSpec) lets lineage expand
    `SELECT *` over declared views."""
    known = {str(v): [c.name for c in spec.columns] for v, spec in (views or {}).items()}
    return Emitter(engine, config.project, build_sinks(config, root), catalog_kinds(config), known, log,
                   secrets=config.secrets | sink_secrets(config))


def declared_lineage(views: Mapping[Any, Any], view: Any) -> Lineage:
    known = {str(v): [c.name for c in spec.columns] for v, spec in views.items()}
    return lineage_of_spec(str(view), views[view].canonical(), known)


# ------------------------------------------------------------------ events
def events_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No events.\n"
    lines = []
    for r in rows:
        states = ", ".join(f"{d['sink']}:{d['status']}" for d in r["deliveries"]) or "no sink"
        line = f"{r['at']:%Y-%m-%d %H:%M:%S}  {r['run_id'][:8]}  {r['type']:<18} {r['subject']:<40} {states}"
        errors = [f"{d['sink']}: {d['last_error']}" for d in r["deliveries"]
                  if d["status"] != "delivered" and d["last_error"]]
        if errors:
            line += "  (" + "; ".join(errors) + ")"
        lines.append(line)
    return "\n".join(lines) + "\n"


def events_json(rows: list[dict[str, Any]]) -> str:
    return json.dumps([{**r, "at": r["at"].isoformat()} for r in rows], indent=2, default=str) + "\n"


# ----------------------------------------------------------------- lineage
def lineage_text(lin: Lineage) -> str:
    lines = [f"{lin.view} reads:"]
    lines += [f"  {t}" for t in lin.tables] or ["  (nothing)"]
    if lin.columns:
        lines.append("columns:")
        width = max(len(n) for n in lin.columns)
        for name, inputs in lin.columns.items():
            src = ", ".join(f"{i.table}.{i.column} ({i.kind.lower()})" for i in inputs) or "(no column)"
            lines.append(f"  {name:<{width}} <- {src}")
    if lin.indirect:
        lines.append("also depends on (join keys, filters, grouping, sorting):")
        lines += [f"  {i.table}.{i.column} ({i.kind.lower()})" for i in lin.indirect]
    if lin.error:
        lines.append(f"Warning: {lin.error}")
    return "\n".join(lines) + "\n"


def _dot_id(text: str) -> str:
    return json.dumps(text)


def lineage_dot(lin: Lineage) -> str:
    """Graphviz: one record node per table (its columns that feed the view) and the view."""
    used: dict[str, set[str]] = {t: set() for t in lin.tables}
    for inputs in lin.columns.values():
        for i in inputs:
            used.setdefault(i.table, set()).add(i.column)
    lines = ["digraph lineage {", "  rankdir=LR;", "  node [shape=record];"]

    def record(name: str, cols: list[str]) -> str:
        esc = [c.replace("|", "\\|").replace("{", "\\{").replace("}", "\\}").replace('"', '\\"') for c in cols]
        fields = "|".join(f"<{i}> {c}" for i, c in enumerate(esc))
        label = name.replace('"', '\\"') + ("|" + fields if fields else "")
        return f'  {_dot_id(name)} [label="{label}"];'

    for table, cols in used.items():
        lines.append(record(table, sorted(cols)))
    lines.append(record(lin.view, list(lin.columns)))
    for o, inputs in enumerate(lin.columns.values()):
        for i in inputs:
            src = sorted(used[i.table]).index(i.column)
            lines.append(f"  {_dot_id(i.table)}:{src} -> {_dot_id(lin.view)}:{o} [label={_dot_id(i.kind.lower())}];")
    for t in lin.tables:
        if not used[t]:  # read (joined, filtered) but no column copied
            lines.append(f"  {_dot_id(t)} -> {_dot_id(lin.view)};")
    lines.append("}")
    return "\n".join(lines) + "\n"
