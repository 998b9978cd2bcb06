"""Column types of JDBC databases -> canonical types (reconciler.core.coltypes), and the
sqlglot inference that types SQLite's untyped view columns. Pure, no I/O.
The differences between databases come in as `TypeRules` (see dialects)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from sqlalchemy import types as st
from sqlalchemy.dialects import mysql as my
from sqlalchemy.dialects import postgresql as pg
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from reconciler.core import coltypes
from reconciler.core import sql as vsql

# PostgreSQL's unconstrained numeric has no precision; read it the way Spark's JDBC source does.
UNBOUNDED_DECIMAL = "decimal(38,18)"
_MAX_PRECISION = 38


def decimal(precision: int | None, scale: int | None) -> str:
    if precision is None:
        return UNBOUNDED_DECIMAL
    # MySQL allows DECIMAL(65,30): keep what fits the canonical grammar (as Spark does).
    p = min(max(precision, 1), _MAX_PRECISION)
    s = min(max(scale or 0, 0), p)
    return f"decimal({p},{s})"


def string(length: int | None, fixed: bool) -> str:
    if not length:
        return "string"
    return f"{'char' if fixed else 'varchar'}({length})"


def mysql_integer(t: st.TypeEngine[Any]) -> str:
    unsigned = bool(getattr(t, "unsigned", False))
    if isinstance(t, my.TINYINT):
        # MySQL's BOOLEAN is TINYINT(1); JDBC drivers read it as a boolean too.
        if getattr(t, "display_width", None) == 1 and not unsigned:
            return "boolean"
        return "smallint" if unsigned else "tinyint"
    if isinstance(t, st.SmallInteger):
        return "int" if unsigned else "smallint"
    if isinstance(t, st.BigInteger):
        return "decimal(20,0)" if unsigned else "bigint"
    if isinstance(t, my.MEDIUMINT):
        return "int"
    return "bigint" if unsigned else "int"


class TypeRules(Protocol):
    """How one database's column types differ from the common mapping (see dialects)."""

    def integer_type(self, t: st.Integer) -> str: ...

    def float_type(self, t: st.Float[Any]) -> str: ...

    def datetime_type(self, t: st.DateTime) -> str: ...


def canonical_type(t: st.TypeEngine[Any], rules: TypeRules) -> str | None:
    """The canonical type (reconciler.core.coltypes) of a reflected column type; None if unknown."""
    domain_type = getattr(t, "data_type", None)
    if isinstance(domain_type, st.TypeEngine) and isinstance(t, pg.DOMAIN):
        return canonical_type(domain_type, rules)
    if isinstance(t, st.ARRAY):
        item = canonical_type(t.item_type, rules)
        return f"array<{item}>" if item else None
    if isinstance(t, st.Boolean):
        return "boolean"
    if isinstance(t, (pg.BIT, my.BIT)):
        single = (getattr(t, "length", None) or 1) == 1 and not getattr(t, "varying", False)
        return "boolean" if single else "binary"
    if isinstance(t, st.Integer):
        return rules.integer_type(t)
    if isinstance(t, st.Float):
        return rules.float_type(t)
    if isinstance(t, st.Numeric):
        return decimal(t.precision, t.scale)
    if isinstance(t, pg.MONEY):
        return "decimal(19,2)"
    if isinstance(t, pg.OID):
        return "bigint"  # unsigned 32 bits
    if isinstance(t, (st.Enum, my.SET, st.JSON, st.Uuid, pg.INET, pg.CIDR, pg.MACADDR, pg.TSVECTOR)):
        return "string"
    if isinstance(t, st.String):
        return string(t.length, fixed=isinstance(t, st.CHAR))
    if isinstance(t, st.DateTime):
        return rules.datetime_type(t)
    if isinstance(t, st.Date):
        return "date"
    if isinstance(t, my.YEAR):
        return "int"
    if isinstance(t, (st.Time, st.Interval, pg.INTERVAL)):
        return "string"
    if isinstance(t, (st.LargeBinary, st.BINARY, st.VARBINARY)):
        return "binary"
    return None


# sqlglot data types <-> canonical types, used to infer SQLite's untyped view columns.
_GLOT_IN = {
    "boolean": "BOOLEAN", "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT",
    "bigint": "BIGINT", "float": "FLOAT", "double": "DOUBLE", "string": "TEXT", "binary": "BLOB",
    "date": "DATE", "timestamp": "TIMESTAMP", "timestamp_ltz": "TIMESTAMPTZ",
}
_DT = exp.DataType.Type
_GLOT_OUT = {
    _DT.BOOLEAN: "boolean", _DT.TINYINT: "tinyint", _DT.SMALLINT: "smallint", _DT.INT: "int",
    _DT.MEDIUMINT: "int", _DT.BIGINT: "bigint", _DT.FLOAT: "float", _DT.DOUBLE: "double",
    _DT.TEXT: "string", _DT.BLOB: "binary", _DT.BINARY: "binary", _DT.VARBINARY: "binary",
    _DT.DATE: "date", _DT.DATETIME: "timestamp", _DT.TIMESTAMP: "timestamp",
    _DT.TIMESTAMPTZ: "timestamp_ltz", _DT.TIMESTAMPLTZ: "timestamp_ltz",
}


def _to_glot(canonical: str) -> str | None:
    t = coltypes.parse(canonical)
    if not isinstance(t, coltypes.Prim):
        return None
    if t.params:
        return f"{t.name.upper()}({','.join(map(str, t.params))})"
    return _GLOT_IN.get(t.name)


def _from_glot(dt: exp.DataType) -> str | None:
    params = [p.this.this if isinstance(p.this, exp.Literal) else p.name for p in dt.expressions]
    try:
        nums = [int(str(p)) for p in params]
    except ValueError:
        return None
    if dt.this == _DT.DECIMAL:
        return decimal(nums[0], nums[1] if len(nums) > 1 else 0) if nums else UNBOUNDED_DECIMAL
    if dt.this in (_DT.VARCHAR, _DT.NVARCHAR, _DT.CHAR, _DT.NCHAR):
        return string(nums[0] if nums else None, fixed=dt.this in (_DT.CHAR, _DT.NCHAR))
    return _GLOT_OUT.get(dt.this)


def infer_types(
    sql: str, dialect: str, schema: str, known: Mapping[str, Mapping[str, str]]
) -> list[tuple[str, str | None]]:
    """The query's output columns in order, as (name lowercased, as sqlglot folds SQLite
    names; canonical type or None), inferred from the types of the objects `sql` reads
    (`known`: object -> column -> canonical type). Best effort: [] when sqlglot cannot
    follow the SQL."""
    glot_schema: dict[str, dict[str, str]] = {}
    for obj, cols in known.items():
        typed = {col: g for col, t in cols.items() if (g := _to_glot(t)) is not None}
        if typed:  # sqlglot rejects an object without columns
            glot_schema[obj] = typed
    tree = vsql.tree(sql, dialect)  # the process's one parse, copied: qualify changes it
    if tree is None:
        return []
    try:
        tree = qualify(tree, schema={schema: glot_schema}, dialect=dialect, db=schema,
                       validate_qualify_columns=False, quote_identifiers=False)
        tree = annotate_types(tree, schema={schema: glot_schema}, dialect=dialect)
    except Exception:  # sqlglot raises many kinds of errors on SQL it cannot follow
        return []
    if not isinstance(tree, exp.Query):
        return []
    return [(sel.alias_or_name.lower(), _from_glot(sel.type) if sel.type is not None else None)
            for sel in tree.selects]


def infer_missing(types: dict[str, dict[str, str | None]], bodies: Mapping[str, str],
                   tables: Mapping[str, Mapping[str, str]], schema: str, dialect: str = "sqlite") -> None:
    """Fill the unknown (None) view column types in place by sqlglot inference; views
    on views are resolved by repeating until nothing improves."""
    for _ in range(len(types)):
        known: dict[str, dict[str, str]] = {k: dict(v) for k, v in tables.items()}
        for view, cols in types.items():
            known[view] = {c: t for c, t in cols.items() if t is not None}
        changed = False
        for view, cols in sorted(types.items()):
            if None not in cols.values():
                continue
            inferred = infer_types(bodies[view], dialect, schema, known)
            # Same width: match by position (CREATE VIEW v(a, b) renames the outputs).
            if len(inferred) == len(cols):
                guesses = {col: t for col, (_, t) in zip(cols, inferred, strict=True)}
            else:
                by_name = dict(inferred)
                guesses = {col: by_name.get(col.lower()) for col in cols}
            for col, t in cols.items():
                if t is None and guesses.get(col) is not None:
                    cols[col] = guesses[col]
                    changed = True
        if not changed:
            return
