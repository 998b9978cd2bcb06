"""Data review results as event payloads (pure): `view.diffed` per diffed view and
`checks.finished` per checked view. Counts only: no sample rows (data values) leave in events."""

from __future__ import annotations

from typing import Any

from reconciler.datareview.model import CheckReport, DiffReport

DIFFED = "view.diffed"
CHECKS_FINISHED = "checks.finished"


def diff_events(report: DiffReport, git: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(type, subject, data) per view diffed without error."""
    out = []
    for d in report.views:
        if d.status != "ok":
            continue
        data = {k: v for k, v in d.to_json().items() if k not in ("samples", "seconds")}
        out.append((DIFFED, str(d.view), {**data, "where": report.where, "git": git, "spark": report.spark}))
    return out


def check_events(report: CheckReport, git: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(type, subject, data) per view whose checks ran; `null_counts` feeds OpenLineage's
    dataQualityMetrics (the failing rows of each single-column not_null check)."""
    out = []
    for v in report.views:
        if v.status != "ok":
            continue
        checks = [{k: val for k, val in c.to_json().items() if k != "samples"} for c in v.checks]
        nulls = {str(c.args[0]): c.failing for c in v.checks
                 if c.kind == "not_null" and len(c.args) == 1 and c.failing is not None}
        ok = not any(c.status != "pass" and c.severity == "error" for c in v.checks)
        out.append((CHECKS_FINISHED, str(v.view), {
            "view": v.view.to_json(), "definition": v.definition, "rows": v.rows, "passed": ok,
            "checks": checks, "null_counts": nulls, "git": git, "spark": report.spark}))
    return out
