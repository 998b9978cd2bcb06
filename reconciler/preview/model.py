"""What `preview up`, `down`, `list` and `gc` report: plain values, rendered by `report`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from reconciler.core.model import ViewId


@dataclass(frozen=True)
class Copy:
    """A view of the environment and its copy."""

    source: ViewId
    copy: ViewId
    reason: str  # created, changed, reads <view>


@dataclass(frozen=True)
class Step:
    """One write of a preview run, as it ended."""

    action: str  # create, update, drop
    view: ViewId
    outcome: str  # applied, failed, skipped, refused
    error: str | None = None


@dataclass
class UpResult:
    env: str
    commit: str | None
    base: str
    expires_at: datetime
    copies: list[Copy] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    schemas_created: list[tuple[str, str]] = field(default_factory=list)
    schemas_dropped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    run_id: str | None = None

    @property
    def ok(self) -> bool:
        return all(s.outcome == "applied" for s in self.steps)


@dataclass
class DownResult:
    env: str
    steps: list[Step] = field(default_factory=list)
    schemas_dropped: list[tuple[str, str]] = field(default_factory=list)
    schemas_kept: list[tuple[str, str]] = field(default_factory=list)  # not empty: left in place
    notes: list[str] = field(default_factory=list)
    run_id: str | None = None
    found: bool = True  # False: nothing of the env was recorded or found

    @property
    def ok(self) -> bool:
        return all(s.outcome == "applied" for s in self.steps)


@dataclass(frozen=True)
class EnvSummary:
    """An environment as `preview list` shows it."""

    env: str
    commit: str | None
    actor: str
    created_at: datetime
    updated_at: datetime
    expires_at: datetime
    views: tuple[ViewId, ...]
    schemas: tuple[tuple[str, str], ...]
