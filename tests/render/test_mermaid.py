"""The plan's lineage graph and its Mermaid text (issue 42, item 1): readers declared and live,
edges from changed columns to the readers' columns, node kinds, safe ids, a bound on nodes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from reconciler.render import mermaid
from reconciler.render.lineage_graph import Edge, LineageGraph, Node
from tests.helpers.cli import run_cli


def _plan_json(repo: Path) -> dict:  # type: ignore[type-arg]
    result = run_cli(repo, "plan", "--format", "json")
    assert result.code == 0, result.text
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_a_retyped_column_is_breaking_and_its_edges_reach_the_readers_columns(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    sales = sample_repo / "views" / "local" / "sales.yaml"
    text = sales.read_text(encoding="utf-8")
    sales.write_text(text.replace("SELECT order_id, customer_id, amount, ordered_at",
                                  "SELECT order_id, customer_id, CAST(amount AS DOUBLE) AS amount, ordered_at", 1)
                     .replace("{name: amount, type: \"decimal(18,2)\"}", "{name: amount, type: double}"),
                     encoding="utf-8")
    assert run_cli(sample_repo, "generate", "--dialect", "trino").code == 0  # its trino SQL follows the spark SQL
    plan = _plan_json(sample_repo)
    update = next(a for a in plan["actions"] if a["view"]["name"] == "completed_orders")
    assert update["kind"]["category"] == "breaking"
    assert "columns retyped: amount decimal(18,2) → double" in update["kind"]["edits"]
    edges = {(e["source"], e["target"]): [tuple(c) for c in e["columns"]] for e in plan["lineage"]["edges"]}
    assert ("amount", "revenue") in edges[("local.sales.completed_orders", "local.sales.daily_revenue")]
    # down the chain: customer_summary's total_amount comes from amount, and top_customers reads it
    assert ("total_amount", "total_amount") in edges[("local.analytics.customer_summary",
                                                      "local.analytics.top_customers")]
    kinds = {n["name"]: n["kind"] for n in plan["lineage"]["nodes"]}
    assert kinds["local.sales.completed_orders"] == "breaking"
    assert kinds["local.sales.orders"] == "table"

    md = run_cli(sample_repo, "plan", "--format", "markdown").out
    chart = md.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert re.search(r'n\d+ -->\|"amount #8594; revenue[^"]*"\| n\d+', chart), chart
    assert "class n0 breaking" in chart
    text_plan = run_cli(sample_repo, "plan").out
    assert "kind breaking: columns retyped: amount decimal(18,2) → double" in text_plan
    assert "Kinds of change: 1 breaking." in text_plan


def test_no_change_no_graph(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    assert "lineage" not in _plan_json(sample_repo)
    assert "```mermaid" not in run_cli(sample_repo, "plan", "--format", "markdown").out


def hostile_graph(readers: int) -> LineageGraph:
    """Names that would break Mermaid if written as they are, and many readers."""
    odd = 'c.s."x" --> y[1];%% {z}|<b>é'
    nodes = [Node(odd, "changed", "breaking"), Node("c.s.t", "input", "table")]
    nodes += [Node(f"c.s.reader_{i}", "dependent", "dependent") for i in range(readers)]
    edges = [Edge("c.s.t", odd), *[Edge(odd, f"c.s.reader_{i}", (("a|b", f'"q{i}"'),)) for i in range(readers)]]
    return LineageGraph(nodes, edges)


def test_names_are_escaped_and_ids_are_plain() -> None:
    chart = mermaid.draw(hostile_graph(2))
    node_lines = [ln.strip() for ln in chart.splitlines() if re.match(r"\s+n\d+[\[(]", ln)]
    assert len(node_lines) == 4
    for line in node_lines:
        label = re.fullmatch(r'n\d+(\[\(|\[|\()"([^"]*)"(\)\]|\]|\))', line)
        assert label, line
        bare = re.sub(r"#\d+;|<br/>|</?i>", "", label.group(2))  # without entity codes and our own markup
        assert not set(bare) & set('"[]{}|;%<>#'), line
    assert "#34;x#34; --#62; y#91;1#93;" in chart  # "x" --> y[1]
    assert "#233;" in chart  # é


def test_a_large_graph_keeps_the_changed_views_and_says_how_many_more() -> None:
    chart = mermaid.draw(hostile_graph(60), max_nodes=40)
    assert len(re.findall(r"^\s+n\d+[\[(]", chart, re.M)) == 40
    assert 'more["and 22 more"]' in chart
    assert "class n0 breaking" in chart
    assert "n0 -.- more" in chart


def test_a_plan_of_many_changes_follows_the_gravest_and_counts_the_rest() -> None:
    from reconciler.core.model import ViewId
    from reconciler.plan.change_kind import ChangeKind
    from reconciler.plan.model import Action
    from reconciler.render.lineage_graph import plan_graph
    from tests.helpers.specs import spec

    views = {ViewId("c", "s", f"v{i}"): spec(f"SELECT id FROM s.t{i}") for i in range(300)}
    actions = [Action("create", v, "managed", desired=s) for v, s in views.items()]
    worst = ViewId("c", "s", "v299")
    actions[-1] = Action("update", worst, "managed", desired=views[worst], before=spec("SELECT id, x FROM s.t299"),
                         kind=ChangeKind("breaking", ("columns removed or renamed: x",)))
    graph = plan_graph(actions, views, {}, max_changed=40)
    assert graph.omitted == 260
    assert graph.nodes[0].name == "c.s.v299" and graph.nodes[0].kind == "breaking"  # the gravest first
    chart = mermaid.draw(graph)
    assert len(re.findall(r"^\s+n\d+[\[(]", chart, re.M)) == 40
    assert 'more["and 300 more"]' in chart  # 260 changes not followed, 40 tables read not drawn
