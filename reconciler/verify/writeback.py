"""The one writer of view files: `validate --spark --write-columns` puts Spark's columns
into them, `viewsync revert` a recorded version's spec.

Text is inserted through `source.yamledit` (never re-dumped) so the file keeps its comments,
order, quoting and layout: a `columns:` block goes right after the view's `name:`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from reconciler.core.errors import UserError
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


# ---------------------------------------------------------------- revert
# `viewsync revert`: a recorded version's spec written into a view's declaration. Only the
# fields that differ are touched, each by replacing its value's text; the rest of the file
# (other fields, tests, comments, blank lines) keeps its bytes.

SPEC_FIELDS = ("comment", "columns", "representations", "default_catalog", "default_namespace", "security",
               "owner", "properties")


def _block_or_quoted(sql: str, indent: int) -> str:
    """The SQL exactly: a `|` block at `indent`, or a quoted scalar when a block cannot hold it."""
    lines = yamledit.literal(sql, indent)
    return "\n".join(lines) if lines else yamledit.scalar(sql)


def _rendered(field: str, value: Any, indent: int) -> str:
    """`field`'s value as the text after its key (from the colon on), its block at `indent`."""
    pad = " " * indent
    if field == "columns":
        return ":\n" + "\n".join(f"{pad}  - {yamledit.flow_map(c)}" for c in value)
    if field == "representations":
        return ":\n" + "\n".join(f"{pad}  - dialect: {yamledit.scalar(r['dialect'])}\n{pad}    sql: "
                                 f"{_block_or_quoted(r['sql'], indent + 6)}" for r in value)
    if field == "default_namespace":
        return ": [" + ", ".join(yamledit.scalar(p) for p in value) + "]"
    if field == "properties":
        return ": " + yamledit.flow_map(value)
    return ": " + yamledit.scalar(value)


def _is_default(field: str, value: Any, namespace: list[str]) -> bool:
    """What the file says by leaving the field out."""
    if field == "default_namespace":
        return bool(value == namespace)
    if field == "security":
        return bool(value == "definer")
    return value in (None, [], {})


def _content_end(node: yaml.Node, text: str) -> int:
    """Where a value's own text ends: not the blank lines or comments a block drags along."""
    if isinstance(node, yaml.ScalarNode):
        if node.style in ("|", ">"):
            return node.start_mark.index + len(text[node.start_mark.index:node.end_mark.index].rstrip())
        return int(node.end_mark.index)
    if not isinstance(node, yaml.CollectionNode) or node.flow_style or not node.value:
        return int(node.end_mark.index)
    last = node.value[-1]
    return _content_end(last[1] if isinstance(node, yaml.MappingNode) else last, text)


def _line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole lines from `start` to `end`, with the final line break."""
    newline = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, len(text) if newline < 0 else newline + 1


def write_spec(text: str, index: int, namespace: list[str], current: Mapping[str, Any],
               target: Mapping[str, Any], file: str = "") -> str:
    """`text` with views[index]'s spec fields changed from `current` to `target` (canonical
    forms, default namespace resolved to `namespace`). Raises UserError for a view written as a
    flow mapping, or a field to remove that is its item's first key."""
    bom = text[:1] if text.startswith(yamlsrc.BOM) else ""
    body = text[len(bom):]
    view = yamlsrc.node_at(yamlsrc.compose(body), ("views", index))
    if not isinstance(view, yaml.MappingNode) or view.flow_style:
        raise UserError(f"{file}: views[{index}]: cannot rewrite a view written as a flow mapping; write it as "
                        "a block mapping")
    entries = {str(k.value): (k, v) for k, v in view.value}
    first_key = view.value[0][0]
    indent = first_key.start_mark.column
    edits: list[yamledit.Edit] = []
    inserts: list[str] = []
    for field in SPEC_FIELDS:
        want = target[field]
        if current[field] == want:
            continue
        default = _is_default(field, want, namespace)
        if field not in entries:
            if not default:
                inserts.append(" " * indent + field + _rendered(field, want, indent))
            continue
        key, value = entries[field]
        if default:
            if key is first_key:
                raise UserError(f"{file}:{key.start_mark.line + 1}: views[{index}].{field}: cannot remove the "
                                "first field of a view; put `name` first")
            start, end = _line_span(body, key.start_mark.index, _content_end(value, body))
            edits.append(yamledit.Edit(start, end, ""))
        elif field == "representations" and _same_dialects(value, current[field], want):
            edits += _sql_edits(value, current[field], want, body)
        else:
            edits.append(yamledit.Edit(key.end_mark.index, _content_end(value, body), _rendered(field, want, indent)))
    if inserts:
        name_value = entries["name"][1]
        _, at = _line_span(body, name_value.start_mark.index, _content_end(name_value, body))
        edits.append(yamledit.Edit(at, at, "\n".join(inserts) + "\n"))
    return bom + yamledit.apply(body, edits)


def _same_dialects(node: yaml.Node, current: list[dict[str, str]], want: list[dict[str, str]]) -> bool:
    """Only SQL changes, in block items that each have a `sql` key: those scalars alone are replaced."""
    if {r["dialect"] for r in current} != {r["dialect"] for r in want} or not isinstance(node, yaml.SequenceNode):
        return False
    return not node.flow_style and all(isinstance(item, yaml.MappingNode) and not item.flow_style
                                       and any(str(k.value) == "sql" for k, _ in item.value)
                                       for item in node.value)


def _sql_edits(node: yaml.SequenceNode, current: list[dict[str, str]], want: list[dict[str, str]],
               text: str) -> list[yamledit.Edit]:
    before = {r["dialect"]: r["sql"] for r in current}
    after = {r["dialect"]: r["sql"] for r in want}
    edits = []
    for item in node.value:
        fields = {str(k.value): (k, v) for k, v in item.value}
        dialect = str(fields["dialect"][1].value).lower() if "dialect" in fields else ""
        if dialect not in after or before.get(dialect) == after[dialect]:
            continue
        key, value = fields["sql"]
        edits.append(yamledit.Edit(key.end_mark.index, _content_end(value, text),
                                   ": " + _block_or_quoted(after[dialect], key.start_mark.column + 2)))
    return edits
