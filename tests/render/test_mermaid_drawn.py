"""Acceptance (issue 42, "The graph, drawn by Mermaid"): the Mermaid text of the sample's PR
comment is drawn by Mermaid itself (the pinned npm package, tests/render/mermaid_js) in Debian's
headless Chromium, and the drawn SVG has a node for every changed view and every reader of one,
declared and live, styled with its kind. `scripts/mermaid-browser` installs both (.ci/run runs it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.servers import backend_unavailable

JS = Path(__file__).parent / "mermaid_js"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SVG = "{http://www.w3.org/2000/svg}"
BIG_ORDERS = """
  - name: big_orders
    representations:
      - dialect: spark
        sql: SELECT order_id, amount FROM completed_orders WHERE amount > 100
"""


def draw(chart: str, tmp: Path) -> ET.Element:
    """`chart` drawn by Mermaid in headless Chromium: the SVG's root."""
    if not Path(CHROMIUM).exists():
        backend_unavailable(f"Chromium not at {CHROMIUM} (bash scripts/mermaid-browser installs it)")
    if shutil.which("node") is None or not (JS / "node_modules" / "mermaid").is_dir():
        backend_unavailable(f"node or the npm packages of {JS} are missing (bash scripts/mermaid-browser)")
    (tmp / "chart.mmd").write_text(chart, encoding="utf-8")
    done = subprocess.run(["node", str(JS / "draw.mjs"), str(tmp / "chart.mmd"), str(tmp / "chart.svg")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return ET.parse(tmp / "chart.svg").getroot()


def drawn_nodes(svg: ET.Element) -> dict[str, set[str]]:
    """Each drawn node's label (its first line: the view's name) -> its CSS classes."""
    out: dict[str, set[str]] = {}
    for g in svg.iter(f"{SVG}g"):
        classes = set((g.get("class") or "").split())
        if "node" in classes:
            first = next(t for t in g.itertext() if t.strip())  # the label's first line
            out[first.strip()] = classes
    return out


def test_the_sample_pr_comment_graph_is_drawn_with_a_node_for_every_changed_view_and_reader(
        sample_repo: Path, tmp_path: Path) -> None:
    sales = sample_repo / "views" / "local" / "sales.yaml"
    original = sales.read_text(encoding="utf-8")
    # a live reader nobody declares: applied once, then its declaration removed (kept: no --prune)
    sales.write_text(original.rstrip("\n") + "\n" + BIG_ORDERS, encoding="utf-8")
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    sales.write_text(original.replace("WHERE status = 'completed'", "WHERE status <> 'cancelled'", 1)
                     .replace("GROUP BY order_id", "GROUP BY order_id  -- one row per order"), encoding="utf-8")
    assert run_cli(sample_repo, "generate", "--dialect", "trino", "--force").code == 0  # trino SQL follows spark's

    result = run_cli(sample_repo, "plan", "--format", "markdown")
    assert result.code == 0, result.text
    block = re.search(r"```mermaid\n(.*?)```", result.out, re.S)
    assert block, result.out
    nodes = drawn_nodes(draw(block.group(1), tmp_path))

    changed = {"local.sales.completed_orders": "logic", "local.sales.refunds": "cosmetic"}
    readers = {"local.sales.daily_revenue": "dependent", "local.analytics.customer_summary": "dependent",
               "local.analytics.top_customers": "dependent", "local.sales.big_orders": "live"}
    for name, kind in {**changed, **readers}.items():
        assert name in nodes, f"{name} not drawn: {sorted(nodes)}"
        assert kind in nodes[name], (name, nodes[name])
    assert "table" in nodes["local.sales.orders"]  # what a changed view reads
    assert "local.sales.customer_tags" not in nodes  # unchanged and reading nothing changed


def test_lineage_format_mermaid_draws_one_view_with_its_readers_and_column_edges(
        sample_repo: Path, tmp_path: Path) -> None:
    result = run_cli(sample_repo, "lineage", "local.sales.completed_orders", "--format", "mermaid")
    assert result.code == 0, result.text
    svg = draw(result.out, tmp_path)
    nodes = drawn_nodes(svg)
    assert {"local.sales.completed_orders", "local.sales.orders", "local.sales.daily_revenue",
            "local.analytics.customer_summary", "local.analytics.top_customers"} <= set(nodes)
    labels = ["".join(g.itertext()) for g in svg.iter(f"{SVG}g") if "edgeLabel" in (g.get("class") or "")]
    assert "amount → revenue, ordered_at → order_date" in labels


def test_hostile_names_and_a_bounded_graph_are_drawn(tmp_path: Path) -> None:
    from reconciler.render import mermaid
    from tests.render.test_mermaid import hostile_graph

    nodes = drawn_nodes(draw(mermaid.draw(hostile_graph(60), max_nodes=40), tmp_path))
    assert len(nodes) == 41  # 40 kept and "and 22 more"
    assert 'c.s."x" --> y[1];%% {z}|<b>é' in nodes
    assert "breaking" in nodes['c.s."x" --> y[1];%% {z}|<b>é']
    assert "and 22 more" in nodes
