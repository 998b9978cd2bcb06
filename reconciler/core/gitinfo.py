"""Which commit (and whose) a run read its declarations from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GitInfo:
    commit: str | None = None
    ref: str | None = None
    author: str | None = None

    def to_json(self) -> dict[str, str | None] | None:
        """None outside a git repository (no commit): a plan then records no git info."""
        if not self.commit:
            return None
        return {"commit": self.commit, "ref": self.ref, "author": self.author}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> GitInfo | None:
        if data is None:
            return None
        return cls(commit=data.get("commit"), ref=data.get("ref"), author=data.get("author"))
