"""View tests executed by Spark: the sample's tests pass; a changed filter fails exactly the
tests of that view and of the views computed from it, each at its file:line with the rows; a
runtime error is one test's error; plan --spark refuses a PR that breaks a test; the reports
are what CI systems read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import xmlschema
import yaml
from junitparser import Error, Failure, JUnitXml

from tests.helpers.cli import run_cli
from tests.helpers.paths import ROOT
from tests.helpers.repos import managed_config, write_repo

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]


def _break_the_completed_filter(repo: Path) -> None:
    path = repo / "views" / "local" / "sales.yaml"
    path.write_text(path.read_text().replace("WHERE status = 'completed'", "WHERE status <> 'cancelled'"))
    assert run_cli(repo, "generate", "--dialect", "trino").code == 0  # its trino SQL follows the spark SQL


def test_the_samples_tests_pass_and_the_reports_are_what_ci_reads(sample_repo: Path, tmp_path: Path) -> None:
    res = run_cli(sample_repo, "test", "--format", "json")
    assert res.code == 0, res.text
    report = json.loads(res.out)
    jsonschema.validate(report, json.loads((ROOT / "schemas" / "tests.schema.json").read_text()))
    views = {t["view"]["name"] for t in report["tests"]}
    # every sample view has tests, and all pass
    assert views == {"completed_orders", "daily_revenue", "refunds", "customer_summary", "top_customers",
                     "customer_tags"}
    assert report["summary"]["passed"] == report["summary"]["tests"] >= 8

    _break_the_completed_filter(sample_repo)
    out = tmp_path / "junit.xml"
    res = run_cli(sample_repo, "test", "--format", "junit", "--out", str(out))
    assert res.code == 1
    xmlschema.XMLSchema(str(ROOT / "tests" / "fixtures" / "junit.xsd")).validate(str(out))
    xml = JUnitXml.fromfile(str(out))
    failed = {(suite.name, case.name) for suite in xml for case in suite
              if any(isinstance(r, (Failure, Error)) for r in case.result)}
    assert failed == {("local.sales.completed_orders [spark]", "keeps_only_completed_orders"),
                      ("local.sales.daily_revenue [spark]", "sums_completed_orders_per_day"),
                      ("local.analytics.customer_summary [spark]", "totals_per_customer_from_raw_orders")}
    assert xml.failures == 3 and xml.errors == 0


def test_a_changed_filter_fails_exactly_its_tests_and_those_computed_from_it(sample_repo: Path) -> None:
    _break_the_completed_filter(sample_repo)
    res = run_cli(sample_repo, "test")
    assert res.code == 1
    fails = [ln for ln in res.out.splitlines() if ln.startswith(("FAIL", "ERROR"))]
    assert len(fails) == 3, res.out
    # each at its file:line (the test's name), with the missing and the unexpected rows
    assert any(re.match(r"FAIL  spark  views/local/sales\.yaml:\d+: local\.sales\.completed_orders: "
                        r"keeps_only_completed_orders: 1 unexpected row\(s\)", f) for f in fails), fails
    sales = (sample_repo / "views" / "local" / "sales.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(sales, 1) if "name: sums_completed_orders_per_day" in t)
    assert any(f.startswith(f"FAIL  spark  views/local/sales.yaml:{line}: local.sales.daily_revenue") for f in fails)
    assert "    2026-01-02  12.00    2" in res.out  # the produced row: the pending order counted
    assert "    2026-01-02  4.00     1" in res.out  # the expected one, missing
    # the middle view's logic is what changed: the raw-table test two levels down sees it
    assert any("customer_summary: totals_per_customer_from_raw_orders" in f for f in fails)

    selected = run_cli(sample_repo, "test", "--select", "local.analytics.*")
    assert selected.code == 1 and selected.out.count("FAIL") == 1, selected.out
    assert run_cli(sample_repo, "test", "--select", "local.sales.refunds").code == 0


def _repo(tmp_path: Path, views: str, sources: str) -> Path:
    return write_repo(tmp_path / "repo", managed_config(tmp_path), {
        "views/local/s.yaml": views, "sources/local/s.yaml": sources})


SOURCES = """catalog: local
schema: s
tables:
  - name: raw
    columns: [{name: id, type: int}, {name: code, type: string}, {name: x, type: double}]
"""


def test_a_runtime_error_is_that_tests_error_and_the_others_still_run(tmp_path: Path) -> None:
    repo = _repo(tmp_path, """catalog: local
schema: s
views:
  - name: parsed
    representations:
      - {dialect: spark, sql: "SELECT id, CAST(code AS INT) AS code_number FROM raw"}
    tests:
      - name: numbers_parse
        given: {raw: {rows: [{id: 1, code: "42"}]}}
        expect: {rows: [{id: 1, code_number: 42}]}
      - name: a_word_is_not_a_number
        given: {raw: {rows: [{id: 2, code: "forty-two"}]}}
        expect: {rows: [{id: 2}]}
      - name: ordered_and_from_a_file
        given: {raw: {file: raw.csv}}
        expect: {ordered: true, columns: [code_number], rows: [{code_number: 1}, {code_number: 2}]}
""", SOURCES)
    (repo / "views" / "local" / "raw.csv").write_text("id,code,x\n1,1,\n2,2,0.5\n")
    res = run_cli(repo, "test", "--format", "json")
    assert res.code == 1, res.text
    by_name = {t["name"]: t for t in json.loads(res.out)["tests"]}
    assert by_name["numbers_parse"]["status"] == "passed"
    assert by_name["ordered_and_from_a_file"]["status"] == "passed"
    bad = by_name["a_word_is_not_a_number"]
    assert bad["status"] == "error"
    assert bad["location"] == {"file": "views/local/s.yaml", "line": 11}
    assert bad["error"].startswith("Spark: [CAST_INVALID_INPUT]"), bad
    assert bad["error"].count("CAST_INVALID_INPUT") == 1, bad


def test_text_that_looks_like_parameter_markers_stays_text(tmp_path: Path) -> None:
    # '?' and ':name' in the view's literals and in fixture values are plain text to Spark, not
    # parameter markers: a guard for any change to how test queries are sent or their values written.
    repo = _repo(tmp_path, """catalog: local
schema: s
views:
  - name: marked
    representations:
      - {dialect: spark, sql: "SELECT id, concat(code, '?', ':id') AS tagged FROM raw WHERE code <> ':code'"}
    tests:
      - name: markers_are_text
        given: {raw: {rows: [{id: 1, code: "a?b:id"}, {id: 2, code: ":code"}, {id: 3, code: "?"}]}}
        expect: {rows: [{id: 1, tagged: "a?b:id?:id"}, {id: 3, tagged: "??:id"}]}
""", SOURCES)
    res = run_cli(repo, "test", "--format", "json")
    assert res.code == 0, res.text
    assert [t["status"] for t in json.loads(res.out)["tests"]] == ["passed"]


def test_a_declared_column_the_sql_does_not_return_is_said_once(sample_repo: Path) -> None:
    """Issue 43: the error class and the location each appeared twice on the line."""
    path = sample_repo / "views" / "local" / "sales.yaml"
    path.write_text(path.read_text().replace('      - {name: refunded, type: "decimal(28,2)"}\n',
                                             '      - {name: refunded, type: "decimal(28,2)"}\n'
                                             '      - {name: reason, type: string}\n', 1))
    res = run_cli(sample_repo, "test")
    assert res.code == 1, res.text
    line = next(x for x in res.out.splitlines() if x.startswith("ERROR"))
    assert line.count("ASSIGNMENT_ARITY_MISMATCH") == 1 and line.count("views/local/sales.yaml:") == 1, line
    assert "the view declares 3 column(s), its SQL returns 2; not returned: reason" in line, line


def test_ordered_tests_sharing_a_job_keep_the_order_the_view_produces(tmp_path: Path) -> None:
    given = {"raw": {"rows": [{"id": i, "code": str(i)} for i in range(1, 40)]}}
    top = [{"id": i} for i in range(39, 0, -1)]
    tests = [{"name": "descending", "given": given, "expect": {"ordered": True, "rows": top}},
             {"name": "descending_again", "given": given, "expect": {"ordered": True, "rows": top}},
             {"name": "wrong_order", "given": given, "expect": {"ordered": True, "rows": list(reversed(top))}},
             {"name": "as_a_multiset", "given": given, "expect": {"rows": list(reversed(top))}}]
    repo = _repo(tmp_path, yaml.safe_dump({"catalog": "local", "schema": "s", "views": [
        {"name": "by_id", "representations": [{"dialect": "spark", "sql": "SELECT id FROM raw ORDER BY id DESC"}],
         "tests": tests}]}), SOURCES)
    res = run_cli(repo, "test", "--format", "json")
    by_name = {t["name"]: t for t in json.loads(res.out)["tests"]}
    assert {n: t["status"] for n, t in by_name.items()} == {
        "descending": "passed", "descending_again": "passed", "wrong_order": "failed", "as_a_multiset": "passed"}
    assert "not in the expected order: row 1 is (39), expected (1)" in by_name["wrong_order"]["difference"]["message"]


def test_tolerance_counts_and_mocked_views(tmp_path: Path) -> None:
    repo = _repo(tmp_path, """catalog: local
schema: s
views:
  - name: base
    columns: [{name: id, type: int}, {name: x, type: double}]
    representations:
      - {dialect: spark, sql: "SELECT id, x FROM raw WHERE x IS NOT NULL"}
  - name: thirds
    representations:
      - {dialect: spark, sql: "SELECT id, x / 3 AS third FROM base"}
    tests:
      - name: within_tolerance
        given: {base: {rows: [{id: 1, x: 1.0}]}}
        expect: {tolerance: 0.0001, rows: [{id: 1, third: 0.3333}]}
      - name: exact_fails
        given: {base: {rows: [{id: 1, x: 1.0}]}}
        expect: {rows: [{id: 1, third: 0.3333}]}
      - name: through_base_from_raw
        given: {raw: {rows: [{id: 1, x: 3.0}, {id: 2}]}}
        expect: {count: 1}
""", SOURCES)
    res = run_cli(repo, "test", "--format", "json")
    by_name = {t["name"]: t for t in json.loads(res.out)["tests"]}
    assert by_name["within_tolerance"]["status"] == "passed"
    assert by_name["through_base_from_raw"]["status"] == "passed"
    failed = by_name["exact_fails"]
    assert failed["status"] == "failed" and failed["difference"]["unexpected"] == [["1", "0.3333333333333333"]]


def test_plan_spark_refuses_a_pr_that_breaks_a_test_unless_skip_tests(sample_repo: Path) -> None:
    _break_the_completed_filter(sample_repo)
    res = run_cli(sample_repo, "plan", "--spark", "--format", "json")
    assert res.code == 1, res.text
    plan = json.loads(res.out)
    codes = [e["code"] for e in plan["errors"]]
    assert codes.count("test_failed") == 3, plan["errors"]
    located = [e for e in plan["errors"] if e["code"] == "test_failed"]
    assert all(e["location"]["file"].startswith("views/local/") and e["location"]["field"].endswith(".name")
               for e in located)
    assert plan["tests"]["summary"]["failed"] == 3
    md = run_cli(sample_repo, "plan", "--spark", "--format", "markdown")
    assert "View tests: 5 passed, 3 failed" in md.out and "keeps_only_completed_orders" in md.out

    skipped = run_cli(sample_repo, "plan", "--spark", "--skip-tests", "--format", "json")
    assert skipped.code == 0, skipped.text
    assert "tests" not in json.loads(skipped.out)


def test_timestamps_with_a_time_zone_compare_alike_on_a_laptop_in_another_zone(tmp_path: Path) -> None:
    """A test that passes in UTC CI passes on a laptop in Los Angeles (issue 38, item 4): Spark's
    answers reach the comparison in UTC, whatever the machine's zone."""
    repo = _repo(tmp_path, yaml.safe_dump({"catalog": "local", "schema": "s", "views": [{
        "name": "events_v", "representations": [{"dialect": "spark", "sql": "SELECT id, at FROM events"}],
        "tests": [{"name": "instants_as_written",
                   "given": {"events": {"rows": [{"id": 1, "at": "2026-01-01T10:00:00Z"},
                                                 {"id": 2, "at": "2026-07-01 23:30:00-07:00"},
                                                 {"id": 3, "at": "0001-01-01 00:00:00Z"}]}},
                   "expect": {"rows": [{"id": 1, "at": "2026-01-01 10:00:00"},
                                       {"id": 2, "at": "2026-07-02 06:30:00"},
                                       {"id": 3, "at": "0001-01-01 00:00:00"}]}}]}]}),
        yaml.safe_dump({"catalog": "local", "schema": "s", "tables": [{"name": "events", "columns": [
            {"name": "id", "type": "int"}, {"name": "at", "type": "timestamp_ltz"}]}]}))
    for zone in ("America/Los_Angeles", "Asia/Kolkata"):
        res = run_cli(repo, "test", "--format", "json", env={"TZ": zone}, process=True)
        assert res.code == 0, (zone, res.text)


def test_char_columns_compare_as_spark_reads_them(tmp_path: Path) -> None:
    """A CHAR(3) input read by a view (declared or inferred) is padded as Spark pads it, and the
    expected side is read as CHAR(3) too: "a" expected as written passes (issue 38, item 4)."""
    views = [{"name": name, **extra, "representations": [{"dialect": "spark", "sql": "SELECT id, code FROM raw"}],
              "tests": [{"name": "as_written", "given": {"raw": {"rows": [{"id": 1, "code": "a"}]}},
                         "expect": {"rows": [{"id": 1, "code": "a"}]}},
                        {"name": "another_value_fails", "given": {"raw": {"rows": [{"id": 1, "code": "a"}]}},
                         "expect": {"rows": [{"id": 1, "code": "b"}]}}]}
             for name, extra in (("inferred", {}),
                                 ("declared", {"columns": [{"name": "id", "type": "int"},
                                                           {"name": "code", "type": "char(3)"}]}))]
    repo = _repo(tmp_path, yaml.safe_dump({"catalog": "local", "schema": "s", "views": views}),
                 yaml.safe_dump({"catalog": "local", "schema": "s", "tables": [{"name": "raw", "columns": [
                     {"name": "id", "type": "int"}, {"name": "code", "type": "char(3)"}]}]}))
    res = run_cli(repo, "test", "--format", "json")
    statuses = {(t["view"]["name"], t["name"]): t["status"] for t in json.loads(res.out)["tests"]}
    assert statuses == {("inferred", "as_written"): "passed", ("inferred", "another_value_fails"): "failed",
                        ("declared", "as_written"): "passed", ("declared", "another_value_fails"): "failed"}, res.out
