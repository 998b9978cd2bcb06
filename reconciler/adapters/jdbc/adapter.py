"""JDBC databases (PostgreSQL, MySQL/MariaDB, SQLite): read-only view discovery.

viewsync never writes here. Declarations in a JDBC catalog are expectations:
`fetch` reads each view's body, columns and canonical column types so plan and
drift can say where the database differs from what the repository expects,
and `import` can turn existing views into YAML.

Columns come from running the view (`SELECT * FROM v WHERE 1=0`: names, order,
and proof the view still works) joined by name with the inspector's types.
SQLite has no types for computed view columns; those are inferred with
sqlglot from the types of the objects the view reads (`types`).

Identifiers always go through SQLAlchemy constructs (never pasted into SQL),
and the connection URL is only ever shown with its password hidden. Every
session is read-only at the database (SQLite files are opened read-only), and
PostgreSQL's search_path is pinned while reading so view bodies come out the
same for every user. What differs between databases is in `dialects`.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import sqlalchemy as sa
from pydantic import Field, ValidationError
from sqlalchemy import types as st
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.engine.reflection import ObjectKind

from reconciler.adapters.base import AdapterError, Capabilities, ReadOnlyAdapter, SchemaSnapshot, detail_of
from reconciler.adapters.jdbc.dialects import DATABASES, Database, RawView
from reconciler.adapters.jdbc.types import canonical_type, infer_missing
from reconciler.adapters.options import CatalogOptions
from reconciler.core.model import Column, LiveView, Representation, ViewId, ViewSpec
from reconciler.db.engines import missing_driver
from reconciler.db.timeouts import sql_connect_args

READ_ONLY_MESSAGE = (
    "JDBC catalogs are read-only in viewsync; views can be managed in catalogs of type "
    "managed, iceberg-rest, hms or glue"
)


@contextmanager
def _quiet_unknown_types() -> Iterator[None]:
    """Reflection warns about column types SQLAlchemy does not know; we report those in
    SchemaSnapshot.warnings (read as string) instead. Scoped to our own reads."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Did not recognize type", category=sa.exc.SAWarning)
        yield


def _read_only_session(db: Database) -> Any:
    """A connect hook that makes every session read-only: discovery can never write."""

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(db.read_only_statement)
        finally:
            cursor.close()
        db.after_read_only(dbapi_connection)

    return on_connect


class JdbcOptions(CatalogOptions):
    """read-only"""

    url: str = Field(description="`postgresql+psycopg://…`, `mysql+pymysql://…` or `sqlite:///…`")


class JdbcAdapter(ReadOnlyAdapter):
    kind: ClassVar[str] = "jdbc"
    Options = JdbcOptions
    READ_ONLY_MESSAGE: ClassVar[str] = READ_ONLY_MESSAGE

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        super().__init__(name, options)
        raw = options.get("url")
        if not raw or not isinstance(raw, str):
            raise self.error(f"catalog {name!r} (jdbc): option 'url' is required, "
                             "e.g. postgresql+psycopg://user@host:5432/db")
        try:
            self._url: URL = sa.engine.make_url(raw)
        except sa.exc.ArgumentError:
            raise self.error(f"catalog {name!r} (jdbc): 'url' is not a SQLAlchemy URL") from None
        backend = self._url.get_backend_name()
        if backend not in DATABASES:
            raise self.error(f"catalog {name!r} (jdbc): unsupported database {backend!r} "
                             "(supported: postgresql, mysql, mariadb, sqlite)")
        self.db: Database = DATABASES[backend]
        self.dialect: str = self.db.name
        self._engine: Engine | None = None
        self._engine_lock = threading.Lock()

    # ----------------------------------------------------------- plumbing
    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(strategy="read-only", writable=self.WRITABLE, writable_dialects=frozenset(),
                            rewrites_sql=True)

    def describe(self) -> str:
        return f"{self.name} (jdbc, {self._safe_url()})"

    def _safe_url(self) -> str:
        return self._url.render_as_string(hide_password=True)

    def secret_values(self) -> list[str]:
        raw = self.options.get("url")
        try:
            password = sa.engine.make_url(raw).password if isinstance(raw, str) else None
        except sa.exc.ArgumentError:
            return []
        return [str(password)] if password else []

    @property
    def engine(self) -> Engine:
        with self._engine_lock:  # fetch runs in several threads; one engine (and pool) for all
            if self._engine is None:
                try:
                    engine = sa.create_engine(self.db.read_only_url(self._url), pool_pre_ping=True,
                                              connect_args=sql_connect_args(self._url))
                except sa.exc.SQLAlchemyError as exc:
                    raise self._error("cannot open the database", exc) from None
                except ImportError as exc:  # the dialect's driver: SQLAlchemy imports it here
                    raise self._error("cannot open the database", missing_driver(self._url, exc)) from None
                sa.event.listen(engine, "connect", _read_only_session(self.db))
                self._engine = engine
            return self._engine

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def _short(self, exc: BaseException) -> str:
        """First line of the driver's message, redacted."""
        return self.redact(detail_of(exc))

    def _error(self, what: str, exc: BaseException | str) -> AdapterError:
        return self.error(f"catalog {self.name!r} ({self._safe_url()}): {what}: {detail_of(exc)}")

    # ------------------------------------------------------------ reading
    def list_schemas(self) -> list[str]:
        try:
            with self.engine.connect() as conn:
                self.count_call()
                names = sa.inspect(conn).get_schema_names()
        except sa.exc.SQLAlchemyError as exc:
            raise self._error("cannot list schemas", exc) from None
        return sorted(n for n in names if not self.db.is_hidden(n))

    def fetch(self, schema: str) -> SchemaSnapshot:
        snap = SchemaSnapshot(catalog=self.name, schema=schema)
        try:
            with self.engine.connect() as conn, _quiet_unknown_types():
                self.count_call()
                if not self.db.schema_exists(conn, schema):
                    snap.exists = False
                    return snap
                self.count_call()
                raws, snap.tables = self.db.read_objects(conn, schema)
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
                types = {r.name: {str(c["name"]): canonical_type(c["type"], self.db)
                                  for c in r.columns} for r in raws}
                if self.db.untyped_view_columns and any(None in t.values() for t in types.values()):
                    known = self._table_types(conn, schema)
                    infer_missing(types, {r.name: self.db.view_body(r.definition) for r in raws}, known, schema,
                                  self.dialect)
        except sa.exc.SQLAlchemyError as exc:
            raise self._error(f"cannot read schema {schema!r}", exc) from None
        for raw in raws:
            live = self._live_view(schema, raw, outputs[raw.name], types[raw.name], snap.warnings)
            if live is not None:
                snap.views[raw.name] = live
        return snap

    def table_schemas(self, tables: list[tuple[str, str]]) -> dict[tuple[str, str], list[Column]]:
        out: dict[tuple[str, str], list[Column]] = {}
        try:
            with self.engine.connect() as conn, _quiet_unknown_types():
                inspector = sa.inspect(conn)
                for schema, name in sorted(set(tables)):
                    self.count_call()
                    try:
                        rows = inspector.get_columns(name, schema=self.db.reflect_schema(schema))
                    except sa.exc.NoSuchTableError:
                        continue
                    cols = [(str(r["name"]), canonical_type(r["type"], self.db), r.get("comment")) for r in rows]
                    if cols and all(t is not None for _, t, _ in cols):
                        out[(schema, name)] = [Column(name=n, type=str(t), comment=c) for n, t, c in cols]
        except sa.exc.SQLAlchemyError as exc:
            raise self._error("cannot read table columns", exc) from None
        return out

    def _read_columns(self, conn: Connection, schema: str, raws: list[RawView]) -> None:
        """Inspector column rows for every view; a fresh inspector, since inspectors cache."""
        if not raws:
            return
        inspector = sa.inspect(conn)
        sch = self.db.reflect_schema(schema)
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
        sch = self.db.reflect_schema(schema)
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

    def _live_view(self, schema: str, raw: RawView, names: list[str], types: dict[str, str | None],
                   notes: list[str]) -> LiveView | None:
        vid = ViewId(self.name, schema, raw.name)
        body = self.db.view_body(raw.definition)
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
                if row is not None and (not self.db.untyped_view_columns or not isinstance(row["type"], st.NullType)):
                    known = not isinstance(row["type"], st.NullType)
                    notes.append(f"{vid}: column {col_name!r} has a type "
                                 f"{str(row['type']) + ' ' if known else 'unknown to SQLAlchemy '}"
                                 "with no canonical equivalent; read as string")
                canonical = "string"
            comment = (row.get("comment") or None) if row and self.db.keeps_comments else None
            columns.append({"name": col_name, "type": canonical, "comment": comment})
        try:  # a column the model rejects (e.g. an empty name) makes the view unrepresentable, not a crash
            spec = ViewSpec(
                comment=raw.comment if self.db.keeps_comments else None,
                columns=[Column(**c) for c in columns],
                representations=[Representation(dialect=self.dialect, sql=body)],
                default_namespace=[schema],
                security="invoker" if raw.security == "invoker" else "definer",
            )
        except ValidationError as exc:
            notes.append(f"{vid}: cannot be represented ({exc.errors()[0]['msg']}); skipped")
            return None
        return LiveView(id=vid, spec=spec, format=self.dialect, managed_by=None, writable=False)

    def _table_types(self, conn: Connection, schema: str) -> dict[str, dict[str, str]]:
        """Canonical column types of the tables of a schema (for type inference)."""
        self.count_call()
        try:
            multi = sa.inspect(conn).get_multi_columns(schema=self.db.reflect_schema(schema),
                                                       kind=ObjectKind.TABLE)
        except sa.exc.SQLAlchemyError:
            conn.rollback()
            return {}
        return {name: {str(c["name"]): t for c in cols
                       if (t := canonical_type(c["type"], self.db)) is not None}
                for (_, name), cols in multi.items()}

    # -------------------------------------------------------- expectations
    def storable(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> ViewSpec:
        """What a view matching `spec` reads back as: the database decides the namespace,
        holds no owner, properties or default catalog, and keeps comments only on
        PostgreSQL and security only on PostgreSQL and MySQL."""
        reps = [r for r in spec.representations if r.dialect == self.dialect] or list(spec.representations)
        keep_comments = self.db.keeps_comments
        columns = [c if keep_comments else c.model_copy(update={"comment": None}) for c in spec.columns]
        return spec.model_copy(update={
            "comment": spec.comment if keep_comments else None,
            "columns": columns,
            "representations": reps,
            "default_catalog": None,
            "default_namespace": [view.schema],
            "security": spec.security if self.db.keeps_security else "definer",
            "owner": None,
            "properties": {},
        })

    def check(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> list[tuple[str, str]]:
        if spec.sql_for(self.dialect) is None:
            return [("dialect_not_storable",
                     f"catalog {self.name!r}, view {view}: this {self.dialect} catalog holds "
                     f"{self.dialect} SQL; declare a representation with dialect {self.dialect!r}")]
        return []

