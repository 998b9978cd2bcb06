"""View tests checked without Spark: `validate` finds a bad test before any JVM starts, each
problem one located line; fixture values are typed exactly; comparison is a multiset."""

from __future__ import annotations

import datetime as dt
import math
import os
from decimal import Decimal
from pathlib import Path

import pytest

from reconciler.core import coltypes
from reconciler.source.expectations import Expect
from reconciler.viewtests import compare, runner, values
from tests.helpers.cli import run_cli
from tests.helpers.repos import managed_config, write_repo

SOURCES = """catalog: local
schema: sales
tables:
  - name: orders
    columns:
      - {name: order_id, type: bigint}
      - {name: amount, type: "decimal(18,2)"}
      - {name: status, type: string}
      - {name: ordered_at, type: timestamp}
"""
HEAD = """catalog: local
schema: sales
views:
  - name: completed
    columns:
      - {name: order_id, type: bigint}
      - {name: amount, type: "decimal(18,2)"}
    representations:
      - dialect: spark
        sql: SELECT order_id, amount FROM orders WHERE status = 'completed'
  - name: total
    representations:
      - dialect: spark
        sql: SELECT SUM(amount) AS total FROM completed
    tests:
"""


def repo_with(tmp_path: Path, tests: str) -> Path:
    return write_repo(tmp_path / "repo", managed_config(tmp_path), {
        "sources/local/sales.yaml": SOURCES, "views/local/sales.yaml": HEAD + tests})


GOOD = """      - name: sums
        given:
          orders:
            rows:
              - {order_id: 1, amount: 2.50, status: completed}
        expect: {rows: [{total: 2.50}]}
"""


def test_a_good_test_validates(tmp_path: Path) -> None:
    res = run_cli(repo_with(tmp_path, GOOD), "validate")
    assert res.code == 0, res.text


@pytest.mark.parametrize(("tests", "where", "message"), [
    # a value that does not fit its column type, at the value
    (GOOD.replace("amount: 2.50", "amount: 2.505"), "views/local/sales.yaml:20:39",
     "given.orders.rows[0].amount: amount: 2.505 cannot be read as decimal(18,2): more than 2 decimal places"),
    (GOOD.replace("order_id: 1,", "order_id: one,"), "views/local/sales.yaml:20:",
     "order_id: 'one' cannot be read as bigint"),
    (GOOD.replace("status: completed}", "status: completed, ordered_at: \"2026-02-30 10:00\"}"),
     "views/local/sales.yaml:20:76", "no such time"),
    # a column the input does not have
    (GOOD.replace("status: completed}", "state: completed}"), "views/local/sales.yaml:20:52",
     "unknown column 'state' (columns: order_id, amount, status, ordered_at)"),
    # an input nothing reads, and one the view reads that is not given
    (GOOD.replace("          orders:", "          sales.refunds:\n            rows: []\n          orders:"),
     "views/local/sales.yaml:19:13", "unknown input 'sales.refunds': neither total nor a view it reads reads it"),
    (GOOD.replace("          orders:", "          completed_x:"), "views/local/sales.yaml:18:11",
     "input orders (read by completed) is not given and is not a declared view: add its rows under given"),
    # malformed CSV: a row with too many fields, at its line inside the block
    ("""      - name: csv
        given:
          orders:
            csv: |
              order_id,amount,status
              1,2.50,completed
              2,1.00,completed,extra
        expect: {count: 1}
""", "views/local/sales.yaml:22:1", "malformed CSV: 4 field(s), the header has 3"),
    # two tests with one name
    (GOOD + GOOD, "views/local/sales.yaml:22:15", "duplicate test name 'sums' (also tests[0])"),
    # an expected column the view does not declare (completed declares its columns)
    (GOOD.replace("expect: {rows: [{total: 2.50}]}", "expect: {rows: [{total: 2.50}], columns: [totl]}"),
     "", ""),
    # a fixture file outside the repository
    (GOOD.replace("            rows:\n              - {order_id: 1, amount: 2.50, status: completed}",
                  "            file: ../../../etc/passwd.csv"), "views/local/sales.yaml:19:",
     "'../../../etc/passwd.csv' is outside the repository"),
])
def test_a_bad_test_is_one_located_error_before_spark(tmp_path: Path, tests: str, where: str, message: str) -> None:
    repo = repo_with(tmp_path, tests)
    res = run_cli(repo, "validate")
    if not message:  # `total` has no declared columns: expect.columns is checked by `viewsync test`
        assert res.code == 0, res.text
        return
    assert res.code == 1, res.text
    problems = [ln.strip() for ln in res.err.splitlines() if ln.startswith("  views/")]
    mine = [p for p in problems if p.startswith(where) and message in p]
    assert len(mine) == 1, problems
    assert len(problems) == 1 or "completed_x" in tests, problems  # that one also names the unused input
    assert "Traceback" not in res.text
    assert not (tmp_path / "s.db").exists()  # validate writes nothing


def test_fixture_files_are_read_beside_the_view_file(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, GOOD.replace(
        "            rows:\n              - {order_id: 1, amount: 2.50, status: completed}",
        "            file: fixtures/orders.jsonl"))
    (repo / "views" / "local" / "fixtures").mkdir()
    (repo / "views" / "local" / "fixtures" / "orders.jsonl").write_text(
        '{"order_id": 1, "amount": 2.5, "status": "completed"}\n{"order_id": 2, "amount": "x"}\n')
    res = run_cli(repo, "validate")
    assert res.code == 1
    assert "views/local/fixtures/orders.jsonl:2:1: amount: 'x' cannot be read as decimal(18,2)" in res.err, res.err


def _links(repo: Path, outside: Path) -> dict[str, str]:
    """Fixture files a hostile pull request could commit: name -> what `validate` must say."""
    here = repo / "views" / "local"
    secret = outside / "runner-credentials.csv"
    secret.write_text("order_id,amount,status\n1,2.50,OUTSIDE_MARKER_7f3a\n")
    (here / "to_outside.csv").symlink_to(secret)
    (here / "to_zero.csv").symlink_to("/dev/zero")
    os.mkfifo(here / "fifo.csv")
    (outside / "dir").mkdir()
    (outside / "dir" / "orders.csv").write_text(secret.read_text())
    (here / "linked_dir").symlink_to(outside / "dir")
    (here / "huge.csv").write_bytes(b"order_id,amount,status\n" + b"1,2.50,x\n" * (1024 * 1024))
    (here / "latin1.csv").write_bytes("order_id,amount,status\n1,2.50,caf\xe9\n".encode("latin-1"))
    outside_repo = "it leads outside the repository"
    return {"to_outside.csv": outside_repo, "to_zero.csv": outside_repo, "fifo.csv": "not a regular file",
            "linked_dir/orders.csv": outside_repo, "huge.csv": "larger than the 8 MB",
            "latin1.csv": "not UTF-8 (line 2"}


def test_fixture_files_are_regular_files_inside_the_repository_of_bounded_size(tmp_path: Path) -> None:
    """A link out of the repository (a runner's credentials, /dev/zero), a FIFO, an oversized or
    non-UTF-8 file: each one located error at the `file:` field, nothing read from it."""
    repo = repo_with(tmp_path, "")
    outside = tmp_path / "outside"
    outside.mkdir()
    expected = _links(repo, outside)
    tests = "".join(GOOD.replace("name: sums", f"name: t{i}").replace(
        "            rows:\n              - {order_id: 1, amount: 2.50, status: completed}",
        f"            file: {name}") for i, name in enumerate(expected))
    (repo / "views" / "local" / "sales.yaml").write_text(HEAD + tests)
    res = run_cli(repo, "validate", timeout=60)
    assert res.code == 1, res.text
    assert "OUTSIDE_MARKER_7f3a" not in res.text and "Traceback" not in res.text
    problems = [ln.strip() for ln in res.err.splitlines() if ln.startswith("  views/")]
    assert len(problems) == len(expected), problems
    lines = (repo / "views" / "local" / "sales.yaml").read_text().splitlines()
    for name, why in expected.items():
        line = next(i for i, t in enumerate(lines, 1) if t.strip() == f"file: {name}")
        assert any(p.startswith(f"views/local/sales.yaml:{line}:") and f"cannot read views/local/{name}: {why}" in p
                   for p in problems), (name, problems)


def test_tests_do_not_change_the_spec_digest(tmp_path: Path) -> None:
    """A test or a check is not catalog state: adding one plans as no change."""
    repo = repo_with(tmp_path, GOOD)
    plain = repo_with(tmp_path / "b", "").joinpath("views/local/sales.yaml")
    plain.write_text(plain.read_text().replace("    tests:\n", ""))
    from reconciler.workspace import Workspace

    with_tests = Workspace.open(repo).declarations_at(None)
    without = Workspace.open(plain.parents[2]).declarations_at(None)
    assert with_tests.digest() == without.digest()
    assert sum(len(r.tests) for r in with_tests.expectations.values()) == 1


# ------------------------------------------------------------------ values and comparison
@pytest.mark.parametrize(("value", "type_", "canonical"), [
    (10.0, "decimal(18,2)", Decimal("10.00")),
    ("12.5", "decimal(5,2)", Decimal("12.50")),
    ("2026-01-01 10:00:00", "timestamp", dt.datetime(2026, 1, 1, 10)),
    ("2026-01-01T10:00:00+02:00", "timestamp_ltz", dt.datetime(2026, 1, 1, 8)),
    ("2026-01-01", "date", dt.date(2026, 1, 1)),
    ("true", "boolean", True),
    ([1, 2], "array<int>", (1, 2)),
    ('{"b": 2, "a": 1}', "map<string,int>", (("a", 1), ("b", 2))),
    ({"zip": "1"}, "struct<city:string,zip:varchar(10)>", (None, "1")),
    ("NaN", "double", math.nan),
])
def test_values_are_typed_by_their_column(value: object, type_: str, canonical: object) -> None:
    got = values.coerce(value, coltypes.parse(type_))
    if isinstance(canonical, float) and math.isnan(canonical):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == canonical


@pytest.mark.parametrize(("value", "type_"), [
    (128, "tinyint"), (1.5, "int"), (True, "bigint"), ("12345.6", "decimal(5,2)"), ("abc", "date"),
    ("x" * 11, "varchar(10)"), ({"nope": 1}, "struct<a:int>"), ("2026-01-01 10:00:00+01:00", "timestamp"),
])
def test_values_that_do_not_fit_are_refused(value: object, type_: str) -> None:
    with pytest.raises(ValueError, match="cannot be read as"):
        values.coerce(value, coltypes.parse(type_))


MAX_38_18 = "99999999999999999999.999999999999999999"


@pytest.mark.parametrize(("value", "type_", "canonical", "shown"), [
    # decimal(38,18) at its extremes: 38 digits, beyond Python's default 28-digit context
    (MAX_38_18, "decimal(38,18)", Decimal(MAX_38_18), MAX_38_18),
    ("-" + MAX_38_18, "decimal(38,18)", Decimal("-" + MAX_38_18), "-" + MAX_38_18),
    # a 32-bit float holds what Spark gives back for the value as written, and shows as written
    (0.1, "float", 0.10000000149011612, "0.1"),
    ("3.4028235e38", "float", 3.4028234663852886e38, "3.4028235e+38"),
    (0.1, "double", 0.1, "0.1"),
])
def test_values_at_the_edges_of_their_type(value: object, type_: str, canonical: object, shown: str) -> None:
    t = coltypes.parse(type_)
    got = values.coerce(value, t)
    assert got == canonical and values.show(got, t) == shown
    assert values.coerce(values.to_wire(got), t) == got  # Spark's answer reads back to the same value


@pytest.mark.parametrize(("value", "type_", "why"), [
    ("123456789012345678901", "decimal(38,18)", "more than 20 digits before the point"),
    (123456789012345678901, "decimal(38,18)", "more than 20 digits before the point"),
    (1e39, "float", "out of range for a 32-bit float"),
    ("1e39", "float", "out of range for a 32-bit float"),
    ("1e400", "double", "out of range for double"),
    ("0001-01-01T00:30:00+01:00", "timestamp_ltz", "out of range"),
    ("\ud800", "string", "lone UTF-16 surrogate"),
])
def test_values_beyond_their_type_are_refused_with_the_reason(value: object, type_: str, why: str) -> None:
    with pytest.raises(ValueError, match="cannot be read as") as caught:
        values.coerce(value, coltypes.parse(type_))
    assert why in str(caught.value)


def test_a_jsonl_fixture_nested_too_deeply_or_with_a_lone_surrogate_is_a_located_error(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, GOOD.replace(
        "            rows:\n              - {order_id: 1, amount: 2.50, status: completed}",
        "            file: orders.jsonl"))
    deep = '{"order_id": 1, "status": ' + "[" * 5000 + "]" * 5000 + "}"
    (repo / "views" / "local" / "orders.jsonl").write_text(
        '{"order_id": 1, "amount": 2.5, "status": "completed"}\n' + deep + '\n{"order_id": 3, "status": "\\ud800"}\n')
    res = run_cli(repo, "validate")
    assert res.code == 1 and "Traceback" not in res.text and "unexpected" not in res.text, res.text
    assert "views/local/orders.jsonl:2:1: JSON nested too deeply" in res.err, res.err
    assert "views/local/orders.jsonl:3:1: status: '\\ud800' cannot be read as string" in res.err, res.err


def test_strings_reach_spark_as_bytes_nothing_can_break_out_of() -> None:
    lit = values.literal("it's'; DROP TABLE x; --", coltypes.parse("string"))
    assert "'" not in lit.replace("X'", "").replace("' AS", "")


def _rows(*rows: tuple[object, ...]) -> list[list[object]]:
    return [list(r) for r in rows]


def test_rows_compare_as_a_multiset_and_report_both_sides() -> None:
    types = [coltypes.parse("int"), coltypes.parse("string")]
    want = _rows((1, "a"), (1, "a"), (2, "b"))
    got = _rows((2, "b"), (1, "a"), (3, "c"))
    d = compare.compare(Expect(rows=()), ["id", "s"], types, got, want)
    assert not d.passed
    assert d.missing == [["1", "a"]] and d.unexpected == [["3", "c"]]
    assert d.message == "1 expected row(s) missing, 1 unexpected row(s)"
    assert compare.compare(Expect(rows=()), ["id", "s"], types, list(reversed(want)), want).passed


def test_ordered_rows_and_tolerance_and_column_subsets() -> None:
    types = [coltypes.parse("int"), coltypes.parse("double")]
    want = _rows((1, 0.3), (2, 0.5))
    got = _rows((2, 0.5), (1, 0.1 + 0.2))
    assert not compare.compare(Expect(rows=()), ["id", "x"], types, got, want).passed  # 0.1 + 0.2 != 0.3
    assert compare.compare(Expect(rows=(), tolerance=1e-9), ["id", "x"], types, got, want).passed
    ordered = compare.compare(Expect(rows=(), ordered=True, tolerance=1e-9), ["id", "x"], types, got, want)
    assert "not in the expected order: row 1" in ordered.message
    assert compare.compare(Expect(rows=(), columns=("id",)), ["id", "x"], types, _rows((1, 9.0), (2, 9.0)),
                           want).passed


def test_counts_and_empty() -> None:
    types = [coltypes.parse("int")]
    assert compare.compare(Expect(count=2), ["id"], types, _rows((1,), (1,)), None).passed
    empty = compare.compare(Expect(count=0), ["id"], types, _rows((7,)), None)
    assert empty.message == "expected no rows, got 1" and empty.unexpected == [["7"]]


def test_tests_checked_offline_are_run_as_prepared_only_when_no_input_needs_the_catalog(tmp_path: Path) -> None:
    """`viewsync test` runs the tests its offline check prepared (preparing them twice cost seconds
    before Spark could start on them) only when they are what the run would prepare: an input whose
    columns sources/ does not list is typed from the catalog at run time, so nothing is reused."""
    from reconciler.services import viewtests as service
    from reconciler.workspace import Workspace

    repo = repo_with(tmp_path, GOOD)
    ws = Workspace.open(repo)
    decl = ws.declarations()
    found, ready = service._checked(ws, decl, None)
    assert found == [] and ready is not None
    online = service.universe(ws, decl, None, offline=False)
    for (dialect, vid, index), p in ready.items():
        test = next(t for t in decl.expectations[vid].tests if t.index == index)
        again = runner.prepare_all(online, [(vid, test)])[0]
        assert (dialect, again.sql, again.issues) == ("spark", p.sql, p.issues)

    (repo / "sources/local/sales.yaml").unlink()  # orders' columns: only the catalog can say
    ws = Workspace.open(repo)
    assert service._checked(ws, ws.declarations(), None)[1] is None
