"""YAML loading with positions: a fast load (yaml-rs, YAML 1.2, duplicate keys
rejected), and PyYAML node positions for error messages (file:line:col of any
field path), composed only when a file has a problem."""

from __future__ import annotations

import re
from typing import Any

import yaml
import yaml_rs

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Path_ = tuple[str | int, ...]


class YamlSyntaxError(Exception):
    def __init__(self, line: int, column: int, message: str, field: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message
        self.field = field


def _syntax(err: yaml.YAMLError) -> YamlSyntaxError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = getattr(err, "problem", None) or str(err)
    return YamlSyntaxError(line, col, f"invalid YAML: {problem}")


def load(text: str) -> Any:
    try:
        return yaml_rs.loads(text, parse_datetime=False)
    except yaml_rs.YAMLDecodeError as err:
        raise _locate_failure(text, str(err)) from None


def _locate_failure(text: str, message: str) -> YamlSyntaxError:
    """Turn a fast-parser failure into a located error, using PyYAML's marks."""
    node = compose(text)  # raises a located YamlSyntaxError when PyYAML also rejects the text
    dups = duplicate_keys(node)
    if dups:
        path, line, col = dups[0]
        return YamlSyntaxError(line, col, "duplicate key", path_text(path))
    m = re.search(r"line (\d+), column (\d+)", message)
    line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
    detail = message.strip().splitlines()[-1].strip() if message.strip() else "cannot parse"
    return YamlSyntaxError(line, col, f"invalid YAML: {detail}")


def compose(text: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as err:
        raise _syntax(err) from None


def duplicate_keys(node: yaml.Node | None, path: Path_ = ()) -> list[tuple[Path_, int, int]]:
    """Keys that appear twice in one mapping: YAML allows it silently, we do not."""
    found: list[tuple[Path_, int, int]] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen:
                found.append((path + (name,), key.start_mark.line + 1, key.start_mark.column + 1))
            seen.add(name)
            found.extend(duplicate_keys(value, path + (name,)))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            found.extend(duplicate_keys(item, path + (i,)))
    return found


def locate(root: yaml.Node | None, path: Path_, key_of_last: bool = False) -> tuple[int, int]:
    """Line and column (1-based) of the deepest node along `path`.

    With key_of_last, point at the mapping key itself (for 'unknown key' errors)."""
    node = root
    best = (1, 1) if node is None else (node.start_mark.line + 1, node.start_mark.column + 1)
    for i, part in enumerate(path):
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if str(key.value) == str(part):
                    last = i == len(path) - 1
                    nxt = key if (key_of_last and last) else value
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            nxt = node.value[part]
        if nxt is None:
            break
        node = nxt
        best = (node.start_mark.line + 1, node.start_mark.column + 1)
    return best


def path_text(path: Path_) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out
