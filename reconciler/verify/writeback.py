"""`validate --spark --write-columns`: put Spark's columns into view files.

Text is inserted through `source.yamledit` (never re-dumped) so the file keeps its comments,
order, quoting and layout: a `columns:` block goes right after the view's `name:`.
"""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.core.model import Column
from reconciler.source import yamledit, yamlsrc
from reconciler.verify.locate import parse_origin


def insert_columns(text: str, inserts: Mapping[int, list[Column]], file: str = "") -> str:
    """`text` with a columns block added to views[i] for each i in `inserts`."""
    views = yamledit.views_node(yamlsrc.compose(text), file)
    edits: list[yamledit.Edit] = []
    for index, cols in inserts.items():
        view = yamledit.block_mapping(views.value[index], file, f"views[{index}]")
        if yamledit.key_of(view, "columns") is not None:
            continue
        key, value = yamledit.key_of(view, "name") or (view, view)
        indent = " " * key.start_mark.column
        block = [f"{indent}columns:"] + [
            f"{indent}  - {{name: {yamledit.scalar(c.name)}, type: {yamledit.scalar(c.type)}}}" for c in cols]
        edits.append(yamledit.insert_lines(text, value.end_mark.line + 1, block))
    return yamledit.apply(text, edits)


def write_columns(texts: Mapping[str, str], origins: Mapping[object, str],
                  inferred: Mapping[object, list[Column]]) -> dict[str, str]:
    """New text of every file that gains columns: {file: text}."""
    per_file: dict[str, dict[int, list[Column]]] = {}
    for vid, cols in inferred.items():
        parsed = parse_origin(origins.get(vid, ""))
        if parsed is not None:
            per_file.setdefault(parsed[0], {})[parsed[1]] = cols
    return {f: insert_columns(texts[f], ins, f) for f, ins in sorted(per_file.items()) if f in texts}
