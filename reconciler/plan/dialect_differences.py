"""Constructs of a Spark query whose meaning differs on Trino (issue 41).

A view's trino representation generated from its spark SQL with sqlglot can parse and still
compute something else. `differences` walks the spark query's syntax tree and returns one
`Finding` per construct whose meaning differs between the two engines, with where it starts,
so a caller can warn at file:line:col (`plan.generation` does, through `source.yamlsrc.scalar_position`).
The README's "One view, every engine" lists each kind with
its sources. Pure: no engine, no I/O.

Offsets are 0-based into `core.sql.query_text(sql)` (the trimmed query, as sqlglot reads it).
A node sqlglot gives no position of its own (an operator, a cast) is placed at its leftmost
token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from reconciler.core import sql as vsql

# The pairs whose differences are known here: (source dialect, target dialect).
SUPPORTED = frozenset({("spark", "trino")})

ARRAY_INDEX = "dialect_array_index"
INTEGER_DIVISION = "dialect_integer_division"
NULL_ORDERING = "dialect_null_ordering"
CONCAT_NULL = "dialect_concat_null"
DATETIME = "dialect_datetime"
IMPLICIT_CAST = "dialect_implicit_cast"
CASE_SENSITIVITY = "dialect_case_sensitivity"
REGEX = "dialect_regex"

CODES = (ARRAY_INDEX, INTEGER_DIVISION, NULL_ORDERING, CONCAT_NULL, DATETIME, IMPLICIT_CAST,
         CASE_SENSITIVITY, REGEX)


@dataclass(frozen=True)
class Finding:
    code: str  # one of CODES
    message: str  # what differs, and what to write instead where there is a portable form
    offset: int  # 0-based into query_text(sql)
    line: int  # 1-based, within query_text(sql)
    col: int  # 1-based
    construct: str  # the construct as written in the source dialect (sqlglot's rendering)


def differences(sql: str, source: str = "spark", target: str = "trino") -> list[Finding]:
    """Every construct of `sql` (in `source`'s dialect) whose meaning differs in `target`,
    in text order.

    Raises:
        ValueError: the pair of dialects is not one whose differences are known, or sqlglot
            cannot read `sql` as one statement in `source`'s dialect.
    """
    if (source, target) not in SUPPORTED:
        known = ", ".join(f"{s} -> {t}" for s, t in sorted(SUPPORTED))
        raise ValueError(f"dialect differences are known for {known}, not {source} -> {target}")
    text = vsql.query_text(sql)
    root = vsql.shared_tree(sql, vsql.sqlglot_dialect(source))
    if root is None:
        error = vsql.parse_error(sql, source) or "not exactly one statement"
        raise ValueError(f"the {source} SQL cannot be read for dialect differences: {error}")
    found: list[Finding] = []
    flagged: set[int] = set()  # nodes reported (by id): a date call inside a date call is reported once
    for node in root.walk():  # breadth first: a parent before its children
        for code, message in _kinds(node, text):
            if code in (DATETIME, REGEX) and _inside_flagged(node, flagged, code):
                continue
            flagged.add(id(node))
            found.append(_finding(code, message, node, text, source))
    return sorted(found, key=lambda f: (f.offset, f.code))


def _inside_flagged(node: Any, flagged: set[int], code: str) -> bool:
    parent = node.parent
    while parent is not None:
        if id(parent) in flagged and _kind_of(parent) == code:
            return True
        parent = parent.parent
    return False


def _kind_of(node: Any) -> str | None:
    from sqlglot import exp

    if isinstance(node, _datetime_types()) or _is_datetime_cast(node):
        return DATETIME
    if isinstance(node, _regex_types()) or (isinstance(node, exp.Anonymous) and node.name.lower() in _REGEX_NAMES):
        return REGEX
    return None


_CAST_OPEN = re.compile(r"(?:try_)?cast\s*\(\s*$", re.IGNORECASE)


def _finding(code: str, message: str, node: Any, text: str, source: str) -> Finding:
    from sqlglot import exp

    offset = _start(node)
    if isinstance(node, exp.Cast):  # sqlglot places a cast at its operand: point at the keyword
        opening = _CAST_OPEN.search(text, 0, offset)
        offset = opening.start() if opening else offset
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return Finding(code, message, offset, line, col, node.sql(dialect=vsql.sqlglot_dialect(source)))


def _start(node: Any) -> int:
    starts = [n.meta["start"] for n in node.walk() if "start" in n.meta]
    return min(starts) if starts else 0


def _end(node: Any) -> int:
    ends = [n.meta["end"] for n in node.walk() if "end" in n.meta]
    return max(ends) if ends else 0


def _kinds(node: Any, text: str) -> list[tuple[str, str]]:
    """The kinds of difference `node` itself carries (its children are visited on their own)."""
    out: list[tuple[str, str]] = []
    for check in (_array_index, _division, _null_ordering, _concat, _datetime, _implicit_cast,
                  _case_sensitivity, _regex):
        message = check(node, text)
        if message is not None:
            out.append(message)
    return out


# --- array indexing -------------------------------------------------------------------------

def _array_index(node: Any, text: str) -> tuple[str, str] | None:
    from sqlglot import exp

    if isinstance(node, exp.Anonymous) and node.name.lower() == "get":
        return ARRAY_INDEX, ("Spark's get(array, i) is 0-based and NULL out of range; Trino has no get: "
                             "write element_at(array, i + 1) in the trino SQL")
    if not isinstance(node, exp.Bracket):
        return None
    index = node.expressions[0] if len(node.expressions) == 1 else None
    if node.args.get("offset") == 1:  # element_at / try_element_at: 1-based in both engines
        if node.args.get("safe"):
            return None  # try_element_at -> Trino element_at: NULL out of range in both
        return ARRAY_INDEX, ("element_at is 1-based in both engines, but sqlglot writes it as Trino's "
                             "subscript arr[i], which fails out of range and for a negative i where Spark's "
                             "element_at (ANSI off) returns NULL or counts from the end: keep element_at "
                             "in the trino SQL")
    if isinstance(index, exp.Literal) and index.is_string:
        return ARRAY_INDEX, ("map subscript m[key]: Spark returns NULL for a missing key, Trino fails "
                             "('Key not present in map'): write element_at(m, key) in the trino SQL")
    if isinstance(index, exp.Literal):
        return ARRAY_INDEX, ("Spark's arr[i] is 0-based, Trino's 1-based: sqlglot adds 1 to a literal index, "
                             "which is wrong when the value is a map with integer keys; out of range Spark "
                             "returns NULL (ANSI off) and Trino fails")
    return ARRAY_INDEX, ("Spark's arr[i] is 0-based, Trino's 1-based, and sqlglot shifts only a literal "
                         "index: this expression index reaches the wrong element on Trino; write "
                         "element_at(arr, i + 1) in the trino SQL")


# --- integer division -----------------------------------------------------------------------

def _division(node: Any, text: str) -> tuple[str, str] | None:
    from sqlglot import exp

    if isinstance(node, exp.IntDiv):
        return INTEGER_DIVISION, ("Spark's `div` returns BIGINT and NULL for a zero divisor (ANSI off); "
                                  "sqlglot writes it through DOUBLE for Trino, which loses precision above "
                                  "2^53 and fails on zero")
    if isinstance(node, exp.Div):
        return INTEGER_DIVISION, ("`/` on two integers is fractional in Spark (DOUBLE) and truncating in "
                                  "Trino; Spark returns NULL for a zero divisor (ANSI off), Trino fails. "
                                  "sqlglot writes CAST(x AS DOUBLE) / NULLIF(y, 0), which also turns a "
                                  "DECIMAL division (DECIMAL in both engines) into DOUBLE")
    if isinstance(node, exp.Mod):
        return INTEGER_DIVISION, ("`%` by zero is NULL in Spark (ANSI off) and an error in Trino")
    return None


# --- NULL ordering --------------------------------------------------------------------------

_EXPLICIT_NULLS = re.compile(r"[\s)\]'\"`]*(?:(?:ASC|DESC)\s+)?NULLS\s+(?:FIRST|LAST)\b", re.IGNORECASE)


def _null_ordering(node: Any, text: str) -> tuple[str, str] | None:
    from sqlglot import exp

    if isinstance(node, exp.ArraySort) and _sorts_nulls_apart(node):
        return NULL_ORDERING, ("sort_array: Spark puts NULL elements first ascending and last descending; "
                               "Trino's array_sort puts them last, and sqlglot's reverse(array_sort(a)) for "
                               "descending puts them first")
    if not isinstance(node, exp.Ordered) or node.args.get("desc"):
        return None  # DESC without NULLS: NULLs last in both engines
    if _EXPLICIT_NULLS.match(text, _end(node) + 1):
        return None
    return NULL_ORDERING, ("ascending order without NULLS FIRST/LAST: Spark sorts NULLs first, Trino "
                           "last; write NULLS FIRST so both engines agree (sqlglot does, in the trino SQL)")


def _sorts_nulls_apart(node: Any) -> bool:
    """Spark's sort_array (ascending: NULLs first; descending); not array_sort, whose NULLs go last as in Trino."""
    from sqlglot import exp

    asc, nulls_first = node.args.get("asc"), node.args.get("nulls_first")
    descending = isinstance(asc, exp.Boolean) and asc.this is False
    return descending or (isinstance(nulls_first, exp.Boolean) and nulls_first.this is True)


# --- string concatenation with NULL ---------------------------------------------------------

def _concat(node: Any, text: str) -> tuple[str, str] | None:
    from sqlglot import exp

    if isinstance(node, exp.ConcatWs):
        return CONCAT_NULL, ("concat_ws skips NULL values in both engines, but Spark's also flattens "
                             "array arguments and casts other types; sqlglot cannot type its arguments")
    if not isinstance(node, (exp.Concat, exp.DPipe)):
        return None
    operands = node.expressions if isinstance(node, exp.Concat) else [node.this, node.expression]
    if all(isinstance(o, exp.Literal) and o.is_string for o in operands):
        return None
    return CONCAT_NULL, ("concat and || return NULL when any operand is NULL in both engines; Spark casts "
                         "a non-string operand to STRING implicitly, Trino needs varchar (sqlglot adds "
                         "CAST(... AS VARCHAR)), and the text of a cast timestamp, double or decimal can "
                         "differ between the engines")


# --- date, time and time zones --------------------------------------------------------------

def _datetime_types() -> tuple[type, ...]:
    from sqlglot import exp

    names = ("TimeToStr", "UnixToStr", "UnixToTime", "StrToUnix", "StrToTime", "StrToDate", "TimeStrToTime",
             "CurrentTimestamp", "CurrentDate", "AtTimeZone", "FromTimeZone", "ConvertTimezone", "TsOrDsToDate",
             "TsOrDsAdd", "DateAdd", "DateSub", "DateDiff", "DateTrunc", "TimestampTrunc", "DayOfWeek",
             "WeekOfYear", "LastDay", "MonthsBetween", "UnixDate", "AddMonths", "TimeToUnix", "UnixSeconds")
    return tuple(getattr(exp, n) for n in names if hasattr(exp, n))


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME_TYPES = ("TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ", "TIMESTAMPNTZ", "DATE")


def _is_datetime_cast(node: Any) -> bool:
    from sqlglot import exp

    if not isinstance(node, exp.Cast):  # TryCast is a Cast
        return False
    to = node.args.get("to")
    return to is not None and to.this.name in _TIME_TYPES


def _datetime(node: Any, text: str) -> tuple[str, str] | None:
    from sqlglot import exp

    if isinstance(node, (exp.TimeToStr, exp.StrToTime, exp.StrToDate, exp.StrToUnix, exp.UnixToStr)):
        return DATETIME, ("date/time format: Spark reads Java DateTimeFormatter patterns ('yyyy-MM-dd'), "
                          "Trino's date_format/date_parse MySQL-style ones ('%Y-%m-%d'); sqlglot maps the "
                          "common letters only, and Spark formats in the session time zone")
    if isinstance(node, (exp.UnixToTime, exp.AtTimeZone, exp.FromTimeZone, exp.CurrentTimestamp)) or (
            hasattr(exp, "ConvertTimezone") and isinstance(node, exp.ConvertTimezone)):
        return DATETIME, ("time zones: Spark's TIMESTAMP is an instant shown in spark.sql.session.timeZone; "
                          "Trino's TIMESTAMP has no zone and current_timestamp is TIMESTAMP(3) WITH TIME ZONE "
                          "in the session zone: results depend on both sessions' zones")
    if _is_datetime_cast(node):
        to = node.args["to"].this.name
        if to == "DATE" and _is_string(node.this) and _ISO_DATE.match(node.this.this):
            return None  # DATE '2024-01-31': the same day in both engines
        if to == "DATE":
            return DATETIME, ("cast to DATE: Spark (ANSI off) returns NULL for text it cannot read and accepts "
                              "'2020-1-1' and a trailing time; Trino fails or rejects it")
        return DATETIME, ("cast to TIMESTAMP: Spark keeps microseconds and reads the value in the session "
                          "time zone; Trino's TIMESTAMP defaults to milliseconds (precision 3) and sqlglot "
                          "writes TIMESTAMP WITH TIME ZONE")
    if isinstance(node, _datetime_types()):
        return DATETIME, ("date/time function: argument types, week and day-of-week numbering and the "
                          "truncation units differ between Spark and Trino (sqlglot rewrites some, not "
                          "all: trunc(d, 'MM') is written as date_trunc('MM', d), which Trino rejects)")
    return None


# --- implicit casts -------------------------------------------------------------------------

_NUMBER = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
_DATE_LIKE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?$")


def _implicit_cast(node: Any, text: str) -> tuple[str, str] | None:
    from sqlglot import exp

    comparisons = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
    arithmetic = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)
    if isinstance(node, arithmetic):
        if any(_is_string(o) for o in (node.this, node.expression)):
            return IMPLICIT_CAST, ("arithmetic on a string: Spark casts the string to a number implicitly, "
                                   "Trino has no implicit cast between varchar and numbers and rejects it")
        return None
    if isinstance(node, comparisons):
        pair: tuple[Any, ...] = (node.this, node.expression)
    elif isinstance(node, exp.In):
        pair = (node.this, *node.expressions)
    elif isinstance(node, exp.Between):
        pair = (node.this, node.args.get("low"), node.args.get("high"))
    else:
        return None
    strings = [o for o in pair if _is_string(o)]
    others = [o for o in pair if o is not None and not _is_string(o)]
    if not strings or not others:
        return None
    if any(isinstance(o, exp.Literal) for o in others):
        return IMPLICIT_CAST, ("a string compared with a number: Spark casts one side implicitly, Trino "
                               "rejects varchar against a number ('Cannot apply operator')")
    if any(_NUMBER.match(s.this) or _DATE_LIKE.match(s.this) for s in strings):
        return IMPLICIT_CAST, ("a string literal that reads as a number or a date, compared with an "
                               "expression: if that expression is not a string, Spark casts implicitly and "
                               "Trino rejects the comparison; write a typed literal (DATE '2020-01-01', 1)")
    return None


def _is_string(node: Any) -> bool:
    from sqlglot import exp

    return isinstance(node, exp.Literal) and node.is_string


# --- case sensitivity -----------------------------------------------------------------------

def _case_sensitivity(node: Any, text: str) -> tuple[str, str] | None:
    from sqlglot import exp

    if isinstance(node, exp.ILike):
        return CASE_SENSITIVITY, ("ILIKE is Spark's; Trino has none (sqlglot writes LOWER(x) LIKE LOWER(p), "
                                  "whose case folding of non-ASCII text may differ)")
    if isinstance(node, exp.Collate):
        return CASE_SENSITIVITY, ("COLLATE (Spark 4 collations such as UTF8_LCASE) has no Trino equivalent: "
                                  "comparisons there are case-sensitive")
    if isinstance(node, exp.Alias) and isinstance(node.parent, exp.Select) and node in node.parent.selects:
        name = node.alias
        if name != name.lower():
            return CASE_SENSITIVITY, (f"output column {name!r}: Spark keeps its case, Trino lowercases column "
                                      f"names ({name.lower()!r}), so the view's schema differs by engine")
    return None


# --- regular expressions --------------------------------------------------------------------

_REGEX_NAMES = frozenset({"regexp", "regexp_count", "regexp_instr", "regexp_substr"})


def _regex_types() -> tuple[type, ...]:
    from sqlglot import exp

    names = ("RegexpLike", "RegexpILike", "RegexpExtract", "RegexpExtractAll", "RegexpReplace", "RegexpSplit")
    return tuple(getattr(exp, n) for n in names if hasattr(exp, n))


def _regex(node: Any, text: str) -> tuple[str, str] | None:
    from sqlglot import exp

    flavour = ("Spark uses java.util.regex, Trino Joni (a Ruby-style engine) by default: Java-only syntax "
               "and flags such as (?d), (?u) and \\Q..\\E in classes behave differently or fail")
    if isinstance(node, exp.RegexpExtract):
        return REGEX, (f"regexp_extract: Spark returns '' where nothing matches, Trino NULL; {flavour}")
    if isinstance(node, exp.RegexpSplit):
        return REGEX, (f"split takes a regex in Spark (sqlglot writes Trino's regexp_split); a limit argument "
                       f"counts differently; {flavour}")
    if isinstance(node, _regex_types()):
        return REGEX, flavour
    if isinstance(node, exp.Anonymous) and node.name.lower() in _REGEX_NAMES:
        return REGEX, f"{node.name.lower()} is not translated by sqlglot; {flavour}"
    return None
