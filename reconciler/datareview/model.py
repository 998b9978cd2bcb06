"""Data review results: a diff per view, check results per view, and the reports holding them.
`to_json` is the shape schemas/review.schema.json describes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reconciler.core.model import ViewId

DIFF_STATUSES = ("ok", "error", "skipped")
CHECK_STATUSES = ("pass", "fail", "error")


@dataclass(frozen=True)
class ColumnChange:
    name: str
    changed: int
    matched: int

    @property
    def rate(self) -> float | None:
        return self.changed / self.matched if self.matched else None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "changed": self.changed, "matched": self.matched, "rate": self.rate}


@dataclass(frozen=True)
class Numeric:
    """Sum and mean of a numeric column before and after (None: not on that side)."""

    name: str
    sum_before: float | int | None = None
    sum_after: float | int | None = None
    mean_before: float | None = None
    mean_after: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "sum_before": self.sum_before, "sum_after": self.sum_after,
                "mean_before": self.mean_before, "mean_after": self.mean_after}


@dataclass(frozen=True)
class Sample:
    """One example row of a class: `before`/`after` side by side (a changed row has both);
    `count` is how many identical rows it stands for (multiset diff)."""

    cls: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    count: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"class": self.cls, "before": self.before, "after": self.after, "count": self.count}


@dataclass
class SchemaDiff:
    added: list[dict[str, str]] = field(default_factory=list)  # {name, type}
    removed: list[dict[str, str]] = field(default_factory=list)
    retyped: list[dict[str, str]] = field(default_factory=list)  # {name, before, after}

    def empty(self) -> bool:
        return not (self.added or self.removed or self.retyped)

    def to_json(self) -> dict[str, Any]:
        return {"added": self.added, "removed": self.removed, "retyped": self.retyped}


@dataclass
class ViewDiff:
    view: ViewId
    action: str  # update | create | drop | dependent
    key: tuple[str, ...] | None = None
    status: str = "ok"
    message: str | None = None  # why it is an error or skipped
    schema: SchemaDiff = field(default_factory=SchemaDiff)
    rows_before: int | None = None
    rows_after: int | None = None
    counts: dict[str, int] = field(default_factory=dict)  # added, removed, changed, unchanged, duplicate
    duplicates: dict[str, dict[str, int]] = field(default_factory=dict)  # side -> {keys, rows}
    null_keys: dict[str, int] = field(default_factory=dict)  # side -> rows with a NULL key column
    columns: list[ColumnChange] = field(default_factory=list)
    numeric: list[Numeric] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def has_changes(self) -> bool:
        if self.status != "ok":
            return False
        if self.action in ("create", "drop") or not self.schema.empty():
            return True
        return any(self.counts.get(c, 0) for c in ("added", "removed", "changed", "duplicate")) \
            or any(d.get("rows", 0) for d in self.duplicates.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "view": self.view.to_json(), "action": self.action, "key": list(self.key) if self.key else None,
            "status": self.status, "message": self.message, "schema": self.schema.to_json(),
            "rows_before": self.rows_before, "rows_after": self.rows_after, "counts": self.counts,
            "duplicates": self.duplicates, "null_keys": self.null_keys,
            "columns": [c.to_json() for c in self.columns], "numeric": [n.to_json() for n in self.numeric],
            "samples": [s.to_json() for s in self.samples], "notes": self.notes,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class DiffReport:
    views: list[ViewDiff] = field(default_factory=list)
    where: str | None = None
    sample: int = 5
    spark: dict[str, Any] = field(default_factory=dict)  # master, version
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[ViewDiff]:
        return [v for v in self.views if v.status == "error"]

    def to_json(self) -> dict[str, Any]:
        return {"kind": "diff", "where": self.where, "sample": self.sample, "spark": self.spark,
                "views": [v.to_json() for v in self.views], "notes": self.notes}


@dataclass
class CheckResult:
    index: int
    kind: str
    args: Any
    severity: str  # error | warn
    status: str = "pass"  # pass | fail | error
    failing: int | None = None  # failing rows (unique: rows sharing a duplicated value)
    detail: str = ""  # e.g. "3 duplicated value(s)", "rows: 0 (min 1)"
    samples: list[dict[str, Any]] = field(default_factory=list)
    location: str | None = None  # file:line:col of the check in its view file

    @property
    def label(self) -> str:
        return f"{self.kind}: {_args_text(self.args)}"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.kind, "args": self.args, "severity": self.severity,
                "status": self.status, "failing": self.failing, "detail": self.detail, "samples": self.samples,
                "location": self.location}


def _args_text(args: Any) -> str:
    if isinstance(args, list):
        return ", ".join(map(str, args))
    if isinstance(args, dict):
        return ", ".join(f"{k}={v}" for k, v in args.items())
    return str(args)


@dataclass
class ViewChecks:
    view: ViewId
    definition: str  # declared | live
    status: str = "ok"  # ok | error | skipped
    message: str | None = None
    rows: int | None = None
    checks: list[CheckResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"view": self.view.to_json(), "definition": self.definition, "status": self.status,
                "message": self.message, "rows": self.rows, "checks": [c.to_json() for c in self.checks],
                "notes": self.notes, "seconds": round(self.seconds, 3)}


@dataclass
class CheckReport:
    definition: str = "declared"
    views: list[ViewChecks] = field(default_factory=list)
    spark: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def results(self) -> list[tuple[ViewChecks, CheckResult]]:
        return [(v, c) for v in self.views for c in v.checks]

    @property
    def failed(self) -> bool:
        """An `error` check failed, any check could not run (a `warn` one too: a gate that did not
        check fails), or a view could not be read (an error, or skipped: its catalog cannot be
        read by Spark): exit 1."""
        return any(v.status in ("error", "skipped") for v in self.views) or any(
            c.status == "error" or (c.severity == "error" and c.status != "pass") for _, c in self.results())

    def summary(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "warn": 0, "error": 0}
        for _, c in self.results():
            if c.status == "pass":
                out["pass"] += 1
            elif c.status == "error":
                out["error"] += 1
            elif c.severity == "warn":
                out["warn"] += 1
            else:
                out["fail"] += 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"kind": "checks", "definition": self.definition, "spark": self.spark, "summary": self.summary(),
                "views": [v.to_json() for v in self.views], "notes": self.notes}
