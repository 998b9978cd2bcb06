"""The one writer of view files: edits made in the text (never a re-dump), so a file keeps its
comments, key order, quoting and layout. `validate --write-columns` (verify.writeback) inserts
columns; `generate` puts a representation (new, or its SQL and marker refreshed).

Positions come from PyYAML's nodes (`yamlsrc.compose`); an edit replaces a span of characters
or inserts whole lines, and edits are applied from the end of the text so earlier offsets hold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import yaml

from reconciler.core.errors import UserError
from reconciler.source import yamlsrc

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_RESERVED = ("true", "false", "null", "yes", "no", "on", "off")


@dataclass(frozen=True)
class Edit:
    start: int  # character offsets into the text: [start, end) is replaced by `text`
    end: int
    text: str


def apply(text: str, edits: Sequence[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[:edit.start] + edit.text + text[edit.end:]
    return text


def line_start(text: str, line: int) -> int:
    """Offset of the first character of 0-based `line` (the text's end past its last line)."""
    at = 0
    for _ in range(line):
        nxt = text.find("\n", at)
        if nxt < 0:
            return len(text)
        at = nxt + 1
    return at


def insert_lines(text: str, line: int, block: Sequence[str]) -> Edit:
    """An edit inserting `block` before 0-based `line`."""
    at = line_start(text, line)
    body = "\n".join(block) + "\n"
    if at == len(text) and text and not text.endswith("\n"):
        body = "\n" + body.rstrip("\n")
    return Edit(at, at, body)


def scalar(value: str) -> str:
    """`value` as a plain scalar when that reads back as the same string, else double-quoted
    (JSON's escapes are YAML's, so a line break or control character survives)."""
    plain = _PLAIN.match(value) and value.lower() not in _RESERVED
    return value if plain else json.dumps(value, ensure_ascii=False)


def flow_map(pairs: Mapping[str, str | None]) -> str:
    """`{k: v, ...}` on one line, the None values left out."""
    return "{" + ", ".join(f"{scalar(k)}: {scalar(v)}" for k, v in pairs.items() if v is not None) + "}"


def literal(value: str, indent: int) -> list[str] | None:
    """`value` exactly, as a literal block scalar: the `|` header, then its lines at `indent`
    spaces. None when a block cannot hold it (a leading space, a control character)."""
    if value[:1].isspace() or any(not c.isprintable() and c != "\t" for c in value.replace("\n", "")):
        return None
    return ["|"] + [" " * indent + line if line else "" for line in value.split("\n")]


def block_scalar(value: str, indent: int) -> list[str]:
    """`value` tidied (outer blank space and trailing spaces dropped) as a literal block scalar."""
    tidy = "\n".join(line.rstrip() for line in value.strip().split("\n"))
    return literal(tidy, indent) or [scalar(tidy)]


def views_node(root: yaml.Node | None, file: str) -> yaml.SequenceNode:
    views = yamlsrc.node_at(root, ("views",))
    if not isinstance(views, yaml.SequenceNode):
        raise UserError(f"{file}: no views list to write into")
    return views


def block_mapping(node: yaml.Node | None, file: str, what: str) -> yaml.MappingNode:
    """`node` when it is a block mapping, else a located error (text cannot be added to a flow one)."""
    if not isinstance(node, yaml.MappingNode) or node.flow_style:
        line = node.start_mark.line + 1 if node is not None else 1
        raise UserError(f"{file}:{line}: {what}: cannot write into a flow mapping; write it as a block mapping")
    return node


def key_of(mapping: yaml.MappingNode, name: str) -> tuple[yaml.Node, yaml.Node] | None:
    return next(((k, v) for k, v in mapping.value if str(k.value) == name), None)


def replace_scalar(text: str, key: yaml.Node, value: yaml.Node, new: str, block: bool) -> Edit:
    """An edit replacing the scalar `value` (of mapping key `key`) with `new`: a literal block
    scalar when `block`, else a plain or quoted one. Blank lines after a block scalar and a
    comment after the value stay."""
    if not isinstance(value, yaml.ScalarNode):
        raise UserError(f"line {value.start_mark.line + 1}: expected a text value")
    start, end = value.start_mark.index, value.end_mark.index
    if not block:
        return Edit(start, end, scalar(new))
    body = block_scalar(new, key.start_mark.column + 2)
    if value.style in ("|", ">"):
        header_end = text.find("\n", start)
        header = text[start:header_end if header_end >= 0 else end]
        comment = header[header.find("#"):] if "#" in header else ""
        region = text[start:end]
        tail = region[len(region.rstrip(" \n")):]  # the blank lines the scalar swallowed
        first = body[0] + (" " + comment if comment else "")
        return Edit(start, end, "\n".join([first, *body[1:]]) + "\n" + tail[1:].replace(" ", ""))
    eol = text.find("\n", end)
    eol = len(text) if eol < 0 else eol
    comment = text[end:eol].strip()
    first = body[0] + (" " + comment if comment.startswith("#") else "")
    return Edit(start, eol, "\n".join([first, *body[1:]]))


def mapping_lines(items: Mapping[str, str], indent: int) -> list[str]:
    pad = " " * indent
    return [f"{pad}{k}: {scalar(v)}" for k, v in items.items()]


def put_representation(text: str, view_index: int, dialect: str, sql: str, marker: Mapping[str, str],
                       file: str = "") -> str:
    """`text` with views[view_index]'s representation of `dialect` set to `sql` and its
    `generated:` marker: appended after the last representation when the view has none of that
    dialect, else its SQL and marker values replaced in place."""
    views = views_node(yamlsrc.compose(text), file)
    view = block_mapping(views.value[view_index], file, f"views[{view_index}]")
    found = key_of(view, "representations")
    reps = found[1] if found else None
    if not isinstance(reps, yaml.SequenceNode) or reps.flow_style or not reps.value:
        line = reps.start_mark.line + 1 if reps is not None else view.start_mark.line + 1
        raise UserError(f"{file}:{line}: views[{view_index}].representations: cannot write into a flow "
                        "sequence; write it as a block sequence")
    items = [block_mapping(item, file, f"views[{view_index}].representations[{j}]")
             for j, item in enumerate(reps.value)]
    existing = next((item for item in items if str((key_of(item, "dialect") or (None, item))[1].value) == dialect),
                    None)
    if existing is None:
        return apply(text, [_append_item(text, items[-1], dialect, sql, marker)])
    return apply(text, _refresh_item(text, existing, sql, marker))


def _append_item(text: str, last: yaml.MappingNode, dialect: str, sql: str, marker: Mapping[str, str]) -> Edit:
    lines = text.split("\n")
    key_col = last.start_mark.column
    dash_col = lines[last.start_mark.line].rfind("-", 0, key_col)
    dash = " " * max(dash_col, 0) + "-" + " " * (key_col - max(dash_col, 0) - 1)
    pad = " " * key_col
    end = last.end_mark
    after = end.line if end.column == 0 or not lines[end.line][:end.column].strip() else end.line + 1
    while after > last.start_mark.line + 1 and _outside(lines[after - 1], key_col):
        after -= 1  # blank lines and comments about what follows stay after the new item
    body = block_scalar(sql, key_col + 2)
    block = [f"{dash}dialect: {scalar(dialect)}", f"{pad}generated:", *mapping_lines(marker, key_col + 2),
             f"{pad}sql: {body[0]}", *body[1:]]
    return insert_lines(text, after, block)


def _outside(line: str, key_col: int) -> bool:
    """A blank line, or a comment indented less than the item's keys (not the item's content)."""
    stripped = line.strip()
    return not stripped or (stripped.startswith("#") and len(line) - len(line.lstrip(" ")) < key_col)


def _refresh_item(text: str, item: yaml.MappingNode, sql: str, marker: Mapping[str, str]) -> list[Edit]:
    sql_key = key_of(item, "sql")
    mark = key_of(item, "generated")
    if sql_key is None or mark is None or not isinstance(mark[1], yaml.MappingNode):
        raise UserError(f"line {item.start_mark.line + 1}: this representation has no `generated:` marker "
                        "to refresh")
    edits = [replace_scalar(text, *sql_key, sql, block=True)]
    for name, value in marker.items():
        entry = key_of(mark[1], name)
        if entry is None:
            raise UserError(f"line {mark[1].start_mark.line + 1}: the `generated:` marker has no {name!r}")
        edits.append(replace_scalar(text, *entry, value, block=False))
    return edits
