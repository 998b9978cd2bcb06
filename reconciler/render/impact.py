"""`viewsync impact`: its report (what `services.spark.impact` returns) and its renderings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reconciler.core.model import ViewId


@dataclass(frozen=True)
class ImpactReport:
    view: ViewId
    scenario: str  # declared change | if dropped | not yet applied
    dependents: int  # how many views read it, declared or live
    summary: dict[str, int]  # Spark's analysis: views per outcome
    impact: dict[str, Any]  # the change, and each dependent's status (verify.impact.Impact.to_json())

    def verification(self) -> dict[str, Any]:
        """In the shape of a plan's Spark verification, whose report lines these reuse."""
        return {"summary": self.summary, "views": [], "impact": [self.impact]}


def as_json(r: ImpactReport) -> str:
    return json.dumps({"view": r.view.to_json(), "scenario": r.scenario, **r.impact}, indent=2) + "\n"


def text(r: ImpactReport) -> str:
    from reconciler.verify import report

    lines = [f"{r.view}: {r.dependents} dependent view(s).", f"Scenario: {r.scenario}."]
    return "\n".join(lines + report.text_lines(r.verification())[1:]) + "\n"


def markdown(r: ImpactReport) -> str:
    from reconciler.verify import report

    lines = report.markdown_lines(r.verification())[4:]  # without its heading and summary
    return "\n".join([f"### Impact of `{r.view}` ({r.scenario})", "", *lines]) + "\n"
