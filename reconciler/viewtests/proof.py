"""Which representation of a view is proven on which engine, and where two disagree. Pure.

A representation is *proven* on an engine when all the view's tests pass there. The matrix has
one row per view with tests and one cell per engine: passed, failed, no engine (not
configured), no representation (the view has none in that engine's dialect). Two engines
*disagree* on a test when they return different rows for it (or one returns rows and the other
raises), unless the test passes on both (then they agree to the test's own precision).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.core.model import ViewId, ViewSpec
from reconciler.viewtests.result import Status, TestResult, TestRun

PASSED, FAILED, NO_ENGINE, NO_REPRESENTATION = "passed", "failed", "no engine", "no representation"
DIALECT_OF = {"spark": "spark", "trino": "trino", "flink": "flink"}  # engine -> the representation it runs


def matrix(run: TestRun, views: Iterable[ViewId], specs: Mapping[ViewId, ViewSpec], configured: list[str],
           engines: Iterable[str]) -> list[dict[str, Any]]:
    """One row per view in `views` that has tests in `run`: {"view", "<engine>": state...}."""
    by_view: dict[ViewId, dict[str, list[TestResult]]] = {}
    for r in run.results:
        by_view.setdefault(r.view, {}).setdefault(r.engine, []).append(r)
    rows = []
    for vid in views:
        if vid not in by_view:
            continue
        row: dict[str, Any] = {"view": vid.to_json()}
        for engine in engines:
            if specs[vid].sql_for(DIALECT_OF.get(engine, engine)) is None:
                row[engine] = NO_REPRESENTATION
            elif engine not in configured:
                row[engine] = NO_ENGINE
            else:
                got = by_view[vid].get(engine, [])
                row[engine] = PASSED if got and all(r.status is Status.PASSED for r in got) else FAILED
        rows.append(row)
    return rows


@dataclass(frozen=True)
class Disagreement:
    view: ViewId
    test: str
    index: int  # the test's position in its view's tests
    engines: tuple[str, str]
    shown: tuple[str, str]  # each engine's rows (or its error), as one line each

    @property
    def message(self) -> str:
        a, b = self.engines
        return (f"test {self.test!r} of {self.view}: the {a} and {b} representations disagree: "
                f"{a} {self.shown[0]}; {b} {self.shown[1]}")


def _shown(r: TestResult) -> str:
    if r.rows is None:
        return f"raised: {r.error or r.message}"
    names, rows = r.rows
    body = ", ".join("(" + ", ".join(v for v in row) + ")" for row in rows[:20])
    more = f" and {len(rows) - 20} more" if len(rows) > 20 else ""
    return f"returned {len(rows)} row(s) ({', '.join(names)}): {body or 'none'}{more}"


def _same(a: TestResult, b: TestResult) -> bool:
    if a.rows is None or b.rows is None:
        return a.rows is None and b.rows is None  # both raised: no rows to disagree on
    return Counter(tuple(r) for r in a.rows[1]) == Counter(tuple(r) for r in b.rows[1])


def disagreements(run: TestRun) -> list[Disagreement]:
    """Every test two engines answered differently, the first engine of the run against each other."""
    by_test: dict[tuple[ViewId, int], list[TestResult]] = {}
    for r in run.results:
        by_test.setdefault((r.view, r.index), []).append(r)
    out = []
    for (vid, index), results in by_test.items():
        first = results[0]
        for other in results[1:]:
            if first.status is Status.PASSED and other.status is Status.PASSED:
                continue
            if not _same(first, other):
                out.append(Disagreement(vid, first.name, index, (first.engine, other.engine),
                                        (_shown(first), _shown(other))))
    return out
