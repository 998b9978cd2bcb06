"""Issue 15 acceptance: OpenLineage run events, through the openlineage-python
client's file transport, valid against the client's schema, with correct
column lineage for joins, aggregates, SELECT * over a declared view and CTEs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.events import edit_views, set_events
from tests.helpers.ol_schema import validate_event

MARTS = {
    "catalog": "local",
    "schema": "marts",
    "views": [
        {"name": "order_facts",  # join
         "columns": [{"name": "order_id", "type": "bigint"}, {"name": "amount", "type": "decimal(18,2)"},
                     {"name": "customer_name", "type": "string"}],
         "representations": [{"dialect": "spark", "sql":
                              "SELECT o.order_id, o.amount, c.name AS customer_name FROM sales.orders o "
                              "JOIN crm.customers c ON o.customer_id = c.id"}]},
        {"name": "revenue_by_customer",  # aggregate
         "columns": [{"name": "customer_id", "type": "bigint"}, {"name": "revenue", "type": "decimal(38,2)"}],
         "representations": [{"dialect": "spark", "sql":
                              "SELECT customer_id, SUM(amount) AS revenue FROM sales.orders GROUP BY customer_id"}]},
        {"name": "order_facts_copy",  # SELECT * over a declared view
         "representations": [{"dialect": "spark", "sql": "SELECT * FROM marts.order_facts"}]},
        {"name": "big_customers",  # CTE
         "representations": [{"dialect": "spark", "sql":
                              "WITH t AS (SELECT customer_id, SUM(amount) AS total FROM sales.orders "
                              "GROUP BY customer_id) SELECT customer_id, total * 100 AS total_cents FROM t "
                              "WHERE total > 1000"}]},
    ],
}


def _fields(event: dict[str, Any]) -> dict[str, list[tuple[str, str, str, str, str]]]:
    facet = event["outputs"][0]["facets"]["columnLineage"]
    return {name: [(i["namespace"], i["name"], i["field"], i["transformations"][0]["type"],
                    i["transformations"][0]["subtype"]) for i in f["inputFields"]]
            for name, f in facet["fields"].items()}


@pytest.fixture
def ol_events(sample_repo: Path, tmp_path: Path) -> dict[str, dict[str, Any]]:
    (sample_repo / "views" / "local" / "marts.yaml").write_text(yaml.safe_dump(MARTS, sort_keys=False))
    ol_file = tmp_path / "ol.jsonl"
    set_events(sample_repo, {"lineage": {"type": "openlineage", "namespace": "analytics",
                                         "transport": {"type": "file", "log_file_path": str(ol_file),
                                                       "append": True}}})
    res = run_cli(sample_repo, "apply", "--auto-approve")
    assert res.code == 0, res.text
    events = [json.loads(line) for line in ol_file.read_text().splitlines()]
    assert len(events) == 10  # one COMPLETE run event per created view, nothing for pre/run events
    for e in events:
        validate_event(e)
    return {e["outputs"][0]["name"]: e for e in events}


NS = "viewsync://local"


def test_events_are_complete_runs_valid_against_the_clients_schema(ol_events: dict[str, dict[str, Any]]) -> None:
    e = ol_events["marts.order_facts"]
    assert e["eventType"] == "COMPLETE"
    assert e["job"] == {"namespace": "analytics", "name": "local.marts.order_facts", "facets": e["job"]["facets"]}
    assert e["job"]["facets"]["sql"]["query"].startswith("SELECT o.order_id")
    assert [(d["namespace"], d["name"]) for d in e["inputs"]] == [(NS, "sales.orders"), (NS, "crm.customers")]
    assert e["outputs"][0]["namespace"] == NS
    assert [(f["name"], f["type"]) for f in e["outputs"][0]["facets"]["schema"]["fields"]] == [
        ("order_id", "bigint"), ("amount", "decimal(18,2)"), ("customer_name", "string")]
    broken = json.loads(json.dumps(e))
    del broken["outputs"][0]["facets"]["columnLineage"]["fields"]["order_id"]["inputFields"][0]["field"]
    with pytest.raises(jsonschema.ValidationError):
        validate_event(broken)  # the validator does check


def test_join_lineage(ol_events: dict[str, dict[str, Any]]) -> None:
    e = ol_events["marts.order_facts"]
    assert _fields(e) == {
        "order_id": [(NS, "sales.orders", "order_id", "DIRECT", "IDENTITY")],
        "amount": [(NS, "sales.orders", "amount", "DIRECT", "IDENTITY")],
        "customer_name": [(NS, "crm.customers", "name", "DIRECT", "IDENTITY")],
    }
    dataset = {(i["name"], i["field"], i["transformations"][0]["subtype"])
               for i in e["outputs"][0]["facets"]["columnLineage"]["dataset"]}
    assert dataset == {("sales.orders", "customer_id", "JOIN"), ("crm.customers", "id", "JOIN")}


def test_aggregate_lineage(ol_events: dict[str, dict[str, Any]]) -> None:
    e = ol_events["marts.revenue_by_customer"]
    assert _fields(e) == {"customer_id": [(NS, "sales.orders", "customer_id", "DIRECT", "IDENTITY")],
                          "revenue": [(NS, "sales.orders", "amount", "DIRECT", "AGGREGATION")]}
    assert [(i["field"], i["transformations"][0]) for i in e["outputs"][0]["facets"]["columnLineage"]["dataset"]] \
        == [("customer_id", {"type": "INDIRECT", "subtype": "GROUP_BY"})]


def test_select_star_over_a_declared_view(ol_events: dict[str, dict[str, Any]]) -> None:
    e = ol_events["marts.order_facts_copy"]
    assert [(d["namespace"], d["name"]) for d in e["inputs"]] == [(NS, "marts.order_facts")]
    assert _fields(e) == {c: [(NS, "marts.order_facts", c, "DIRECT", "IDENTITY")]
                          for c in ("order_id", "amount", "customer_name")}


def test_cte_lineage(ol_events: dict[str, dict[str, Any]]) -> None:
    e = ol_events["marts.big_customers"]
    assert [d["name"] for d in e["inputs"]] == ["sales.orders"]
    assert _fields(e) == {"customer_id": [(NS, "sales.orders", "customer_id", "DIRECT", "IDENTITY")],
                          "total_cents": [(NS, "sales.orders", "amount", "DIRECT", "AGGREGATION")]}


def test_drop_is_a_lifecycle_change(sample_repo: Path, tmp_path: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    ol_file = tmp_path / "drop.jsonl"
    set_events(sample_repo, {"lineage": {"type": "openlineage", "types": ["view.dropped"],
                                         "transport": {"type": "file", "log_file_path": str(ol_file),
                                                       "append": True}}})
    edit_views(sample_repo, "views/local/sales.yaml", lambda d: d["views"].pop(2))  # refunds
    assert run_cli(sample_repo, "apply", "--auto-approve", "--prune").code == 0
    (event,) = [json.loads(line) for line in ol_file.read_text().splitlines()]
    validate_event(event)
    assert event["eventType"] == "COMPLETE" and event["outputs"][0]["name"] == "sales.refunds"
    assert event["outputs"][0]["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "DROP"


def test_http_transport_posts_to_a_real_receiver(sample_repo: Path, receiver: Any) -> None:
    set_events(sample_repo, {"marquez": {"type": "openlineage", "views": ["local.sales.*"], "transport": {
        "type": "http", "url": f"http://127.0.0.1:{receiver.port}", "endpoint": "api/v1/lineage"}}})
    res = run_cli(sample_repo, "apply", "--auto-approve")
    assert res.code == 0, res.text
    got = receiver.received()
    assert {r["path"] for r in got} == {"/api/v1/lineage"}
    events = [json.loads(r["body"]) for r in got]
    for e in events:
        validate_event(e)
    assert sorted(e["outputs"][0]["name"] for e in events) == [
        "sales.completed_orders", "sales.daily_revenue", "sales.refunds"]
