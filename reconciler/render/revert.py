"""What `viewsync revert` says it did: one line per outcome (the plan and the apply report are
rendered before it, by their own renderers)."""

from __future__ import annotations

from typing import Any, Protocol


class RevertOutcome(Protocol):  # services.revert.RevertOutcome (render sits below services)
    view: Any
    version: str
    asked: str
    plan: Any
    file: str | None
    applied: Any
    unchanged: bool

    @property
    def ok(self) -> bool: ...


def text(outcome: RevertOutcome) -> str:
    if outcome.unchanged:
        return f"{outcome.view} is declared as {outcome.version} already: nothing to write.\n"
    if outcome.file is not None:
        return f"Wrote {outcome.version} of {outcome.view} into {outcome.file}: commit it and open a pull request.\n"
    applied = outcome.applied
    if applied is not None and outcome.ok and applied.run is not None:
        return (f"Reverted {outcome.view} to {outcome.version} in its catalog. Until Git declares it, `viewsync "
                f"drift` reports it as reverted out of band: run `viewsync revert {outcome.view} --to "
                f"{outcome.asked}` without --apply and commit the change.\n")
    if applied is not None and applied.status.value == "cancelled":
        return "Revert cancelled.\n"
    return ""


def refused(outcome: RevertOutcome) -> str:
    """The line for standard error when the plan's errors refused the revert."""
    return "Revert refused: nothing was written.\n" if outcome.plan is not None and outcome.plan.errors else ""
