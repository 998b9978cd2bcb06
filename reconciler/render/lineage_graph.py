"""The lineage graph of a plan (or of one view), as a value: the views the plan changes, the
tables and views they read, and the views that read them (declared and live), with the
edges between them and, where columns changed, which columns of a changed view feed which
columns of a reader. Pure: built from specs and lineage read with sqlglot, no I/O.

`render.mermaid` draws it; a plan keeps it as JSON (`Plan.lineage`, `to_json`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from reconciler.core.model import LiveView, ViewId, ViewSpec
from reconciler.events.lineage import KnownColumns, Lineage, lineage_of_spec

# changed views: their change kind (change_kind categories, `new`, `dropped`); `view`: the one
# view `viewsync lineage` draws; the rest: `table` (an input), `dependent` (a declared reader),
# `live` (a live reader nobody declares), `broken` (a reader Spark found broken or retyped)
NodeKind = Literal["breaking", "unknown", "logic", "additive", "cosmetic", "new", "dropped", "view", "table",
                   "dependent", "live", "broken"]
Role = Literal["changed", "input", "dependent"]


@dataclass(frozen=True)
class Node:
    name: str  # catalog.schema.name, as the SQL names it with defaults filled in
    role: Role
    kind: NodeKind

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "kind": self.kind}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str  # reads `source`
    columns: tuple[tuple[str, str], ...] = ()  # (source column, target column): changed columns only

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "columns": [list(c) for c in self.columns]}


@dataclass
class LineageGraph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    omitted: int = 0  # views left out beyond the bound (changed views, and readers past five per change)

    def to_json(self) -> dict[str, Any]:
        return {"nodes": [n.to_json() for n in self.nodes], "edges": [e.to_json() for e in self.edges],
                "omitted": self.omitted}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LineageGraph:
        return cls([Node(n["name"], n["role"], n["kind"]) for n in d.get("nodes") or []],
                   [Edge(e["source"], e["target"], tuple((str(a), str(b)) for a, b in e.get("columns") or []))
                    for e in d.get("edges") or []], int(d.get("omitted") or 0))


def _key(name: str) -> str:
    return name.lower()


class _Builder:
    def __init__(self, specs: Mapping[ViewId, ViewSpec]) -> None:
        self.specs = specs
        self.known = KnownColumns.of({str(v): [c.name for c in s.columns] for v, s in specs.items() if s.columns})
        self.graph = LineageGraph()
        self.names: dict[str, str] = {}  # lower-cased name -> the name of its node

    def node(self, name: str, role: Role, kind: NodeKind) -> None:
        if _key(name) not in self.names:
            self.names[_key(name)] = name
            self.graph.nodes.append(Node(name, role, kind))

    def lineage(self, view: ViewId, spec: ViewSpec | None) -> Lineage | None:
        return lineage_of_spec(str(view), spec.canonical(), self.known) if spec is not None else None

    def reads(self, reader: str, lin: Lineage | None, changed_columns: Mapping[str, set[str]],
              only_nodes: bool) -> None:
        """Edges into `reader` from what its SQL reads (only from nodes already drawn, when `only_nodes`)."""
        if lin is None:
            return
        for table in lin.tables:
            if _key(table) not in self.names:
                if only_nodes:
                    continue
                self.node(table, "input", "table")
            source = self.names[_key(table)]
            changed = changed_columns.get(_key(source), set())
            pairs = sorted({(i.column, out) for out, inputs in lin.columns.items() for i in inputs
                            if _key(i.table) == _key(table) and i.column.lower() in changed})
            self.graph.edges.append(Edge(source, reader, tuple(pairs)))


def _propagate(readers: list[tuple[str, Lineage | None]], changed: dict[str, set[str]]) -> None:
    """Readers' output columns computed from a changed column are changed too, down the chain
    (a pass per level: readers come in no particular order)."""
    for _ in range(len(readers)):
        grew = False
        for name, lin in readers:
            if lin is None:
                continue
            mine = changed.setdefault(_key(name), set())
            hit = {out.lower() for out, inputs in lin.columns.items()
                   if any(i.column.lower() in changed.get(_key(i.table), ()) for i in inputs)}
            if not hit <= mine:
                mine |= hit
                grew = True
        if not grew:
            return


def changed_columns(before: Lineage | None, after: Lineage | None, kind_cols: Iterable[str]) -> set[str]:
    """Lower-cased output columns whose inputs changed, or that were added, removed or retyped."""
    old, new = (before.columns if before else {}), (after.columns if after else {})
    names = {n.lower() for n in set(old) | set(new) if old.get(n) != new.get(n)}
    return names | {c.lower() for c in kind_cols}


def _declared_column_changes(before: ViewSpec | None, after: ViewSpec | None) -> set[str]:
    b = {c.name.lower(): c.type for c in before.columns} if before is not None else {}
    a = {c.name.lower(): c.type for c in after.columns} if after is not None else {}
    return {n for n in set(a) | set(b) if a.get(n) != b.get(n)} if a and b else set()


_GRAVITY = ("breaking", "dropped", "unknown", "logic", "additive", "new", "cosmetic")


def _kind_of(action: Any) -> NodeKind:
    if action.action == "create":
        return "new"
    if action.action == "drop":
        return "dropped"
    return action.kind.category if action.kind is not None else "unknown"


def plan_graph(actions: Iterable[Any], declared: Mapping[ViewId, ViewSpec], live: Mapping[ViewId, LiveView],
               verification: Mapping[str, Any] | None = None, max_changed: int = 40) -> LineageGraph:
    """The graph of a plan's `actions` (plan.model.Action): each changed view, what it reads, and
    every view that reads it, directly or through others (`verify.impact.dependents`), declared
    or live. `verification`: a plan's Spark verification JSON, whose broken readers are marked.
    Only the `max_changed` gravest changes, and five readers per change, are followed (a first
    plan of thousands of views draws no more than a bounded chart shows); the rest are counted
    in `omitted`."""
    from reconciler.verify.impact import dependents

    specs: dict[ViewId, ViewSpec] = {v: lv.spec for v, lv in live.items() if lv.writable}
    specs.update(declared)
    b = _Builder(specs)
    ordered = sorted(actions, key=lambda a: _GRAVITY.index(_kind_of(a)))
    acts = ordered[:max_changed]
    b.graph.omitted = len(ordered) - len(acts)
    changed: dict[str, set[str]] = {}
    lineages: list[tuple[str, Lineage | None]] = []
    for a in acts:
        b.node(str(a.view), "changed", _kind_of(a))
        old, new = b.lineage(a.view, a.before), b.lineage(a.view, a.desired)
        changed[_key(str(a.view))] = changed_columns(old, new, _declared_column_changes(a.before, a.desired))
        lineages.append((str(a.view), new if new is not None else old))
    for name, lin in lineages:
        b.reads(name, lin, changed, only_nodes=False)
    broken = {_key(str(ViewId(**d["view"]))) for imp in (verification or {}).get("impact") or []
              for d in imp.get("dependents") or [] if d.get("status") in ("broken", "type_changed")}
    readers = dependents([a.view for a in acts], declared, live)
    found = sorted(set().union(*readers.values()) if readers else set(), key=str)
    b.graph.omitted += max(0, len(found) - 5 * max_changed)
    found = found[:5 * max_changed]  # a view read by thousands: the chart shows a few of them
    for d in found:
        if _key(str(d)) in b.names:
            continue  # a changed view itself
        kind: NodeKind = "broken" if _key(str(d)) in broken else "dependent" if d in declared else "live"
        b.node(str(d), "dependent", kind)
    reading = [(b.names[_key(str(d))], b.lineage(d, specs[d])) for d in found
               if d in specs and _key(str(d)) not in changed]
    _propagate(reading, changed)
    for name, lin in reading:
        b.reads(name, lin, changed, only_nodes=True)
    return b.graph


def view_graph(view: ViewId, declared: Mapping[ViewId, ViewSpec]) -> LineageGraph:
    """`viewsync lineage --format mermaid`: one declared view, what it reads and the declared views
    that read it, directly or through others; edges from its columns to its readers' columns."""
    from reconciler.verify.impact import dependents

    b = _Builder(declared)
    b.node(str(view), "changed", "view")
    own = b.lineage(view, declared[view])
    b.reads(str(view), own, {}, only_nodes=False)
    columns = {_key(str(view)): {c.lower() for c in (own.columns if own else {})}}
    readers = sorted(dependents([view], declared, {}).get(view, set()), key=str)
    for d in readers:
        b.node(str(d), "dependent", "dependent")
    reading = [(str(d), b.lineage(d, declared[d])) for d in readers]
    _propagate(reading, columns)
    for name, lin in reading:
        b.reads(name, lin, columns, only_nodes=True)
    return b.graph
