"""`validate --spark --write-columns`: put Spark's columns into view files.

Text is inserted (never re-dumped) so the file keeps its comments, order,
quoting and layout: a `columns:` block goes right after the view's `name:`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import yaml

from reconciler.core.errors import UserError
from reconciler.core.model import Column
from reconciler.source import yamlsrc
from reconciler.verify.locate import parse_origin

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _scalar(text: str) -> str:
    return text if _PLAIN.match(text) and text.lower() not in ("true", "false", "null", "yes", "no", "on", "off") \
        else '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def insert_columns(text: str, inserts: Mapping[int, list[Column]], file: str = "") -> str:
    """`text` with a columns block added to views[i] for each i in `inserts`."""
    root = yamlsrc.compose(text)
    views = next((v for k, v in root.value if str(k.value) == "views"), None) \
        if isinstance(root, yaml.MappingNode) else None
    if not isinstance(views, yaml.SequenceNode):
        raise UserError(f"{file}: no views list to write columns into")
    lines = text.split("\n")
    edits: list[tuple[int, list[str]]] = []
    for index, cols in inserts.items():
        view = views.value[index]
        if not isinstance(view, yaml.MappingNode) or view.flow_style:
            raise UserError(f"{file}:{view.start_mark.line + 1}: views[{index}]: cannot add columns to a flow "
                            "mapping; write the view as a block mapping")
        if any(str(k.value) == "columns" for k, _ in view.value):
            continue
        key, value = next((k, v) for k, v in view.value if str(k.value) == "name")
        indent = " " * key.start_mark.column
        block = [f"{indent}columns:"] + [
            f"{indent}  - {{name: {_scalar(c.name)}, type: {_scalar(c.type)}}}" for c in cols]
        edits.append((value.end_mark.line + 1, block))
    for at, block in sorted(edits, reverse=True):
        lines[at:at] = block
    return "\n".join(lines)


def write_columns(texts: Mapping[str, str], origins: Mapping[object, str],
                  inferred: Mapping[object, list[Column]]) -> dict[str, str]:
    """New text of every file that gains columns: {file: text}."""
    per_file: dict[str, dict[int, list[Column]]] = {}
    for vid, cols in inferred.items():
        parsed = parse_origin(origins.get(vid, ""))
        if parsed is not None:
            per_file.setdefault(parsed[0], {})[parsed[1]] = cols
    return {f: insert_columns(texts[f], ins, f) for f, ins in sorted(per_file.items()) if f in texts}
