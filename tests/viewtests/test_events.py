"""Test runs are announced like applies: a `tests.finished` CloudEvent with per-view results
through the outbox, and the OpenLineage sink's `dataQualityAssertions` facet per view."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.helpers.cli import run_cli
from tests.helpers.events import set_events
from tests.helpers.ol_schema import validate_event
from tests.helpers.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]


def test_a_test_run_is_an_event_and_openlineage_assertions(sample_repo: Path, tmp_path: Path) -> None:
    ol_file = tmp_path / "ol.jsonl"
    set_events(sample_repo, {"lineage": {"type": "openlineage", "namespace": "analytics",
                                         "transport": {"type": "file", "log_file_path": str(ol_file),
                                                       "append": True}}})
    path = sample_repo / "views" / "local" / "sales.yaml"
    path.write_text(path.read_text().replace("WHERE status = 'completed'", "WHERE status <> 'cancelled'"))
    res = run_cli(sample_repo, "test")
    assert res.code == 1, res.text

    listed = run_cli(sample_repo, "events", "--format", "json")
    assert listed.code == 0, listed.text
    events = [e for e in json.loads(listed.out) if e["type"] == "tests.finished"]
    assert len(events) == 1
    data = events[0]["event"]["data"] if "event" in events[0] else events[0]["data"]
    assert data["summary"] == {"tests": 8, "passed": 5, "failed": 3, "error": 0}
    assert data["engines"] == {"spark": data["summary"]}  # the sample configures no other engine
    schema = json.loads((ROOT / "schemas" / "tests.schema.json").read_text())
    jsonschema.validate(data, schema["$defs"]["tests_finished"])
    by_view = {f"{v['view']['schema']}.{v['view']['name']}": v for v in data["views"]}
    assert by_view["sales.completed_orders"]["failed"] == 1 and by_view["sales.refunds"]["passed"] == 1

    (ol,) = [json.loads(line) for line in ol_file.read_text().splitlines()]
    validate_event(ol)
    assert ol["eventType"] == "FAIL" and ol["job"]["name"] == "viewsync.tests"
    facets = {i["name"]: i["inputFacets"]["dataQualityAssertions"]["assertions"] for i in ol["inputs"]}
    assert {a["assertion"]: a["success"] for a in facets["sales.completed_orders"]} == {
        "keeps_only_completed_orders": False, "no_completed_orders_no_rows": True}
