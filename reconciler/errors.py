"""Expected errors: shown to the user as one clear line each, never as a traceback."""

from __future__ import annotations

from dataclasses import dataclass


class UserError(Exception):
    """An expected failure the user can fix; exit code 1."""


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
