"""`viewsync lineage` and the lineage change in the Markdown plan, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.events import edit_views


def test_lineage_command_formats(sample_repo: Path) -> None:
    text = run_cli(sample_repo, "lineage", "local.analytics.customer_summary")
    assert text.code == 0, text.text
    assert "local.analytics.customer_summary reads:\n  local.sales.completed_orders\n" in text.out
    assert "total_amount <- local.sales.completed_orders.amount (aggregation)" in text.out
    data = json.loads(run_cli(sample_repo, "lineage", "local.analytics.top_customers", "--format", "json").out)
    assert data["tables"] == ["local.analytics.customer_summary"]
    assert data["columns"]["total_amount"] == [{"table": "local.analytics.customer_summary",
                                                "column": "total_amount", "transformation": "IDENTITY"}]
    assert data["indirect"] == [{"table": "local.analytics.customer_summary", "column": "total_amount",
                                 "subtype": "SORT"}]
    dot = run_cli(sample_repo, "lineage", "local.sales.daily_revenue", "--format", "dot").out
    assert dot.startswith("digraph lineage {") and '"local.sales.completed_orders":' in dot
    missing = run_cli(sample_repo, "lineage", "local.sales.nope")
    assert missing.code == 1 and "local.sales.nope: not declared" in missing.err
    bad = run_cli(sample_repo, "lineage", "local.sales.refunds", "--format", "svg")
    assert bad.code == 1 and "'svg' is not one of 'text', 'json', 'dot'" in bad.err


def test_markdown_plan_shows_the_lineage_change(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0

    def edit(doc: dict) -> None:  # type: ignore[type-arg]
        doc["views"][2]["representations"][0]["sql"] = (
            "SELECT r.order_id, SUM(r.amount) AS refunded FROM sales.refund_events r "
            "JOIN sales.orders o ON o.order_id = r.order_id GROUP BY r.order_id")

    edit_views(sample_repo, "views/local/sales.yaml", edit)
    md = run_cli(sample_repo, "plan", "--format", "markdown").out
    block = md[md.index("local.sales.refunds"):]
    assert "Lineage:\n```diff\n+ reads local.sales.orders\n" in block
