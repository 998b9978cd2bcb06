"""The checks' SQL (pure): every check of one view in one scan of it.

`unique` adds a window over its columns (one COUNT: one Window operator over one sort, the
shape of a hand-written uniqueness count), `relationships`
a left join with the distinct values of its target; then a single aggregation counts each
check's failing rows (`f_<i>`) and duplicated values (`g_<i>`). The failing rows of failed
checks (at most `SAMPLE` each) come from a second query, run only when a check failed.
Semantics follow dbt's tests: NULLs pass `accepted_values`, `relationships` and `expression`
(a row fails when `NOT (expr)` is TRUE); `unique` ignores rows whose checked columns are all
NULL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reconciler.core.sql import spark_ident as q
from reconciler.core.sql import spark_string
from reconciler.datareview.diffsql import Col

SAMPLE = 5
KINDS = ("not_null", "unique", "accepted_values", "row_count", "relationships", "expression")


class CheckLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def args(self) -> Any: ...
    @property
    def severity(self) -> str: ...
    @property
    def index(self) -> int: ...


class CheckError(ValueError):
    """A check cannot be evaluated on this result (e.g. it names a column the result lacks)."""


@dataclass(frozen=True)
class CheckPlan:
    stats: str  # one row: rows, f_<i>, g_<i>
    failing: dict[int, str]  # check index -> its failing-row condition over `w`
    prelude: str  # the WITH ... w AS (...) the samples query reuses
    columns: list[str]  # the view's own columns, in order


def literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if value is None:
        return "NULL"
    return spark_string(str(value))


def _column(cols: Sequence[Col], name: Any, check: CheckLike) -> str:
    found = next((c.name for c in cols if c.name.lower() == str(name).lower()), None)
    if found is None:
        raise CheckError(f"checks[{check.index}] {check.kind}: column {name!r} is not a column of the view's result")
    return q(found)


def build(rel: str, cols: Sequence[Col], checks: Sequence[CheckLike], targets: dict[int, str]) -> CheckPlan:
    """The queries for `checks` over the registered relation `rel` (columns `cols`);
    `targets[i]` is the registered relation of relationships check i's `to`.
    Raises CheckError when a check names a column the result does not have."""
    windows: list[str] = []
    joins: list[str] = []
    flags: list[str] = []
    failing: dict[int, str] = {}
    groups: dict[int, str] = {}
    for c in checks:
        i = c.index
        if c.kind == "not_null":
            names = [_column(cols, n, c) for n in c.args]
            failing[i] = "(" + " OR ".join(f"{n} IS NULL" for n in names) + ")"
        elif c.kind == "unique":
            names = [_column(cols, n, c) for n in c.args]
            windows.append(f"COUNT(1) OVER (PARTITION BY {', '.join(names)}) AS __vs_u{i}")
            all_null = " AND ".join(f"{n} IS NULL" for n in names)
            failing[i] = f"(__vs_u{i} > 1 AND NOT ({all_null}))"
            groups[i] = f"CASE WHEN {failing[i]} THEN 1.0D / __vs_u{i} ELSE 0.0D END"
        elif c.kind == "accepted_values":
            col = _column(cols, c.args["column"], c)
            values = list(c.args["values"])
            if not values:
                failing[i] = f"({col} IS NOT NULL)"
            else:
                failing[i] = f"({col} IS NOT NULL AND {col} NOT IN ({', '.join(literal(v) for v in values)}))"
        elif c.kind == "relationships":
            col = _column(cols, c.args["column"], c)
            field = q(str(c.args.get("field") or c.args["column"]))
            joins.append(f"LEFT JOIN (SELECT DISTINCT {field} AS __vs_k{i} FROM {q(targets[i])}) __vs_r{i} "
                         f"ON w1.{col} = __vs_r{i}.__vs_k{i}")
            flags.append(f"__vs_r{i}.__vs_k{i} IS NOT NULL AS __vs_f{i}")
            failing[i] = f"({col} IS NOT NULL AND NOT __vs_f{i})"
        elif c.kind == "expression":
            failing[i] = f"(NOT ({c.args}))"
        elif c.kind == "row_count":
            continue
        else:
            raise CheckError(f"checks[{i}]: unknown check {c.kind!r} (known: {', '.join(KINDS)})")
    w1 = f"SELECT *{''.join(', ' + w for w in windows)} FROM {q(rel)}"
    w = f"SELECT w1.*{''.join(', ' + f for f in flags)} FROM w1 {' '.join(joins)}".rstrip()
    prelude = f"WITH w1 AS ({w1}),\nw AS ({w})\n"
    agg = ["COUNT(1) AS n_rows"]
    agg += [f"SUM(CASE WHEN {cond} THEN 1 ELSE 0 END) AS f_{i}" for i, cond in failing.items()]
    # duplicated values: each of a value's n rows adds 1/n (rounding error far below 1/2)
    agg += [f"CAST(ROUND(SUM({share})) AS BIGINT) AS g_{i}" for i, share in groups.items()]
    return CheckPlan(prelude + "SELECT " + ",\n  ".join(agg) + " FROM w", failing, prelude, [c.name for c in cols])


_ORDERABLE_NOT = ("map", "struct", "array", "binary", "variant")


def samples(plan: CheckPlan, cols: Sequence[Col], failed: Sequence[int], sample: int = SAMPLE) -> str:
    """Up to `sample` failing rows of each failed check: `__vs_chk` then the view's columns."""
    arr = ", ".join(f"CASE WHEN {plan.failing[i]} THEN {i} END" for i in failed)
    order = ", ".join(q(c.name) for c in cols if c.type.split("(")[0].split("<")[0] not in _ORDERABLE_NOT) or "1"
    names = ", ".join(q(n) for n in plan.columns)
    return (plan.prelude + f", x AS (SELECT *, explode(filter(array({arr}), v -> v IS NOT NULL)) AS __vs_chk FROM w)\n"
            f"SELECT __vs_chk, {names} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY __vs_chk ORDER BY {order}) "
            f"AS __vs_s FROM x) WHERE __vs_s <= {int(sample)} ORDER BY __vs_chk, __vs_s")
