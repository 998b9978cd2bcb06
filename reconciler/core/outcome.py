"""How an action ended: the values stored in audit rows, shown by `viewsync audit` and
carried by events (a `StrEnum`, so each compares and serialises as its string)."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    PENDING = "pending"  # begun: written before the catalog is touched
    APPLIED = "applied"
    FAILED = "failed"
    REFUSED = "refused"  # vetoed by a blocking hook, or not permitted
    SKIPPED = "skipped"  # not attempted: an earlier action failed, or the apply was refused
    UNKNOWN = "unknown"  # a dead run's action that could not be checked


class RunOutcome(StrEnum):
    """How a run ended (`vs_runs.outcome`, `run.finished` events)."""

    RUNNING = "running"  # holds the apply lock; once the lock is taken over, a dead run
    SUCCESS = "success"
    FAILED = "failed"
    REFUSED = "refused"  # locked, stale plan, or not permitted: nothing applied
    INTERRUPTED = "interrupted"  # died; its records repaired by a later apply
