"""What a verification found: per-view status, located findings, inferred
columns and impact. Plain data with a JSON form (the plan's `verification`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reconciler.core.model import Column, ViewId

Status = Literal["ok", "warning", "error", "not_checked", "skipped"]
Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    view: ViewId
    severity: Severity
    code: str  # Spark's error class, or a viewsync code (column_count, unresolved_reference...)
    message: str  # located: "file:line:col: field: message"

    def to_json(self) -> dict[str, Any]:
        return {"view": self.view.to_json(), "severity": self.severity, "code": self.code,
                "message": self.message}


@dataclass
class ViewResult:
    view: ViewId
    status: Status
    columns: list[Column] | None = None  # Spark's output, in our type grammar
    inferred: bool = False  # the declaration had no columns; these were filled from Spark
    reason: str | None = None  # why not checked / skipped

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"view": self.view.to_json(), "status": self.status}
        if self.columns is not None:
            out["columns"] = [{"name": c.name, "type": c.type} for c in self.columns]
        if self.inferred:
            out["inferred"] = True
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Dependent:
    view: ViewId
    declared: bool  # False: a live view in our catalogs that nobody declares
    status: Literal["broken", "type_changed", "ok"]
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"view": self.view.to_json(), "declared": self.declared, "status": self.status,
                "detail": self.detail}


@dataclass(frozen=True)
class Impact:
    view: ViewId
    change: Literal["dropped", "columns_changed", "columns_added", "same_output", "unknown"]
    breaking: bool
    detail: str
    dependents: tuple[Dependent, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"view": self.view.to_json(), "change": self.change, "breaking": self.breaking,
                "detail": self.detail, "dependents": [d.to_json() for d in self.dependents]}


@dataclass
class Verification:
    engine: str
    results: dict[ViewId, ViewResult] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    impact: list[Impact] = field(default_factory=list)
    seconds: float = 0.0

    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def inferred(self) -> dict[ViewId, list[Column]]:
        return {v: r.columns for v, r in self.results.items() if r.inferred and r.columns is not None}

    def counts(self) -> dict[str, int]:
        out = {"ok": 0, "warning": 0, "error": 0, "not_checked": 0, "skipped": 0}
        for r in self.results.values():
            out[r.status] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "summary": self.counts(),
            "views": [r.to_json() for _, r in sorted(self.results.items(), key=lambda kv: kv[0].key())],
            "findings": [f.to_json() for f in self.findings],
            "impact": [i.to_json() for i in self.impact],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Verification:
        v = cls(engine=d.get("engine", "spark"))
        for r in d.get("views", []):
            vid = ViewId(**r["view"])
            cols = [Column(name=c["name"], type=c["type"]) for c in r["columns"]] if "columns" in r else None
            v.results[vid] = ViewResult(vid, r["status"], cols, bool(r.get("inferred")), r.get("reason"))
        v.findings = [Finding(ViewId(**f["view"]), f["severity"], f["code"], f["message"])
                      for f in d.get("findings", [])]
        v.impact = [Impact(ViewId(**i["view"]), i["change"], i["breaking"], i["detail"], tuple(
            Dependent(ViewId(**x["view"]), x["declared"], x["status"], x["detail"]) for x in i["dependents"]))
            for i in d.get("impact", [])]
        return v
