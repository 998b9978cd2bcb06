"""One canonical column-type grammar, with a renderer and a parser per target.

Canonical grammar (lowercase): boolean, tinyint, smallint, int, bigint, float,
double, decimal(p,s), string, varchar(n), char(n), binary, date, timestamp[(p)],
timestamp_ltz[(p)], time[(p)], json, uuid, array<T>, map<K,V>, struct<name:T,...>.
Timestamps and times carry a fractional-second precision 0..12; 6 (microseconds,
what Spark, Hive and Iceberg hold) is the plain spelling, so `timestamp(6)` is
`timestamp`. json, uuid and time(p) exist so a Trino view keeps its types when
rewritten (Trino refuses to read a view whose stored types no longer match).

Targets: iceberg (type JSON as in an Iceberg schema), hive (type strings),
trino (type signatures), spark (schema JSON), flink (serializable strings).
A target that cannot hold a type exactly widens it (Iceberg has no tinyint);
`coerce(t, target)` says what a target keeps, so a plan compares like with like.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from reconciler.core.sql import spark_name

PRIMITIVES = (
    "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
    "binary", "date", "timestamp", "timestamp_ltz", "time", "json", "uuid",
)
PARAMETRIC = ("decimal", "varchar", "char")
TIMED = ("timestamp", "timestamp_ltz", "time")  # optional precision
MAX_PRECISION = 12  # Trino's limit for timestamp(p) and time(p)
PLAIN_PRECISION = 6
TARGETS = ("iceberg", "hive", "trino", "spark", "flink")


class ColumnTypeError(ValueError):
    """A type string that does not parse."""


@dataclass(frozen=True)
class Prim:
    name: str
    params: tuple[int, ...] = ()


class _Node:
    """== and hash for the composites without recursion (the dataclass ones recurse, and
    a type may nest MAX_DEPTH levels)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return _same(self, other)

    def __hash__(self) -> int:
        return fold(cast(Type, self), hash, _hash_node)


@dataclass(frozen=True, eq=False)
class Array(_Node):
    element: Type


@dataclass(frozen=True, eq=False)
class Map(_Node):
    key: Type
    value: Type


@dataclass(frozen=True)
class Field:
    name: str
    type: Type


@dataclass(frozen=True, eq=False)
class Struct(_Node):
    fields: tuple[Field, ...]


Type = Prim | Array | Map | Struct


# --------------------------------------------------------------------- tokens
# Every position after the whitespace matches (the last alternative takes any character),
# so findall reads the whole text; only the token itself is captured.
_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_]*|\d+|.)")
_NAME = re.compile(r"^[A-Za-z_0-9]+$")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.strip())


MAX_DEPTH = 10_000  # no engine nests this deep; past it a type is refused with a clear message
# (nothing here recurses, so the bound is about size, not the Python stack)


def _too_deep(text: str) -> ColumnTypeError:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return ColumnTypeError(f"invalid type {shown!r}: nested deeper than {MAX_DEPTH} levels")


_CLOSERS = (")", ">")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, ahead: int = 0) -> str:
        j = self.i + ahead
        return self.toks[j] if j < len(self.toks) else ""

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if expected is not None and tok.lower() != expected.lower():
            if not tok and expected in _CLOSERS:  # `decimal(18,2`, `array<int`: say what is missing
                raise ColumnTypeError(f"invalid type {self.text!r}: missing {expected!r} at the end")
            raise ColumnTypeError(f"invalid type {self.text!r}: expected {expected!r} at {tok or 'end'!r}")
        if not tok:
            raise ColumnTypeError(f"invalid type {self.text!r}: unexpected end")
        self.i += 1
        return tok

    def accept(self, tok: str) -> bool:
        if self.peek().lower() == tok.lower():
            self.i += 1
            return True
        return False

    def ident(self) -> str:
        tok = self.take()
        if tok[0] == "`":
            return tok[1:-1].replace("``", "`")
        if tok[0] == '"':
            return tok[1:-1].replace('""', '"')
        if not _NAME.match(tok):
            raise ColumnTypeError(f"invalid type {self.text!r}: expected a name at {tok!r}")
        return tok

    def int_params(self) -> tuple[int, ...]:
        params: list[int] = []
        if self.accept("("):
            while True:
                tok = self.take()
                if not tok.isdigit():
                    raise ColumnTypeError(f"invalid type {self.text!r}: expected a number at {tok!r}")
                params.append(int(tok))
                if self.accept(")"):
                    break
                if not self.peek():
                    self.take(")")  # says the ')' is missing
                if self.peek() != ",":
                    raise ColumnTypeError(f"invalid type {self.text!r}: expected ',' or ')' at {self.peek()!r}")
                self.take(",")
        return tuple(params)

    def done(self) -> None:
        if self.i != len(self.toks):
            raise ColumnTypeError(f"invalid type {self.text!r}: unexpected {self.peek()!r}")


class _Open:
    """An array, map or struct whose opening token was read: the parsers' explicit stack
    holds these instead of Python frames. The dialects differ only in the closing token,
    the name/type separator of a field (':' or none) and Flink's field descriptions."""

    __slots__ = ("kind", "close", "colon", "descriptions", "names", "kids")

    def __init__(self, kind: str, close: str, colon: bool = False, descriptions: bool = False) -> None:
        self.kind = kind
        self.close = close
        self.colon = colon
        self.descriptions = descriptions
        self.names: list[str] = []
        self.kids: list[Type] = []

    def more(self, r: _Reader) -> bool:
        """Read up to the next child (True) or through the closing token (False)."""
        n = len(self.kids)
        if self.kind == "array":
            if n == 0:
                return True
            r.take(self.close)
            return False
        if self.kind == "map":
            if n == 0:
                return True
            if n == 1:
                r.take(",")
                return True
            r.take(self.close)
            return False
        if n and self.descriptions and r.peek().startswith("'"):
            r.take()  # Flink field description
        if r.accept(self.close):
            return False
        if n and not r.peek():
            r.take(self.close)  # says the closing token is missing
        if n:
            r.take(",")
        self.names.append(r.ident())
        if self.colon:
            r.take(":")
        return True

    def build(self, text: str) -> Type:
        if self.kind == "array":
            return Array(self.kids[0])
        if self.kind == "map":
            return Map(self.kids[0], self.kids[1])
        if not self.kids and self.colon:
            raise ColumnTypeError(f"invalid type {text!r}: struct needs at least one field")
        return Struct(tuple(Field(n, k) for n, k in zip(self.names, self.kids, strict=True)))


def _shift_reduce(text: str, head: Callable[[_Reader], Type | _Open],
                  tail: Callable[[_Reader, Type], Type] | None = None) -> Type:
    """Parse a whole type string: `head` reads a primitive (done) or the opening of a
    composite (shifted onto the stack); a finished type goes to the innermost open composite,
    which is reduced once its closing token is read. `tail` reads what may follow any type."""
    r = _Reader(text)
    stack: list[_Open] = []
    while True:
        item: Type | _Open = head(r)
        while True:
            if isinstance(item, _Open):
                if item.more(r):
                    if len(stack) >= MAX_DEPTH:
                        raise _too_deep(text)
                    stack.append(item)
                    break  # read its first child
                item = item.build(text)  # an empty struct/row
                continue
            if tail is not None:
                item = tail(r, item)
            if not stack:
                r.done()
                return item
            top = stack[-1]
            top.kids.append(item)
            if top.more(r):
                break
            item = stack.pop().build(text)


def _check_params(name: str, params: tuple[int, ...], text: str) -> Prim:
    if name == "decimal":
        if len(params) == 0:
            params = (10, 0)
        if len(params) != 2 or not (1 <= params[0] <= 38) or not (0 <= params[1] <= params[0]):
            raise ColumnTypeError(f"invalid type {text!r}: decimal(p,s) needs 1 <= p <= 38 and 0 <= s <= p")
    elif name in ("varchar", "char"):
        if len(params) != 1 or params[0] < 1:
            raise ColumnTypeError(f"invalid type {text!r}: {name}(n) needs a positive length")
    elif name in TIMED:
        if len(params) > 1 or (params and params[0] > MAX_PRECISION):
            raise ColumnTypeError(f"invalid type {text!r}: {name}(p) needs 0 <= p <= {MAX_PRECISION}")
        if params == (PLAIN_PRECISION,):
            params = ()
    elif params:
        raise ColumnTypeError(f"invalid type {text!r}: {name} takes no parameters")
    return Prim(name, params)


def precision(t: Prim) -> int:
    """Fractional-second precision of a timestamp/time type."""
    return t.params[0] if t.params else PLAIN_PRECISION


# ------------------------------------------------------------------ canonical
_CANON_ALIASES = {
    "integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint",
    "real": "float", "bool": "boolean", "text": "string", "timestamptz": "timestamp_ltz",
    "timestamp_ntz": "timestamp", "bytes": "binary", "numeric": "decimal",
}


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Type:
    """Parse the canonical grammar (a few common aliases accepted). Cached: a warehouse
    repeats a handful of types over thousands of columns, and types are immutable."""
    return _shift_reduce(text, _head_canonical)


def _head_canonical(r: _Reader) -> Type | _Open:
    word = r.ident().lower()
    word = _CANON_ALIASES.get(word, word)
    if word in ("array", "map", "struct"):
        r.take("<")
        return _Open(word, ">", colon=True)
    if word in PRIMITIVES or word in PARAMETRIC:
        return _check_params(word, r.int_params(), r.text)
    raise ColumnTypeError(f"unknown type {r.text!r}{_suggestion(word)}")


def _suggestion(word: str) -> str:
    """`: did you mean 'bigint'?` for a near miss of a type name (`bigitn`), else nothing."""
    import difflib

    names = sorted({*PRIMITIVES, *PARAMETRIC, *_CANON_ALIASES, "array", "map", "struct"})
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.7)
    return f": did you mean {_CANON_ALIASES.get(close[0], close[0])!r}?" if close else ""


# ----------------------------------------------------------------- tree walks
R = TypeVar("R")
Composite = Array | Map | Struct


_REDUCE = object()  # stack marker: the innermost pending composite's children are done


def fold(t: Type, leaf: Callable[[Prim], R], node: Callable[[Composite, list[R]], R],
         enter: Callable[[], None] | None = None) -> R:
    """Post-order fold without recursion: `leaf` on each primitive, `node` on each composite
    with its children's results (element; key, value; one per field). `enter`, when given,
    is called on descending into each child, in pre-order (how Iceberg numbers fields)."""
    if isinstance(t, Prim):
        return leaf(t)
    out: list[R] = []
    pending: list[Composite] = []  # composites whose children are being folded...
    starts: list[int] = []  # ...and where their children's results begin in `out`
    stack: list[Any] = [t]
    while stack:
        cur = stack.pop()
        if cur is _REDUCE:
            start = starts.pop()
            kids = out[start:]
            del out[start:]
            out.append(node(pending.pop(), kids))
            continue
        if enter is not None and pending:  # every node but the root has its parent pending
            enter()
        cls = type(cur)
        if cls is Prim:
            out.append(leaf(cur))
            continue
        pending.append(cur)
        starts.append(len(out))
        stack.append(_REDUCE)
        if cls is Array:
            stack.append(cur.element)
        elif cls is Map:
            stack.append(cur.value)
            stack.append(cur.key)
        else:
            stack.extend([f.type for f in reversed(cur.fields)])
    return out[0]


def depth(t: Type) -> int:
    """How many composites nest in `t` (0 for a primitive), without recursion."""
    return fold(t, lambda _p: 0, lambda _n, kids: 1 + max(kids, default=0))


def _same(a: object, b: object) -> bool:
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if x is y:
            continue
        if isinstance(x, Array) and isinstance(y, Array):
            pairs.append((x.element, y.element))
        elif isinstance(x, Map) and isinstance(y, Map):
            pairs += [(x.key, y.key), (x.value, y.value)]
        elif isinstance(x, Struct) and isinstance(y, Struct):
            if [f.name for f in x.fields] != [f.name for f in y.fields]:
                return False
            pairs += [(f.type, g.type) for f, g in zip(x.fields, y.fields, strict=True)]
        elif x != y:  # primitives (by value) or two different kinds
            return False
    return True


def _hash_node(t: Composite, kids: list[int]) -> int:
    names = tuple(f.name for f in t.fields) if isinstance(t, Struct) else ()
    return hash((type(t).__name__, names, *kids))


def _render_prim(t: Prim) -> str:
    return t.name + (f"({','.join(map(str, t.params))})" if t.params else "")


def _angle_node(t: Composite, kids: list[str]) -> str:
    """array<..>, map<..,..>, struct<name:..,..> (the canonical and Hive spellings)."""
    if isinstance(t, Array):
        return f"array<{kids[0]}>"
    if isinstance(t, Map):
        return f"map<{kids[0]},{kids[1]}>"
    return "struct<" + ",".join(f"{spark_name(f.name)}:{k}" for f, k in zip(t.fields, kids, strict=True)) + ">"


def render(t: Type) -> str:
    return fold(t, _render_prim, _angle_node)


@functools.lru_cache(maxsize=4096)  # bounded: a long-lived process sees unboundedly many type strings
def canonical(text: str) -> str:
    """Canonical spelling of a type string; raises ColumnTypeError when invalid."""
    return render(parse(text))


def _rebuild(t: Composite, kids: list[Type]) -> Type:
    if isinstance(t, Array):
        return Array(kids[0])
    if isinstance(t, Map):
        return Map(kids[0], kids[1])
    return Struct(tuple(Field(f.name, k) for f, k in zip(t.fields, kids, strict=True)))


def map_prims(t: Type, fn: Callable[[Prim], Type]) -> Type:
    """`t` with every primitive replaced by `fn(primitive)`."""
    return fold(t, fn, _rebuild)


_WIDEN = {
    "iceberg": {"tinyint": "int", "smallint": "int", "varchar": "string", "char": "string", "json": "string"},
    "hive": {"timestamp_ltz": "timestamp", "json": "string", "uuid": "string", "time": "string"},
    "trino": {},
    "spark": {"json": "string", "uuid": "string", "time": "string"},
    "flink": {"json": "string", "uuid": "string"},
}
# Targets whose timestamps/times are microseconds only: another precision widens to the plain type.
_PLAIN_TIME_ONLY = frozenset({"iceberg", "hive", "spark"})


def coerce(t: Type, target: str) -> Type:
    """The type a target actually stores for `t` (identity where exact)."""
    widen = _WIDEN[target]
    plain_only = target in _PLAIN_TIME_ONLY

    def one(p: Prim) -> Prim:
        if p.name in widen:
            return Prim(widen[p.name])
        if plain_only and p.params and p.name in TIMED:
            return Prim(p.name)
        return p

    return map_prims(t, one)


def coerce_str(text: str, target: str) -> str:
    return render(coerce(parse(text), target))


def _from_json(j: Any, prim: Callable[[str], Type], split: Callable[[Any], tuple[str, list[str], list[Any]]],
               what: str) -> Type:
    """A type from a catalog's JSON tree, without recursion: `prim` reads a string,
    `split` an object as (kind, field names, child JSON values)."""
    if isinstance(j, str):
        return prim(j)
    out: list[Type] = []
    # (JSON value, depth) to read, or (kind, names, arity) to build from the last results
    stack: list[tuple[Any, int] | tuple[str, list[str], int]] = [(j, 1)]
    while stack:
        entry = stack.pop()
        if len(entry) == 3:
            kind, names, n = entry
            kids = out[len(out) - n:]
            del out[len(out) - n:]
            out.append(Array(kids[0]) if kind == "array" else Map(kids[0], kids[1]) if kind == "map"
                       else Struct(tuple(Field(nm, k) for nm, k in zip(names, kids, strict=True))))
            continue
        value, depth = entry
        if isinstance(value, str):
            out.append(prim(value))
            continue
        if depth > MAX_DEPTH:
            raise ColumnTypeError(f"invalid {what} type: nested deeper than {MAX_DEPTH} levels")
        kind, names, kids_json = split(value)
        stack.append((kind, names, len(kids_json)))
        stack.extend((k, depth + 1) for k in reversed(kids_json))
    return out[0]


# -------------------------------------------------------------------- iceberg
_ICE_OUT = {"boolean": "boolean", "int": "int", "bigint": "long", "float": "float", "double": "double",
            "string": "string", "binary": "binary", "date": "date", "timestamp": "timestamp",
            "timestamp_ltz": "timestamptz", "uuid": "uuid", "time": "time"}
_ICE_IN = {v: k for k, v in _ICE_OUT.items()}


def _iceberg_prim(t: Prim) -> str:
    if t.name == "decimal":
        return f"decimal({t.params[0]}, {t.params[1]})"
    return _ICE_OUT[t.name]


def to_iceberg(t: Type, ids: list[int] | None = None) -> Any:
    """Iceberg schema JSON for a type; `ids` is a counter for nested field ids."""
    t = coerce(t, "iceberg")
    if isinstance(t, Prim):
        return _iceberg_prim(t)
    counter = ids if ids is not None else [1000]
    # Each child slot takes the next id on the way down (pre-order, as before); the fold
    # builds bottom-up, so the ids wait on a stack, paired with each child's JSON.
    pending = [0]  # the root's slot has no id

    def enter() -> None:
        counter[0] += 1
        pending.append(counter[0])

    def leaf(p: Prim) -> tuple[int, Any]:
        return pending.pop(), _iceberg_prim(p)

    def node(c: Composite, kids: list[tuple[int, Any]]) -> tuple[int, Any]:
        j: dict[str, Any]
        if isinstance(c, Array):
            j = {"type": "list", "element-id": kids[0][0], "element": kids[0][1], "element-required": False}
        elif isinstance(c, Map):
            j = {"type": "map", "key-id": kids[0][0], "key": kids[0][1], "value-id": kids[1][0],
                 "value": kids[1][1], "value-required": False}
        else:
            j = {"type": "struct", "fields": [{"id": k[0], "name": f.name, "required": False, "type": k[1]}
                                              for f, k in zip(c.fields, kids, strict=True)]}
        return pending.pop(), j

    return fold(t, leaf, node, enter)[1]


def _iceberg_in(j: str) -> Type:
    s = j.strip().lower()
    m = re.match(r"^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$", s)
    if m:
        return Prim("decimal", (int(m.group(1)), int(m.group(2))))
    if s.startswith("fixed"):
        return Prim("binary")
    if s in _ICE_IN:
        return Prim(_ICE_IN[s])
    raise ColumnTypeError(f"unknown Iceberg type {j!r}")


def _iceberg_split(j: Any) -> tuple[str, list[str], list[Any]]:
    kind = j.get("type")
    if kind == "list":
        return "array", [], [j["element"]]
    if kind == "map":
        return "map", [], [j["key"], j["value"]]
    if kind == "struct":
        fields = j["fields"]
        return "struct", [f["name"] for f in fields], [f["type"] for f in fields]
    raise ColumnTypeError(f"unknown Iceberg type {j!r}")


def from_iceberg(j: Any) -> Type:
    return _from_json(j, _iceberg_in, _iceberg_split, "Iceberg")


# ----------------------------------------------------------------------- hive
def _hive_prim(t: Prim) -> str:
    if t.name == "decimal":
        return f"decimal({t.params[0]},{t.params[1]})"
    return t.name + (f"({t.params[0]})" if t.params else "")


def to_hive(t: Type) -> str:
    return fold(coerce(t, "hive"), _hive_prim, _angle_node)


@functools.lru_cache(maxsize=4096)
def hive_text(text: str) -> str:
    """`to_hive(parse(text))`, once per type string per process: a metastore write converts
    every column, and a warehouse repeats a handful of types over thousands of columns."""
    return to_hive(parse(text))


def from_hive(text: str) -> Type:
    return parse(text)


# ---------------------------------------------------------------------- trino
_TRINO_OUT = {"boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "int": "integer",
              "bigint": "bigint", "float": "real", "double": "double", "string": "varchar",
              "binary": "varbinary", "date": "date", "json": "json", "uuid": "uuid"}
# Trino's own defaults when a type signature has no precision (Trino always writes one).
_TRINO_DEFAULT_PRECISION = 3


def _trino_prim(t: Prim) -> str:
    if t.name in TIMED:
        base = "time" if t.name == "time" else "timestamp"
        zone = " with time zone" if t.name == "timestamp_ltz" else ""
        return f"{base}({precision(t)}){zone}"
    if t.name == "decimal":
        return f"decimal({t.params[0]},{t.params[1]})"
    if t.name in ("varchar", "char"):
        return f"{t.name}({t.params[0]})"
    return _TRINO_OUT[t.name]


def _trino_node(t: Composite, kids: list[str]) -> str:
    if isinstance(t, Array):
        return f"array({kids[0]})"
    if isinstance(t, Map):
        return f"map({kids[0]},{kids[1]})"
    return "row(" + ",".join(f'"{f.name.replace(chr(34), chr(34) * 2)}" {k}'
                             for f, k in zip(t.fields, kids, strict=True)) + ")"


def to_trino(t: Type) -> str:
    return fold(t, _trino_prim, _trino_node)


def from_trino(text: str) -> Type:
    return _shift_reduce(text, _head_trino)


_TRINO_SIMPLE = {"boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "integer": "int",
                 "int": "int", "bigint": "bigint", "real": "float", "double": "double", "date": "date",
                 "varbinary": "binary", "json": "json", "uuid": "uuid"}


def _head_trino(r: _Reader) -> Type | _Open:
    word = r.ident().lower()
    if word in ("array", "map", "row"):
        r.take("(")
        return _Open("struct" if word == "row" else word, ")")
    if word in ("timestamp", "time"):
        params = r.int_params() or (_TRINO_DEFAULT_PRECISION,)
        zoned = False
        if r.accept("with"):
            r.take("time")
            r.take("zone")
            zoned = True
        elif r.accept("without"):
            r.take("time")
            r.take("zone")
        if zoned and word == "time":
            # time with time zone has no canonical form: the view stays read-only
            raise ColumnTypeError(f"unsupported Trino type {r.text!r}")
        return _check_params("timestamp_ltz" if zoned else word, params, r.text)
    params = r.int_params()
    if word == "varchar":
        return Prim("string") if not params else _check_params("varchar", params, r.text)
    if word in ("char", "decimal"):
        return _check_params(word, params, r.text)
    if word in _TRINO_SIMPLE and not params:
        return Prim(_TRINO_SIMPLE[word])
    raise ColumnTypeError(f"unknown Trino type {r.text!r}")


# ---------------------------------------------------------------------- spark
_SPARK_OUT = {"boolean": "boolean", "tinyint": "byte", "smallint": "short", "int": "integer",
              "bigint": "long", "float": "float", "double": "double", "string": "string",
              "binary": "binary", "date": "date", "timestamp": "timestamp_ntz",
              "timestamp_ltz": "timestamp"}
_SPARK_IN = {v: k for k, v in _SPARK_OUT.items()}


def _spark_prim(t: Prim) -> str:
    c = coerce(t, "spark")
    assert isinstance(c, Prim)
    if c.params:
        return f"{c.name}({','.join(map(str, c.params))})"
    return _SPARK_OUT[c.name]


def _spark_node(t: Composite, kids: list[Any]) -> Any:
    if isinstance(t, Array):
        return {"type": "array", "elementType": kids[0], "containsNull": True}
    if isinstance(t, Map):
        return {"type": "map", "keyType": kids[0], "valueType": kids[1], "valueContainsNull": True}
    return {"type": "struct", "fields": [
        {"name": f.name, "type": k, "nullable": True, "metadata": {}} for f, k in zip(t.fields, kids, strict=True)]}


def to_spark(t: Type) -> Any:
    """Spark's DataType JSON (`jsonValue`): a string for atomics, an object otherwise."""
    return fold(t, _spark_prim, _spark_node)


def _spark_in(j: str) -> Type:
    s = j.strip().lower()
    m = re.match(r"^(decimal|varchar|char)\s*\(([\d\s,]+)\)$", s)
    if m:
        params = tuple(int(p) for p in m.group(2).split(","))
        return _check_params(m.group(1), params, j)
    if s == "decimal":
        return Prim("decimal", (10, 0))
    if s in _SPARK_IN:
        return Prim(_SPARK_IN[s])
    if s.startswith(("struct<", "array<", "map<")):
        return from_spark_ddl(s)
    raise ColumnTypeError(f"unknown Spark type {j!r}")


def _spark_split(j: Any) -> tuple[str, list[str], list[Any]]:
    kind = j.get("type")
    if kind == "array":
        return "array", [], [j["elementType"]]
    if kind == "map":
        return "map", [], [j["keyType"], j["valueType"]]
    if kind == "struct":
        fields = j["fields"]
        # Spark keeps CHAR/VARCHAR as string plus this metadata key (a catalog string).
        return "struct", [f["name"] for f in fields], [
            (f.get("metadata") or {}).get("__CHAR_VARCHAR_TYPE_STRING") or f["type"] for f in fields]
    raise ColumnTypeError(f"unknown Spark type {j!r}")


def from_spark(j: Any) -> Type:
    return _from_json(j, _spark_in, _spark_split, "Spark")


def to_spark_ddl(t: Type) -> str:
    """Spark's catalog string for a type (`DataType.catalogString`), as Spark stores nested
    char/varchar in `__CHAR_VARCHAR_TYPE_STRING`: its `timestamp` has a local time zone."""
    def one(p: Prim) -> Prim:
        c = coerce(p, "spark")
        assert isinstance(c, Prim)
        return {"timestamp": Prim("timestamp_ntz"), "timestamp_ltz": Prim("timestamp")}.get(c.name, c)

    return render(map_prims(t, one))


_SPARK_DDL_TIMESTAMP = re.compile(r"\btimestamp(_ntz|_ltz)?\b(?!\s*:)", re.IGNORECASE)


def from_spark_ddl(text: str) -> Type:
    """A Spark catalog type string (`struct<city:string,zip:varchar(10)>`, what Spark keeps in
    `__CHAR_VARCHAR_TYPE_STRING` for nested char/varchar). Spark's `timestamp` is the
    local-time-zone one; a name before ':' is a field name, not a type."""
    def canon(m: re.Match[str]) -> str:
        return "timestamp" if (m.group(1) or "").lower() == "_ntz" else "timestamp_ltz"

    return parse(_SPARK_DDL_TIMESTAMP.sub(canon, text))


# ---------------------------------------------------------------------- flink
_FLINK_OUT = {"boolean": "BOOLEAN", "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT",
              "bigint": "BIGINT", "float": "FLOAT", "double": "DOUBLE", "string": "VARCHAR(2147483647)",
              "binary": "VARBINARY(2147483647)", "date": "DATE", "timestamp": "TIMESTAMP(6)",
              "timestamp_ltz": "TIMESTAMP(6) WITH LOCAL TIME ZONE"}
_FLINK_MAX = 2147483647


def _flink_prim(t: Prim) -> str:
    c = coerce(t, "flink")
    assert isinstance(c, Prim)
    if c.name in TIMED:
        zone = " WITH LOCAL TIME ZONE" if c.name == "timestamp_ltz" else ""
        return f"{'TIME' if c.name == 'time' else 'TIMESTAMP'}({precision(c)}){zone}"
    if c.name == "decimal":
        return f"DECIMAL({c.params[0]}, {c.params[1]})"
    if c.name in ("varchar", "char"):
        return f"{c.name.upper()}({c.params[0]})"
    return _FLINK_OUT[c.name]


def _flink_node(t: Composite, kids: list[str]) -> str:
    if isinstance(t, Array):
        return f"ARRAY<{kids[0]}>"
    if isinstance(t, Map):
        return f"MAP<{kids[0]}, {kids[1]}>"
    return "ROW<" + ", ".join(f"`{f.name.replace('`', '``')}` {k}" for f, k in zip(t.fields, kids, strict=True)) + ">"


def to_flink(t: Type) -> str:
    return fold(t, _flink_prim, _flink_node)


def from_flink(text: str) -> Type:
    return _shift_reduce(text, _head_flink, _tail_flink)


_FLINK_SIMPLE = {"BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int",
                 "INTEGER": "int", "BIGINT": "bigint", "FLOAT": "float", "DOUBLE": "double",
                 "DATE": "date", "STRING": "string", "BYTES": "binary"}


def _head_flink(r: _Reader) -> Type | _Open:
    word = r.ident().upper()
    if word in ("ARRAY", "MAP"):
        r.take("<")
        return _Open(word.lower(), ">")
    if word == "ROW":
        closer = ">" if r.accept("<") else (r.take("(") and ")")
        return _Open("struct", closer, descriptions=True)
    if word in ("TIMESTAMP", "TIMESTAMP_LTZ", "TIME"):
        # Flink's defaults: TIMESTAMP = TIMESTAMP(6), TIME = TIME(0) (LogicalTypeParser)
        params = r.int_params() or ((0,) if word == "TIME" else (PLAIN_PRECISION,))
        ltz = word == "TIMESTAMP_LTZ"
        if r.accept("WITH"):
            local = r.accept("LOCAL")
            r.take("TIME")
            r.take("ZONE")
            if not local or word == "TIME":
                raise ColumnTypeError(f"unsupported Flink type {r.text!r}")
            ltz = True
        elif r.accept("WITHOUT"):
            r.take("TIME")
            r.take("ZONE")
        return _check_params("time" if word == "TIME" else "timestamp_ltz" if ltz else "timestamp", params, r.text)
    params = r.int_params()
    if word in ("VARCHAR", "CHAR") and params == (_FLINK_MAX,):
        return Prim("string")
    if word in ("VARBINARY", "BINARY"):
        return Prim("binary")
    if word in ("VARCHAR", "CHAR", "DECIMAL"):
        return _check_params(word.lower(), params, r.text)
    if word in _FLINK_SIMPLE and not params:
        return Prim(_FLINK_SIMPLE[word])
    raise ColumnTypeError(f"unknown Flink type {r.text!r}")


def _tail_flink(r: _Reader, t: Type) -> Type:
    if r.accept("NOT"):
        r.take("NULL")
    return t


# ------------------------------------------------------------------- dispatch
# Each target's reader: a type string (a JSON value for Iceberg and Spark) -> Type.
PARSERS: dict[str, Callable[[Any], Type]] = {
    "iceberg": from_iceberg, "hive": from_hive, "trino": from_trino, "spark": from_spark, "flink": from_flink,
}


def parse_from(value: Any, target: str) -> str:
    """Canonical type string for a target's representation."""
    if isinstance(value, str):  # catalog JSON (Iceberg's nested types) is a dict: not cached
        return _parse_text_from(value, target)
    return _parse_from(value, target)


@functools.lru_cache(maxsize=4096)
def _parse_text_from(value: str, target: str) -> str:
    return _parse_from(value, target)


def _parse_from(value: Any, target: str) -> str:
    return render(PARSERS[target](value))
