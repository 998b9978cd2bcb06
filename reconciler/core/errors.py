"""Expected errors: shown to the user as one clear line each, never as a traceback.

Every expected failure is a `ViewsyncError`; the CLI translates that one root in
one place (`reconciler.cli.app.main`): message redacted, exit code 1. Anything else
that escapes is a bug and is reported as "unexpected".
"""

from __future__ import annotations

from dataclasses import dataclass


class ViewsyncError(Exception):
    """Root of the expected failures; the message is shown as-is (after redaction)."""


class UserError(ViewsyncError):
    """An expected failure the user can fix (bad input, stale plan, lock held...)."""


class AdapterError(ViewsyncError):
    """A catalog failed or refused (unreachable, denied, read-only...). The message names
    the catalog and holds no secrets."""


class ConflictError(AdapterError):
    """The live view changed under us (optimistic concurrency failed): plan again."""


class DecodeError(ViewsyncError):
    """Catalog content that cannot be read as a view (an unreadable definition, a type
    outside the grammar...). Adapters turn it into a read-only placeholder plus a
    warning; it reaches the user only when there is no such fallback."""


@dataclass(frozen=True)
class Problem:
    """A located problem in a declaration or config file."""

    file: str
    line: int
    column: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class ValidationFailed(UserError):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.column))
        super().__init__("\n".join(str(p) for p in self.problems))
