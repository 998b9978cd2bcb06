"""What a view declaration says about its data, beside its definition: `key`, `checks` and
`tests`. None of it is catalog state: it never enters the ViewSpec or its digest, so adding a
test or a check plans as no change.

The JSON Schema has already checked the shapes; this module turns a view's raw mapping into
values and finds the problems the schema cannot see (a key or check column the view does not
declare, duplicate test names), each at its field path within the view.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Path_ = tuple[str | int, ...]

CHECK_KINDS = ("not_null", "unique", "accepted_values", "row_count", "relationships", "expression")
FIELDS = ("key", "checks", "tests")  # the view-file fields this module owns


@dataclass(frozen=True)
class Check:
    """One item of `checks:`; `args` as written (list of columns, mapping, or SQL text)."""

    kind: str
    args: Any
    severity: str  # "error" | "warn"
    index: int  # position in the view's checks list

    def columns(self) -> list[str]:
        """The view's columns this check names."""
        if self.kind in ("not_null", "unique"):
            return [str(c) for c in self.args]
        if self.kind in ("accepted_values", "relationships"):
            return [str(self.args["column"])]
        return []


@dataclass(frozen=True)
class Given:
    """One input of a test: rows inline, CSV text inline, or a .csv/.jsonl file beside the view file."""

    name: str  # as written: as the SQL writes it, or fully qualified
    rows: tuple[dict[str, Any], ...] | None = None
    csv: str | None = None
    file: str | None = None


@dataclass(frozen=True)
class Expect:
    rows: tuple[dict[str, Any], ...] | None = None
    count: int | None = None  # `count: N`, and `empty: true` as 0
    ordered: bool = False
    columns: tuple[str, ...] | None = None
    tolerance: float | None = None


@dataclass(frozen=True)
class ViewTest:
    name: str
    index: int  # position in the view's tests list
    given: tuple[Given, ...]
    expect: Expect
    description: str | None = None

    def path(self, *more: str | int) -> Path_:
        """The field path of this test (or of a part of it) within its view."""
        return ("tests", self.index, *more)


@dataclass(frozen=True)
class Expectations:
    key: tuple[str, ...] | None = None
    checks: tuple[Check, ...] = ()
    tests: tuple[ViewTest, ...] = field(default_factory=tuple)


EMPTY = Expectations()


def parse(raw: dict[str, Any]) -> Expectations:
    """The review fields of one schema-valid view mapping."""
    key = tuple(str(k) for k in raw["key"]) if raw.get("key") else None
    checks = tuple(_check(i, item) for i, item in enumerate(raw.get("checks") or []))
    tests = tuple(_test(i, item) for i, item in enumerate(raw.get("tests") or []))
    return Expectations(key, checks, tests) if (key or checks or tests) else EMPTY


def _check(i: int, item: dict[str, Any]) -> Check:
    kind = next(k for k in CHECK_KINDS if k in item)
    args = item[kind]
    if kind in ("not_null", "unique") and isinstance(args, str):
        args = [args]
    return Check(kind, args, str(item.get("severity", "error")), i)


def _rows(value: Any) -> tuple[dict[str, Any], ...]:
    return tuple(dict(r) for r in value)


def _test(i: int, item: dict[str, Any]) -> ViewTest:
    given = tuple(Given(str(name), _rows(g["rows"]) if "rows" in g else None, g.get("csv"), g.get("file"))
                  for name, g in (item.get("given") or {}).items())
    e = item["expect"]
    count = 0 if e.get("empty") else e.get("count")
    expect = Expect(_rows(e["rows"]) if "rows" in e else None, count, bool(e.get("ordered", False)),
                    tuple(e["columns"]) if e.get("columns") is not None else None, e.get("tolerance"))
    return ViewTest(str(item["name"]), i, given, expect, item.get("description"))


def problems(expected: Expectations, declared_columns: list[str]) -> Iterator[tuple[Path_, str]]:
    """(path within the view, message) for what the schema cannot see. Columns are checked
    only when the view declares them (otherwise Spark infers them, and `viewsync test` /
    `viewsync check` report unknown ones)."""
    known = {c.lower() for c in declared_columns}
    shown = ", ".join(declared_columns)
    if expected.key:
        seen: set[str] = set()
        for j, col in enumerate(expected.key):
            if known and col.lower() not in known:
                yield ("key", j), f"unknown column {col!r} (the view declares: {shown})"
            if col.lower() in seen:
                yield ("key", j), f"column {col!r} is listed twice"
            seen.add(col.lower())
    for c in expected.checks:
        if known:
            for col in c.columns():
                if col.lower() not in known:
                    where: Path_ = ("checks", c.index, c.kind)
                    if c.kind in ("not_null", "unique"):
                        where = (*where, [str(x) for x in c.args].index(col))
                    else:
                        where = (*where, "column")
                    yield where, f"unknown column {col!r} (the view declares: {shown})"
        if c.kind == "expression":
            why = expression_problem(str(c.args))
            if why:
                yield ("checks", c.index, "expression"), why
        if c.kind == "row_count" and "min" in c.args and "max" in c.args and c.args["min"] > c.args["max"]:
            yield ("checks", c.index, "row_count"), f"min {c.args['min']} is above max {c.args['max']}"
    names: dict[str, int] = {}
    for t in expected.tests:
        if t.name in names:
            yield t.path("name"), f"duplicate test name {t.name!r} (also tests[{names[t.name]}])"
        names.setdefault(t.name, t.index)
        if known and t.expect.columns:
            for j, col in enumerate(t.expect.columns):
                if col.lower() not in known:
                    yield t.path("expect", "columns", j), f"unknown column {col!r} (the view declares: {shown})"


def expression_problem(text: str) -> str | None:
    """Why an `expression:` check is not exactly one boolean SQL expression, or None. The text is
    spliced into the check's query, so what could close its parentheses or end its statement
    (an unbalanced `)`, a `;`, a comment) is refused before any data is read."""
    import sqlglot
    from sqlglot import TokenType, exp

    try:
        tokens = sqlglot.tokenize(text, read="spark")
    except sqlglot.errors.SqlglotError as exc:
        return f"not one SQL expression: {str(exc).splitlines()[0]}"
    depth = 0
    for token in tokens:
        if token.comments:
            return "a comment is not allowed in a check expression"
        if token.token_type is TokenType.SEMICOLON:
            return "';' is not allowed in a check expression"
        depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(token.token_type, 0)
        if depth < 0:
            return "unbalanced ')': a check expression cannot close the query's parentheses"
    if depth:
        return "unbalanced '(': a check expression must close what it opens"
    try:
        tree = sqlglot.parse_one(text, read="spark", into=exp.Condition)
    except sqlglot.errors.SqlglotError:
        return "not exactly one boolean SQL expression (Spark SQL)"
    if isinstance(tree, (exp.Literal, exp.Null)):
        return "not a boolean condition on the view's rows"
    return None
