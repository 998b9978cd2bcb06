"""Where a character of a view's SQL sits in its YAML file (file:line:col).

Spark reports 0-based offsets into the query (analysis errors) or `line N,
pos M` (parse errors); the query is the `sql` scalar with surrounding
whitespace trimmed. Block (`|`), plain and quoted scalars are mapped exactly;
a folded scalar falls back to the line holding the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from reconciler.source import yamlsrc

_ORIGIN = re.compile(r"^(?P<file>.+) \(views\[(?P<index>\d+)\]\)$")


@dataclass(frozen=True)
class Where:
    file: str
    line: int
    column: int
    field: str

    def prefix(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.field}"


def parse_origin(origin: str) -> tuple[str, int] | None:
    """Declarations.origin ("views/x/y.yaml (views[3])") as (file, view index)."""
    m = _ORIGIN.match(origin)
    return (m.group("file"), int(m.group("index"))) if m else None


def offset_of(sql: str, line: int, pos: int) -> int:
    """0-based offset of 1-based `line`, 0-based `pos` in `sql`."""
    lines = sql.split("\n")
    line = max(1, min(line, len(lines)))
    return sum(len(lines[i]) + 1 for i in range(line - 1)) + max(0, pos)


class Locator:
    """Positions in the view files a verification reports on (each parsed once)."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self._nodes: dict[str, Any] = {}

    def _node(self, file: str) -> Any:
        if file not in self._nodes:
            text = self.texts.get(file)
            try:
                self._nodes[file] = yamlsrc.compose(text) if text is not None else None
            except yamlsrc.YamlSyntaxError:
                self._nodes[file] = None
        return self._nodes[file]

    def view(self, origin: str) -> Where | None:
        parsed = parse_origin(origin)
        if parsed is None:
            return None
        file, index = parsed
        path: tuple[str | int, ...] = ("views", index, "name")
        line, col = yamlsrc.locate(self._node(file), path)
        return Where(file, line, col, f"views[{index}]")

    def columns(self, origin: str) -> Where | None:
        parsed = parse_origin(origin)
        if parsed is None:
            return None
        file, index = parsed
        node = self._node(file)
        view = yamlsrc.node_at(node, ("views", index))
        has = isinstance(view, yaml.MappingNode) and any(str(k.value) == "columns" for k, _ in view.value)
        path: tuple[str | int, ...] = ("views", index, "columns" if has else "name")
        line, col = yamlsrc.locate(node, path)
        return Where(file, line, col, yamlsrc.path_text(path))

    def sql(self, origin: str, dialect: str, offset: int | None) -> Where | None:
        """The position of character `offset` of the (trimmed) SQL of `dialect`."""
        parsed = parse_origin(origin)
        if parsed is None:
            return None
        file, index = parsed
        node = self._node(file)
        reps = yamlsrc.node_at(node, ("views", index, "representations"))
        if not isinstance(reps, yaml.SequenceNode):
            return None
        for j, rep in enumerate(reps.value):
            if not isinstance(rep, yaml.MappingNode):
                continue
            fields = {str(k.value): v for k, v in rep.value}
            if getattr(fields.get("dialect"), "value", None) != dialect or "sql" not in fields:
                continue
            scalar = fields["sql"]
            line, col = yamlsrc.scalar_position(scalar, self.texts.get(file, ""), offset or 0)
            return Where(file, line, col, f"views[{index}].representations[{j}].sql")
        return None
