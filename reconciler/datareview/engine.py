"""Running a diff or the checks of one view on the review's Spark: register the relations
(temporary views of the session only), run the SQL of diffsql/checksql, read the aggregates
back into the result models, drop the temporary views."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reconciler.core import sql as vsql
from reconciler.core.model import ViewId
from reconciler.datareview import checksql, diffsql
from reconciler.datareview.diffsql import Col, Layout
from reconciler.datareview.model import CheckResult, ColumnChange, Numeric, Sample, SchemaDiff, ViewChecks, ViewDiff
from reconciler.datareview.session import LiveSpark, OnProgress, SparkError

_names = itertools.count()
Source = dict[str, Any]


def _temp(prefix: str) -> str:
    return f"__vs_{prefix}_{next(_names)}"


def _register(spark: LiveSpark, prefix: str, source: Source, what: str) -> tuple[str, list[Col]]:
    name = _temp(prefix)
    try:
        schema = spark.register(name, source)
    except SparkError as exc:
        raise SparkError({**exc.error, "message": f"{what}: {exc.error.get('message')}"}) from None
    return name, [Col.of(c) for c in schema]


def _int(v: Any) -> int:
    return int(v or 0)


def diff_view(spark: LiveSpark, vid: ViewId, action: str, before: Source | None, after: Source | None,
              key: tuple[str, ...] | None, where: str | None, sample: int,
              progress: OnProgress | None = None) -> ViewDiff:
    """The diff of one view: `before` is the live definition's source, `after` the declared one's
    (None: the view does not exist on that side)."""
    started = time.monotonic()
    out = ViewDiff(vid, action, key=key)
    temps: list[str] = []
    try:
        b = a = None
        if before is not None:
            b = _register(spark, "before", before, "live definition")
            temps.append(b[0])
        if after is not None:
            a = _register(spark, "after", after, "declared definition")
            temps.append(a[0])
        if b is not None and a is not None:
            _both(spark, out, b, a, key, where, sample, progress)
        else:
            side = b or a
            assert side is not None
            _one(spark, out, side, "before" if b else "after", where, sample, progress)
    except SparkError as exc:
        out.status, out.message = "error", str(exc)
    except KeyError as exc:
        out.status, out.message = "error", str(exc.args[0])
    finally:
        if temps and spark.alive():
            spark.drop(temps)
    out.seconds = time.monotonic() - started
    return out


def _schema(layout: Layout) -> SchemaDiff:
    return SchemaDiff(
        added=[{"name": layout.after[j].name, "type": layout.after[j].type} for j in layout.added],
        removed=[{"name": layout.before[i].name, "type": layout.before[i].type} for i in layout.removed],
        retyped=[{"name": layout.before[i].name, "before": layout.before[i].type, "after": layout.after[j].type}
                 for i, j in layout.retyped])


def _numeric(layout: Layout, row: dict[str, Any]) -> list[Numeric]:
    out: list[Numeric] = []
    after_of = {i: j for i, j in layout.common}
    for i, c in enumerate(layout.before):
        if not c.numeric or f"sb_{i}" not in row:
            continue
        j = after_of.get(i)
        has_a = j is not None and f"sa_{j}" in row
        out.append(Numeric(c.name, row[f"sb_{i}"], row[f"sa_{j}"] if has_a else None, row[f"mb_{i}"],
                           row[f"ma_{j}"] if has_a else None))
    for j in layout.added:
        c = layout.after[j]
        if c.numeric and f"sa_{j}" in row:
            out.append(Numeric(c.name, None, row[f"sa_{j}"], None, row[f"ma_{j}"]))
    return out


def _both(spark: LiveSpark, out: ViewDiff, b: tuple[str, list[Col]], a: tuple[str, list[Col]],
          key: tuple[str, ...] | None, where: str | None, sample: int, progress: OnProgress | None) -> None:
    layout = Layout.of(b[1], a[1], key)
    out.schema = _schema(layout)
    keyed_samples: list[dict[str, Any]] = []
    if key:
        found = _unique_pass(spark, layout, b[0], a[0], where, sample, progress) \
            if _has_bottom_k(spark) or sample <= 0 else None
        row, keyed_samples = found or _keyed_pass(spark, layout, b[0], a[0], where, sample, progress)
        row = diffsql.with_means(layout, row)
        out.counts = {c: _int(row[f"n_{c}"]) for c in ("added", "removed", "changed", "unchanged", "duplicate")}
        out.duplicates = {side: {"keys": _int(row[f"dup_keys_{side}"]), "rows": _int(row[f"dup_rows_{side}"])}
                          for side in ("before", "after")}
        out.null_keys = {side: _int(row[f"null_keys_{side}"]) for side in ("before", "after")}
        matched = out.counts["changed"] + out.counts["unchanged"]
        out.columns = [ColumnChange(layout.before[i].name, _int(row[f"ch_{i}_{j}"]), matched)
                       for i, j in layout.compared()]
    else:
        row = spark.query(diffsql.multiset_stats(layout, b[0], a[0], where), 1, progress)[0]
        out.counts = {c: _int(row[f"n_{c}"]) for c in ("added", "removed", "unchanged")}
        out.notes.append("no key: rows compared as a multiset (only before / only after), not matched")
    out.rows_before, out.rows_after = _int(row["rows_before"]), _int(row["rows_after"])
    out.numeric = _numeric(layout, row)
    wanted = [c for c in diffsql.CLASSES if out.counts.get(c)]
    if sample <= 0 or not wanted:
        return
    if key:
        order = {c: n for n, c in enumerate(diffsql.CLASSES)}
        for r in sorted(keyed_samples, key=lambda r: (order[r["c"]], r["s"])):
            before = None if r["c"] == "added" else {c.name: r["b"][str(i)] for i, c in enumerate(layout.before)}
            after = None if r["c"] == "removed" else {c.name: r["a"][str(j)] for j, c in enumerate(layout.after)}
            out.samples.append(Sample(r["c"], before, after))
    else:
        rows = spark.query(diffsql.multiset_samples(layout, b[0], a[0], where, sample), 2 * sample, progress)
        names = [layout.before[i].name for i, _ in layout.common]
        for r in rows:
            values = {n: r[f"c_{k}"] for k, n in enumerate(names)}
            cls = r["__c"]
            out.samples.append(Sample(cls, values if cls == "removed" else None, values if cls == "added" else None,
                                      _int(r["__k"])))


def _has_bottom_k(spark: LiveSpark) -> bool:
    """Spark >= 4.2: `min_by(x, ord, k)`, which the unique pass samples with."""
    try:
        return tuple(int(p) for p in spark.spark_version.split(".")[:2]) >= (4, 2)
    except ValueError:
        return False


def _unique_pass(spark: LiveSpark, layout: Layout, before: str, after: str, where: str | None, sample: int,
                 progress: OnProgress | None) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The keyed diff in one pass without windows, when keys are unique (see diffsql): its
    aggregates and samples; None when the pass shows keys that are not (or cannot show they
    are), for `_keyed_pass` to count the duplicates."""
    b_side, a_side, joined = _temp("bside"), _temp("aside"), _temp("rows")
    try:
        spark.observe(b_side, diffsql.unique_side(before, layout.before, "b", where,
                                                  [i for i, _ in layout.key_pairs]), ["COUNT(1) AS n"])
        spark.observe(a_side, diffsql.unique_side(after, layout.after, "a", where,
                                                  [j for _, j in layout.key_pairs]), ["COUNT(1) AS n"])
        rows_sql = diffsql.unique_rows(layout, b_side, a_side)
        if sample > 0:
            spark.observe(joined, rows_sql, diffsql.unique_samples(layout, sample))
        else:
            spark.register(joined, {"kind": "sql", "sql": rows_sql})
        [stats], observed = spark.query_observed(diffsql.unique_stats(layout, joined), 1, progress, exact=True)
    finally:
        if spark.alive():
            spark.drop([joined, a_side, b_side])
    sides = [(observed.get(name) or {}).get("n") for name in (b_side, a_side)]
    if not diffsql.unique_proven(stats, *sides):
        return None
    samples: list[dict[str, Any]] = []
    if sample > 0:
        found = observed.get(joined)
        if found is None:  # the optimizer removed the observation: fine only with nothing to show
            return (stats, []) if not any(_int(stats[f"n_{c}"]) for c in diffsql.UNIQUE_CLASSES) else None
        for c in diffsql.UNIQUE_CLASSES:
            text = found.get(f"s_{c}")
            samples += [{"c": c, "s": n, "b": r["b"], "a": r["a"]}
                        for n, r in enumerate(json.loads(text) if text else [], 1)]
    return stats, samples


def _keyed_pass(spark: LiveSpark, layout: Layout, before: str, after: str, where: str | None, sample: int,
                progress: OnProgress | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The keyed diff with duplicate keys counted (windows per side): its aggregates and samples."""
    if sample <= 0:
        return spark.query(diffsql.keyed_stats(layout, before, after, where), 1, progress, exact=True)[0], []
    joined = _temp("joined")  # the join once: its aggregates observed, its changed rows sampled
    try:
        spark.observe(joined, diffsql.keyed_rows(layout, before, after, where), diffsql.keyed_metrics(layout))
        rows, observed = spark.query_observed(diffsql.keyed_samples(layout, joined, sample),
                                              len(diffsql.CLASSES) * sample, progress)
    finally:
        if spark.alive():
            spark.drop([joined])
    # absent when Spark's optimizer removed the observed node (e.g. a side known to be empty)
    row = observed[joined] if joined in observed else \
        spark.query(diffsql.keyed_stats(layout, before, after, where), 1, progress, exact=True)[0]
    return row, [json.loads(r["payload"]) for r in rows]


def _one(spark: LiveSpark, out: ViewDiff, side: tuple[str, list[Col]], which: str, where: str | None,
         sample: int, progress: OnProgress | None) -> None:
    rel, cols = side
    row = spark.query(diffsql.one_side(rel, cols, where), 1, progress)[0]
    n = _int(row["n_rows"])
    nums = [Numeric(c.name, **({"sum_before": row[f"s_{i}"], "mean_before": row[f"m_{i}"]} if which == "before"
                               else {"sum_after": row[f"s_{i}"], "mean_after": row[f"m_{i}"]}))
            for i, c in enumerate(cols) if c.numeric]
    out.numeric = nums
    if which == "before":
        out.rows_before = n
        out.schema = SchemaDiff(removed=[{"name": c.name, "type": c.type} for c in cols])
        return
    out.rows_after = n
    out.schema = SchemaDiff(added=[{"name": c.name, "type": c.type} for c in cols])
    if sample > 0 and n:
        for r in spark.query(diffsql.rows_of(rel, where), sample, progress):
            out.samples.append(Sample("added", None, r))


Describe = Callable[[checksql.CheckLike], str | None]  # a check -> its file:line:col


NOT_RUN = "not run"  # the detail of a check that could not run starts so: its status is error


def not_run(vid: ViewId, definition: str, checks: Sequence[checksql.CheckLike], status: str, why: str,
            locate: Describe | None = None) -> ViewChecks:
    """A view whose checks could not run at all (`status` skipped or error): each check listed as
    not run, with the reason, so the report shows everything that was asked for."""
    out = ViewChecks(vid, definition, status=status, message=why)
    out.checks = [CheckResult(c.index, c.kind, c.args, c.severity, status="error", detail=f"{NOT_RUN}: {why}",
                              location=locate(c) if locate else None) for c in checks]
    return out


def check_view(spark: LiveSpark, vid: ViewId, definition: str, source: Source,
               checks: Sequence[checksql.CheckLike], targets: dict[int, Source],
               locate: Describe | None = None, progress: OnProgress | None = None,
               unrunnable: Mapping[int, str] | None = None) -> ViewChecks:
    """Every check of one view over `source`, in one scan (plus one for failing rows when a check
    failed); `targets[i]` is the source of relationships check i's `to` table; `unrunnable[i]`
    says why check i cannot run (it is reported as not run, the others run)."""
    started = time.monotonic()
    out = ViewChecks(vid, definition)
    results = {c.index: CheckResult(c.index, c.kind, c.args, c.severity,
                                    location=locate(c) if locate else None) for c in checks}
    out.checks = [results[c.index] for c in checks]
    blocked = unrunnable or {}
    for i, why in blocked.items():
        results[i].status, results[i].detail = "error", f"{NOT_RUN}: {why}"
    checks = [c for c in checks if c.index not in blocked]
    temps: list[str] = []
    try:
        rel, cols = _register(spark, "view", source, f"{definition} definition")
        temps.append(rel)
        target_rels: dict[int, str] = {}
        usable: list[checksql.CheckLike] = []
        for c in checks:
            try:
                if c.index in targets:
                    to = c.args.get("to")
                    name, to_cols = _register(spark, "to", targets[c.index], f"relationships target {to}")
                    temps.append(name)
                    field = str(c.args.get("field") or c.args["column"])
                    if not any(col.name.lower() == field.lower() for col in to_cols):
                        raise checksql.CheckError(f"field {field!r} is not a column of {to} (its columns: "
                                                  f"{', '.join(col.name for col in to_cols)})")
                    target_rels[c.index] = name
                checksql.build(rel, cols, [c], target_rels)  # its columns exist
                if c.kind == "expression":  # analysed alone, so Spark's complaint is this check's
                    sql = f"SELECT 1 FROM {vsql.spark_ident(rel)} WHERE NOT ({c.args})"
                    probe, _ = _register(spark, "probe", {"kind": "sql", "use": [], "sql": sql}, f"expression {c.args}")
                    temps.append(probe)
                usable.append(c)
            except (checksql.CheckError, SparkError) as exc:
                results[c.index].status, results[c.index].detail = "error", str(exc)
        plan = checksql.build(rel, cols, usable, target_rels)
        row = spark.query(plan.stats, 1, progress)[0]
        out.rows = _int(row["n_rows"])
        failed: list[int] = []
        for c in usable:
            r = results[c.index]
            if c.kind == "row_count":
                lo, hi = c.args.get("min"), c.args.get("max")
                bad = (lo is not None and out.rows < lo) or (hi is not None and out.rows > hi)
                r.status = "fail" if bad else "pass"
                r.failing = out.rows if bad else 0
                r.detail = f"{out.rows} row(s)" + (f", expected {_range(lo, hi)}" if bad else "")
                continue
            r.failing = _int(row[f"f_{c.index}"])
            r.status = "fail" if r.failing else "pass"
            if c.kind == "unique" and r.failing:
                r.detail = f"{_int(row[f'g_{c.index}'])} duplicated value(s)"
            if r.failing:
                failed.append(c.index)
        if failed:
            sql = checksql.samples(plan, cols, failed)
            for s in spark.query(sql, len(failed) * checksql.SAMPLE, progress):
                idx = int(s.pop("__vs_chk"))
                results[idx].samples.append(s)
    except SparkError as exc:
        out.status, out.message = "error", str(exc)
    finally:
        if temps and spark.alive():
            spark.drop(temps)
    out.seconds = time.monotonic() - started
    return out


def _range(lo: Any, hi: Any) -> str:
    if lo is not None and hi is not None:
        return f"between {lo} and {hi}"
    return f"at least {lo}" if lo is not None else f"at most {hi}"
