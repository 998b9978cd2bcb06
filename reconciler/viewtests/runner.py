"""Executing view tests in the verifier's scratch Spark session.

One JVM serves the whole run. The tests of one view share one Spark job: their queries
joined by UNION ALL, each row tagged with its test and its position in that test's output
(every branch is one partition, so the position is the order the view's SQL produced, and
`ordered: true` tests share the job too). When a shared job fails (a runtime error in one
test, e.g. a cast under ANSI mode) its tests run again one by one, so the error is that
test's and the others still run.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from reconciler.core import coltypes
from reconciler.core import sql as vsql
from reconciler.core.coltypes import Prim, Type
from reconciler.core.errors import Problem
from reconciler.core.model import Column, ViewId
from reconciler.source import yamlsrc
from reconciler.source.declarations import Declarations
from reconciler.source.expectations import ViewTest
from reconciler.viewtests import build, compare, values
from reconciler.viewtests.build import Flavor, Prepared, Universe
from reconciler.viewtests.fixtures import Issue
from reconciler.viewtests.result import Status, TestResult, TestRun

TAG = "__vs_test"
POS = "__vs_pos"
BATCH_QUERIES = 64  # queries per message to the worker
RunJob = Callable[[dict[str, Any]], dict[str, Any]]  # the Spark worker


def problem(decl: Declarations, view: ViewId, issue: Issue) -> Problem:
    """An issue placed in its file: file:line:col and the field path from the file's root."""
    if issue.file is not None:
        return Problem(issue.file, issue.line, 1, "", issue.message)
    file, line, col = decl.locate(view, issue.path)
    field = yamlsrc.path_text(("views", decl.where[view][1], *issue.path))
    if issue.line_offset:  # a line inside an inline CSV block
        return Problem(file, line + issue.line_offset, 1, field, issue.message)
    return Problem(file, line, col, field, issue.message)


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Fixture rows and Spark's answers are millions of small objects that form no cycles: the
    cycle collector's full passes over them cost seconds a run (most of judging) and free
    nothing. Reference counting still frees everything; the collector resumes afterwards."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def prepare_all(u: Universe, tests: list[tuple[ViewId, ViewTest]], flavor: Flavor = build.SPARK) -> list[Prepared]:
    with _no_cycle_collection():
        return [build.prepare(u, vid, t, flavor) for vid, t in tests]


def _type_of(f: dict[str, Any]) -> Type:
    meta = f.get("metadata") or {}
    try:
        return coltypes.from_spark(meta.get("__CHAR_VARCHAR_TYPE_STRING") or f["type"])
    except (coltypes.ColumnTypeError, KeyError, TypeError, AttributeError):
        return Prim("string")  # a type fixtures cannot hold (interval...): compared as text


def _spark_branch(i: int, sql: str) -> str:
    return f"SELECT {i} AS {TAG}, monotonically_increasing_id() AS {POS}, * FROM (\n{sql}\n)"


@dataclass(frozen=True)
class Profile:
    """What the shared runner needs of one engine besides its SQL (`build.Flavor`): its name in
    reports, how a test's query becomes one branch of its view's UNION ALL (columns TAG, POS,
    then the view's), how its answers name their types, and its errors as one line."""

    engine: str
    branch: Callable[[int, str], str]
    type_of: Callable[[dict[str, Any]], Type]
    error: Callable[[dict[str, Any], Prepared, Declarations], str]
    ordered_in_union: bool = True  # False: `ordered: true` tests run alone (the union loses their order)...
    # ...unless this gives the test's branch with its rows' order as POS (None: it cannot)
    ordered_branch: Callable[[int, str], str | None] | None = None


def _spark_profile_error(e: dict[str, Any], p: Prepared, decl: Declarations) -> str:
    return _spark_error(e, p, decl)


SPARK = Profile("spark", _spark_branch, _type_of, _spark_profile_error)


@dataclass
class _Query:
    id: str
    sql: str
    members: list[Prepared]  # one, or the tests of a view sharing a job


def _batched(prepared: list[Prepared], profile: Profile) -> list[_Query]:
    groups: dict[ViewId, list[tuple[Prepared, str]]] = {}  # each test with its branch of the union
    queries: list[_Query] = []
    for p in prepared:
        group = groups.setdefault(p.view, [])
        if not profile.ordered_in_union and p.test.expect.ordered:
            branch = profile.ordered_branch(len(group), p.sql) if profile.ordered_branch else None
            if branch is None:
                queries.append(_Query(f"q{len(queries)}", p.sql, [p]))
                continue
        else:
            branch = profile.branch(len(group), p.sql)
        group.append((p, branch))
    for group in groups.values():
        if len(group) == 1:
            queries.append(_Query(f"q{len(queries)}", group[0][0].sql, [group[0][0]]))
        elif group:
            union = "\nUNION ALL\n".join(branch for _, branch in group)
            queries.append(_Query(f"q{len(queries)}", union, [p for p, _ in group]))
    return queries


def _execute(run_job: RunJob, queries: list[_Query]) -> dict[str, dict[str, Any]]:
    answers: dict[str, dict[str, Any]] = {}
    for i in range(0, len(queries), BATCH_QUERIES):
        chunk = queries[i:i + BATCH_QUERIES]
        got = run_job({"op": "tests", "queries": [{"id": q.id, "sql": q.sql} for q in chunk]})
        for a in got.get("answers", []):
            answers[a["id"]] = a
    return answers


def run(prepared: list[Prepared], run_job: RunJob, decl: Declarations, profile: Profile = SPARK) -> TestRun:
    """Every prepared test executed and compared. Never raises for a test's own problem."""
    with _no_cycle_collection():
        return _run(prepared, run_job, decl, profile)


def _run(prepared: list[Prepared], run_job: RunJob, decl: Declarations, profile: Profile) -> TestRun:
    started = time.monotonic()
    results: dict[int, TestResult] = {}
    runnable = []
    for p in prepared:
        if p.issues:
            results[id(p)] = _result(p, decl, Status.ERROR, profile, error=str(problem(decl, p.view, p.issues[0])))
        else:
            runnable.append(p)
    queries = _batched(runnable, profile)
    # Every result names its file:line, found by composing the view files (seconds for big
    # fixture files): done while Spark runs the queries, when this process only waits.
    locating = threading.Thread(target=_locate_all, args=(decl, prepared), name="viewsync-locate", daemon=True)
    locating.start()
    answers = _execute(run_job, queries)
    locating.join()
    retry = [_Query(f"r{i}", m.sql, [m]) for i, m in enumerate(
        m for q in queries if len(q.members) > 1 and "error" in answers.get(q.id, {"error": 1}) for m in q.members)]
    answers.update(_execute(run_job, retry) if retry else {})
    per_query = len(queries) + len(retry)
    spent = (time.monotonic() - started) / max(per_query, 1)
    for q in [*queries, *retry]:
        a = answers.get(q.id)
        if a is None or (len(q.members) > 1 and "error" in a):
            continue  # answered one by one in `retry`
        for i, p in enumerate(q.members):
            results[id(p)] = _judge(p, a, i if len(q.members) > 1 else None, decl, spent / len(q.members), profile)
    return TestRun([results[id(p)] for p in prepared if id(p) in results], time.monotonic() - started)


def _locate_all(decl: Declarations, prepared: list[Prepared]) -> None:
    for view in dict.fromkeys(p.view for p in prepared):
        decl.locate(view, ())


def _result(p: Prepared, decl: Declarations, status: Status, profile: Profile, **kw: Any) -> TestResult:
    file, line, _ = decl.locate(p.view, p.test.path("name"))
    return TestResult(p.view, p.test.name, file, line, status, p.test.description, index=p.test.index,
                      engine=profile.engine, **kw)


def _spark_error(e: dict[str, Any], p: Prepared, decl: Declarations) -> str:
    """Spark's error once: the result carries the test's location, and Spark's message may
    begin with its own class already."""
    cls = str(e.get("class"))
    message = (str(e.get("message", "")).splitlines() or [""])[0].strip()
    if message.startswith(f"[{cls}]"):
        message = message[len(cls) + 2:].strip()
    text = f"Spark: [{cls}] {message}"
    if cls == "ASSIGNMENT_ARITY_MISMATCH":  # the declared columns are the view's column list
        spec = decl.views[p.view]
        sql = next((r.sql for r in spec.representations if r.dialect == "spark"), None)
        returned = vsql.facts(sql, "spark").outputs if sql else None
        if returned is not None and len(returned) != len(spec.columns):
            missing = [c.name for c in spec.columns if c.name.lower() not in {n.lower() for n in returned}]
            text += (f" (the view declares {len(spec.columns)} column(s), its SQL returns {len(returned)}"
                     + (f"; not returned: {', '.join(missing)})" if missing else ")"))
    return text


def _judge(p: Prepared, answer: dict[str, Any], tag: int | None, decl: Declarations, seconds: float,
           profile: Profile) -> TestResult:
    if "error" in answer:
        return _result(p, decl, Status.ERROR, profile, seconds=seconds, error=profile.error(answer["error"], p, decl))
    fields = answer["schema"]
    rows = answer["rows"]
    if tag is not None:
        fields = fields[2:]
        rows = [r[2:] for r in sorted((r for r in rows if r[0] == tag), key=lambda r: r[1])]
    names = [f["name"] for f in fields]
    types = [profile.type_of(f) for f in fields]
    try:
        actual = [[values.coerce(v, t) for v, t in zip(r, types, strict=True)] for r in rows]
    except ValueError as err:  # an answer viewsync cannot read is this test's error, not the run's
        return _result(p, decl, Status.ERROR, profile, seconds=seconds,
                       error=f"{profile.engine}'s answer cannot be compared: {err}")
    returned = (names, [[values.show(v, t) for v, t in zip(r, types, strict=True)] for r in actual])
    expected = None
    if p.test.expect.count is None:
        issues: list[Issue] = []
        cols = [Column(name=n, type=coltypes.render(t)) for n, t in zip(names, types, strict=True)]
        expected = build.typed(p.expected, cols, issues)
        unknown = [c for c in (p.test.expect.columns or ()) if c.lower() not in {n.lower() for n in names}]
        if unknown:
            issues.append(Issue(p.test.path("expect", "columns"),
                                f"unknown column {unknown[0]!r} (the view's columns: {', '.join(names)})"))
        if issues:
            return _result(p, decl, Status.ERROR, profile, seconds=seconds,
                           error=str(problem(decl, p.view, issues[0])))
    diff = compare.compare(p.test.expect, names, types, actual, expected)
    return _result(p, decl, Status.PASSED if diff.passed else Status.FAILED, profile, difference=diff,
                   seconds=seconds, rows=returned)
