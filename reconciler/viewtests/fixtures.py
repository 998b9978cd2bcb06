"""A test input's rows, read from where the test puts them: `rows:` (mappings), `csv: |`
(inline, a header line first) or `file:` (a .csv or .jsonl path relative to the view file).

Values stay as written here (typing them is `values`); an empty CSV cell is NULL. Every
problem is an `Issue` that says where it is: a field path in the view (plus a line offset
inside an inline CSV block), or a line of a fixture file.
"""

from __future__ import annotations

import csv
import io
import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reconciler.source.expectations import Given, Path_

MAX_FIXTURE_BYTES = 8 * 1024 * 1024
FileReader = Callable[[str], str]  # repository-relative path -> text; raises OSError


@dataclass(frozen=True)
class Issue:
    """A problem in a test, placed by field path within its view (`line_offset` lines below
    that field's value, for a line of an inline CSV block), or at `file`:`line`."""

    path: Path_
    message: str
    line_offset: int = 0
    file: str | None = None
    line: int = 1


@dataclass(frozen=True)
class Row:
    values: dict[str, Any]  # column as written -> value as written
    path: Path_  # where the row is (for a value's error)
    line_offset: int = 0  # inline CSV: lines below `path`
    file: str | None = None  # a fixture file's row: its file and line
    line: int = 1

    def issue(self, column: str | None, message: str) -> Issue:
        if self.file is not None:
            return Issue(self.path, message, file=self.file, line=self.line)
        if self.line_offset:
            return Issue(self.path, message, self.line_offset)
        return Issue((*self.path, column) if column is not None else self.path, message)


def fixture_path(view_file: str, name: str) -> str | None:
    """The repository-relative path of a fixture named relative to its view file; None when
    it would leave the repository."""
    if name.startswith("/") or "\\" in name or "\x00" in name:
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(view_file), name))
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def read(given: Given, path: Path_, view_file: str, reader: FileReader) -> tuple[list[Row], list[Issue]]:
    """The rows of one input. `path` is the input's field path in its view."""
    if given.rows is not None:
        return [Row(dict(r), (*path, "rows", i)) for i, r in enumerate(given.rows)], []
    if given.csv is not None:
        return _csv(given.csv, (*path, "csv"), None)
    assert given.file is not None
    rel = fixture_path(view_file, given.file)
    if rel is None:
        return [], [Issue((*path, "file"), f"{given.file!r} is outside the repository")]
    try:
        text = reader(rel)
    except (OSError, KeyError) as err:
        why = getattr(err, "strerror", None) or "no such file"
        return [], [Issue((*path, "file"), f"cannot read {rel}: {why}")]
    if len(text) > MAX_FIXTURE_BYTES:
        return [], [Issue((*path, "file"), f"{rel} is larger than {MAX_FIXTURE_BYTES // 1024 // 1024} MB")]
    if rel.endswith(".jsonl"):
        return _jsonl(text, path, rel)
    return _csv(text, path, rel)


def _csv(text: str, path: Path_, file: str | None) -> tuple[list[Row], list[Issue]]:
    # Inline CSV starts on the line after `csv: |`; a file's first line is line 1.
    first = 1

    def issue(line: int, message: str) -> Issue:
        if file is not None:
            return Issue(path, message, file=file, line=line)
        return Issue(path, message, line - 1 + first)

    reader = csv.reader(io.StringIO(text), strict=True)
    rows: list[Row] = []
    try:
        header = next(reader, None)
    except csv.Error as err:
        return [], [issue(1, f"malformed CSV: {err}")]
    if not header or not any(h.strip() for h in header):
        return [], [issue(1, "CSV needs a header line naming the columns")]
    names = [h.strip() for h in header]
    if any(not n for n in names):
        return [], [issue(1, "CSV header has an empty column name")]
    dup = next((n for i, n in enumerate(names) if n.lower() in (m.lower() for m in names[:i])), None)
    if dup is not None:
        return [], [issue(1, f"CSV header names {dup!r} twice")]
    issues: list[Issue] = []
    try:
        for fields in reader:
            line = reader.line_num
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue  # a blank line
            if len(fields) != len(names):
                issues.append(issue(line, f"malformed CSV: {len(fields)} field(s), the header has {len(names)}"))
                continue
            values = {n: (None if f == "" else f) for n, f in zip(names, fields, strict=True)}
            if file is not None:
                rows.append(Row(values, path, file=file, line=line))
            else:
                rows.append(Row(values, path, line_offset=line - 1 + first))
    except csv.Error as err:
        issues.append(issue(reader.line_num, f"malformed CSV: {err}"))
    return rows, issues


def _jsonl(text: str, path: Path_, file: str) -> tuple[list[Row], list[Issue]]:
    rows: list[Row] = []
    issues: list[Issue] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as err:
            issues.append(Issue(path, f"invalid JSON: {err}", file=file, line=n))
            continue
        except RecursionError:
            issues.append(Issue(path, "JSON nested too deeply", file=file, line=n))
            continue
        if not isinstance(value, dict):
            issues.append(Issue(path, "each line is a JSON object (one row)", file=file, line=n))
            continue
        rows.append(Row(value, path, file=file, line=n))
    return rows, issues
