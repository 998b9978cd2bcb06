"""Full management: every view's metadata lives in our own SQL store.

Its tables (reconciler.adapters.managed.tables) follow the Gravitino view
design: one `view_meta` row per view and one immutable `view_version_info` row
per version. Every change writes a new version row; a drop soft-deletes. Works
on SQLite and PostgreSQL. Reads are text SQL through reconciler.db.store_reads (a
plan on a SQLite file never imports SQLAlchemy); writes go through SQLAlchemy.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import Field

from reconciler.adapters.base import Capabilities, Marker, NativeVersion, SchemaSnapshot, WritableAdapter, WriteContext
from reconciler.adapters.options import CatalogOptions
from reconciler.core.errors import AdapterError, ConflictError
from reconciler.core.model import (
    MARKER_PREFIX,
    AdapterHandle,
    Column,
    LiveView,
    Representation,
    ViewId,
    ViewSpec,
    marks_of,
    trusted,
)
from reconciler.db.store_reads import EngineReads, ReadFailed, Reads, SqliteFileReads, sqlite_file

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

TABLES = ("view_meta", "view_version_info")  # managed_tables.metadata's tables (tested)

_LIST_SCHEMAS = ("SELECT DISTINCT schema_name FROM view_meta "
                 "WHERE catalog_name = :catalog AND deleted_at = 0")
_FETCH = ("SELECT m.view_id, m.view_name, m.managed_by, m.spec_digest, m.current_version, v.view_comment, "
          "v.columns, v.properties, v.security_mode, v.owner, v.default_catalog, v.default_namespace, "
          "v.representations "
          "FROM view_meta m JOIN view_version_info v ON v.view_id = m.view_id AND v.version = m.current_version "
          "WHERE m.catalog_name = :catalog AND m.schema_name = :schema AND m.deleted_at = 0")
_HISTORY = ("SELECT v.version, v.audit_info, v.representations, v.spec_digest "
            "FROM view_version_info v JOIN view_meta m ON m.view_id = v.view_id "
            "WHERE m.catalog_name = :catalog AND m.schema_name = :schema AND m.view_name = :name "
            "ORDER BY v.version")


def _now_ms() -> int:
    return int(time.time() * 1000)


def _audit(actor: str, created: dict[str, Any] | None = None) -> str:
    now = _now_ms()
    info = dict(created or {"creator": actor, "create_time": now})
    info.update({"last_modifier": actor, "last_modified_time": now})
    return json.dumps(info, sort_keys=True)


class ManagedOptions(CatalogOptions):
    url: str | None = Field(None, description="SQLAlchemy URL of the store (SQLite or PostgreSQL)")


class ManagedHandle(AdapterHandle):
    """The row id of the view in `view_meta`."""

    __slots__ = ("view_id",)

    def __init__(self, view_id: int) -> None:
        self.view_id = view_id


class ManagedAdapter(WritableAdapter):
    kind = "managed"
    Options = ManagedOptions

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        super().__init__(name, options)
        url = options.get("url")
        if not isinstance(url, str) or not url:
            raise AdapterError(f"catalog {name!r}: managed catalogs need a 'url' (SQLAlchemy URL)")
        self.url = url
        self._engine: Engine | None = None
        self._engine_made = threading.Lock()  # one engine, whichever thread asks first
        path = sqlite_file(url)
        try:
            self._reads: Reads = SqliteFileReads(path) if path is not None else EngineReads(self.engine)
            self._tables = self._reads.has_tables(TABLES)  # connects: a bad URL fails here
        except ReadFailed as err:
            raise self.fail("cannot open the managed store", err.cause) from None

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, made on first use (writes; every read of a non-file URL)."""
        with self._engine_made:
            if self._engine is None:
                from sqlalchemy.exc import SQLAlchemyError

                from reconciler.db.engines import create_engine

                try:
                    self._engine = create_engine(self.url)
                except SQLAlchemyError as err:
                    raise self.fail("cannot open the managed store", err) from None
            return self._engine

    def _writable(self) -> None:
        """Tables are created by the first write, never by a read (plan is read-only)."""
        if not self._tables:
            from sqlalchemy.exc import SQLAlchemyError

            from reconciler.adapters.managed.tables import metadata
            from reconciler.db.engines import ensure_tables

            try:
                ensure_tables(metadata, self.engine)
            except (SQLAlchemyError, OSError) as err:
                raise self.fail("cannot create the managed store", err) from None
            self._tables = True

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(strategy="managed", writable=self.WRITABLE, io_bound_fetch=self._reads.backend != "sqlite")

    def describe(self) -> str:
        # A plain SQLite file URL has no password; any other is rendered by SQLAlchemy, which hides it.
        where = self.url if isinstance(self._reads, SqliteFileReads) \
            else self.engine.url.render_as_string(hide_password=True)
        return f"{self.name} (managed, {where})"

    def close(self) -> None:
        self._reads.close()  # a prefetch may still be reading
        if self._engine is not None:
            self._engine.dispose()

    # ------------------------------------------------------------------ reads
    def _read(self, what: str, sql: str, **params: Any) -> list[Any]:
        """Rows of one read statement; a store failure is an AdapterError naming the catalog."""
        self.count_call()
        try:
            if not self._tables:  # another writer may have created them since
                self._tables = self._reads.has_tables(TABLES)
            if not self._tables:  # nothing written yet: an empty store, and nothing is created
                return []
            return self._reads.rows(sql, params)
        except ReadFailed as err:
            raise self.fail(f"cannot {what} in the managed store", err.cause) from None

    def list_schemas(self) -> list[str]:
        return sorted(r[0] for r in self._read("list schemas", _LIST_SCHEMAS, catalog=self.name))

    def create_schema(self, schema: str, properties: Mapping[str, str]) -> bool:
        """Managed schemas have no row of their own: a schema exists while it holds a view.
        True when it holds none yet (its first view creates it)."""
        return schema not in self.list_schemas()

    def drop_schema(self, schema: str) -> bool:
        """Nothing to drop: a managed schema is gone once its last view is. True when it is empty."""
        return schema not in self.list_schemas()

    def fetch(self, schema: str) -> SchemaSnapshot:
        snap = SchemaSnapshot(self.name, schema)
        rows = self._read(f"read schema {schema!r}", _FETCH, catalog=self.name, schema=schema)
        for (view_id, name, managed_by, spec_digest, version, comment, columns, properties, security, owner,
             default_catalog, default_namespace, representations) in rows:
            # Rows we wrote from validated specs: rebuild them without re-validating.
            props = json.loads(properties)
            marks = marks_of(props) if MARKER_PREFIX in properties else {}
            for key in marks:
                del props[key]
            spec = trusted(ViewSpec, {
                "comment": comment,
                "columns": [trusted(Column, c) for c in json.loads(columns)],
                "representations": [trusted(Representation, x) for x in json.loads(representations)],
                "default_catalog": default_catalog,
                "default_namespace": json.loads(default_namespace) if default_namespace else None,
                "security": security,
                "owner": owner,
                "properties": props,
            })
            snap.views[name] = trusted(LiveView, {
                "id": ViewId(self.name, schema, name), "spec": spec, "format": "managed",
                "managed_by": managed_by, "spec_digest": spec_digest,
                "native_version": str(version),
                "fingerprint": f"managed:v{version}:{spec.digest()}", "writable": True,
                "handle": ManagedHandle(view_id), "marks": marks,
            })
        return snap

    def native_history(self, view: ViewId) -> list[NativeVersion]:
        rows = self._read(f"read the versions of {view}", _HISTORY, catalog=view.catalog, schema=view.schema,
                          name=view.name)
        out = []
        for version, audit_info, representations, digest in rows:
            audit = json.loads(audit_info)
            out.append(NativeVersion(
                version=str(version), timestamp_ms=audit.get("last_modified_time"),
                summary={"actor": str(audit.get("last_modifier", "")), "digest": digest or ""},
                dialects=tuple(x["dialect"] for x in json.loads(representations))))
        return out

    # ----------------------------------------------------------------- writes
    @staticmethod
    def _version_row(view_id: int, version: int, spec: ViewSpec, marker: Marker, actor: str) -> dict[str, Any]:
        digest = marker.spec_digest
        # A preview copy's marks are kept with the properties (the store has no column for them)
        # and split off again when read (marks_of).
        return {
            "view_id": view_id, "version": version, "view_comment": spec.comment,
            "columns": json.dumps([c.model_dump() for c in spec.columns]),
            "properties": json.dumps({**spec.properties, **dict(marker.extra)}, sort_keys=True),
            "security_mode": spec.security, "owner": spec.owner, "default_catalog": spec.default_catalog,
            "default_namespace": json.dumps(spec.default_namespace) if spec.default_namespace is not None
            else None,
            "representations": json.dumps([r.model_dump() for r in spec.representations]),
            "spec_digest": digest, "audit_info": _audit(actor), "deleted_at": 0,
        }

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        import sqlalchemy as sa

        from reconciler.adapters.managed.tables import view_meta as m
        from reconciler.adapters.managed.tables import view_version_info

        self._writable()
        try:
            with self.engine.begin() as conn:
                res = conn.execute(m.insert().values(
                    catalog_name=view.catalog, schema_name=view.schema, view_name=view.name,
                    managed_by=marker.project, spec_digest=marker.spec_digest, audit_info=_audit(ctx.actor),
                    current_version=1, last_version=1, deleted_at=0))
                view_id = int(res.inserted_primary_key[0])  # type: ignore[index]
                conn.execute(view_version_info.insert().values(
                    self._version_row(view_id, 1, spec, marker, ctx.actor)))
        except sa.exc.IntegrityError as err:
            if view.name in self.fetch(view.schema).views:
                raise ConflictError(f"view {view} already exists in catalog {self.name!r}") from None
            raise self.error(f"managed store refused {view}: {err.orig}") from None
        except sa.exc.SQLAlchemyError as err:
            raise self.error(f"managed store error creating {view}: {err}") from None

    def _view_id(self, live: LiveView) -> int:
        handle = self.handle_of(live, ManagedHandle)
        if handle is None:
            raise self.error(f"catalog {self.name!r}: {live.id} was not read from this catalog")
        return handle.view_id

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        import sqlalchemy as sa

        from reconciler.adapters.managed.tables import view_meta as m
        from reconciler.adapters.managed.tables import view_version_info

        self._writable()
        view_id = self._view_id(live)
        expected = int(live.native_version or 0)
        try:
            with self.engine.begin() as conn:
                row = conn.execute(sa.select(m.c.view_id, m.c.current_version, m.c.last_version, m.c.audit_info)
                                   .where(m.c.view_id == view_id, m.c.deleted_at == 0)).first()
                if row is None or row.current_version != expected:
                    raise ConflictError(f"view {live.id} changed since it was read (version "
                                        f"{expected} expected)")
                new_version = row.last_version + 1
                conn.execute(view_version_info.insert().values(
                    self._version_row(row.view_id, new_version, spec, marker, ctx.actor)))
                # Guarded on the version read: a concurrent writer makes this match no row.
                done = conn.execute(m.update()
                                    .where(m.c.view_id == row.view_id, m.c.current_version == expected)
                                    .values(current_version=new_version, last_version=new_version,
                                            managed_by=marker.project, spec_digest=marker.spec_digest,
                                            audit_info=_audit(ctx.actor, json.loads(row.audit_info))))
                if done.rowcount != 1:
                    raise ConflictError(f"view {live.id} changed concurrently")
        except sa.exc.SQLAlchemyError as err:
            raise self.error(f"managed store error updating {live.id}: {err}") from None

    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        import sqlalchemy as sa

        from reconciler.adapters.managed.tables import view_meta as m
        from reconciler.adapters.managed.tables import view_version_info

        self._writable()
        view_id = self._view_id(live)
        now = _now_ms()
        try:
            with self.engine.begin() as conn:
                done = conn.execute(m.update().where(m.c.view_id == view_id, m.c.deleted_at == 0)
                                    .values(deleted_at=now))
                if done.rowcount == 1:  # 0: already dropped, which is what we want (a re-run converges)
                    conn.execute(view_version_info.update()
                                 .where(view_version_info.c.view_id == view_id)
                                 .values(deleted_at=now))
        except sa.exc.SQLAlchemyError as err:
            raise self.error(f"managed store error dropping {live.id}: {err}") from None
