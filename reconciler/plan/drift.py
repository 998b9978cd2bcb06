"""Drift: classify every difference between declarations, catalogs and what we applied.

Kinds:
- pending: declared, not yet applied (or the live view still carries the
  previous declared version, untouched since we wrote it);
- changed_out_of_band: a managed view edited outside viewsync (its live digest
  no longer matches the digest we stamped), or a read-only catalog's view that
  no longer matches its declaration;
- reverted_out_of_band: `viewsync revert --apply` wrote a recorded version, and Git does
  not declare it yet (the live view is what the revert wrote, untouched since);
- deleted_out_of_band: a view we applied and never dropped is gone;
- undeclared: managed by this project but no longer declared;
- unmanaged: views without our marker, seen and never touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler.adapters.base import SchemaSnapshot
from reconciler.core.model import ViewId, stamp_matches
from reconciler.core.output import OutputFormat
from reconciler.plan.planner import Plan, PlanErrorCode

KINDS = ("pending", "changed_out_of_band", "reverted_out_of_band", "deleted_out_of_band", "undeclared", "unmanaged")


@dataclass(frozen=True)
class DriftItem:
    kind: str
    view: ViewId
    detail: str
    fields: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "view": self.view.to_json(), "detail": self.detail, "fields": list(self.fields)}


@dataclass
class DriftReport:
    items: list[DriftItem] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def drifted(self) -> bool:
        return bool(self.items)

    def counts(self) -> dict[str, int]:
        return {k: sum(1 for i in self.items if i.kind == k) for k in KINDS}

    def to_json(self) -> dict[str, Any]:
        return {"drifted": self.drifted, "counts": self.counts(), "items": [i.to_json() for i in self.items],
                "errors": self.errors}


def classify(plan: Plan, snapshots: Mapping[tuple[str, str], SchemaSnapshot],
             last_versions: Mapping[ViewId, dict[str, Any]]) -> DriftReport:
    report = DriftReport()
    # Managed views whose live spec no longer matches our stamp: edited out of band.
    oob: set[ViewId] = set()
    reverted: dict[ViewId, dict[str, Any]] = {}  # live as a revert run wrote it: its version row
    for snap in snapshots.values():
        for live in snap.views.values():
            if live.managed_by != plan.project or not live.spec_digest:
                continue
            if not stamp_matches(live.spec_digest, live.spec):
                oob.add(live.id)
                continue
            last = last_versions.get(live.id)
            if last is not None and last.get("run_command") == "revert" and last["digest"] == live.spec_digest:
                reverted[live.id] = last
    for a in plan.actions:
        fields = tuple(c.field for c in a.changes)
        if a.view in oob:
            report.items.append(DriftItem("changed_out_of_band", a.view,
                                          "edited outside viewsync (live spec no longer matches the stamped "
                                          "digest)", fields))
        elif a.view in reverted and a.action == "update":
            row = reverted[a.view]
            report.items.append(DriftItem("reverted_out_of_band", a.view,
                                          f"reverted by `viewsync revert --apply` (version {row['version']}, run "
                                          f"{str(row['run_id'])[:8]}); Git does not declare it yet: commit the "
                                          "revert (`viewsync revert` without --apply writes it)", fields))
        elif a.action == "create":
            last = last_versions.get(a.view)
            if last is not None and last["action"] != "drop":
                report.items.append(DriftItem("deleted_out_of_band", a.view,
                                              f"applied as version {last['version']} but no longer in the "
                                              "catalog"))
            else:
                report.items.append(DriftItem("pending", a.view, "declared, not yet created"))
        elif a.action == "drop":
            report.items.append(DriftItem("undeclared", a.view, "managed by this project, no longer declared"))
        else:
            report.items.append(DriftItem("pending", a.view, f"declared change not applied yet ({a.action})",
                                          fields))
    for m in plan.drift:
        report.items.append(DriftItem("changed_out_of_band", m.view,
                                      "differs from its declaration (read-only catalog)",
                                      tuple(c.field for c in m.changes)))
    for view in plan.undeclared:
        report.items.append(DriftItem("undeclared", view, "managed by this project, no longer declared"))
    for u in plan.unmanaged:
        report.items.append(DriftItem("unmanaged", u.view, f"{u.format} view without the viewsync marker"
                                      + (f" (managed by {u.managed_by})" if u.managed_by else "")))
    # Read-only mismatches are drift items already (above).
    report.errors = [str(e) for e in plan.errors if e.code != PlanErrorCode.READ_ONLY_CATALOG]
    report.items.sort(key=lambda i: (KINDS.index(i.kind), i.view))
    return report


def text(report: DriftReport) -> str:
    if not report.items and not report.errors:
        return "No drift: every catalog matches the declarations.\n"
    out = [f"Drift detected: {sum(report.counts().values())} item(s)."]
    for kind in KINDS:
        items = [i for i in report.items if i.kind == kind]
        if items:
            out.append("")
            out.append(f"{kind.replace('_', ' ')} ({len(items)}):")
            for i in items:
                fields = f" [{', '.join(i.fields)}]" if i.fields else ""
                out.append(f"  {i.view}: {i.detail}{fields}")
    if report.errors:
        out.append("")
        out.append("errors:")
        out += [f"  {e}" for e in report.errors]
    return "\n".join(out) + "\n"


def markdown(report: DriftReport) -> str:
    out = ["### viewsync drift", ""]
    if not report.items and not report.errors:
        return "\n".join(out + ["No drift."]) + "\n"
    out += ["| kind | count |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in report.counts().items()] + [""]
    for i in report.items:
        fields = f" ({', '.join(i.fields)})" if i.fields else ""
        out.append(f"- **{i.kind}** `{i.view}`: {i.detail}{fields}")
    out += [f"- error: {e}" for e in report.errors]
    return "\n".join(out) + "\n"


def render(report: DriftReport, fmt: OutputFormat) -> str:
    if fmt is OutputFormat.JSON:
        return json.dumps(report.to_json(), indent=2) + "\n"
    if fmt is OutputFormat.MARKDOWN:
        return markdown(report)
    return text(report)
