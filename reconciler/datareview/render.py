"""Diff and check reports as text, Markdown (PR comment sections), JSON and JUnit XML."""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from reconciler.datareview.model import CheckReport, CheckResult, DiffReport, Sample, ViewChecks, ViewDiff

SYMBOL = {"update": "~", "create": "+", "drop": "-", "dependent": "↳"}
MAX_CELL = 60


def _n(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):  # 4 significant digits below 1,000; cents up to a million (no 2.148e+04)
        return f"{v:,.4g}" if abs(v) < 1000 else f"{v:,.2f}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.2f}%"


def _cell(v: Any) -> str:
    text = "NULL" if v is None else json.dumps(v, default=str) if isinstance(v, (dict, list)) else str(v)
    return text if len(text) <= MAX_CELL else text[:MAX_CELL - 1] + "…"


def _row_text(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    return "{" + ", ".join(f"{k}: {_cell(v)}" for k, v in row.items()) + "}"


def _changed_text(s: Sample) -> str:
    assert s.before is not None and s.after is not None
    keys = [k for k in s.after if k in s.before and s.before[k] == s.after[k]]
    diffs = [f"{k}: {_cell(s.before.get(k))} → {_cell(v)}" for k, v in s.after.items()
             if k not in s.before or s.before[k] != v]
    same = ", ".join(f"{k}={_cell(s.before[k])}" for k in keys[:3])
    return (same + " | " if same else "") + "; ".join(diffs)


def _schema_lines(d: ViewDiff) -> list[str]:
    if d.action in ("create", "drop") or d.schema.empty():
        return []
    parts = [f"+ {c['name']} {c['type']}" for c in d.schema.added]
    parts += [f"- {c['name']} {c['type']}" for c in d.schema.removed]
    parts += [f"~ {c['name']}: {c['before']} → {c['after']}" for c in d.schema.retyped]
    return ["schema: " + "; ".join(parts)]


def _delta(before: int | None, after: int | None) -> str:
    if before is None or after is None:
        return ""
    delta = after - before
    return f" ({'+' if delta >= 0 else ''}{delta:,})"


def diff_text(report: DiffReport) -> str:
    lines: list[str] = []
    for d in report.views:
        key = f", key: {', '.join(d.key)}" if d.key else ""
        head = f"{SYMBOL.get(d.action, '?')} {d.view} ({d.action}{key})"
        if d.status != "ok":
            lines.append(f"{head}: {d.status.upper()}: {d.message}")
            continue
        lines.append(f"{head}  {d.seconds:.1f}s")
        body: list[str] = []
        if d.action == "create":
            body.append(f"rows: {_n(d.rows_after)} (new view)")
        elif d.action == "drop":
            body.append(f"rows: {_n(d.rows_before)} (dropped view)")
        else:
            body.append(f"rows: {_n(d.rows_before)} → {_n(d.rows_after)}{_delta(d.rows_before, d.rows_after)}")
            body.append(", ".join(f"{k} {_n(v)}" for k, v in d.counts.items()))
        body += _schema_lines(d)
        for side in ("before", "after"):
            dup = d.duplicates.get(side) or {}
            if dup.get("keys"):
                body.append(f"duplicate keys {side}: {_n(dup['keys'])} key(s), {_n(dup['rows'])} row(s)")
            if d.null_keys.get(side):
                body.append(f"NULL keys {side}: {_n(d.null_keys[side])} row(s)")
        changed = [c for c in d.columns if c.changed]
        if d.columns:
            body.append("columns changed: " + (", ".join(f"{c.name} {_n(c.changed)} ({_pct(c.rate)})" for c in changed)
                                               if changed else "none"))
        for num in d.numeric:
            if d.action in ("create", "drop"):
                body.append(f"{num.name}: sum {_n(num.sum_before if d.action == 'drop' else num.sum_after)}, "
                            f"mean {_n(num.mean_before if d.action == 'drop' else num.mean_after)}")
            elif num.sum_before != num.sum_after or num.mean_before != num.mean_after:
                body.append(f"{num.name}: sum {_n(num.sum_before)} → {_n(num.sum_after)}, "
                            f"mean {_n(num.mean_before)} → {_n(num.mean_after)}")
        for s in d.samples:
            if s.cls in ("changed", "duplicate") and s.before is not None and s.after is not None:
                body.append(f"  {s.cls:<9} {_changed_text(s)}")
            else:
                row = s.before if s.cls == "removed" else s.after
                body.append(f"  {s.cls:<9} {_row_text(row)}" + (f" ×{s.count}" if s.count > 1 else ""))
        body += [f"note: {n}" for n in d.notes]
        lines += ["    " + b for b in body]
    ok = [d for d in report.views if d.status == "ok"]
    lines.append(f"Diffed {len(ok)} view(s): {sum(d.has_changes() for d in ok)} with data changes, "
                 f"{len(report.errors)} error(s), {sum(d.status == 'skipped' for d in report.views)} skipped."
                 + (f" Rows filtered by: {report.where}." if report.where else ""))
    lines += [f"Note: {n}" for n in report.notes]
    return "\n".join(lines) + "\n"


def _md(text: Any) -> str:
    return _cell(text).replace("|", "\\|").replace("\n", " ")


def diff_markdown(report: DiffReport) -> str:
    out = ["### Data diff", ""]
    if not report.views:
        return "\n".join([*out, "No view changes to diff.", ""])
    if report.where:
        out += [f"Rows filtered by `{report.where}`.", ""]
    for d in report.views:
        out.append(f"#### {SYMBOL.get(d.action, '?')} `{d.view}` ({d.action}"
                   + (f", key `{', '.join(d.key)}`" if d.key else "") + ")")
        out.append("")
        if d.status != "ok":
            out += [f"**{d.status}**: {_md(d.message)}", ""]
            continue
        if d.action in ("create", "drop"):
            n = d.rows_after if d.action == "create" else d.rows_before
            out += [f"{_n(n)} row(s) ({'new' if d.action == 'create' else 'dropped'} view).", ""]
        else:
            out += ["| rows before | rows after | " + " | ".join(d.counts) + " |",
                    "|---:|---:|" + "---:|" * len(d.counts),
                    f"| {_n(d.rows_before)} | {_n(d.rows_after)} | "
                    + " | ".join(_n(v) for v in d.counts.values()) + " |",
                    ""]
        for line in _schema_lines(d):
            out += [f"Schema: `{line[len('schema: '):]}`", ""]
        for side in ("before", "after"):
            dup = d.duplicates.get(side) or {}
            if dup.get("keys"):
                out += [f"⚠️ Duplicate keys {side}: {_n(dup['keys'])} key(s), {_n(dup['rows'])} row(s).", ""]
            if d.null_keys.get(side):
                out += [f"⚠️ NULL keys {side}: {_n(d.null_keys[side])} row(s).", ""]
        if d.columns:
            out += ["| column | changed | rate |", "|---|---:|---:|"]
            out += [f"| `{c.name}` | {_n(c.changed)} | {_pct(c.rate)} |" for c in d.columns]
            out.append("")
        nums = [x for x in d.numeric if x.sum_before != x.sum_after or d.action in ("create", "drop")]
        if nums:
            out += ["| numeric | sum before | sum after | mean before | mean after |", "|---|---:|---:|---:|---:|"]
            out += [f"| `{x.name}` | {_n(x.sum_before)} | {_n(x.sum_after)} | {_n(x.mean_before)} | "
                    f"{_n(x.mean_after)} |" for x in nums]
            out.append("")
        if d.samples:
            out += ["<details><summary>Sample rows</summary>", ""]
            out += ["| class | before | after |", "|---|---|---|"]
            out += [f"| {s.cls} | {_md(_row_text(s.before))} | {_md(_row_text(s.after))} |" for s in d.samples]
            out += ["", "</details>", ""]
        out += [f"> {_md(n)}" for n in d.notes]
    return "\n".join(out) + "\n"


def _check_line(c: CheckResult) -> str:
    status = "WARN" if c.status == "fail" and c.severity == "warn" else c.status.upper()
    text = f"{status:<5} {c.label}"
    if c.failing:
        text += f": {_n(c.failing)} failing row(s)"
    if c.detail:
        text += f" ({c.detail})" if c.status != "error" else f": {c.detail}"
    return text


def checks_text(report: CheckReport) -> str:
    lines: list[str] = []
    for v in report.views:
        if v.status != "ok":
            lines.append(f"{v.view} ({v.definition}): {v.status.upper()}: {v.message}")
            continue
        lines.append(f"{v.view} ({v.definition}, {_n(v.rows)} rows)  {v.seconds:.1f}s")
        for c in v.checks:
            lines.append(f"    {_check_line(c)}" + (f"  [{c.location}]" if c.location and c.status != "pass" else ""))
            for s in c.samples:
                lines.append(f"        {_row_text(s)}")
        lines += [f"    note: {n}" for n in v.notes]
    s = report.summary()
    skipped = sum(v.status == "skipped" for v in report.views)
    lines.append(f"Checks ({report.definition} definitions): {s['pass']} passed, {s['fail']} failed, {s['warn']} "
                 f"warning(s), {s['error']} error(s)" + (f", {skipped} view(s) skipped" if skipped else "") + ".")
    if skipped:
        lines.append(skipped_line(report))
    lines += [f"Note: {n}" for n in report.notes]
    return "\n".join(lines) + "\n"


def skipped_line(report: CheckReport) -> str:
    """Why a report whose checks all passed still fails: views skipped, their checks not run."""
    views = [v for v in report.views if v.status == "skipped"]
    names = ", ".join(str(v.view) for v in views)
    n = sum(len(v.checks) for v in views)
    return (f"Failed: {names} {'was' if len(views) == 1 else 'were'} skipped, so {n} check(s) did not run, and "
            f"a check that did not run fails `viewsync check`: configure what the SKIPPED line names, or "
            f"leave {'it' if len(views) == 1 else 'them'} out with --select.")


def checks_markdown(report: CheckReport) -> str:
    s = report.summary()
    out = ["### Data checks", "",
           f"{s['pass']} passed, {s['fail']} failed, {s['warn']} warning(s), {s['error']} error(s) "
           f"({report.definition} definitions).", ""]
    if any(v.status == "skipped" for v in report.views):
        out += [f"❌ {_md(skipped_line(report))}", ""]
    for v in report.views:
        if v.status != "ok":
            out += [f"- `{v.view}`: **{v.status}**: {_md(v.message)}"]
            continue
        out += [f"#### `{v.view}` ({_n(v.rows)} rows)", "", "| | check | failing rows | detail |", "|---|---|---:|---|"]
        for c in v.checks:
            icon = "✅" if c.status == "pass" else "⚠️" if c.severity == "warn" and c.status == "fail" else "❌"
            out.append(f"| {icon} | `{_md(c.label)}` | {_n(c.failing)} | {_md(c.detail)} |")
        out.append("")
        for c in v.checks:
            if c.samples:
                out += [f"<details><summary>Failing rows of <code>{escape(c.label)}</code></summary>", ""]
                out += [f"- `{_md(_row_text(r))}`" for r in c.samples]
                out += ["", "</details>", ""]
    return "\n".join(out) + "\n"


def checks_junit(report: CheckReport) -> str:
    """One testsuite per view, one testcase per check; `warn` checks that fail are reported in
    system-out, not as failures."""
    def case(v: ViewChecks, c: CheckResult) -> str:
        name = quoteattr(f"{c.index}: {c.label}")
        head = f'    <testcase classname={quoteattr(str(v.view))} name={name} time="0">'
        rows = "\n".join(_row_text(r) for r in c.samples)
        msg = _check_line(c) + (f" at {c.location}" if c.location else "")
        if c.status == "error":
            return f"{head}\n      <error message={quoteattr(msg)}>{escape(c.detail)}</error>\n    </testcase>"
        if c.status == "fail" and c.severity == "error":
            return f"{head}\n      <failure message={quoteattr(msg)}>{escape(rows)}</failure>\n    </testcase>"
        if c.status == "fail":
            return f"{head}\n      <system-out>{escape(msg + chr(10) + rows)}</system-out>\n    </testcase>"
        return head[:-1] + "/>"

    suites = []
    for v in report.views:
        failures = sum(c.status == "fail" and c.severity == "error" for c in v.checks)
        errors = sum(c.status == "error" for c in v.checks) + (v.status == "error")
        body = [case(v, c) for c in v.checks]
        if v.status != "ok":
            tag = "error" if v.status == "error" else "skipped"
            body = [f'    <testcase classname={quoteattr(str(v.view))} name="read">\n'
                    f"      <{tag} message={quoteattr(v.message or '')}/>\n    </testcase>"]
        suites.append(f'  <testsuite name={quoteattr(str(v.view))} tests="{max(len(v.checks), 1)}" '
                      f'failures="{failures}" errors="{errors}" time="{v.seconds:.3f}">\n' + "\n".join(body)
                      + "\n  </testsuite>")
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="viewsync check">\n' + "\n".join(suites) \
        + "\n</testsuites>\n"


def as_json(report: DiffReport | CheckReport) -> str:
    return json.dumps(report.to_json(), indent=2, default=str) + "\n"
