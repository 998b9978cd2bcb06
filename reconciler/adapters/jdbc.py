"""JDBC databases (PostgreSQL, MySQL/MariaDB, SQLite): read-only view discovery.

viewsync never writes here. Declarations in a JDBC catalog are expectations:
`fetch` reads each view's body, columns and canonical column types so plan and
drift can say where the database differs from what the repository expects,
and `import` can turn existing views into YAML.

Columns come from running the view (`SELECT * FROM v WHERE 1=0`: names, order,
and proof the view still works) joined by name with the inspector's types.
SQLite has no types for computed view columns; those are inferred with
sqlglot from the types of the objects the view reads.

Identifiers always go through SQLAlchemy constructs (never pasted into SQL),
and the connection URL is only ever shown with its password hidden. Every
session is read-only at the database (SQLite files are opened read-only), and
PostgreSQL's search_path is pinned while reading so view bodies come out the
same for every user.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import quote

import sqlalchemy as sa
import sqlglot
from pydantic import ValidationError
from sqlalchemy import types as st
from sqlalchemy.dialects import mysql as my
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.engine.interfaces import ReflectedColumn
from sqlalchemy.engine.reflection import ObjectKind
from sqlglot import TokenType, exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from reconciler import types as vtypes
from reconciler.adapters.base import (
    AdapterError,
    Capabilities,
    CatalogAdapter,
    Marker,
    SchemaSnapshot,
    WriteContext,
)
from reconciler.model import Column, LiveView, Representation, ViewId, ViewSpec
from reconciler.timeouts import sql_connect_args

READ_ONLY_MESSAGE = (
    "JDBC catalogs are read-only in viewsync; views can be managed in catalogs of type "
    "managed, iceberg-rest, hms or glue"
)

# SQLAlchemy backend name -> sqlglot dialect name (also LiveView.format).
_DIALECTS = {"postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}
_SYSTEM_SCHEMAS = {
    "postgres": {"information_schema", "pg_catalog", "pg_toast"},
    "mysql": {"information_schema", "mysql", "performance_schema", "sys"},
    "sqlite": {"temp"},
}
# PostgreSQL's unconstrained numeric has no precision; read it the way Spark's JDBC source does.
_UNBOUNDED_DECIMAL = "decimal(38,18)"
_MAX_PRECISION = 38
# Unknown column types are reported in SchemaSnapshot.warnings (read as string) instead.
warnings.filterwarnings("ignore", message=r"Did not recognize type", category=sa.exc.SAWarning)


def read_only_message(catalog: str, view: ViewId | None = None) -> str:
    where = f"catalog {catalog!r}" + (f", view {view}" if view is not None else "")
    return f"{where}: {READ_ONLY_MESSAGE}"


# ------------------------------------------------------------- type mapping
def _decimal(precision: int | None, scale: int | None) -> str:
    if precision is None:
        return _UNBOUNDED_DECIMAL
    # MySQL allows DECIMAL(65,30): keep what fits the canonical grammar (as Spark does).
    p = min(max(precision, 1), _MAX_PRECISION)
    s = min(max(scale or 0, 0), p)
    return f"decimal({p},{s})"


def _string(length: int | None, fixed: bool) -> str:
    if not length:
        return "string"
    return f"{'char' if fixed else 'varchar'}({length})"


def _mysql_integer(t: st.TypeEngine[Any]) -> str:
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


def canonical_type(t: st.TypeEngine[Any], dialect: str) -> str | None:
    """The canonical type (reconciler.types) of a reflected column type; None if unknown."""
    domain_type = getattr(t, "data_type", None)
    if isinstance(domain_type, st.TypeEngine) and isinstance(t, pg.DOMAIN):
        return canonical_type(domain_type, dialect)
    if isinstance(t, st.ARRAY):
        item = canonical_type(t.item_type, dialect)
        return f"array<{item}>" if item else None
    if isinstance(t, st.Boolean):
        return "boolean"
    if isinstance(t, (pg.BIT, my.BIT)):
        single = (getattr(t, "length", None) or 1) == 1 and not getattr(t, "varying", False)
        return "boolean" if single else "binary"
    if isinstance(t, st.Integer):
        if dialect == "mysql":
            return _mysql_integer(t)
        if isinstance(t, st.SmallInteger):
            return "smallint"
        return "bigint" if isinstance(t, st.BigInteger) else "int"
    if isinstance(t, st.Float):
        # SQLite stores every floating point value in 8 bytes.
        if dialect == "sqlite" or isinstance(t, st.Double):
            return "double"
        # REAL, MySQL FLOAT, and FLOAT(p) up to 24 bits are 4-byte floats.
        precision = getattr(t, "precision", None)
        return "float" if precision is None or precision <= 24 else "double"
    if isinstance(t, st.Numeric):
        return _decimal(t.precision, t.scale)
    if isinstance(t, pg.MONEY):
        return "decimal(19,2)"
    if isinstance(t, pg.OID):
        return "bigint"  # unsigned 32 bits
    if isinstance(t, (st.Enum, my.SET, st.JSON, st.Uuid, pg.INET, pg.CIDR, pg.MACADDR, pg.TSVECTOR)):
        return "string"
    if isinstance(t, st.String):
        return _string(t.length, fixed=isinstance(t, st.CHAR))
    if isinstance(t, st.DateTime):
        if dialect == "mysql":
            # MySQL TIMESTAMP is stored in UTC and shown in the session zone; DATETIME is local.
            return "timestamp_ltz" if isinstance(t, my.TIMESTAMP) else "timestamp"
        return "timestamp_ltz" if t.timezone else "timestamp"
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
    t = vtypes.parse(canonical)
    if not isinstance(t, vtypes.Prim):
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
        return _decimal(nums[0], nums[1] if len(nums) > 1 else 0) if nums else _UNBOUNDED_DECIMAL
    if dt.this in (_DT.VARCHAR, _DT.NVARCHAR, _DT.CHAR, _DT.NCHAR):
        return _string(nums[0] if nums else None, fixed=dt.this in (_DT.CHAR, _DT.NCHAR))
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
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        tree = qualify(tree, schema={schema: glot_schema}, dialect=dialect, db=schema,
                       validate_qualify_columns=False, quote_identifiers=False)
        tree = annotate_types(tree, schema={schema: glot_schema}, dialect=dialect)
    except Exception:  # sqlglot raises many kinds of errors on SQL it cannot follow
        return []
    if not isinstance(tree, exp.Query):
        return []
    return [(sel.alias_or_name.lower(), _from_glot(sel.type) if sel.type is not None else None)
            for sel in tree.selects]


def _infer_missing(types: dict[str, dict[str, str | None]], bodies: Mapping[str, str],
                   tables: Mapping[str, Mapping[str, str]], schema: str) -> None:
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
            inferred = infer_types(bodies[view], "sqlite", schema, known)
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


# --------------------------------------------------------------- view bodies
_CREATE_VIEW_RE = re.compile(r"(?is)^\s*CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?VIEW\s.*?\bAS\s+(.*)$")


def view_body(definition: str, dialect: str) -> str:
    """The SELECT of a view definition: SQLite keeps the whole CREATE VIEW statement,
    PostgreSQL ends with ';'."""
    text = definition.strip()
    if dialect == "sqlite" and re.match(r"(?is)^\s*CREATE\b", text):
        text = _strip_create_view(text)
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text


def _strip_create_view(text: str) -> str:
    try:
        tokens = sqlglot.Dialect.get_or_raise("sqlite").tokenize(text)
    except Exception:
        tokens = []
    seen_view = False
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.VIEW:
            seen_view = True
        elif tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif seen_view and depth == 0 and tok.token_type == TokenType.ALIAS and i + 1 < len(tokens):
            return text[tokens[i + 1].start:].strip()
    m = _CREATE_VIEW_RE.match(text)
    return m.group(1).strip() if m else text


# ------------------------------------------------------------ catalog reads
@dataclass
class _RawView:
    name: str
    definition: str
    comment: str | None = None
    security: str = "definer"
    columns: list[ReflectedColumn] = field(default_factory=list)


def _read_only_url(url: URL) -> URL:
    """SQLite: open the file read-only, so a wrong path fails instead of creating a database."""
    path = url.database or ""
    if url.get_backend_name() != "sqlite" or path in ("", ":memory:") or path.startswith("file:"):
        return url
    return url.set(database="file:" + quote(path), query={**url.query, "mode": "ro", "uri": "true"})


def _read_only_session(dialect: str) -> Any:
    """A connect hook that makes every session read-only: discovery can never write."""
    statement = {
        "postgres": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
        "mysql": "SET SESSION TRANSACTION READ ONLY",
        "sqlite": "PRAGMA query_only = ON",
    }[dialect]

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(statement)
        finally:
            cursor.close()
        if dialect == "postgres":
            dbapi_connection.commit()  # psycopg opened a transaction for the SET

    return on_connect


def _is_true(value: str) -> bool:
    return value.strip().lower() in ("true", "on", "yes", "1")


class JdbcAdapter(CatalogAdapter):
    kind: ClassVar[str] = "jdbc"
    READ_ONLY_MESSAGE: ClassVar[str] = READ_ONLY_MESSAGE

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        super().__init__(name, options)
        raw = options.get("url")
        if not raw or not isinstance(raw, str):
            raise AdapterError(f"catalog {name!r} (jdbc): option 'url' is required, "
                               "e.g. postgresql+psycopg://user@host:5432/db")
        try:
            self._url: URL = sa.engine.make_url(raw)
        except Exception:
            raise AdapterError(f"catalog {name!r} (jdbc): 'url' is not a SQLAlchemy URL") from None
        backend = self._url.get_backend_name()
        if backend not in _DIALECTS:
            raise AdapterError(f"catalog {name!r} (jdbc): unsupported database {backend!r} "
                               "(supported: postgresql, mysql, mariadb, sqlite)")
        self.dialect: str = _DIALECTS[backend]
        self._engine: Engine | None = None
        self._engine_lock = threading.Lock()

    # ----------------------------------------------------------- plumbing
    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(strategy="read-only", writable=False, multi_dialect=False,
                            native_versions=False, writable_dialects=frozenset(),
                            rewrites_sql=True, requires_columns=False)

    def describe(self) -> str:
        return f"{self.name} (jdbc, {self._safe_url()})"

    def _safe_url(self) -> str:
        return self._url.render_as_string(hide_password=True)

    @property
    def engine(self) -> Engine:
        with self._engine_lock:  # fetch runs in several threads; one engine (and pool) for all
            if self._engine is None:
                try:
                    engine = sa.create_engine(_read_only_url(self._url), pool_pre_ping=True,
                                              connect_args=sql_connect_args(self._url))
                except Exception as exc:
                    raise self._error("cannot open the database", exc) from None
                sa.event.listen(engine, "connect", _read_only_session(self.dialect))
                self._engine = engine
            return self._engine

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def _short(self, exc: BaseException) -> str:
        """First line of the driver's message, without the password."""
        lines = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        message = lines[0] if lines else type(exc).__name__
        password = self._url.password
        return message.replace(str(password), "***") if password else message

    def _error(self, what: str, exc: BaseException) -> AdapterError:
        return AdapterError(f"catalog {self.name!r} ({self._safe_url()}): {what}: {self._short(exc)}")

    # ------------------------------------------------------------ reading
    def list_schemas(self) -> list[str]:
        try:
            with self.engine.connect() as conn:
                self.count_call()
                names = sa.inspect(conn).get_schema_names()
        except sa.exc.SQLAlchemyError as exc:
            raise self._error("cannot list schemas", exc) from None
        hidden = _SYSTEM_SCHEMAS[self.dialect]
        return sorted(n for n in names if n not in hidden and not n.startswith("pg_"))

    def fetch(self, schema: str) -> SchemaSnapshot:
        snap = SchemaSnapshot(catalog=self.name, schema=schema)
        try:
            with self.engine.connect() as conn:
                if not self._schema_exists(conn, schema):
                    snap.exists = False
                    return snap
                raws, snap.tables = self._read_objects(conn, schema)
                self._read_columns(conn, schema, raws)
                outputs: dict[str, list[str]] = {}
                for raw in raws:
                    names, error = self._probe(conn, schema, raw.name)
                    if error:
                        # e.g. no SELECT privilege: PostgreSQL's catalog still knows the columns
                        names = [str(c["name"]) for c in raw.columns]
                        fallback = "its columns are read from the catalog" if names else "its columns are unknown"
                        snap.warnings.append(f"{self.name}.{schema}.{raw.name}: the view cannot be "
                                             f"queried ({error}); {fallback}")
                    outputs[raw.name] = names
                types = {r.name: {str(c["name"]): canonical_type(c["type"], self.dialect)
                                  for c in r.columns} for r in raws}
                if self.dialect == "sqlite" and any(None in t.values() for t in types.values()):
                    known = self._sqlite_table_types(conn, schema)
                    _infer_missing(types, {r.name: view_body(r.definition, "sqlite") for r in raws},
                                   known, schema)
        except sa.exc.SQLAlchemyError as exc:
            raise self._error(f"cannot read schema {schema!r}", exc) from None
        for raw in raws:
            live = self._live_view(schema, raw, outputs[raw.name], types[raw.name], snap.warnings)
            if live is not None:
                snap.views[raw.name] = live
        return snap

    def _schema_exists(self, conn: Connection, schema: str) -> bool:
        self.count_call()
        if self.dialect == "sqlite":
            rows = conn.exec_driver_sql("PRAGMA database_list").all()
            return schema in {r[1] for r in rows} and schema != "temp"
        if self.dialect == "postgres":
            # pg_get_viewdef qualifies the names it cannot see on the search_path, so the
            # text depends on it: pin it (for this transaction) to the schema being read.
            # Same-schema names then read unqualified, as default_namespace = [schema] says.
            ns = sa.table("pg_namespace", sa.column("nspname"), schema="pg_catalog")
            pin = sa.func.pg_catalog.set_config("search_path", sa.func.pg_catalog.quote_ident(ns.c.nspname),
                                                True)
            query = sa.select(ns.c.nspname, pin).where(ns.c.nspname == schema)
        else:
            sch = sa.table("schemata", sa.column("schema_name"), schema="information_schema")
            query = sa.select(sch.c.schema_name).where(sch.c.schema_name == schema)
        return conn.execute(query).first() is not None

    def _read_objects(self, conn: Connection, schema: str) -> tuple[list[_RawView], set[str]]:
        """Views (with definition, comment, security) and the other names, in one query."""
        self.count_call()
        if self.dialect == "postgres":
            return self._read_objects_pg(conn, schema)
        if self.dialect == "mysql":
            return self._read_objects_mysql(conn, schema)
        return self._read_objects_sqlite(conn, schema)

    def _read_objects_pg(self, conn: Connection, schema: str) -> tuple[list[_RawView], set[str]]:
        cls = sa.table("pg_class", sa.column("oid"), sa.column("relname"), sa.column("relkind"),
                       sa.column("relnamespace"), sa.column("reloptions"), schema="pg_catalog")
        ns = sa.table("pg_namespace", sa.column("oid"), sa.column("nspname"), schema="pg_catalog")
        is_view = cls.c.relkind == "v"
        query = (
            sa.select(
                cls.c.relname, cls.c.relkind,
                sa.case((is_view, sa.func.pg_catalog.pg_get_viewdef(cls.c.oid)), else_=None),
                cls.c.reloptions,
                sa.func.pg_catalog.obj_description(cls.c.oid, "pg_class"),
            )
            .select_from(cls.join(ns, cls.c.relnamespace == ns.c.oid))
            .where(ns.c.nspname == schema, cls.c.relkind.notin_(["t"]))
            .order_by(cls.c.relname)
        )
        views: list[_RawView] = []
        tables: set[str] = set()
        for name, kind, definition, options, comment in conn.execute(query):
            if kind != "v":
                tables.add(name)
                continue
            security = "definer"
            for opt in options or []:
                key, _, value = str(opt).partition("=")
                if key == "security_invoker" and _is_true(value):
                    security = "invoker"
            views.append(_RawView(name, definition or "", comment or None, security))
        return views, tables

    def _read_objects_mysql(self, conn: Connection, schema: str) -> tuple[list[_RawView], set[str]]:
        # information_schema names are case-insensitive in MySQL and MariaDB.
        tab = sa.table("tables", sa.column("table_schema"), sa.column("table_name"),
                       sa.column("table_type"), schema="information_schema")
        vw = sa.table("views", sa.column("table_schema"), sa.column("table_name"),
                      sa.column("view_definition"), sa.column("security_type"),
                      schema="information_schema")
        query = (
            sa.select(tab.c.table_name, tab.c.table_type, vw.c.view_definition, vw.c.security_type)
            .select_from(tab.outerjoin(vw, sa.and_(vw.c.table_schema == tab.c.table_schema,
                                                   vw.c.table_name == tab.c.table_name)))
            .where(tab.c.table_schema == schema)
            .order_by(tab.c.table_name)
        )
        views: list[_RawView] = []
        tables: set[str] = set()
        for name, kind, definition, security in conn.execute(query):
            if str(kind).upper() != "VIEW":
                tables.add(name)
                continue
            sec = "invoker" if str(security or "").upper() == "INVOKER" else "definer"
            views.append(_RawView(name, definition or "", None, sec))
        return views, tables

    def _read_objects_sqlite(self, conn: Connection, schema: str) -> tuple[list[_RawView], set[str]]:
        master = sa.table("sqlite_master", sa.column("type"), sa.column("name"), sa.column("sql"),
                          schema=schema)
        query = (sa.select(master.c.name, master.c.type, master.c.sql)
                 .where(master.c.type.in_(["table", "view", "index"]))
                 .order_by(master.c.name))
        views: list[_RawView] = []
        tables: set[str] = set()
        for name, kind, definition in conn.execute(query):
            if kind == "view":
                views.append(_RawView(name, definition or ""))
            elif not str(name).startswith("sqlite_"):
                tables.add(name)
        return views, tables

    def _read_columns(self, conn: Connection, schema: str, raws: list[_RawView]) -> None:
        """Inspector column rows for every view; a fresh inspector, since inspectors cache."""
        if not raws:
            return
        inspector = sa.inspect(conn)
        sch = None if self.dialect == "sqlite" and schema == "main" else schema
        by_name = {r.name: r for r in raws}
        self.count_call()
        try:
            multi = inspector.get_multi_columns(schema=sch, kind=ObjectKind.VIEW,
                                                filter_names=list(by_name))
            for (_, name), cols in multi.items():
                if name in by_name:
                    by_name[name].columns = list(cols)
            return
        except sa.exc.SQLAlchemyError:
            # One broken view (SQLite reflects each view by running it) must not hide the others.
            conn.rollback()
        for raw in raws:
            self.count_call()
            try:
                raw.columns = list(inspector.get_columns(raw.name, schema=sch))
            except sa.exc.SQLAlchemyError:
                conn.rollback()
                raw.columns = []

    def _probe(self, conn: Connection, schema: str, name: str) -> tuple[list[str], str | None]:
        """Output column names of a view, by running it with a false predicate."""
        sch = None if self.dialect == "sqlite" and schema == "main" else schema
        query: sa.Select[Any] = (
            sa.select(sa.literal_column("*")).select_from(sa.table(name, schema=sch)).where(sa.false())
        )
        self.count_call()
        try:
            result = conn.execute(query)
            names = list(map(str, result.keys()))
            result.close()
            return names, None
        except sa.exc.SQLAlchemyError as exc:
            conn.rollback()  # PostgreSQL refuses further statements in a failed transaction
            return [], self._short(exc)

    def _live_view(self, schema: str, raw: _RawView, names: list[str], types: dict[str, str | None],
                   notes: list[str]) -> LiveView | None:
        vid = ViewId(self.name, schema, raw.name)
        body = view_body(raw.definition, self.dialect)
        if not body:
            notes.append(f"{vid}: the view definition is not readable (missing privilege?); skipped")
            return None
        reflected = {str(c["name"]): c for c in raw.columns}
        columns: list[dict[str, Any]] = []
        for col_name in names:
            row = reflected.get(col_name)
            canonical = types.get(col_name)
            if canonical is None:
                # SQLite view columns without a declared type are untyped, not unknown.
                if row is not None and (self.dialect != "sqlite" or not isinstance(row["type"], st.NullType)):
                    known = not isinstance(row["type"], st.NullType)
                    notes.append(f"{vid}: column {col_name!r} has a type "
                                 f"{str(row['type']) + ' ' if known else 'unknown to SQLAlchemy '}"
                                 "with no canonical equivalent; read as string")
                canonical = "string"
            comment = (row.get("comment") or None) if row and self.dialect == "postgres" else None
            columns.append({"name": col_name, "type": canonical, "comment": comment})
        try:  # a column the model rejects (e.g. an empty name) makes the view unrepresentable, not a crash
            spec = ViewSpec(
                comment=raw.comment if self.dialect == "postgres" else None,
                columns=[Column(**c) for c in columns],
                representations=[Representation(dialect=self.dialect, sql=body)],
                default_namespace=[schema],
                security="invoker" if raw.security == "invoker" else "definer",
            )
        except ValidationError as exc:
            notes.append(f"{vid}: cannot be represented ({exc.errors()[0]['msg']}); skipped")
            return None
        return LiveView(id=vid, spec=spec, format=self.dialect, managed_by=None, writable=False)

    def _sqlite_table_types(self, conn: Connection, schema: str) -> dict[str, dict[str, str]]:
        """Canonical column types of the tables of a SQLite schema (for type inference)."""
        self.count_call()
        try:
            multi = sa.inspect(conn).get_multi_columns(schema=None if schema == "main" else schema,
                                                       kind=ObjectKind.TABLE)
        except sa.exc.SQLAlchemyError:
            conn.rollback()
            return {}
        return {name: {str(c["name"]): t for c in cols
                       if (t := canonical_type(c["type"], "sqlite")) is not None}
                for (_, name), cols in multi.items()}

    # -------------------------------------------------------- expectations
    def storable(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> ViewSpec:
        """What a view matching `spec` reads back as: the database decides the namespace,
        holds no owner, properties or default catalog, and keeps comments only on
        PostgreSQL and security only on PostgreSQL and MySQL."""
        reps = [r for r in spec.representations if r.dialect == self.dialect] or list(spec.representations)
        keep_comments = self.dialect == "postgres"
        columns = [c if keep_comments else c.model_copy(update={"comment": None}) for c in spec.columns]
        return spec.model_copy(update={
            "comment": spec.comment if keep_comments else None,
            "columns": columns,
            "representations": reps,
            "default_catalog": None,
            "default_namespace": [view.schema],
            "security": spec.security if self.dialect != "sqlite" else "definer",
            "owner": None,
            "properties": {},
        })

    def check(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> list[tuple[str, str]]:
        if spec.sql_for(self.dialect) is None:
            return [("dialect_not_storable",
                     f"catalog {self.name!r}, view {view}: this {self.dialect} catalog holds "
                     f"{self.dialect} SQL; declare a representation with dialect {self.dialect!r}")]
        return []

    # --------------------------------------------------- writes: refused
    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        raise AdapterError(read_only_message(self.name, view))

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        raise AdapterError(read_only_message(self.name, live.id))

    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        raise AdapterError(read_only_message(self.name, live.id))
