"""The databases a JDBC catalog reads, one small class each holding only its
differences (sqlglot-dialect style): system schemas, how a session is made
read-only, how views, their definitions and security are listed, which view
fields the database keeps, and its column-type rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import quote

import sqlalchemy as sa
import sqlglot
from sqlalchemy import types as st
from sqlalchemy.dialects import mysql as my
from sqlalchemy.engine import URL, Connection
from sqlalchemy.engine.interfaces import ReflectedColumn
from sqlglot import TokenType

from reconciler.adapters.jdbc import types as jtypes
from reconciler.core.sql import quoted_ident

_CREATE_VIEW_RE = re.compile(r"(?is)^\s*CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?VIEW\s.*?\bAS\s+(.*)$")


@dataclass
class RawView:
    """A view as the database lists it, before it becomes a ViewSpec."""

    name: str
    definition: str
    comment: str | None = None
    security: str = "definer"
    columns: list[ReflectedColumn] = field(default_factory=list)


def _is_true(value: str) -> bool:
    return value.strip().lower() in ("true", "on", "yes", "1")


class Database:
    """What every supported database shares; subclasses override their differences."""

    name: ClassVar[str]  # the sqlglot dialect, also LiveView.format and the declared dialect
    system_schemas: ClassVar[frozenset[str]]
    read_only_statement: ClassVar[str]  # run on every new connection
    keeps_comments: ClassVar[bool] = False  # view and column comments
    keeps_security: ClassVar[bool] = True  # SQL SECURITY definer/invoker
    untyped_view_columns: ClassVar[bool] = False  # view columns may have no type (then inferred)
    # How Spark's JDBC source reaches it (data review): the driver class, the URL's scheme and
    # default port, the pinned driver jar (reconciler/jars/pinned.toml) and Debian's.
    spark_driver: ClassVar[str]
    jdbc_scheme: ClassVar[str]
    default_port: ClassVar[int] = 0
    pinned_driver: ClassVar[str | None] = None
    debian_driver_jar: ClassVar[str | None] = None
    schema_is_database: ClassVar[bool] = False  # a schema is a database, named in the URL

    def jdbc_url(self, host: str | None, port: int | None, database: str | None) -> str:
        return f"{self.jdbc_scheme}://{host or '127.0.0.1'}:{port or self.default_port}/{database or ''}"

    def session_init(self, schema: str) -> str:
        """What a Spark JDBC session runs first to read `schema`'s views: read-only."""
        return self.read_only_statement

    def read_only_url(self, url: URL) -> URL:
        return url

    def after_read_only(self, dbapi_connection: Any) -> None:
        """Called after `read_only_statement` on a new connection."""

    def is_hidden(self, schema: str) -> bool:
        return schema in self.system_schemas

    def reflect_schema(self, schema: str) -> str | None:
        """The schema argument SQLAlchemy's inspector wants for `schema`."""
        return schema

    def schema_exists(self, conn: Connection, schema: str) -> bool:
        sch = sa.table("schemata", sa.column("schema_name"), schema="information_schema")
        return conn.execute(sa.select(sch.c.schema_name).where(sch.c.schema_name == schema)).first() is not None

    def read_objects(self, conn: Connection, schema: str) -> tuple[list[RawView], set[str]]:
        """Views (with definition, comment, security) and the other names, in one query."""
        raise NotImplementedError

    def view_body(self, definition: str) -> str:
        """The SELECT of a stored view definition."""
        text = definition.strip()
        while text.endswith(";"):
            text = text[:-1].rstrip()
        return text

    # column type rules (jtypes.TypeRules)
    def integer_type(self, t: st.Integer) -> str:
        if isinstance(t, st.SmallInteger):
            return "smallint"
        return "bigint" if isinstance(t, st.BigInteger) else "int"

    def float_type(self, t: st.Float[Any]) -> str:
        if isinstance(t, st.Double):
            return "double"
        # REAL, MySQL FLOAT, and FLOAT(p) up to 24 bits are 4-byte floats.
        precision = getattr(t, "precision", None)
        return "float" if precision is None or precision <= 24 else "double"

    def datetime_type(self, t: st.DateTime) -> str:
        return "timestamp_ltz" if t.timezone else "timestamp"


class Postgres(Database):
    name = "postgres"
    system_schemas = frozenset({"information_schema", "pg_catalog", "pg_toast"})
    read_only_statement = "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"
    keeps_comments = True
    spark_driver = "org.postgresql.Driver"
    jdbc_scheme = "jdbc:postgresql"
    default_port = 5432
    pinned_driver = "postgresql"
    debian_driver_jar = "/usr/share/java/postgresql.jar"

    def session_init(self, schema: str) -> str:
        # the view's own schema first, as the database resolves its unqualified names
        return f"SET search_path TO {quoted_ident(schema)}, public; {self.read_only_statement}"

    def after_read_only(self, dbapi_connection: Any) -> None:
        dbapi_connection.commit()  # psycopg opened a transaction for the SET

    def is_hidden(self, schema: str) -> bool:
        return super().is_hidden(schema) or schema.startswith("pg_")

    def schema_exists(self, conn: Connection, schema: str) -> bool:
        # pg_get_viewdef qualifies the names it cannot see on the search_path, so the
        # text depends on it: pin it (for this transaction) to the schema being read.
        # Same-schema names then read unqualified, as default_namespace = [schema] says.
        ns = sa.table("pg_namespace", sa.column("nspname"), schema="pg_catalog")
        pin = sa.func.pg_catalog.set_config("search_path", sa.func.pg_catalog.quote_ident(ns.c.nspname), True)
        return conn.execute(sa.select(ns.c.nspname, pin).where(ns.c.nspname == schema)).first() is not None

    def read_objects(self, conn: Connection, schema: str) -> tuple[list[RawView], set[str]]:
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
        views: list[RawView] = []
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
            views.append(RawView(name, definition or "", comment or None, security))
        return views, tables


class MySQL(Database):
    name = "mysql"
    system_schemas = frozenset({"information_schema", "mysql", "performance_schema", "sys"})
    read_only_statement = "SET SESSION TRANSACTION READ ONLY"
    spark_driver = "org.mariadb.jdbc.Driver"  # MariaDB's driver reads MySQL too
    jdbc_scheme = "jdbc:mariadb"
    default_port = 3306
    pinned_driver = "mariadb-java-client"
    debian_driver_jar = "/usr/share/java/mariadb-java-client.jar"
    schema_is_database = True

    def read_objects(self, conn: Connection, schema: str) -> tuple[list[RawView], set[str]]:
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
        views: list[RawView] = []
        tables: set[str] = set()
        for name, kind, definition, security in conn.execute(query):
            if str(kind).upper() != "VIEW":
                tables.add(name)
                continue
            sec = "invoker" if str(security or "").upper() == "INVOKER" else "definer"
            views.append(RawView(name, definition or "", None, sec))
        return views, tables


    def integer_type(self, t: st.Integer) -> str:
        return jtypes.mysql_integer(t)

    def datetime_type(self, t: st.DateTime) -> str:
        # MySQL TIMESTAMP is stored in UTC and shown in the session zone; DATETIME is local.
        return "timestamp_ltz" if isinstance(t, my.TIMESTAMP) else "timestamp"


class SQLite(Database):
    name = "sqlite"
    system_schemas = frozenset({"temp"})
    read_only_statement = "PRAGMA query_only = ON"
    keeps_security = False
    untyped_view_columns = True
    spark_driver = "org.sqlite.JDBC"
    jdbc_scheme = "jdbc:sqlite"

    def jdbc_url(self, host: str | None, port: int | None, database: str | None) -> str:
        return f"jdbc:sqlite:{database}"

    def read_only_url(self, url: URL) -> URL:
        """Open the file read-only, so a wrong path fails instead of creating a database."""
        path = url.database or ""
        if path in ("", ":memory:") or path.startswith("file:"):
            return url
        return url.set(database="file:" + quote(path), query={**url.query, "mode": "ro", "uri": "true"})

    def reflect_schema(self, schema: str) -> str | None:
        return None if schema == "main" else schema

    def schema_exists(self, conn: Connection, schema: str) -> bool:
        rows = conn.exec_driver_sql("PRAGMA database_list").all()
        return schema in {r[1] for r in rows} and schema != "temp"

    def read_objects(self, conn: Connection, schema: str) -> tuple[list[RawView], set[str]]:
        master = sa.table("sqlite_master", sa.column("type"), sa.column("name"), sa.column("sql"),
                          schema=schema)
        query = (sa.select(master.c.name, master.c.type, master.c.sql)
                 .where(master.c.type.in_(["table", "view", "index"]))
                 .order_by(master.c.name))
        views: list[RawView] = []
        tables: set[str] = set()
        for name, kind, definition in conn.execute(query):
            if kind == "view":
                views.append(RawView(name, definition or ""))
            elif not str(name).startswith("sqlite_"):
                tables.add(name)
        return views, tables


    def view_body(self, definition: str) -> str:
        """SQLite keeps the whole CREATE VIEW statement."""
        text = definition.strip()
        if re.match(r"(?is)^\s*CREATE\b", text):
            text = _strip_create_view(text)
        return super().view_body(text)

    def float_type(self, t: st.Float[Any]) -> str:
        return "double"  # SQLite stores every floating point value in 8 bytes


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


# SQLAlchemy backend name -> the database class
DATABASES: dict[str, Database] = {"postgresql": Postgres(), "mysql": MySQL(), "mariadb": MySQL(),
                                  "sqlite": SQLite()}


def database(name: str) -> Database:
    """The database whose sqlglot dialect is `name` (postgres, mysql, sqlite)."""
    return next(db for db in DATABASES.values() if db.name == name)
