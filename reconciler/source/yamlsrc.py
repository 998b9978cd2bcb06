"""YAML loading with positions: a fast load (yaml-rs, YAML 1.2, duplicate keys
rejected), and PyYAML node positions for error messages (file:line:col of any
field path), composed only when a file has a problem.

Hostile input is bounded before any parser sees it: size, control characters,
nesting depth, alias expansion and the number of documents. Both parsers
recurse (one segfaults on deep nesting), so every check here is iterative."""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
import yaml_rs

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Path_ = tuple[str | int, ...]

MAX_BYTES = 8 * 1024 * 1024  # a view file is a few KB; this is a typo or an attack
MAX_DEPTH = 32  # a view file nests 6 levels
MAX_ALIAS_NODES = 10_000  # nodes that aliases may add (a 400-byte alias bomb adds 10^9)
BOM = "\ufeff"
# Raw C0/C1 controls (tab, LF and CR are YAML whitespace) and non-characters. A NUL
# silently ends the fast parser's input. NEL, LS and PS are line breaks in YAML 1.1
# (PyYAML, which locates errors) and ordinary characters in YAML 1.2 (yaml-rs): the
# two parsers would read different documents, so they must be escaped in quotes.
_BAD_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]")
# Block nesting needs >= 1 column per 2 levels, so lines indented less than this nest
# < 520 levels, which yaml-rs survives (30,000 crash it); deeper ones get the event scan.
_DEEP_INDENT = re.compile(r"^[ \t?:-]{256}", re.M)
_DOC_MARK = re.compile(r"^(?:---|\.\.\.)(?:[ \t\r\n]|$)", re.M)
# Flow brackets outside quoted scalars and comments. Every parser has a flow-depth limit of
# its own (libyaml since PyYAML 6.0.4: 1,000, raised while scanning ahead, before any event;
# yaml-rs: about 256), so flow depth is counted here, before any parser sees the text.
# A quote opens a scalar only where a token starts (not the apostrophe in "it's").
_FLOW_TOKEN = re.compile(r"""[\[\]{}]|(?<![^\s\[{,:?-])(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')"""
                         r"""|(?:^|(?<=[ \t]))#[^\n]*""", re.M)
MAX_MESSAGE = 240
_TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels"


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """One error line never echoes a whole hostile input back."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class YamlSyntaxError(Exception):
    def __init__(self, line: int, column: int, message: str, field: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = clip(message)
        self.field = field

    @property
    def position(self) -> tuple[int, int]:
        return self.line, self.column


def _syntax(err: yaml.YAMLError) -> YamlSyntaxError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = getattr(err, "problem", None) or str(err)
    return YamlSyntaxError(line, col, f"invalid YAML: {problem}")


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def decode(data: bytes) -> str:
    """UTF-8 text of a file; anything else is a located error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        good = data[: err.start].decode("utf-8", errors="replace")
        line, col = _position(good, len(good))
        raise YamlSyntaxError(line, col, f"not UTF-8 text (byte 0x{data[err.start]:02x}); save the file "
                              "as UTF-8") from None
    return text  # load() and compose() drop a leading BOM


def _precheck(text: str) -> None:
    if len(text) > MAX_BYTES:
        raise YamlSyntaxError(1, 1, f"file too large ({len(text)} characters, at most {MAX_BYTES})")
    bad = _BAD_CHAR.search(text)
    if bad is not None:
        raise YamlSyntaxError(*_position(text, bad.start()),
                              f"control character U+{ord(bad.group()):04X} in the file (write it as an escape "
                              "in a double-quoted string)")
    _check_flow_depth(text)
    if "&" in text or _DEEP_INDENT.search(text) or _DOC_MARK.search(text):
        scan(text)


def _check_flow_depth(text: str) -> None:
    """The one depth rule for flow style, whatever the parser build: the bracket that
    opens level MAX_DEPTH + 1 is a located error. Only files with many brackets are walked;
    brackets inside block scalars also count here, so the parser's events confirm."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for token in _FLOW_TOKEN.finditer(text):
        char = token.group()
        if char in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                try:
                    scan(text)
                except YamlSyntaxError as err:
                    if err.message == _TOO_DEEP:
                        raise YamlSyntaxError(*_position(text, token.start()), _TOO_DEEP) from None
                    raise
                return
        elif char in ("]", "}"):
            depth = max(0, depth - 1)


def scan(text: str) -> None:
    """Walk the parser's events (libyaml is iterative): depth, alias expansion and
    document count stay within bounds, else a located error."""
    depth = 0
    docs = 0
    open_: list[list[Any]] = [[0, None]]  # per open collection: expanded node count, its anchor
    anchors: dict[str, int] = {}
    replayed = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            mark = event.start_mark
            where = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            if isinstance(event, yaml.DocumentStartEvent):
                docs += 1
                if docs > 1:
                    raise YamlSyntaxError(*where, "more than one YAML document in the file (remove the '---')")
            elif isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise YamlSyntaxError(*where, _TOO_DEEP)
                open_.append([1, event.anchor])
                if event.anchor:
                    anchors[event.anchor] = -1  # an alias inside its own anchor is recursive
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                size, anchor = open_.pop()
                open_[-1][0] += size
                if anchor:
                    anchors[anchor] = size
            elif isinstance(event, yaml.ScalarEvent):
                open_[-1][0] += 1
                if event.anchor:
                    anchors[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                size = anchors.get(event.anchor or "", 1)
                if size < 0:
                    raise YamlSyntaxError(*where, "recursive alias")
                replayed += size
                if replayed > MAX_ALIAS_NODES:
                    raise YamlSyntaxError(*where, f"aliases expand to more than {MAX_ALIAS_NODES} nodes")
                open_[-1][0] += size
    except yaml.YAMLError as err:
        if "nesting depth" in str(getattr(err, "problem", "")):
            # libyaml's own limit (far above ours) met where the bracket count above was
            # fooled by quote-like characters: still our rule and our message
            raise YamlSyntaxError(*_syntax(err).position, _TOO_DEEP) from None
        raise _syntax(err) from None


def load(text: str) -> Any:
    text = text[1:] if text.startswith(BOM) else text
    _precheck(text)
    try:
        data = yaml_rs.loads(text, parse_datetime=False)
    except yaml_rs.YAMLDecodeError as err:
        raise _locate_failure(text, str(err)) from None
    problem = check_data(data)
    if problem is not None:
        path, message = problem
        line, col = locate(compose(text), path)
        raise YamlSyntaxError(line, col, message, path_text(path))
    return data


def check_data(data: Any) -> tuple[Path_, str] | None:
    """Only string keys, finite numbers and bounded depth: what JSON Schema and
    pydantic can take without ambiguity. Iterative; paths built only on failure."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return _find(data)
        if isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(key, str):
                    return _find(data)
                stack.append((value, depth + 1))
        elif isinstance(node, list):
            stack.extend((item, depth + 1) for item in node)
        elif isinstance(node, float) and not math.isfinite(node):
            return _find(data)
    return None


def _find(data: Any) -> tuple[Path_, str]:
    stack: list[tuple[Any, Path_]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_DEPTH:
            return path[:MAX_DEPTH], _TOO_DEEP
        if isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(key, str):
                    return path, f"keys must be strings (found {clip(repr(key), 60)})"
                stack.append((value, (*path, key)))
        elif isinstance(node, list):
            stack.extend((item, (*path, i)) for i, item in enumerate(node))
        elif isinstance(node, float) and not math.isfinite(node):
            return path, f"{node} is not a number viewsync accepts"
    return (), "invalid value"


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
    text = text[1:] if text.startswith(BOM) else text
    scan(text)  # the composer recurses: bound the depth first
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as err:
        raise _syntax(err) from None


def duplicate_keys(root: yaml.Node | None) -> list[tuple[Path_, int, int]]:
    """Keys that appear twice in one mapping: YAML allows it silently, we do not.
    Each node is visited once (an alias is the same node: not walked again)."""
    found: list[tuple[Path_, int, int]] = []
    seen_nodes: set[int] = set()
    stack: list[tuple[yaml.Node | None, Path_]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = str(key.value)
                if name in seen:
                    found.append(((*path, name), key.start_mark.line + 1, key.start_mark.column + 1))
                seen.add(name)
                stack.append((value, (*path, name)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path, i)) for i, item in enumerate(node.value))
    return sorted(found, key=lambda f: (f[1], f[2]))


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


class Marks:
    """Positions of a loaded file's nodes down to `depth` levels, from libyaml's events: a test's
    `name` is at depth 5 (views[i].tests[j].name). Composing the whole file instead builds and
    resolves a node per fixture cell (seconds for big fixture files; view tests locate every
    test while the engine runs). Deeper paths, and files with aliases near the top, are
    composed as before. The text must have loaded (`load`): its depth is bounded."""

    def __init__(self, text: str, depth: int = 5) -> None:
        self.text = text[1:] if text.startswith(BOM) else text
        self.depth = depth
        self.at: dict[Path_, tuple[int, int]] = {}
        self._node: yaml.Node | None = None
        self.shallow = self._walk()

    def _walk(self) -> bool:  # noqa: C901 - one branch per event kind
        # per open collection: [its path, is a mapping, the key awaiting its value (None: a key
        # comes next), next index]; `below` counts collections open beyond `depth`
        open_: list[list[Any]] = []
        below = 0
        for event in yaml.parse(self.text, Loader=_Loader):
            if below:
                if isinstance(event, yaml.CollectionStartEvent):
                    below += 1
                elif isinstance(event, yaml.CollectionEndEvent):
                    below -= 1
                if below:
                    continue
                if isinstance(event, yaml.CollectionEndEvent):
                    continue  # the deep collection closed; its parent goes on
            if isinstance(event, yaml.CollectionEndEvent):
                open_.pop()
                continue
            if not isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent, yaml.AliasEvent)):
                continue
            if open_:
                top = open_[-1]
                if top[1] and top[2] is None:  # a mapping's key
                    if not isinstance(event, yaml.ScalarEvent):
                        return False  # a complex key: compose
                    top[2] = event.value
                    continue
                if top[1]:
                    path, top[2] = (*top[0], top[2]), None
                else:
                    path, top[3] = (*top[0], top[3]), top[3] + 1
            else:
                path = ()
            if isinstance(event, yaml.AliasEvent):
                return False  # its nodes are elsewhere: compose
            mark = event.start_mark
            self.at.setdefault(path, (mark.line + 1, mark.column + 1) if mark is not None else (1, 1))
            if isinstance(event, yaml.CollectionStartEvent):
                if len(path) >= self.depth:
                    below = 1
                else:
                    open_.append([path, isinstance(event, yaml.MappingStartEvent), None, 0])
        return True

    def locate(self, path: Path_) -> tuple[int, int]:
        """As `locate(compose(text), path)`."""
        if not self.shallow:
            return locate(self.node(), path)
        best = self.at.get((), (1, 1))
        here: Path_ = ()
        for part in path:
            if len(here) >= self.depth:
                return locate(self.node(), path)  # deeper than the index: compose
            nxt: Path_ = (*here, str(part))
            if nxt not in self.at and isinstance(part, int):
                nxt = (*here, part)
            if nxt not in self.at:
                break
            here, best = nxt, self.at[nxt]
        return best

    def node(self) -> yaml.Node | None:
        if self._node is None:
            self._node = compose(self.text)
        return self._node


def path_text(path: Path_) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + clip(str(part), 80)
    return out


def node_at(root: yaml.Node | None, path: Path_) -> yaml.Node | None:
    """The node at `path` exactly, or None when the path does not reach one."""
    node = root
    for part in path:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if str(k.value) == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None
    return node


def scalar_position(scalar: Any, text: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) in the file of character `offset` of the trimmed scalar value."""
    value: str = scalar.value
    raw = len(value) - len(value.lstrip()) + offset
    raw = max(0, min(raw, len(value)))
    row = value.count("\n", 0, raw)
    col = raw - (value.rfind("\n", 0, raw) + 1)
    start = scalar.start_mark
    lines = text.split("\n")
    style = scalar.style
    if style == "|":
        first = start.line + 1  # content starts on the line after the indicator
        target = first + row
        indent = _indent(lines, first, scalar.end_mark.line)
        return target + 1, indent + col + 1
    if "\n" not in value and start.line == scalar.end_mark.line:
        quote = 1 if style in ("'", '"') else 0
        return start.line + 1, start.column + quote + col + 1
    # Folded or multi-line flow scalars: find the line holding this text.
    wanted = value.split("\n")[row] if row < len(value.split("\n")) else ""
    for i in range(start.line, min(scalar.end_mark.line + 1, len(lines))):
        at = lines[i].find(wanted.strip()) if wanted.strip() else -1
        if at >= 0:
            lead = len(wanted) - len(wanted.lstrip())
            return i + 1, at + max(0, col - lead) + 1
    return start.line + 1, start.column + 1


def _indent(lines: list[str], first: int, last: int) -> int:
    for i in range(first, min(last + 1, len(lines))):
        if lines[i].strip():
            return len(lines[i]) - len(lines[i].lstrip(" "))
    return 0
