"""The outcome of view tests: one result per test, and the run (the JSON that
`schemas/tests.schema.json` describes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from reconciler.core.model import ViewId
from reconciler.viewtests.compare import Difference

Rows = tuple[list[str], list[list[str]]]  # column names, rows of shown values


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # the view computed other rows than the test expects
    ERROR = "error"  # the test could not run: a bad fixture, an unknown input, a Spark error


@dataclass
class TestResult:
    view: ViewId
    name: str
    file: str  # where the test is declared
    line: int
    status: Status
    description: str | None = None
    difference: Difference | None = None  # failed
    error: str | None = None  # error: one line, located
    seconds: float = 0.0
    index: int = 0  # the test's position in its view's tests (not in the JSON: the location says it)
    engine: str = "spark"  # the engine that ran it (reconciler.viewtests.engines)
    rows: Rows | None = None  # what the engine returned, shown (not in the JSON: for representations_disagree)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def message(self) -> str:
        if self.status is Status.ERROR:
            return self.error or "error"
        return self.difference.message if self.difference is not None else ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"view": self.view.to_json(), "name": self.name, "engine": self.engine,
                               "location": {"file": self.file, "line": self.line},
                               "status": str(self.status), "seconds": round(self.seconds, 4)}
        if self.description:
            out["description"] = self.description
        if self.status is Status.FAILED and self.difference is not None:
            out["difference"] = self.difference.to_json()
        if self.status is Status.ERROR:
            out["error"] = self.error
        return out


@dataclass
class TestRun:
    results: list[TestResult] = field(default_factory=list)
    seconds: float = 0.0
    spark_start_seconds: float | None = None
    start_seconds: dict[str, float] = field(default_factory=dict)  # engine -> how long it took to become ready

    def counts(self) -> dict[str, int]:
        out = {str(s): 0 for s in Status}
        for r in self.results:
            out[str(r.status)] += 1
        return {"tests": len(self.results), **out}

    @property
    def ok(self) -> bool:
        return all(r.status is Status.PASSED for r in self.results)

    def failures(self) -> list[TestResult]:
        return [r for r in self.results if r.status is not Status.PASSED]

    def by_view(self) -> dict[ViewId, list[TestResult]]:
        out: dict[ViewId, list[TestResult]] = {}
        for r in self.results:
            out.setdefault(r.view, []).append(r)
        return out

    def engines(self) -> list[str]:
        return list(dict.fromkeys(r.engine for r in self.results))

    def to_json(self) -> dict[str, Any]:
        return {"format_version": 1, "summary": self.counts(), "seconds": round(self.seconds, 3),
                "tests": [r.to_json() for r in self.results]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TestRun:
        """A run as a saved plan holds it (for rendering; differences keep their JSON form)."""
        run = cls(seconds=float(d.get("seconds", 0.0)))
        for t in d.get("tests", []):
            v = t["view"]
            diff = None
            if "difference" in t:
                j = t["difference"]
                diff = Difference(j.get("message", ""), j.get("columns", []), j.get("missing", []),
                                  j.get("unexpected", []), j.get("missing_count", 0), j.get("unexpected_count", 0),
                                  j.get("expected_count"), j.get("actual_count", 0))
            run.results.append(TestResult(ViewId(v["catalog"], v["schema"], v["name"]), t["name"],
                                          t["location"]["file"], t["location"]["line"], Status(t["status"]),
                                          t.get("description"), diff, t.get("error"), t.get("seconds", 0.0),
                                          engine=t.get("engine", "spark")))
        return run
