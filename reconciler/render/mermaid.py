"""A lineage graph (`render.lineage_graph`) drawn as a Mermaid flowchart, which GitHub renders in a
pull-request comment. Pure.

Node ids are `n0`, `n1`...; names and labels are written with Mermaid's entity codes for every
character outside a small safe set, so no view name can break the chart. Each node's class is
its kind (the change's category for a changed view); a large graph keeps `max_nodes` nodes,
changed views first, and says "and N more".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reconciler.render.lineage_graph import Edge, LineageGraph, Node

if TYPE_CHECKING:
    from reconciler.plan.model import Plan

MAX_NODES = 40
MAX_LABEL_COLUMNS = 4
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,:-/()*+=")
_ROLE_ORDER = {"changed": 0, "dependent": 1, "input": 2}
LABELS = {"breaking": "breaking change", "unknown": "change of unknown kind", "logic": "logic change",
          "additive": "columns added", "cosmetic": "cosmetic change", "new": "new view", "dropped": "dropped",
          "view": "view", "table": "table or view read", "dependent": "reads it (declared)",
          "live": "reads it (live, undeclared)", "broken": "reader broken by the change"}
STYLES = {
    "breaking": "fill:#ffd6d6,stroke:#c00000,stroke-width:3px",
    "unknown": "fill:#eeeeee,stroke:#555555,stroke-width:2px,stroke-dasharray:5 3",
    "logic": "fill:#ffe8c2,stroke:#d97b00,stroke-width:2px",
    "additive": "fill:#dcf5dc,stroke:#2e8b2e,stroke-width:2px",
    "cosmetic": "fill:#ffffff,stroke:#999999",
    "new": "fill:#dbe9ff,stroke:#1f5fbf,stroke-width:2px",
    "dropped": "fill:#ffd6d6,stroke:#c00000,stroke-width:2px,stroke-dasharray:5 3",
    "view": "fill:#dbe9ff,stroke:#1f5fbf,stroke-width:2px",
    "table": "fill:#f5f5f5,stroke:#aaaaaa",
    "dependent": "fill:#ffffff,stroke:#333333",
    "live": "fill:#ffffff,stroke:#333333,stroke-dasharray:3 3",
    "broken": "fill:#ffd6d6,stroke:#c00000",
    "more": "fill:#ffffff,stroke:#aaaaaa,stroke-dasharray:2 2",
}


def escape(text: str) -> str:
    """`text` for inside a quoted Mermaid label: every unsafe character as an entity code (`#34;`)."""
    return "".join(ch if ch in _SAFE else f"#{ord(ch)};" for ch in text)


def _shape(node_id: str, node: Node) -> str:
    label = f"{escape(node.name)}<br/><i>{escape(LABELS[node.kind])}</i>"
    if node.role == "input":
        return f'{node_id}[("{label}")]'
    if node.role == "dependent":
        return f'{node_id}("{label}")'
    return f'{node_id}["{label}"]'


def _edge_label(edge: Edge) -> str:
    pairs = [f"{a} → {b}" if a != b else a for a, b in edge.columns]
    if len(pairs) > MAX_LABEL_COLUMNS:
        pairs = [*pairs[:MAX_LABEL_COLUMNS], f"+{len(pairs) - MAX_LABEL_COLUMNS} more"]
    return escape(", ".join(pairs))


def draw(graph: LineageGraph, max_nodes: int = MAX_NODES) -> str:
    """The Mermaid text of `graph` (a `flowchart LR`, no code fence), at most `max_nodes` nodes
    (changed views first, then readers, then inputs) and an "and N more" node for the rest."""
    ordered = sorted(graph.nodes, key=lambda n: _ROLE_ORDER[n.role])
    kept, hidden = ordered[:max_nodes], ordered[max_nodes:]
    ids = {n.name: f"n{i}" for i, n in enumerate(kept)}
    lines = ["flowchart LR"]
    lines += [f"  {_shape(ids[n.name], n)}" for n in kept]
    more = len(hidden) + graph.omitted
    if more:
        lines.append(f'  more["{escape(f"and {more} more")}"]')
    towards_hidden: set[str] = set()
    for e in graph.edges:
        src, dst = ids.get(e.source), ids.get(e.target)
        if src is not None and dst is not None:
            lines.append(f'  {src} -->|"{_edge_label(e)}"| {dst}' if e.columns else f"  {src} --> {dst}")
        elif hidden and (src or dst) and (src or dst) not in towards_hidden:
            towards_hidden.add(str(src or dst))
            lines.append(f"  {src or dst} -.- more")
    used = {n.kind for n in kept} | ({"more"} if more else set())
    lines += [f"  classDef {k} {STYLES[k]}" for k in STYLES if k in used]
    for kind in (k for k in STYLES if k in used and k != "more"):
        lines.append(f"  class {','.join(ids[n.name] for n in kept if n.kind == kind)} {kind}")
    if more:
        lines.append("  class more more")
    return "\n".join(lines) + "\n"


def plan_mermaid(plan: Plan, graph: LineageGraph | None = None, max_nodes: int = MAX_NODES) -> str | None:
    """The Mermaid graph of a plan: `graph` (`render.lineage_graph.plan_graph`), else the one the plan
    keeps (`Plan.lineage`); None when there is none or it is empty."""
    if graph is None and plan.lineage is not None:
        graph = LineageGraph.from_json(plan.lineage)
    if graph is None or not graph.nodes:
        return None
    return draw(graph, max_nodes)


def markdown_lines(plan: Plan, graph: LineageGraph | None = None, max_nodes: int = MAX_NODES) -> list[str]:
    """The plan comment's lineage section: a heading and a ```mermaid block (none when no graph)."""
    text = plan_mermaid(plan, graph, max_nodes)
    if text is None:
        return []
    return ["#### Lineage of the changes", "", "```mermaid", *text.rstrip("\n").splitlines(), "```", ""]
