"""Fixture values typed by their column type, offline and exactly.

`coerce` reads a value as YAML, CSV or Spark's answer (`to_wire`) gives it and returns one
canonical, hashable Python value per type (Decimal at the column's scale, date, naive
datetime, tuples for arrays, maps and structs), so that an expected row and a row Spark
produced compare with ==. A value that does not fit its type raises ValueError with a message
for the user. `literal` renders a canonical value as a Spark SQL expression of exactly that
type, so Spark reads the rows the test gives, not what it would infer from them.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
import struct
from decimal import Context, Decimal, InvalidOperation
from typing import Any

from reconciler.child.serve import to_wire as _child_wire
from reconciler.core import coltypes
from reconciler.core.coltypes import Array, Map, Prim, Struct, Type

_INT_RANGE = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TS = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
                 r"(Z|[+-]\d{2}:?\d{2})?$")
_SPECIAL_FLOATS = {"nan": math.nan, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf,
                   "inf": math.inf, "-inf": -math.inf}
_BINARY_TAG = "$binary"
# Spark's decimals hold up to 38 digits; Python's default context only 28 (quantize would fail).
_DECIMALS = Context(prec=80)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _round32(value: float) -> float:
    """`value` rounded to a 32-bit float, as Spark holds a FLOAT. Raises OverflowError beyond its range."""
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def _float32(value: float, t: Type, written: Any) -> float:
    """`value` as a FLOAT (so 0.1 written in a test equals the 0.10000000149011612 Spark gives
    back). Raises ValueError out of FLOAT's range."""
    if not math.isfinite(value):
        return value
    try:
        return _round32(value)
    except OverflowError:
        raise _fail(written, t, "out of range for a 32-bit float") from None


def _float32_text(value: float) -> str:
    """The shortest decimal text that reads back as the same 32-bit float."""
    for digits in range(6, 10):
        text = f"{value:.{digits}g}"
        if _round32(float(text)) == value:
            return text
    return repr(value)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _fail(value: Any, t: Type, why: str = "") -> ValueError:
    return ValueError(f"{_show(value)} cannot be read as {coltypes.render(t)}{': ' + why if why else ''}")


def coerce(value: Any, t: Type) -> Any:
    """The canonical value of `value` in a column of type `t` (None stays None)."""
    if value is None:
        return None
    if isinstance(t, Prim):
        return _prim(value, t)
    if isinstance(t, Array):
        items = _json_text(value, list, t)
        return tuple(coerce(v, t.element) for v in items)
    if isinstance(t, Map):
        raw = _json_text(value, (dict, list), t)
        pairs = list(raw.items()) if isinstance(raw, dict) else [tuple(p) for p in raw]
        if any(len(p) != 2 for p in pairs):
            raise _fail(value, t, "a map is a mapping, or a list of [key, value] pairs")
        out = {}
        for k, v in pairs:
            ck = coerce(k, t.key)
            if ck is None:
                raise _fail(value, t, "a map key cannot be NULL")
            out[ck] = coerce(v, t.value)
        return tuple(sorted(out.items(), key=lambda kv: repr(kv[0])))
    assert isinstance(t, Struct)
    raw = _json_text(value, dict, t)
    names = {f.name.lower(): f for f in t.fields}
    unknown = [k for k in raw if str(k).lower() not in names]
    if unknown:
        raise _fail(value, t, f"no field {unknown[0]!r}")
    given = {str(k).lower(): v for k, v in raw.items()}
    return tuple(coerce(given.get(f.name.lower()), f.type) for f in t.fields)


def _json_text(value: Any, kinds: type | tuple[type, ...], t: Type) -> Any:
    """A nested value as YAML gives it, or as JSON text (a CSV cell)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise _fail(value, t, "write it as JSON") from None
    if not isinstance(value, kinds):
        raise _fail(value, t)
    return value


def _prim(value: Any, t: Prim) -> Any:  # noqa: C901 - one branch per type family
    name = t.name
    if name == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise _fail(value, t)
    if name in _INT_RANGE:
        if isinstance(value, bool):
            raise _fail(value, t)
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            value = int(value)
        if not isinstance(value, int):
            raise _fail(value, t)
        bits = _INT_RANGE[name]
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise _fail(value, t, "out of range")
        return value
    if name in ("float", "double"):
        if isinstance(value, bool):
            raise _fail(value, t)
        if isinstance(value, str):
            special = _SPECIAL_FLOATS.get(value.strip().lower())
            if special is not None:
                return special
            try:
                number = float(value)
            except ValueError:
                raise _fail(value, t) from None
        elif isinstance(value, (int, float, Decimal)):
            number = float(value)
        else:
            raise _fail(value, t)
        if math.isinf(number):  # written as a finite number, too large even for a double
            raise _fail(value, t, f"out of range for {name}")
        return _float32(number, t, value) if name == "float" else number
    if name == "decimal":
        return _decimal(value, t)
    if name in ("string", "varchar", "char", "json", "uuid"):
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (int, float, Decimal)):
            value = str(value)
        if not isinstance(value, str):
            raise _fail(value, t)
        if _SURROGATE.search(value):
            raise _fail(value, t, "it holds a lone UTF-16 surrogate, which is not a character")
        if name in ("varchar", "char") and len(value) > t.params[0]:
            raise _fail(value, t, f"longer than {t.params[0]} characters")
        if name == "char":
            value = value.ljust(t.params[0])  # Spark reads CHAR(n) padded
        return value
    if name == "binary":
        if isinstance(value, dict) and set(value) == {_BINARY_TAG}:
            return base64.b64decode(value[_BINARY_TAG])
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        if isinstance(value, str):
            return value.encode("utf-8")
        raise _fail(value, t)
    if name == "date":
        if isinstance(value, dt.datetime):
            raise _fail(value, t)
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str) and _DATE.match(value.strip()):
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                raise _fail(value, t, "no such day") from None
        raise _fail(value, t, "write it as YYYY-MM-DD")
    if name in ("timestamp", "timestamp_ltz"):
        return _timestamp(value, t)
    raise _fail(value, t, "fixture values of this type are not supported")


def _decimal(value: Any, t: Prim) -> Decimal:
    precision, scale = t.params
    if isinstance(value, bool):
        raise _fail(value, t)
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value).strip())
    except InvalidOperation:
        raise _fail(value, t) from None
    if not d.is_finite():
        raise _fail(value, t)
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    if d != 0 and d.adjusted() >= precision - scale:
        raise _fail(value, t, f"more than {precision - scale} digits before the point")
    unit = Decimal(1).scaleb(-scale)
    if -exponent > scale and d != d.quantize(unit, context=_DECIMALS):
        raise _fail(value, t, f"more than {scale} decimal places")
    return d.quantize(unit, context=_DECIMALS)


def _timestamp(value: Any, t: Prim) -> dt.datetime:
    if isinstance(value, dt.datetime):
        ts = value
    elif isinstance(value, dt.date):
        ts = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        m = _TS.match(value.strip())
        if not m:
            raise _fail(value, t, "write it as YYYY-MM-DD HH:MM:SS[.ffffff]")
        day, hh, mm, ss, frac, zone = m.groups()
        if frac and len(frac) > 6:
            if frac[6:].strip("0"):
                raise _fail(value, t, "Spark keeps microseconds, not finer")
            frac = frac[:6]
        try:
            ts = dt.datetime.fromisoformat(f"{day} {hh or '00'}:{mm or '00'}:{ss or '00'}"
                                           + (f".{frac.ljust(6, '0')}" if frac else ""))
        except ValueError:
            raise _fail(value, t, "no such time") from None
        if zone:
            if t.name == "timestamp":
                raise _fail(value, t, "a timestamp without time zone has no offset")
            zone = "+00:00" if zone == "Z" else zone
            ts = dt.datetime.fromisoformat(ts.isoformat() + (zone if ":" in zone else zone[:3] + ":" + zone[3:]))
    else:
        raise _fail(value, t)
    if ts.tzinfo is not None:  # timestamp_ltz: the instant, in UTC (the test session's time zone)
        try:
            ts = ts.astimezone(dt.UTC).replace(tzinfo=None)
        except OverflowError:
            raise _fail(value, t, "out of range (before year 1 in UTC)") from None
    return ts


# ------------------------------------------------------------------ Spark literals
def _hex_string(text: str) -> str:
    """A string literal that no content can break out of: Spark decodes the UTF-8 bytes."""
    return f"CAST(X'{text.encode('utf-8').hex()}' AS STRING)"


def _plain(value: Any, t: Type) -> str:
    if value is None:
        return "NULL"
    if isinstance(t, Array):
        return "array(" + ", ".join(_typed(v, t.element) for v in value) + ")"
    if isinstance(t, Map):
        return "map(" + ", ".join(f"{_typed(k, t.key)}, {_typed(v, t.value)}" for k, v in value) + ")"
    if isinstance(t, Struct):
        return "named_struct(" + ", ".join(f"{_hex_string(f.name)}, {_typed(v, f.type)}"
                                           for f, v in zip(t.fields, value, strict=True)) + ")"
    name = t.name
    if name == "boolean":
        return "TRUE" if value else "FALSE"
    if name in _INT_RANGE:
        return str(value)
    if name in ("float", "double"):
        text = "NaN" if math.isnan(value) else ("Infinity" if value == math.inf else
                                                 "-Infinity" if value == -math.inf else repr(value))
        return f"'{text}'"
    if name == "decimal":
        return f"'{value}'"
    if name == "binary":
        return f"X'{value.hex()}'"
    if name == "date":
        return f"'{value.isoformat()}'"
    if name in ("timestamp", "timestamp_ltz"):
        return f"'{value.isoformat(sep=' ')}'"
    return _hex_string(value)


_PLAIN_TEXT = re.compile(r"^[ -&(-\[\]-~]*$")  # printable ASCII without ' and \\: safe between quotes


def cell(value: Any, t: Type) -> str:
    """A canonical value as the cheapest literal Spark reads back exactly once its column is
    cast to `t` (inline tables cast per column, not per value: parsing and analysing a
    thousand rows costs a tenth)."""
    if value is None:
        return "NULL"
    if not isinstance(t, Prim):
        return _typed(value, t)
    name = t.name
    if name == "boolean":
        return "TRUE" if value else "FALSE"
    if name in _INT_RANGE:
        return str(value)
    if name in ("float", "double"):  # exact: a FLOAT's value is a double too
        return f"{value!r}D" if math.isfinite(value) else _typed(value, t)
    if name == "decimal":
        return f"{value}BD"
    if name == "binary":
        return f"X'{value.hex()}'"
    if name == "date":
        return f"'{value.isoformat()}'"
    if name in ("timestamp", "timestamp_ltz"):
        return f"'{value.isoformat(sep=' ')}'"
    return f"'{value}'" if _PLAIN_TEXT.match(value) else _hex_string(value)


def _typed(value: Any, t: Type) -> str:
    return f"CAST({_plain(value, t)} AS {spark_type(t)})"


def literal(value: Any, t: Type) -> str:
    """A canonical value (from `coerce`) as a constant Spark SQL expression of type `t`."""
    return _typed(value, t)


def spark_type(t: Type) -> str:
    """The type as Spark's SQL names it (timestamp without time zone is TIMESTAMP_NTZ)."""
    return coltypes.to_spark_ddl(t).upper() if isinstance(t, Prim) else coltypes.to_spark_ddl(t)


# ------------------------------------------------------------------ an engine's answer
# A value the engine's child returned, as JSON: the child process layer's encoding (Spark's and Flink's).
to_wire = _child_wire


def show(value: Any, t: Type) -> str:
    """A canonical value as a report shows it."""
    if value is None:
        return "NULL"
    if isinstance(t, Array):
        return "[" + ", ".join(show(v, t.element) for v in value) + "]"
    if isinstance(t, Map):
        return "{" + ", ".join(f"{show(k, t.key)}: {show(v, t.value)}" for k, v in value) + "}"
    if isinstance(t, Struct):
        return "{" + ", ".join(f"{f.name}: {show(v, f.type)}" for f, v in zip(t.fields, value, strict=True)) + "}"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and isinstance(t, Prim) and t.name == "float" and math.isfinite(value):
        return _float32_text(value)
    return str(value)
