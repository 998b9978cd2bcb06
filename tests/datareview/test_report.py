"""Reports without Spark: the JSON matches schemas/review.schema.json, events go through the
outbox (`view.diffed`, `checks.finished`) and the OpenLineage sink sends dataQualityAssertions
and dataQualityMetrics; renderers; the Spark conf derived per catalog kind (no secret printed)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from reconciler.adapters.jdbc import dialects
from reconciler.core.model import ViewId
from reconciler.datareview import catalogs, render
from reconciler.datareview.model import (
    CheckReport,
    CheckResult,
    ColumnChange,
    DiffReport,
    Numeric,
    Sample,
    ViewChecks,
    ViewDiff,
)
from reconciler.jars import maven
from reconciler.services import datareview as review_service
from reconciler.source.config import load_config
from reconciler.workspace import Workspace
from tests.helpers.cli import run_cli
from tests.helpers.ol_schema import validate_event
from tests.helpers.paths import ROOT
from tests.helpers.repos import write_repo

SCHEMA = json.loads((ROOT / "schemas" / "review.schema.json").read_text())
V = ViewId("hive", "sales", "orders_v")


def diff_report() -> DiffReport:
    d = ViewDiff(V, "update", key=("order_id",), rows_before=20, rows_after=17,
                 counts={"added": 0, "removed": 3, "changed": 1, "unchanged": 16, "duplicate": 0},
                 duplicates={"before": {"keys": 0, "rows": 0}, "after": {"keys": 0, "rows": 0}},
                 null_keys={"before": 0, "after": 0}, columns=[ColumnChange("amount", 1, 17)],
                 numeric=[Numeric("amount", 2100, 1891, 105.0, 111.2)],
                 samples=[Sample("removed", {"order_id": 3, "amount": 30}, None),
                          Sample("changed", {"order_id": 1, "amount": 10}, {"order_id": 1, "amount": 11})])
    return DiffReport(views=[d, ViewDiff(ViewId("glue", "s", "v"), "update", status="skipped", message="glue: no")],
                      spark={"master": "local[1]", "version": "4.3.0"})


def check_report() -> CheckReport:
    checks = [CheckResult(0, "not_null", ["customer_id"], "error", "fail", 2, samples=[{"id": 5, "customer_id": None}],
                          location="views/hive/sales.yaml:9:7"),
              CheckResult(1, "accepted_values", {"column": "status", "values": ["paid"]}, "warn", "fail", 3),
              CheckResult(2, "row_count", {"min": 1}, "error", "pass", 0, detail="20 row(s)")]
    return CheckReport("declared", [ViewChecks(V, "declared", rows=20, checks=checks)],
                       spark={"master": "local[1]", "version": "4.3.0"})


def test_json_reports_match_the_schema() -> None:
    jsonschema.validate(json.loads(render.as_json(diff_report())), SCHEMA)
    jsonschema.validate(json.loads(render.as_json(check_report())), SCHEMA)


def test_text_markdown_and_junit_say_what_a_reviewer_needs() -> None:
    text = render.diff_text(diff_report())
    assert "~ hive.sales.orders_v (update, key: order_id)" in text
    assert "rows: 20 → 17 (-3)" in text and "columns changed: amount 1 (5.88%)" in text
    assert "changed   order_id=1 | amount: 10 → 11" in text
    assert "glue.s.v (update): SKIPPED: glue: no" in text
    md = render.diff_markdown(diff_report())
    assert "| `amount` | 1 | 5.88% |" in md and "<details><summary>Sample rows</summary>" in md
    checks = render.checks_text(check_report())
    assert "FAIL  not_null: customer_id: 2 failing row(s)  [views/hive/sales.yaml:9:7]" in checks
    assert "WARN  accepted_values: column=status, values=['paid']: 3 failing row(s)" in checks
    junit = ET.fromstring(render.checks_junit(check_report()))
    [suite] = junit.findall("testsuite")
    assert suite.get("failures") == "1" and len(suite.findall("testcase")) == 3
    assert check_report().failed
    passing = CheckReport("declared", [ViewChecks(V, "declared", rows=20, checks=[check_report().views[0].checks[2]])])
    assert not passing.failed
    passing.views.append(ViewChecks(ViewId("glue", "s", "v"), "declared", status="skipped", message="glue: no"))
    assert passing.failed  # checks that could not run do not pass a gate
    assert "1 view(s) skipped" in render.checks_text(passing)


def test_events_go_through_the_outbox_and_openlineage_gets_data_quality_facets(tmp_path: Path) -> None:
    ol_file = tmp_path / "ol.jsonl"
    repo = write_repo(tmp_path / "repo", {
        "version": 1, "project": "review", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": "thrift://127.0.0.1:1"}},
        "events": {"lineage": {"type": "openlineage", "transport": {"type": "file", "log_file_path": str(ol_file),
                                                                     "append": True}}}})
    ws = Workspace.open(repo)
    try:
        assert review_service.announce(ws, diff_report()) == 1  # the skipped view announces nothing
        assert review_service.announce(ws, check_report()) == 1
    finally:
        ws.close()
    listed = json.loads(run_cli(repo, "events", "--format", "json").out)
    assert sorted(e["type"] for e in listed) == ["checks.finished", "view.diffed"], listed
    [event] = [json.loads(line) for line in ol_file.read_text().splitlines()]  # view.diffed has no OL counterpart
    validate_event(event)
    facets = event["inputs"][0]["inputFacets"]
    assert facets["dataQualityMetrics"]["rowCount"] == 20
    assert facets["dataQualityMetrics"]["columnMetrics"]["customer_id"]["nullCount"] == 2
    assert [(a["assertion"], a["success"], a.get("column")) for a in facets["dataQualityAssertions"]["assertions"]] \
        == [("not_null", False, "customer_id"), ("accepted_values", False, "status"), ("row_count", True, None)]


def _no_driver_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty jar cache and no Debian jars: what this machine has installed does not matter."""
    cache = tmp_path / "jar-cache"
    monkeypatch.setenv(maven.CACHE_ENV, str(cache))
    for db in (dialects.Postgres, dialects.MySQL):
        monkeypatch.setattr(db, "debian_driver_jar", str(tmp_path / "nowhere" / Path(str(db.debian_driver_jar)).name))
    return cache


def test_spark_conf_per_catalog_kind_and_what_is_not_supported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    cache = _no_driver_anywhere(tmp_path, monkeypatch)
    driver = maven.artifact("postgresql")
    cache.mkdir()
    (cache / driver.file_name).write_bytes(b"\0" * driver.size)  # the cache holds only verified jars
    repo = write_repo(tmp_path / "repo", {
        "version": 1, "project": "review",
        "catalogs": {"hive": {"type": "hms", "uri": "thrift://meta:9083"},
                     "lake": {"type": "iceberg-rest", "uri": "http://rest:8181", "token": "${VS_T_TOKEN}"},
                     "pg": {"type": "jdbc", "url": "postgresql+psycopg://app:pw-s3cr3t@db:5433/shop"},
                     "g": {"type": "glue"}, "m": {"type": "managed"}},
        "spark": {"master": "local[2]", "live": {
            "master": "spark://10.0.0.1:7077",
            "catalogs": {"lake": {"jars": ["/opt/iceberg-spark-runtime-3.5.jar"]}}}}})

    os.environ["VS_T_TOKEN"] = "tok-s3cr3t"
    try:
        config = load_config(repo)
    finally:
        del os.environ["VS_T_TOKEN"]
    readers = catalogs.readers(config)
    assert readers["g"].unsupported and "glue" in readers["g"].unsupported
    assert readers["m"].unsupported and "managed" in readers["m"].unsupported
    conf = catalogs.session_conf(config, readers, tmp_path)
    assert conf["spark.master"] == "spark://10.0.0.1:7077"
    assert conf["spark.sql.catalogImplementation"] == "hive"
    assert conf["spark.hadoop.hive.metastore.uris"] == "thrift://meta:9083"
    assert conf["spark.sql.catalog.lake"] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf["spark.sql.catalog.lake.token"] == "tok-s3cr3t"
    assert conf["spark.sql.catalog.pg.url"] == "jdbc:postgresql://db:5433/shop"
    assert conf["spark.sql.catalog.pg.password"] == "pw-s3cr3t" and conf["spark.sql.catalog.pg.user"] == "app"
    assert str(cache / driver.file_name) in conf["spark.jars"].split(",")
    source, _ = readers["pg"].query_source(ViewId("pg", "public", "v"), _spec("SELECT 1 AS x", "postgres"))
    assert source["kind"] == "jdbc" and "READ ONLY" in source["options"]["sessionInitStatement"]


def test_a_missing_jdbc_driver_says_what_to_fetch_and_a_pinned_jar_name_resolves_in_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _no_driver_anywhere(tmp_path, monkeypatch)
    repo = write_repo(tmp_path / "repo", {
        "version": 1, "project": "review",
        "catalogs": {"lake": {"type": "iceberg-rest", "uri": "http://rest:8181"},
                     "pg": {"type": "jdbc", "url": "postgresql+psycopg://app@db/shop"},
                     "my": {"type": "jdbc", "url": "mysql+pymysql://app@db/shop"}},
        "spark": {"live": {"catalogs": {"lake": {"jars": ["iceberg-spark-runtime-3.5"]}}}}})
    config = load_config(repo)
    readers = catalogs.readers(config)
    for name, pinned in (("pg", "postgresql"), ("my", "mariadb-java-client")):
        why = readers[name].unsupported or ""
        assert f"viewsync jars fetch {pinned}" in why and maven.artifact(pinned).coordinate in why, why
        assert "\n" not in why
    assert "viewsync jars fetch iceberg-spark-runtime-3.5" in (readers["lake"].unsupported or "")

    runtime = maven.artifact("iceberg-spark-runtime-3.5")
    cache.mkdir()
    (cache / runtime.file_name).write_bytes(b"\0" * runtime.size)
    debian_pg = tmp_path / "nowhere" / "postgresql.jar"
    debian_pg.parent.mkdir()
    debian_pg.write_bytes(b"jar")
    readers = catalogs.readers(config)
    assert readers["lake"].jars == [str(cache / runtime.file_name)] and not readers["lake"].unsupported
    assert readers["pg"].jars == [str(debian_pg)]  # Debian's jar, the fallback


def _spec(sql: str, dialect: str):  # type: ignore[no-untyped-def]
    from reconciler.core.model import ViewSpec

    return ViewSpec.model_validate({"representations": [{"dialect": dialect, "sql": sql}]})
