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

import re
from dataclasses import dataclass
from typing import Any

PRIMITIVES = (
    "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "string",
    "binary", "date", "timestamp", "timestamp_ltz", "time", "json", "uuid",
)
PARAMETRIC = ("decimal", "varchar", "char")
TIMED = ("timestamp", "timestamp_ltz", "time")  # optional precision
MAX_PRECISION = 12  # Trino's limit for timestamp(p) and time(p)
PLAIN_PRECISION = 6
TARGETS = ("iceberg", "hive", "trino", "spark", "flink")


class TypeError_(ValueError):
    """A type string that does not parse."""


@dataclass(frozen=True)
class Prim:
    name: str
    params: tuple[int, ...] = ()


@dataclass(frozen=True)
class Array:
    element: Type


@dataclass(frozen=True)
class Map:
    key: Type
    value: Type


@dataclass(frozen=True)
class Field:
    name: str
    type: Type


@dataclass(frozen=True)
class Struct:
    fields: tuple[Field, ...]


Type = Prim | Array | Map | Struct


# --------------------------------------------------------------------- tokens
_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)*`)|(\"(?:[^\"]|\"\")*\")|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(.))")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise TypeError_(f"cannot read type {text!r}")
        out.append(m.group(0).strip())
        pos = m.end()
    return [t for t in out if t]


MAX_DEPTH = 64  # engines stop far earlier; every parser and renderer here stays well inside the stack


def _check_depth(toks: list[str], text: str) -> None:
    """Bound nesting before any recursive descent: a type 1,200 levels deep is an
    error message, not a RecursionError."""
    depth = 0
    for tok in toks:
        if tok in ("<", "(", "["):
            depth += 1
            if depth > MAX_DEPTH:
                shown = text if len(text) <= 60 else text[:57] + "..."
                raise TypeError_(f"invalid type {shown!r}: nested deeper than {MAX_DEPTH} levels")
        elif tok in (">", ")", "]"):
            depth -= 1


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        _check_depth(self.toks, text)
        self.i = 0

    def peek(self, ahead: int = 0) -> str:
        j = self.i + ahead
        return self.toks[j] if j < len(self.toks) else ""

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if expected is not None and tok.lower() != expected.lower():
            raise TypeError_(f"invalid type {self.text!r}: expected {expected!r} at {tok or 'end'!r}")
        if not tok:
            raise TypeError_(f"invalid type {self.text!r}: unexpected end")
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
        if not re.match(r"^[A-Za-z_0-9]+$", tok):
            raise TypeError_(f"invalid type {self.text!r}: expected a name at {tok!r}")
        return tok

    def int_params(self) -> tuple[int, ...]:
        params: list[int] = []
        if self.accept("("):
            while True:
                tok = self.take()
                if not tok.isdigit():
                    raise TypeError_(f"invalid type {self.text!r}: expected a number at {tok!r}")
                params.append(int(tok))
                if self.accept(")"):
                    break
                self.take(",")
        return tuple(params)

    def done(self) -> None:
        if self.i != len(self.toks):
            raise TypeError_(f"invalid type {self.text!r}: unexpected {self.peek()!r}")


def _check_params(name: str, params: tuple[int, ...], text: str) -> Prim:
    if name == "decimal":
        if len(params) == 0:
            params = (10, 0)
        if len(params) != 2 or not (1 <= params[0] <= 38) or not (0 <= params[1] <= params[0]):
            raise TypeError_(f"invalid type {text!r}: decimal(p,s) needs 1 <= p <= 38 and 0 <= s <= p")
    elif name in ("varchar", "char"):
        if len(params) != 1 or params[0] < 1:
            raise TypeError_(f"invalid type {text!r}: {name}(n) needs a positive length")
    elif name in TIMED:
        if len(params) > 1 or (params and params[0] > MAX_PRECISION):
            raise TypeError_(f"invalid type {text!r}: {name}(p) needs 0 <= p <= {MAX_PRECISION}")
        if params == (PLAIN_PRECISION,):
            params = ()
    elif params:
        raise TypeError_(f"invalid type {text!r}: {name} takes no parameters")
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


def parse(text: str) -> Type:
    """Parse the canonical grammar (a few common aliases accepted)."""
    r = _Reader(text)
    t = _parse_canonical(r)
    r.done()
    return t


def _parse_canonical(r: _Reader) -> Type:
    word = r.ident().lower()
    word = _CANON_ALIASES.get(word, word)
    if word == "array":
        r.take("<")
        elem = _parse_canonical(r)
        r.take(">")
        return Array(elem)
    if word == "map":
        r.take("<")
        key = _parse_canonical(r)
        r.take(",")
        value = _parse_canonical(r)
        r.take(">")
        return Map(key, value)
    if word == "struct":
        r.take("<")
        fields: list[Field] = []
        while not r.accept(">"):
            if fields:
                r.take(",")
            name = r.ident()
            r.take(":")
            fields.append(Field(name, _parse_canonical(r)))
        if not fields:
            raise TypeError_(f"invalid type {r.text!r}: struct needs at least one field")
        return Struct(tuple(fields))
    if word in PRIMITIVES or word in PARAMETRIC:
        return _check_params(word, r.int_params(), r.text)
    raise TypeError_(f"unknown type {r.text!r}")


def _quote_field(name: str) -> str:
    return name if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name) else "`" + name.replace("`", "``") + "`"


def render(t: Type) -> str:
    if isinstance(t, Prim):
        return t.name + (f"({','.join(map(str, t.params))})" if t.params else "")
    if isinstance(t, Array):
        return f"array<{render(t.element)}>"
    if isinstance(t, Map):
        return f"map<{render(t.key)},{render(t.value)}>"
    return "struct<" + ",".join(f"{_quote_field(f.name)}:{render(f.type)}" for f in t.fields) + ">"


_canonical_cache: dict[str, str] = {}


def canonical(text: str) -> str:
    """Canonical spelling of a type string; raises TypeError_ when invalid."""
    hit = _canonical_cache.get(text)
    if hit is None:
        hit = render(parse(text))
        _canonical_cache[text] = hit
    return hit


def map_prims(t: Type, fn: Any) -> Type:
    """`t` with every primitive replaced by `fn(primitive)`."""
    return _map_type(t, fn)


def _map_type(t: Type, fn: Any) -> Type:
    if isinstance(t, Prim):
        return fn(t)  # type: ignore[no-any-return]
    if isinstance(t, Array):
        return Array(_map_type(t.element, fn))
    if isinstance(t, Map):
        return Map(_map_type(t.key, fn), _map_type(t.value, fn))
    return Struct(tuple(Field(f.name, _map_type(f.type, fn)) for f in t.fields))


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

    return _map_type(t, one)


def coerce_str(text: str, target: str) -> str:
    return render(coerce(parse(text), target))


# -------------------------------------------------------------------- iceberg
_ICE_OUT = {"boolean": "boolean", "int": "int", "bigint": "long", "float": "float", "double": "double",
            "string": "string", "binary": "binary", "date": "date", "timestamp": "timestamp",
            "timestamp_ltz": "timestamptz", "uuid": "uuid", "time": "time"}
_ICE_IN = {v: k for k, v in _ICE_OUT.items()}


def to_iceberg(t: Type, ids: list[int] | None = None) -> Any:
    """Iceberg schema JSON for a type; `ids` is a counter for nested field ids."""
    counter = ids if ids is not None else [1000]

    def nid() -> int:
        counter[0] += 1
        return counter[0]

    t = coerce(t, "iceberg")
    if isinstance(t, Prim):
        if t.name == "decimal":
            return f"decimal({t.params[0]}, {t.params[1]})"
        return _ICE_OUT[t.name]
    if isinstance(t, Array):
        return {"type": "list", "element-id": nid(), "element": to_iceberg(t.element, counter),
                "element-required": False}
    if isinstance(t, Map):
        return {"type": "map", "key-id": nid(), "key": to_iceberg(t.key, counter), "value-id": nid(),
                "value": to_iceberg(t.value, counter), "value-required": False}
    return {"type": "struct", "fields": [
        {"id": nid(), "name": f.name, "required": False, "type": to_iceberg(f.type, counter)}
        for f in t.fields]}


def from_iceberg(j: Any) -> Type:
    if isinstance(j, str):
        s = j.strip().lower()
        m = re.match(r"^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$", s)
        if m:
            return Prim("decimal", (int(m.group(1)), int(m.group(2))))
        if s.startswith("fixed"):
            return Prim("binary")
        if s in _ICE_IN:
            return Prim(_ICE_IN[s])
        raise TypeError_(f"unknown Iceberg type {j!r}")
    kind = j.get("type")
    if kind == "list":
        return Array(from_iceberg(j["element"]))
    if kind == "map":
        return Map(from_iceberg(j["key"]), from_iceberg(j["value"]))
    if kind == "struct":
        return Struct(tuple(Field(f["name"], from_iceberg(f["type"])) for f in j["fields"]))
    raise TypeError_(f"unknown Iceberg type {j!r}")


# ----------------------------------------------------------------------- hive
def to_hive(t: Type) -> str:
    t = coerce(t, "hive")
    if isinstance(t, Prim):
        if t.name == "decimal":
            return f"decimal({t.params[0]},{t.params[1]})"
        return t.name + (f"({t.params[0]})" if t.params else "")
    if isinstance(t, Array):
        return f"array<{to_hive(t.element)}>"
    if isinstance(t, Map):
        return f"map<{to_hive(t.key)},{to_hive(t.value)}>"
    return "struct<" + ",".join(f"{_quote_field(f.name)}:{to_hive(f.type)}" for f in t.fields) + ">"


def from_hive(text: str) -> Type:
    r = _Reader(text)
    t = _parse_canonical(r)
    r.done()
    return t


# ---------------------------------------------------------------------- trino
_TRINO_OUT = {"boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "int": "integer",
              "bigint": "bigint", "float": "real", "double": "double", "string": "varchar",
              "binary": "varbinary", "date": "date", "json": "json", "uuid": "uuid"}
# Trino's own defaults when a type signature has no precision (Trino always writes one).
_TRINO_DEFAULT_PRECISION = 3


def to_trino(t: Type) -> str:
    if isinstance(t, Prim):
        if t.name in TIMED:
            base = "time" if t.name == "time" else "timestamp"
            zone = " with time zone" if t.name == "timestamp_ltz" else ""
            return f"{base}({precision(t)}){zone}"
        if t.name == "decimal":
            return f"decimal({t.params[0]},{t.params[1]})"
        if t.name in ("varchar", "char"):
            return f"{t.name}({t.params[0]})"
        return _TRINO_OUT[t.name]
    if isinstance(t, Array):
        return f"array({to_trino(t.element)})"
    if isinstance(t, Map):
        return f"map({to_trino(t.key)},{to_trino(t.value)})"
    return "row(" + ",".join(f'"{f.name.replace(chr(34), chr(34) * 2)}" {to_trino(f.type)}'
                             for f in t.fields) + ")"


def from_trino(text: str) -> Type:
    r = _Reader(text)
    t = _parse_trino(r)
    r.done()
    return t


def _parse_trino(r: _Reader) -> Type:
    word = r.ident().lower()
    if word == "array":
        r.take("(")
        elem = _parse_trino(r)
        r.take(")")
        return Array(elem)
    if word == "map":
        r.take("(")
        key = _parse_trino(r)
        r.take(",")
        value = _parse_trino(r)
        r.take(")")
        return Map(key, value)
    if word == "row":
        r.take("(")
        fields: list[Field] = []
        while not r.accept(")"):
            if fields:
                r.take(",")
            name = r.ident()
            fields.append(Field(name, _parse_trino(r)))
        return Struct(tuple(fields))
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
            raise TypeError_(f"unsupported Trino type {r.text!r}")
        return _check_params("timestamp_ltz" if zoned else word, params, r.text)
    params = r.int_params()
    simple = {"boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "integer": "int",
              "int": "int", "bigint": "bigint", "real": "float", "double": "double", "date": "date",
              "varbinary": "binary", "json": "json", "uuid": "uuid"}
    if word == "varchar":
        return Prim("string") if not params else _check_params("varchar", params, r.text)
    if word in ("char", "decimal"):
        return _check_params(word, params, r.text)
    if word in simple and not params:
        return Prim(simple[word])
    raise TypeError_(f"unknown Trino type {r.text!r}")


# ---------------------------------------------------------------------- spark
_SPARK_OUT = {"boolean": "boolean", "tinyint": "byte", "smallint": "short", "int": "integer",
              "bigint": "long", "float": "float", "double": "double", "string": "string",
              "binary": "binary", "date": "date", "timestamp": "timestamp_ntz",
              "timestamp_ltz": "timestamp"}
_SPARK_IN = {v: k for k, v in _SPARK_OUT.items()}


def to_spark(t: Type) -> Any:
    """Spark's DataType JSON (`jsonValue`): a string for atomics, an object otherwise."""
    if isinstance(t, Prim):
        t = coerce(t, "spark")
        assert isinstance(t, Prim)
        if t.params:
            return f"{t.name}({','.join(map(str, t.params))})"
        return _SPARK_OUT[t.name]
    if isinstance(t, Array):
        return {"type": "array", "elementType": to_spark(t.element), "containsNull": True}
    if isinstance(t, Map):
        return {"type": "map", "keyType": to_spark(t.key), "valueType": to_spark(t.value),
                "valueContainsNull": True}
    return {"type": "struct", "fields": [
        {"name": f.name, "type": to_spark(f.type), "nullable": True, "metadata": {}} for f in t.fields]}


def from_spark(j: Any) -> Type:
    if isinstance(j, str):
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
        raise TypeError_(f"unknown Spark type {j!r}")
    kind = j.get("type")
    if kind == "array":
        return Array(from_spark(j["elementType"]))
    if kind == "map":
        return Map(from_spark(j["keyType"]), from_spark(j["valueType"]))
    if kind == "struct":
        return Struct(tuple(Field(f["name"], _spark_field_type(f)) for f in j["fields"]))
    raise TypeError_(f"unknown Spark type {j!r}")


def to_spark_ddl(t: Type) -> str:
    """Spark's catalog string for a type (`DataType.catalogString`), as Spark stores nested
    char/varchar in `__CHAR_VARCHAR_TYPE_STRING`: its `timestamp` has a local time zone."""
    def one(p: Prim) -> Prim:
        c = coerce(p, "spark")
        assert isinstance(c, Prim)
        return {"timestamp": Prim("timestamp_ntz"), "timestamp_ltz": Prim("timestamp")}.get(c.name, c)

    return render(_map_type(t, one))


_SPARK_DDL_TIMESTAMP = re.compile(r"\btimestamp(_ntz|_ltz)?\b(?!\s*:)", re.IGNORECASE)


def from_spark_ddl(text: str) -> Type:
    """A Spark catalog type string (`struct<city:string,zip:varchar(10)>`, what Spark keeps in
    `__CHAR_VARCHAR_TYPE_STRING` for nested char/varchar). Spark's `timestamp` is the
    local-time-zone one; a name before ':' is a field name, not a type."""
    def canon(m: re.Match[str]) -> str:
        return "timestamp" if (m.group(1) or "").lower() == "_ntz" else "timestamp_ltz"

    return parse(_SPARK_DDL_TIMESTAMP.sub(canon, text))


def _spark_field_type(field: dict[str, Any]) -> Type:
    # Spark keeps CHAR/VARCHAR as string plus this metadata key.
    raw = (field.get("metadata") or {}).get("__CHAR_VARCHAR_TYPE_STRING")
    return from_spark(raw) if raw else from_spark(field["type"])


# ---------------------------------------------------------------------- flink
_FLINK_OUT = {"boolean": "BOOLEAN", "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT",
              "bigint": "BIGINT", "float": "FLOAT", "double": "DOUBLE", "string": "VARCHAR(2147483647)",
              "binary": "VARBINARY(2147483647)", "date": "DATE", "timestamp": "TIMESTAMP(6)",
              "timestamp_ltz": "TIMESTAMP(6) WITH LOCAL TIME ZONE"}
_FLINK_MAX = 2147483647


def to_flink(t: Type) -> str:
    if isinstance(t, Prim):
        t = coerce(t, "flink")
        assert isinstance(t, Prim)
        if t.name in TIMED:
            zone = " WITH LOCAL TIME ZONE" if t.name == "timestamp_ltz" else ""
            return f"{'TIME' if t.name == 'time' else 'TIMESTAMP'}({precision(t)}){zone}"
        if t.name == "decimal":
            return f"DECIMAL({t.params[0]}, {t.params[1]})"
        if t.name in ("varchar", "char"):
            return f"{t.name.upper()}({t.params[0]})"
        return _FLINK_OUT[t.name]
    if isinstance(t, Array):
        return f"ARRAY<{to_flink(t.element)}>"
    if isinstance(t, Map):
        return f"MAP<{to_flink(t.key)}, {to_flink(t.value)}>"
    return "ROW<" + ", ".join(f"`{f.name.replace('`', '``')}` {to_flink(f.type)}" for f in t.fields) + ">"


def from_flink(text: str) -> Type:
    r = _Reader(text)
    t = _parse_flink(r)
    r.done()
    return t


def _parse_flink(r: _Reader) -> Type:
    word = r.ident().upper()
    t: Type
    if word == "ARRAY":
        r.take("<")
        t = Array(_parse_flink(r))
        r.take(">")
    elif word == "MAP":
        r.take("<")
        key = _parse_flink(r)
        r.take(",")
        value = _parse_flink(r)
        r.take(">")
        t = Map(key, value)
    elif word == "ROW":
        closer = ">" if r.accept("<") else (r.take("(") and ")")
        fields: list[Field] = []
        while not r.accept(closer):
            if fields:
                r.take(",")
            name = r.ident()
            fields.append(Field(name, _parse_flink(r)))
            if r.peek().startswith("'"):
                r.take()  # field description
        t = Struct(tuple(fields))
    elif word in ("TIMESTAMP", "TIMESTAMP_LTZ", "TIME"):
        # Flink's defaults: TIMESTAMP = TIMESTAMP(6), TIME = TIME(0) (LogicalTypeParser)
        params = r.int_params() or ((0,) if word == "TIME" else (PLAIN_PRECISION,))
        ltz = word == "TIMESTAMP_LTZ"
        if r.accept("WITH"):
            local = r.accept("LOCAL")
            r.take("TIME")
            r.take("ZONE")
            if not local or word == "TIME":
                raise TypeError_(f"unsupported Flink type {r.text!r}")
            ltz = True
        elif r.accept("WITHOUT"):
            r.take("TIME")
            r.take("ZONE")
        t = _check_params("time" if word == "TIME" else "timestamp_ltz" if ltz else "timestamp", params, r.text)
    else:
        params = r.int_params()
        simple = {"BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int",
                  "INTEGER": "int", "BIGINT": "bigint", "FLOAT": "float", "DOUBLE": "double",
                  "DATE": "date", "STRING": "string", "BYTES": "binary"}
        if word in ("VARCHAR", "CHAR") and params == (_FLINK_MAX,):
            t = Prim("string")
        elif word in ("VARBINARY", "BINARY"):
            t = Prim("binary")
        elif word in ("VARCHAR", "CHAR", "DECIMAL"):
            t = _check_params(word.lower(), params, r.text)
        elif word in simple and not params:
            t = Prim(simple[word])
        else:
            raise TypeError_(f"unknown Flink type {r.text!r}")
    if r.accept("NOT"):
        r.take("NULL")
    return t


# ------------------------------------------------------------------- dispatch
def render_for(text: str, target: str) -> Any:
    t = parse(text)
    return {"iceberg": to_iceberg, "hive": to_hive, "trino": to_trino, "spark": to_spark,
            "flink": to_flink}[target](t)


def parse_from(value: Any, target: str) -> str:
    """Canonical type string for a target's representation."""
    fn = {"iceberg": from_iceberg, "hive": from_hive, "trino": from_trino, "spark": from_spark,
          "flink": from_flink}[target]
    return render(fn(value))
