"""What Spark produced against what a test expects: rows as a multiset (or in order), a count,
or nothing; a subset of the columns; exact, or within an absolute tolerance on floating-point
columns. Pure: values are typed with `values.coerce` on both sides first."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from reconciler.core.coltypes import Prim, Type
from reconciler.source.expectations import Expect
from reconciler.viewtests import values

MAX_SHOWN = 20  # rows of each kind a report shows


@dataclass
class Difference:
    """Why a test failed; empty `message` when it passed."""

    message: str = ""
    columns: list[str] = field(default_factory=list)
    missing: list[list[str]] = field(default_factory=list)  # expected, not produced (shown values)
    unexpected: list[list[str]] = field(default_factory=list)  # produced, not expected
    missing_count: int = 0
    unexpected_count: int = 0
    expected_count: int | None = None
    actual_count: int = 0

    @property
    def passed(self) -> bool:
        return not self.message

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "actual_count": self.actual_count}
        if self.expected_count is not None:
            out["expected_count"] = self.expected_count
        if self.missing_count or self.unexpected_count:
            out.update(columns=self.columns, missing=self.missing, unexpected=self.unexpected,
                       missing_count=self.missing_count, unexpected_count=self.unexpected_count)
        return out


def _key(v: Any) -> Any:
    """A value that compares equal to itself (NaN does not)."""
    if isinstance(v, float) and math.isnan(v):
        return ("NaN",)
    if isinstance(v, tuple):
        return tuple(_key(x) for x in v)
    return v


def _close(a: Any, b: Any, tol: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return bool(a == b or abs(a - b) <= tol)
    return bool(_key(a) == _key(b))


def _rows_equal(a: list[Any], b: list[Any], tol: list[float | None]) -> bool:
    return all(_close(x, y, t) if t is not None else _key(x) == _key(y) for x, y, t in zip(a, b, tol, strict=True))


def compare(expect: Expect, names: list[str], types: list[Type], actual: list[list[Any]],
            expected: list[list[Any]] | None) -> Difference:
    """`actual` and `expected` hold typed rows in the order of `names`."""
    if expect.count is not None:
        diff = Difference(expected_count=expect.count, actual_count=len(actual))
        if len(actual) != expect.count:
            diff.message = ("expected no rows" if expect.count == 0 else f"expected {expect.count} row(s)") + \
                f", got {len(actual)}"
            if expect.count == 0:
                diff.columns = names
                diff.unexpected = [[values.show(v, t) for v, t in zip(r, types, strict=True)]
                                   for r in actual[:MAX_SHOWN]]
                diff.unexpected_count = len(actual)
        return diff
    assert expected is not None
    idx = list(range(len(names)))
    if expect.columns is not None:
        lower = [n.lower() for n in names]
        idx = [lower.index(c.lower()) for c in expect.columns]
    cols, ctypes = [names[i] for i in idx], [types[i] for i in idx]
    tol = [expect.tolerance if expect.tolerance is not None and isinstance(t, Prim) and t.name in ("float", "double")
           else None for t in ctypes]
    got = [[r[i] for i in idx] for r in actual]
    want = [[r[i] for i in idx] for r in expected]
    diff = Difference(columns=cols, expected_count=len(want), actual_count=len(got))
    missing, unexpected = _multiset_difference(want, got, tol)
    if missing or unexpected:
        diff.missing_count, diff.unexpected_count = len(missing), len(unexpected)
        diff.missing = [[values.show(v, t) for v, t in zip(r, ctypes, strict=True)] for r in missing[:MAX_SHOWN]]
        diff.unexpected = [[values.show(v, t) for v, t in zip(r, ctypes, strict=True)] for r in unexpected[:MAX_SHOWN]]
        parts = []
        if missing:
            parts.append(f"{len(missing)} expected row(s) missing")
        if unexpected:
            parts.append(f"{len(unexpected)} unexpected row(s)")
        diff.message = ", ".join(parts)
        return diff
    if expect.ordered:
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            if not _rows_equal(w, g, tol):
                diff.message = (f"the rows are right but not in the expected order: row {i + 1} is "
                                f"({', '.join(values.show(v, t) for v, t in zip(g, ctypes, strict=True))}), "
                                f"expected ({', '.join(values.show(v, t) for v, t in zip(w, ctypes, strict=True))})")
                break
    return diff


def _multiset_difference(want: list[list[Any]], got: list[list[Any]],
                         tol: list[float | None]) -> tuple[list[list[Any]], list[list[Any]]]:
    if all(t is None for t in tol):
        w = Counter(tuple(_key(v) for v in r) for r in want)
        g = Counter(tuple(_key(v) for v in r) for r in got)
        missing_keys, unexpected_keys = w - g, g - w
        return (_take(want, missing_keys), _take(got, unexpected_keys))
    left = list(got)
    missing = []
    for r in want:
        for i, cand in enumerate(left):
            if _rows_equal(r, cand, tol):
                del left[i]
                break
        else:
            missing.append(r)
    return missing, left


def _take(rows: list[list[Any]], counts: Counter[tuple[Any, ...]]) -> list[list[Any]]:
    """The rows (original values, in order) that `counts` says are extra."""
    left = Counter(counts)
    out = []
    for r in rows:
        k = tuple(_key(v) for v in r)
        if left[k] > 0:
            left[k] -= 1
            out.append(r)
    return out
