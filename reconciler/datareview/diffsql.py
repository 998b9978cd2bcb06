"""The diff's SQL (pure): two registered relations, BEFORE (the live definition) and AFTER (the
declared one), compared in Spark. Only aggregates and `sample` rows per class come back.

With a key: both sides carry `COUNT(*)` and `ROW_NUMBER()` over their key, in ONE window spec
(same partition and order: one Window operator per side, sorted by the sort the merge join needs
anyway, over the shuffle by key the full outer join reuses), so duplicate keys are counted
exactly and every row is counted once although duplicates multiply in the join. The join runs
once: its aggregates are observed metrics (`keyed_metrics`, Spark's `Dataset.observe`) of the
relation (`keyed_rows`) whose rows of the sampled classes feed `keyed_samples`, so only the
changed rows go further than the aggregation. Without a key: a multiset diff,
both sides' rows grouped by all common columns (`only before` = Σ max(nb - na, 0)).

Columns are addressed by position (`b_3`, `a_0`), so any column name is safe.

Keys are meant to be unique, so a keyed diff first runs the UNIQUE PASS (`unique_*`): no
window; the join's aggregates in one plain aggregation (generated code fused with the merge
join), each side's row count and the samples (`min_by(row, key, n)`, Spark >= 4.2) observed in
the same pass. It proves its assumption in that pass: every side row appears once in the join
(no key matched twice) and the rows on one side only have distinct keys. When that fails, the
keyed diff above (windows, duplicates counted and shown) runs instead.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from typing import Any

from reconciler.core.sql import spark_ident as q
from reconciler.core.sql import spark_string as lit

CLASSES = ("removed", "added", "changed", "duplicate")
_NOT_COMPARABLE = ("map", "struct", "array", "binary", "variant")
KEEP_NULLS = "map('ignoreNullFields', 'false')"  # to_json's option: a NULL value stays in the sample


@dataclass(frozen=True)
class Col:
    name: str
    type: str
    numeric: bool = False

    @classmethod
    def of(cls, d: dict[str, Any]) -> Col:
        return cls(str(d["name"]), str(d["type"]), bool(d.get("numeric")))


@dataclass
class Layout:
    """How the two results line up: columns by name (case-insensitive, Spark's default)."""

    before: list[Col]
    after: list[Col]
    key: tuple[str, ...] | None
    common: list[tuple[int, int]] = field(default_factory=list)  # (before index, after index)
    removed: list[int] = field(default_factory=list)  # before indexes only there
    added: list[int] = field(default_factory=list)  # after indexes only there
    retyped: list[tuple[int, int]] = field(default_factory=list)
    key_pairs: list[tuple[int, int]] = field(default_factory=list)

    @classmethod
    def of(cls, before: list[Col], after: list[Col], key: tuple[str, ...] | None) -> Layout:
        out = cls(before, after, key)
        after_at = {c.name.lower(): i for i, c in enumerate(after)}
        before_names = {c.name.lower() for c in before}
        for i, c in enumerate(before):
            j = after_at.get(c.name.lower())
            if j is None:
                out.removed.append(i)
                continue
            out.common.append((i, j))
            if _base(c.type) != _base(after[j].type) or c.type != after[j].type:
                out.retyped.append((i, j))
        out.added = [j for j, c in enumerate(after) if c.name.lower() not in before_names]
        if key:
            before_at = {c.name.lower(): i for i, c in enumerate(before)}
            missing = [k for k in key if k.lower() not in before_at or k.lower() not in after_at]
            if missing:
                side = "live" if any(k.lower() not in before_at for k in missing) else "declared"
                raise KeyError(f"key column {missing[0]!r} is not a column of the {side} result")
            out.key_pairs = [(before_at[k.lower()], after_at[k.lower()]) for k in key]
        return out

    def compared(self) -> list[tuple[int, int]]:
        """Common columns that are not key columns: the ones whose changes are counted."""
        keys = set(self.key_pairs)
        return [p for p in self.common if p not in keys]


def _base(t: str) -> str:
    return t.split("(")[0].split("<")[0].lower()


def _comparable(c: Col) -> bool:
    return _base(c.type) not in _NOT_COMPARABLE


def _differs(layout: Layout, i: int, j: int) -> str:
    b, a = layout.before[i], layout.after[j]
    if (i, j) in layout.retyped or not _comparable(b) or not _comparable(a):
        return f"NOT (CAST(b_{i} AS STRING) <=> CAST(a_{j} AS STRING))"
    return f"NOT (b_{i} <=> a_{j})"


def _side(rel: str, cols: list[Col], prefix: str, where: str | None, keys: list[int], window: bool = True) -> str:
    """One side of a keyed join: its columns by position, `<prefix>__kn` (a key column is
    NULL) and, with `window`, the key's row count `__n` and row number `__rn`."""
    sel = [f"{q(c.name)} AS {prefix}_{i}" for i, c in enumerate(cols)]
    if window:
        part = ", ".join(q(cols[k].name) for k in keys)
        over = f"PARTITION BY {part} ORDER BY {part}"  # one spec for both: one Window operator
        sel += [f"COUNT(1) OVER ({over} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS {prefix}__n",
                f"ROW_NUMBER() OVER ({over}) AS {prefix}__rn"]
    sel.append("(" + " OR ".join(f"{q(cols[k].name)} IS NULL" for k in keys) + f") AS {prefix}__kn")
    return f"SELECT {', '.join(sel)} FROM {q(rel)}" + (f" WHERE {where}" if where else "")


def _on(layout: Layout) -> str:
    return " AND ".join(f"b_{i} = a_{j}" for i, j in layout.key_pairs)


def _any_differs(layout: Layout) -> str:
    """A matched row's compared columns differ (FALSE when there are none)."""
    return " OR ".join(_differs(layout, i, j) for i, j in layout.compared()) or "FALSE"


def _count(cond: str) -> str:
    return f"SUM(CASE WHEN {cond} THEN 1 ELSE 0 END)"


def _change_counts(layout: Layout) -> list[str]:
    """Per compared column, the changed rows where it differs (`ch_<b>_<a>`)."""
    return [_count(_is("changed") + " AND " + _differs(layout, i, j)) + f" AS ch_{i}_{j}"
            for i, j in layout.compared()]


def _sides_struct(layout: Layout) -> str:
    """The fields `'b', named_struct(...), 'a', named_struct(...)`: a joined row's two sides by
    column index, as the samples carry them."""
    b_cols = ", ".join(f"{lit(str(i))}, b_{i}" for i in range(len(layout.before)))
    a_cols = ", ".join(f"{lit(str(j))}, a_{j}" for j in range(len(layout.after)))
    return f"'b', named_struct({b_cols}), 'a', named_struct({a_cols})"


def _joined(layout: Layout, before: str, after: str, where: str | None) -> str:
    kb = [i for i, _ in layout.key_pairs]
    ka = [j for _, j in layout.key_pairs]
    cls = (f"CASE WHEN b__n IS NULL THEN {_code('added')} WHEN a__n IS NULL THEN {_code('removed')} "
           f"WHEN b__n > 1 OR a__n > 1 THEN {_code('duplicate')} "
           f"WHEN {_any_differs(layout)} THEN {_code('changed')} ELSE {_code('unchanged')} END")
    # the class as a small integer and the once-flags computed once per joined row: the
    # aggregates then test an int and a boolean instead of a string and a condition each
    return (f"WITH b AS ({_side(before, layout.before, 'b', where, kb)}),\n"
            f"a AS ({_side(after, layout.after, 'a', where, ka)}),\n"
            f"j AS (SELECT b.*, a.*, {cls} AS __k, {ONCE_B} AS __ob, {ONCE_A} AS __oa "
            f"FROM b FULL OUTER JOIN a ON {_on(layout)})\n")


ONCE_B = "b__n IS NOT NULL AND (a__n IS NULL OR a__rn = 1)"  # each BEFORE row exactly once
ONCE_A = "a__n IS NOT NULL AND (b__n IS NULL OR b__rn = 1)"


def _code(cls: str) -> int:
    """A joined row's class as `__k` carries it: 0 unchanged, else 1 + its index in CLASSES
    (`keyed_samples` names it back with element_at, which counts from 1)."""
    return CLASSES.index(cls) + 1 if cls in CLASSES else 0


def _is(cls: str) -> str:
    """The condition on `__k` (the class code of a joined row) for a class name."""
    return f"__k = {_code(cls)}"


def keyed_rows(layout: Layout, before: str, after: str, where: str | None) -> str:
    """Every row of the full outer join on the key: `b_<i>`, `a_<j>`, the sides' `__n`
    (rows of the key), `__rn`, `__kn` (NULL key), the class `__k` (0 unchanged, else 1 + its
    index in CLASSES), and `__ob` / `__oa` (the row stands for its before / after row once)."""
    return _joined(layout, before, after, where) + "SELECT * FROM j"


def keyed_metrics(layout: Layout) -> list[str]:
    """The aggregates over `keyed_rows` (`<expr> AS <name>`): counts per class, duplicates and
    NULL keys per side, per-column change counts (`ch_<b>_<a>`), sums and counts of numeric
    columns (`sb_<i>`, `cb_<i>`, `sa_<j>`, `ca_<j>`; `with_means` adds their means)."""
    agg = [f"{_count('__ob')} AS rows_before", f"{_count('__oa')} AS rows_after"]
    agg += [f"{_count(_is(c))} AS n_{c}" for c in ("removed", "added", "changed", "unchanged")]
    # duplicate: keys on both sides, duplicated on at least one (their rows are not compared)
    agg.append(f"{_count(_is('duplicate') + ' AND b__rn = 1 AND a__rn = 1')} AS n_duplicate")
    agg += [f"{_count('__ob AND b__n > 1 AND NOT b__kn')} AS dup_rows_before",
            f"{_count('__ob AND b__n > 1 AND NOT b__kn AND b__rn = 1')} AS dup_keys_before",
            f"{_count('__oa AND a__n > 1 AND NOT a__kn')} AS dup_rows_after",
            f"{_count('__oa AND a__n > 1 AND NOT a__kn AND a__rn = 1')} AS dup_keys_after",
            f"{_count('__ob AND b__kn')} AS null_keys_before",
            f"{_count('__oa AND a__kn')} AS null_keys_after"]
    return agg + _change_counts(layout) + _numeric_aggs(layout)


def keyed_stats(layout: Layout, before: str, after: str, where: str | None) -> str:
    """One row: `keyed_metrics` in one aggregation of the join (the diff without samples)."""
    return _joined(layout, before, after, where) + "SELECT " + ",\n  ".join(keyed_metrics(layout)) + " FROM j"


def _numeric_aggs(layout: Layout) -> list[str]:
    out = []
    for i, c in enumerate(layout.before):
        if c.numeric:
            out += [f"SUM(CASE WHEN __ob THEN b_{i} END) AS sb_{i}", f"COUNT(CASE WHEN __ob THEN b_{i} END) AS cb_{i}"]
    for j, c in enumerate(layout.after):
        if c.numeric:
            out += [f"SUM(CASE WHEN __oa THEN a_{j} END) AS sa_{j}", f"COUNT(CASE WHEN __oa THEN a_{j} END) AS ca_{j}"]
    return out


def mean(total: Any, count: Any, type_: str) -> Any:
    """What Spark's AVG gives, from the exact SUM and COUNT of the same values (an AVG beside
    the SUM would add every value twice): decimal(p, s) divided exactly and rounded half up
    to scale s + 4 (Spark's Average); other types as doubles, sum / count."""
    if not count or total is None:
        return None
    if _base(type_) == "decimal":
        scale = min(int(type_.split(",")[1].rstrip(") ")) + 4, 38) if "," in type_ else 4
        with decimal.localcontext() as ctx:
            ctx.prec = 100
            value = (decimal.Decimal(str(total)) / int(count)).quantize(decimal.Decimal(1).scaleb(-scale),
                                                                         rounding=decimal.ROUND_HALF_UP)
        return _number(value)
    return float(total) / int(count)


def _number(value: Any) -> Any:
    """A decimal as the review's results carry it: an int when integral, else a float."""
    if isinstance(value, str):
        value = decimal.Decimal(value)
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def with_means(layout: Layout, row: dict[str, Any]) -> dict[str, Any]:
    """The keyed aggregates `row` (decimals exact, as text) with the means of the numeric
    columns (`mb_<i>`, `ma_<j>`) and every value as the results carry it."""
    out = dict(row)
    for side, cols in (("b", layout.before), ("a", layout.after)):
        for i, c in enumerate(cols):
            if c.numeric and f"s{side}_{i}" in row:
                out[f"m{side}_{i}"] = mean(row[f"s{side}_{i}"], row[f"c{side}_{i}"], c.type)
    return {k: _number(v) for k, v in out.items()}


def keyed_samples(layout: Layout, rows: str, sample: int) -> str:
    """Up to `sample` rows of every class of CLASSES from `rows` (the registered `keyed_rows`,
    observed), first keys first, one `payload` JSON each: class `c`, rank `s`, the sides `b`
    and `a` by column index. The filter keeps only the changed rows; `ROW_NUMBER() <= n`
    lets Spark keep the first n of each class per partition before they are shuffled."""
    order = ", ".join([f"b_{i}" for i, _ in layout.key_pairs] + [f"a_{j}" for _, j in layout.key_pairs])
    names = f"array({', '.join(lit(c) for c in CLASSES)})"
    row = f"to_json(named_struct('c', element_at({names}, __k), 's', __s, {_sides_struct(layout)}), {KEEP_NULLS})"
    return (f"SELECT {row} AS payload FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY __k ORDER BY {order}) AS __s "
            f"FROM {q(rows)} WHERE __k > 0) WHERE __s <= {int(sample)}")


def _grouped(layout: Layout, before: str, after: str, where: str | None) -> str:
    def proj(cols: list[Col], idx: list[int], side: str) -> str:
        out = []
        for n, k in enumerate(idx):
            c = cols[k]
            expr = q(c.name)
            if not _comparable(c) or any((p[0] if side == 'b' else p[1]) == k for p in layout.retyped):
                expr = f"CAST({expr} AS STRING)"
            out.append(f"{expr} AS c_{n}")
        return ", ".join(out) if out else "1 AS c_0"

    bi = [i for i, _ in layout.common]
    ai = [j for _, j in layout.common]
    w = f" WHERE {where}" if where else ""
    names = ", ".join(f"c_{n}" for n in range(max(len(bi), 1)))
    return (f"WITH u AS (SELECT {proj(layout.before, bi, 'b')}, 1 AS __b, 0 AS __a FROM {q(before)}{w}\n"
            f"  UNION ALL SELECT {proj(layout.after, ai, 'a')}, 0 AS __b, 1 AS __a FROM {q(after)}{w}),\n"
            f"g AS (SELECT {names}, SUM(__b) AS nb, SUM(__a) AS na FROM u GROUP BY {names})\n")


def multiset_stats(layout: Layout, before: str, after: str, where: str | None) -> str:
    """One row: rows per side, rows only before / only after (multiset), sums and means of
    common numeric columns (`sb_<i>`, `mb_<i>`, `sa_<j>`, `ma_<j>`)."""
    agg = ["SUM(nb) AS rows_before", "SUM(na) AS rows_after", "SUM(GREATEST(nb - na, 0)) AS n_removed",
           "SUM(GREATEST(na - nb, 0)) AS n_added", "SUM(LEAST(nb, na)) AS n_unchanged"]
    for n, (i, j) in enumerate(layout.common):
        if layout.before[i].numeric and (i, j) not in layout.retyped:
            agg += [f"SUM(c_{n} * nb) AS sb_{i}", f"SUM(c_{n} * nb) / SUM(CASE WHEN c_{n} IS NOT NULL THEN nb END) "
                    f"AS mb_{i}", f"SUM(c_{n} * na) AS sa_{j}",
                    f"SUM(c_{n} * na) / SUM(CASE WHEN c_{n} IS NOT NULL THEN na END) AS ma_{j}"]
    return _grouped(layout, before, after, where) + "SELECT " + ",\n  ".join(agg) + " FROM g"


def multiset_samples(layout: Layout, before: str, after: str, where: str | None, sample: int) -> str:
    """Up to `sample` distinct rows only before (`removed`) and only after (`added`), with how
    many times (`__k`); columns `c_<n>` in the order of `layout.common`."""
    names = ", ".join(f"c_{n}" for n in range(max(len(layout.common), 1)))
    return (_grouped(layout, before, after, where)
            + f"SELECT __c, __k, {names} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY __c ORDER BY {names}) "
            f"AS __s FROM (SELECT *, CASE WHEN nb > na THEN 'removed' ELSE 'added' END AS __c, "
            f"ABS(nb - na) AS __k FROM g WHERE nb <> na)) WHERE __s <= {int(sample)} ORDER BY __c, __s")


def one_side(rel: str, cols: list[Col], where: str | None) -> str:
    """Rows, sums and means of a view that exists on one side only (created or dropped)."""
    agg = ["COUNT(1) AS n_rows"]
    for i, c in enumerate(cols):
        if c.numeric:
            agg += [f"SUM({q(c.name)}) AS s_{i}", f"AVG({q(c.name)}) AS m_{i}"]
    return f"SELECT {', '.join(agg)} FROM {q(rel)}" + (f" WHERE {where}" if where else "")


def rows_of(rel: str, where: str | None) -> str:
    return f"SELECT * FROM {q(rel)}" + (f" WHERE {where}" if where else "")


# -- the unique pass -------------------------------------------------------------------------

UNIQUE_CLASSES = ("removed", "added", "changed")  # what the unique pass samples (no duplicates)


def unique_side(rel: str, cols: list[Col], prefix: str, where: str | None, keys: list[int]) -> str:
    """One side of the unique pass: its columns by position and `<prefix>__kn` (a key column is
    NULL; never NULL itself, so a NULL `__kn` after the join means the side is absent). The
    engine registers it with `COUNT(1) AS n` observed."""
    return _side(rel, cols, prefix, where, keys, window=False)


def unique_rows(layout: Layout, before: str, after: str) -> str:
    """The full outer join of two `unique_side`s on the key, with the class `__k` (as `_code`)."""
    cls = (f"CASE WHEN b__kn IS NULL THEN {_code('added')} WHEN a__kn IS NULL THEN {_code('removed')} "
           f"WHEN {_any_differs(layout)} THEN {_code('changed')} ELSE {_code('unchanged')} END")
    return f"SELECT b.*, a.*, {cls} AS __k FROM {q(before)} b FULL OUTER JOIN {q(after)} a ON {_on(layout)}"


ONE_SIDED = f"({_is('removed')} AND NOT b__kn) OR ({_is('added')} AND NOT a__kn)"  # a non-NULL key on one side


def unique_stats(layout: Layout, rows: str) -> str:
    """One row over `rows` (the registered `unique_rows`): what `keyed_metrics` gives when keys
    are unique, and the proof: `rows_before` / `rows_after` (side rows in the join, to compare
    with the sides' observed counts) and `one_sided_rows` = `one_sided_keys` (the non-NULL keys
    on one side only are distinct: one COUNT(DISTINCT), whose groups are those keys only)."""
    one = ONE_SIDED
    keys = ", ".join(f"IF({one}, coalesce(b_{i}, a_{j}), NULL)" for i, j in layout.key_pairs)
    agg = [f"{_count('b__kn IS NOT NULL')} AS rows_before", f"{_count('a__kn IS NOT NULL')} AS rows_after"]
    agg += [f"{_count(_is(c))} AS n_{c}" for c in ("removed", "added", "changed", "unchanged")]
    agg += ["0 AS n_duplicate", "0 AS dup_rows_before", "0 AS dup_keys_before", "0 AS dup_rows_after",
            "0 AS dup_keys_after", f"{_count('b__kn')} AS null_keys_before", f"{_count('a__kn')} AS null_keys_after",
            f"{_count(one)} AS one_sided_rows", f"COUNT(DISTINCT IF({one}, __k, NULL), {keys}) AS one_sided_keys"]
    agg += _change_counts(layout)
    for side, cols in (("b", layout.before), ("a", layout.after)):
        agg += [f"{fn}({side}_{i}) AS {s}{side}_{i}" for i, c in enumerate(cols) if c.numeric
                for fn, s in (("SUM", "s"), ("COUNT", "c"))]
    return "SELECT " + ",\n  ".join(agg) + f" FROM {q(rows)}"


def unique_samples(layout: Layout, sample: int) -> list[str]:
    """Observed metrics of `unique_rows`: `s_<class>` for each of UNIQUE_CLASSES, the JSON array
    of its first `sample` rows by key (`{"b": {index: value}, "a": {...}}`), as `keyed_samples`
    orders them: Spark's bottom-k `min_by` keeps `sample` rows per task, merged across tasks."""
    order = "named_struct(" + ", ".join([f"'b{i}', b_{i}" for i, _ in layout.key_pairs]
                                        + [f"'a{j}', a_{j}" for _, j in layout.key_pairs]) + ")"
    row = f"named_struct({_sides_struct(layout)})"
    # a NULL ordering is skipped by min_by: only the rows of the class compete
    return [f"to_json(min_by({row}, IF({_is(c)}, {order}, NULL), {int(sample)}), {KEEP_NULLS}) AS s_{c}"
            for c in UNIQUE_CLASSES]


def unique_proven(stats: dict[str, Any], before_rows: Any, after_rows: Any) -> bool:
    """Whether the unique pass's `stats` are the diff's: every side row appeared once in the
    join (`before_rows` / `after_rows`: the sides' observed counts; None when Spark's optimizer
    removed the observation) and the keys on one side only are distinct."""
    return (before_rows is not None and after_rows is not None
            and int(stats["rows_before"] or 0) == int(before_rows) and int(stats["rows_after"] or 0) == int(after_rows)
            and int(stats["one_sided_rows"] or 0) == int(stats["one_sided_keys"] or 0))
