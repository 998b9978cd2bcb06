"""The `tests.finished` event names the engines: counts per engine, and each test's engine, as
`$defs/tests_finished` in schemas/tests.schema.json describes (a run on Spark and Trino)."""

from __future__ import annotations

import json

import jsonschema

from reconciler.core.model import ViewId
from reconciler.services import viewtests as service
from reconciler.viewtests import result
from reconciler.viewtests.result import Status
from tests.helpers.paths import ROOT


def _schema() -> dict[str, object]:
    doc = json.loads((ROOT / "schemas" / "tests.schema.json").read_text())
    return dict(doc["$defs"]["tests_finished"])


def test_the_event_counts_tests_per_engine_and_names_each_tests_engine() -> None:
    view = ViewId("local", "sales", "completed_orders")
    run = result.TestRun([
        result.TestResult(view, "keeps_completed", "views/local/sales.yaml", 12, Status.PASSED, engine="spark"),
        result.TestResult(view, "keeps_completed", "views/local/sales.yaml", 12, Status.FAILED, engine="trino"),
        result.TestResult(view, "empty", "views/local/sales.yaml", 20, Status.PASSED, engine="spark"),
        result.TestResult(view, "empty", "views/local/sales.yaml", 20, Status.ERROR, error="Trino: [X] boom",
                   engine="trino"),
    ], seconds=1.5)
    data = service.tests_event_data(run, {"commit": "abc"})
    jsonschema.validate(data, _schema())
    assert data["summary"] == {"tests": 4, "passed": 2, "failed": 1, "error": 1}
    assert data["engines"] == {"spark": {"tests": 2, "passed": 2, "failed": 0, "error": 0},
                               "trino": {"tests": 2, "passed": 0, "failed": 1, "error": 1}}
    [only] = data["views"]
    assert [(t["name"], t["engine"], t["status"]) for t in only["tests"]] == [
        ("keeps_completed", "spark", "passed"), ("keeps_completed", "trino", "failed"),
        ("empty", "spark", "passed"), ("empty", "trino", "error")]


def test_the_schema_rejects_an_event_without_its_engines() -> None:
    one = result.TestResult(ViewId("c", "s", "v"), "t", "f.yaml", 1, Status.PASSED)
    data = service.tests_event_data(result.TestRun([one]), None)
    jsonschema.validate(data, _schema())
    del data["engines"]
    try:
        jsonschema.validate(data, _schema())
    except jsonschema.ValidationError as err:
        assert "engines" in err.message
    else:
        raise AssertionError("an event without engines validated")
