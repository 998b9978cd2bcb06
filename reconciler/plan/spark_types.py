"""Spark's result types, where a view's inputs are typed, so generated trino SQL returns them (issue 41).

sqlglot translates syntax, not types: Spark's `avg` of a decimal(p,s) is decimal(p+4,s+4) where Trino's
stays decimal(p,s), and Spark divides two decimals exactly into a decimal of scale >= 6 where sqlglot's
`CAST(x AS DOUBLE) / NULLIF(y, 0)` returns a DOUBLE on Trino. `rewrite` types a parsed Spark query
(columns from the declared sources and views, through subqueries and CTEs) with Spark's own rules and
rewrites those two constructs so Trino returns Spark's type and value. It also names the query's
unaliased outputs as Spark does, where Spark's name is certain. Pure: no engine, no I/O.

Spark's rules, as of Spark 3.5 (sql/catalyst, with spark.sql.decimalOperations.allowPrecisionLoss on,
the default):
- `DecimalPrecision` / `decimalExpressions.scala`: e1 + e2 and e1 - e2 are decimal(max(p1-s1, p2-s2) +
  max(s1,s2) + 1, max(s1,s2)); e1 * e2 is decimal(p1+p2+1, s1+s2); e1 / e2 is decimal(p1-s1+s2 +
  max(6, s1+p2+1), max(6, s1+p2+1)); each then bounded by `DecimalType.adjustPrecisionScale` (over 38
  digits: precision 38, scale max(38 - integer digits, min(scale, 6))). An integral column is
  decimal(10,0) (bigint decimal(20,0)), an integer literal decimal(its digits, 0) (`fromLiteral`).
- `Average.scala`: avg of decimal(p,s) is decimal(min(38,p+4), min(38,s+4)); `Sum.scala`: sum of
  decimal(p,s) is decimal(min(38,p+10), s). Both round HALF_UP, as Trino's decimal avg and division do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX = 38
# A Spark type: ("decimal", p, s) or its lower-case name ("int", "bigint", "double", "string", ...).
SparkType = tuple[str, int, int] | str
# The columns of a table reference (catalog, schema, table as written: None where omitted), or None.
TableColumns = Callable[[str | None, str | None, str], dict[str, str] | None]

_DECIMAL = re.compile(r"^\s*(?:decimal|numeric|dec)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$", re.IGNORECASE)
_INTEGRAL = {"tinyint": 3, "byte": 3, "smallint": 5, "short": 5, "int": 10, "integer": 10, "bigint": 20,
             "long": 20}
_FRACTIONAL = {"double", "float", "real"}


def parse_type(text: str) -> SparkType:
    """A declared column type (Spark's grammar) as a SparkType."""
    m = _DECIMAL.match(text)
    if m:
        return ("decimal", int(m.group(1) or 10), int(m.group(2) or 0))
    name = text.strip().lower()
    return "int" if name == "integer" else name


def adjust(p: int, s: int) -> tuple[str, int, int]:
    """`DecimalType.adjustPrecisionScale` with allowPrecisionLoss (Spark's default)."""
    if p <= MAX:
        return ("decimal", p, s)
    int_digits = p - s
    return ("decimal", MAX, max(MAX - int_digits, min(s, 6)))


def bounded(p: int, s: int) -> tuple[str, int, int]:
    return ("decimal", min(p, MAX), min(s, MAX))


@dataclass
class Rewritten:
    avg: int = 0  # avg calls cast to Spark's decimal type
    divisions: int = 0  # decimal divisions written exactly
    exact_at: list[int] = field(default_factory=list)  # where each starts: 0-based into the query's text
    named: list[str] = field(default_factory=list)  # outputs given Spark's name
    unnamed: list[str] = field(default_factory=list)  # unaliased outputs whose Spark name is not certain


def name_outputs(tree: Any) -> Rewritten:
    """Alias each unaliased output of the query as Spark names it, where that name is certain:
    an aggregate (sum, min, max, avg) of a bare lower-case column is named `fn(column)` (Spark's
    `toPrettySQL`: the function's pretty name, the column without its qualifier). Others are listed."""
    from sqlglot import exp

    done = Rewritten()
    select = tree
    while isinstance(select, exp.SetOperation):  # a union's names are its first query's
        select = select.this
    if not isinstance(select, exp.Select):
        return done
    for e in list(select.expressions):
        if isinstance(e, (exp.Alias, exp.Column, exp.Star)):
            continue
        inner = e.this if isinstance(e, (exp.Sum, exp.Min, exp.Max, exp.Avg)) else None
        # a lower-case column only: Spark names it by the resolved attribute, whose case is the table's
        certain = isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star) and inner.name.islower()
        if certain and inner is not None and not e.args.get("distinct"):
            fn = {exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg"}[type(e)]
            name = f"{fn}({inner.name})"
            e.replace(exp.alias_(e.copy(), name, quoted=True))
            done.named.append(name)
        else:
            done.unnamed.append(e.sql(dialect="spark"))
    return done


def rewrite(tree: Any, columns: TableColumns) -> Rewritten:
    """Rewrite `tree` (a Spark query, in place) for Trino: avg of a decimal and a division of two
    decimals typed as Spark types them. Expressions whose operand types are unknown are left alone."""
    from sqlglot import exp
    from sqlglot.optimizer.scope import traverse_scope

    done = Rewritten()
    typer = _Typer(columns)
    for scope in traverse_scope(tree):
        typer.scopes[id(scope.expression)] = scope
    typed: list[tuple[Any, tuple[str, int, int]]] = []  # typed on the tree as written, then rewritten
    for scope in traverse_scope(tree):
        for node in scope.expression.find_all(exp.Avg, exp.Div):
            if isinstance(node, exp.Div) and node.args.get("typed"):
                continue
            t = typer.type_of(node, scope)
            if isinstance(node, exp.Div) and isinstance(t, tuple) and not _exact(typer, node, scope, t[2]):
                continue
            if isinstance(t, tuple) and all(id(node) != id(n) for n, _ in typed):
                typed.append((node, t))
    for node, t in sorted(typed, key=lambda nt: -nt[0].depth):  # innermost first: outer ones keep them
        to = exp.DataType.build(f"DECIMAL({t[1]}, {t[2]})")
        if isinstance(node, exp.Avg):
            node.replace(exp.cast(exp.Avg(this=exp.cast(node.this, to.copy())), to))
            done.avg += 1
        else:
            starts = [n.meta["start"] for n in node.walk() if "start" in n.meta]
            done.exact_at.append(min(starts) if starts else -1)
            wide = exp.DataType.build(f"DECIMAL({MAX}, {t[2]})")
            div = exp.Div(this=exp.cast(node.this, wide), expression=node.expression, typed=True, safe=True)
            node.replace(exp.cast(div, to))
            done.divisions += 1
    return done


def _exact(typer: _Typer, node: Any, scope: Any, scale: int) -> bool:
    """Whether Trino, dividing at `scale`, rounds once as Spark does: neither operand has more
    decimal places than Spark's result (over 38 digits Spark may lower the scale below them)."""
    scales = [typer.type_of(o, scope) for o in (node.this, node.expression)]
    return all(not isinstance(t, tuple) or t[2] <= scale for t in scales)


class _Typer:
    """Spark's type of an expression within a scope; None where unknown."""

    def __init__(self, columns: TableColumns) -> None:
        self.columns = columns
        self.scopes: dict[int, Any] = {}

    def type_of(self, node: Any, scope: Any) -> SparkType | None:
        from sqlglot import exp

        if isinstance(node, (exp.Paren, exp.Alias)):
            return self.type_of(node.this, scope)
        if isinstance(node, exp.Literal):
            return _literal(node)
        if isinstance(node, exp.Cast):
            return parse_type(node.args["to"].sql(dialect="spark"))
        if isinstance(node, exp.Column):
            return self._column(node, scope)
        if isinstance(node, exp.Neg):
            return self.type_of(node.this, scope)
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
            return self._arithmetic(node, scope)
        if isinstance(node, exp.Count):
            return "bigint"
        if isinstance(node, (exp.Min, exp.Max)):
            return self.type_of(node.this, scope)
        if isinstance(node, exp.Sum):
            t = self.type_of(node.this, scope)
            if isinstance(t, tuple):
                return bounded(t[1] + 10, t[2])
            return "bigint" if t in _INTEGRAL else "double" if t in _FRACTIONAL else None
        if isinstance(node, exp.Avg):
            t = self.type_of(node.this, scope)
            if isinstance(t, tuple):
                return bounded(t[1] + 4, t[2] + 4)
            return "double" if t in _INTEGRAL or t in _FRACTIONAL else None
        if isinstance(node, (exp.Case, exp.If, exp.Coalesce)):
            return self._wider(node, scope)
        return None

    def _arithmetic(self, node: Any, scope: Any) -> SparkType | None:
        from sqlglot import exp

        a, b = self.type_of(node.this, scope), self.type_of(node.expression, scope)
        if a is None or b is None:
            return None
        if a in _FRACTIONAL or b in _FRACTIONAL:
            return "double"
        if a in _INTEGRAL and b in _INTEGRAL:
            return "double" if isinstance(node, exp.Div) else _wider_integral(a, b)
        da, db = _as_decimal(a, node.this), _as_decimal(b, node.expression)
        if da is None or db is None:
            return None
        (_, p1, s1), (_, p2, s2) = da, db
        if isinstance(node, (exp.Add, exp.Sub)):
            s = max(s1, s2)
            return adjust(max(p1 - s1, p2 - s2) + s + 1, s)
        if isinstance(node, exp.Mul):
            return adjust(p1 + p2 + 1, s1 + s2)
        scale = max(6, s1 + p2 + 1)
        return adjust(p1 - s1 + s2 + scale, scale)

    def _wider(self, node: Any, scope: Any) -> SparkType | None:
        from sqlglot import exp

        if isinstance(node, exp.Case):
            branches = [i.args.get("true") for i in node.args.get("ifs", [])] + [node.args.get("default")]
        elif isinstance(node, exp.If):
            branches = [node.args.get("true"), node.args.get("false")]
        else:
            branches = [node.this, *node.expressions]
        types = [self.type_of(b, scope) for b in branches if b is not None and not isinstance(b, exp.Null)]
        if not types or any(t is None for t in types):
            return None
        if all(t == types[0] for t in types):
            return types[0]
        if any(t in _FRACTIONAL for t in types):
            return "double"
        decimals = [t if isinstance(t, tuple) else ("decimal", _INTEGRAL[t], 0) if t in _INTEGRAL else None
                    for t in types]
        if any(d is None for d in decimals):
            return None
        scale = max(d[2] for d in decimals if d)
        digits = max(d[1] - d[2] for d in decimals if d)
        return bounded(digits + scale, scale)

    def _column(self, node: Any, scope: Any) -> SparkType | None:
        from sqlglot import exp

        name = node.name.lower()
        table = node.table
        sources = scope.sources if table == "" else {k: v for k, v in scope.sources.items() if k == table}
        found: list[SparkType | None] = []
        for source in sources.values():
            if isinstance(source, exp.Table):
                cols = self.columns(source.catalog or None, source.db or None, source.name)
                if cols is None:
                    if table:
                        return None
                    continue
                lowered = {k.lower(): v for k, v in cols.items()}
                if name in lowered:
                    found.append(parse_type(lowered[name]))
            else:  # a subquery or CTE: the type of its output of that name
                inner = source.expression
                select = inner
                while isinstance(select, exp.SetOperation):
                    select = select.this
                if not isinstance(select, exp.Select):
                    continue
                for e in select.expressions:
                    if e.alias_or_name.lower() == name:
                        found.append(self.type_of(e, self.scopes.get(id(select), source)))
        return found[0] if len(found) == 1 else None


def _literal(node: Any) -> SparkType | None:
    if node.is_string:
        return "string"
    text = node.this
    if re.fullmatch(r"\d+", text):
        return "int" if int(text) < 2**31 else "bigint" if int(text) < 2**63 else None
    m = re.fullmatch(r"(\d*)\.(\d*)", text)
    if not m:
        return "double"  # an exponent: Spark reads 1e3 as DOUBLE
    whole, frac = m.group(1).lstrip("0"), m.group(2)
    scale = len(frac)
    digits = len(whole) + scale if whole else max(len(frac.lstrip("0")), 1)
    return ("decimal", max(digits, scale, 1), scale)


def _as_decimal(t: SparkType, node: Any) -> tuple[str, int, int] | None:
    from sqlglot import exp

    if isinstance(t, tuple):
        return t
    if t in _INTEGRAL:
        if isinstance(node, exp.Literal):  # DecimalType.fromLiteral: as many digits as it has
            return ("decimal", max(len(node.this.lstrip("0")), 1), 0)
        return ("decimal", _INTEGRAL[t], 0)
    return None


def _wider_integral(a: SparkType, b: SparkType) -> SparkType:
    order = ["tinyint", "byte", "smallint", "short", "int", "bigint", "long"]
    return a if order.index(str(a)) >= order.index(str(b)) else b
