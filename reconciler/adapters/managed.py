"""Full management: every view's metadata lives in our own SQL store.

Tables follow the Gravitino view design: `view_meta` (one row per view, with
current/latest version and soft delete via `deleted_at`) and
`view_version_info` (one immutable row per version). Every change writes a new
version row; a drop soft-deletes. Works on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import Field
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from reconciler.adapters.base import Capabilities, CatalogAdapter, Marker, NativeVersion, SchemaSnapshot, WriteContext
from reconciler.adapters.options import CatalogOptions
from reconciler.engines import create_engine
from reconciler.errors import AdapterError, ConflictError
from reconciler.model import AdapterHandle, Column, LiveView, Representation, ViewId, ViewSpec, trusted

metadata = sa.MetaData()

view_meta = sa.Table(
    "view_meta", metadata,
    sa.Column("view_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("catalog_name", sa.String(255), nullable=False),
    sa.Column("schema_name", sa.String(255), nullable=False),
    sa.Column("view_name", sa.String(255), nullable=False),
    sa.Column("managed_by", sa.String(255)),
    sa.Column("spec_digest", sa.String(80)),
    sa.Column("audit_info", sa.Text, nullable=False),
    sa.Column("current_version", sa.Integer, nullable=False),
    sa.Column("last_version", sa.Integer, nullable=False),
    sa.Column("deleted_at", sa.BigInteger, nullable=False, default=0),
    sa.UniqueConstraint("catalog_name", "schema_name", "view_name", "deleted_at", name="uk_view_meta_name"),
)

view_version_info = sa.Table(
    "view_version_info", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("view_id", sa.Integer, nullable=False, index=True),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("view_comment", sa.Text),
    sa.Column("columns", sa.Text, nullable=False),
    sa.Column("properties", sa.Text, nullable=False),
    sa.Column("security_mode", sa.String(16), nullable=False),
    sa.Column("owner", sa.String(255)),
    sa.Column("default_catalog", sa.String(255)),
    sa.Column("default_namespace", sa.Text),
    sa.Column("representations", sa.Text, nullable=False),
    sa.Column("spec_digest", sa.String(80)),
    sa.Column("audit_info", sa.Text, nullable=False),
    sa.Column("deleted_at", sa.BigInteger, nullable=False, default=0),
    sa.UniqueConstraint("view_id", "version", name="uk_view_version"),
)

def _sqlite_file(engine: Engine) -> Path | None:
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        return Path(engine.url.database)
    return None


def has_tables(meta: sa.MetaData, engine: Engine) -> bool:
    """Whether the store holds these tables, without creating anything (not even
    the SQLite file): read-only commands read an absent store as empty."""
    path = _sqlite_file(engine)
    if path is not None and not path.exists():
        return False
    with engine.connect() as conn:
        present = set(sa.inspect(conn).get_table_names())
    return all(t.name in present for t in meta.sorted_tables)


def ensure_tables(meta: sa.MetaData, engine: Engine) -> None:
    """create_all that survives another process creating the same tables at the same moment.
    Called by writers only: plan and the other read-only commands create nothing."""
    path = _sqlite_file(engine)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(5):
        try:
            meta.create_all(engine)
            return
        except (sa.exc.OperationalError, sa.exc.ProgrammingError, sa.exc.IntegrityError):
            if attempt == 4:
                raise
            time.sleep(0.1 * (attempt + 1))  # the other creator finishes; checkfirst then sees its tables


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


class ManagedAdapter(CatalogAdapter):
    kind = "managed"
    Options = ManagedOptions

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        super().__init__(name, options)
        url = options.get("url")
        if not isinstance(url, str) or not url:
            raise AdapterError(f"catalog {name!r}: managed catalogs need a 'url' (SQLAlchemy URL)")
        try:
            self.engine = create_engine(url)
            self._tables = has_tables(metadata, self.engine)  # connects: a bad URL fails here
        except SQLAlchemyError as err:
            raise self.fail("cannot open the managed store", err) from None

    def _writable(self) -> None:
        """Tables are created by the first write, never by a read (plan is read-only)."""
        if not self._tables:
            try:
                ensure_tables(metadata, self.engine)
            except (SQLAlchemyError, OSError) as err:
                raise self.fail("cannot create the managed store", err) from None
            self._tables = True

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(strategy="managed", writable=True, io_bound_fetch=self.engine.dialect.name != "sqlite")

    def describe(self) -> str:
        return f"{self.name} (managed, {self.engine.url.render_as_string(hide_password=True)})"

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ reads
    def _read(self, what: str, query: Any) -> list[Any]:
        """Rows of one read query; a store failure is an AdapterError naming the catalog."""
        self.count_call()
        try:
            if not self._tables:  # another writer may have created them since
                self._tables = has_tables(metadata, self.engine)
            if not self._tables:  # nothing written yet: an empty store, and nothing is created
                return []
            with self.engine.connect() as conn:
                return list(conn.execute(query).all())
        except SQLAlchemyError as err:
            raise self.fail(f"cannot {what} in the managed store", err) from None

    def list_schemas(self) -> list[str]:
        q = (sa.select(view_meta.c.schema_name).distinct()
             .where(view_meta.c.catalog_name == self.name, view_meta.c.deleted_at == 0))
        return sorted(r[0] for r in self._read("list schemas", q))

    def fetch(self, schema: str) -> SchemaSnapshot:
        m, v = view_meta, view_version_info
        q = (sa.select(m.c.view_id, m.c.view_name, m.c.managed_by, m.c.spec_digest, m.c.current_version,
                       v.c.view_comment, v.c.columns, v.c.properties, v.c.security_mode, v.c.owner,
                       v.c.default_catalog, v.c.default_namespace, v.c.representations)
             .join(v, sa.and_(v.c.view_id == m.c.view_id, v.c.version == m.c.current_version))
             .where(m.c.catalog_name == self.name, m.c.schema_name == schema, m.c.deleted_at == 0))
        snap = SchemaSnapshot(self.name, schema)
        rows = self._read(f"read schema {schema!r}", q)
        for r in rows:
            # Rows we wrote from validated specs: rebuild them without re-validating.
            spec = trusted(ViewSpec, {
                "comment": r.view_comment,
                "columns": [trusted(Column, c) for c in json.loads(r.columns)],
                "representations": [trusted(Representation, x) for x in json.loads(r.representations)],
                "default_catalog": r.default_catalog,
                "default_namespace": json.loads(r.default_namespace) if r.default_namespace else None,
                "security": r.security_mode,
                "owner": r.owner,
                "properties": json.loads(r.properties),
            })
            snap.views[r.view_name] = trusted(LiveView, {
                "id": ViewId(self.name, schema, r.view_name), "spec": spec, "format": "managed",
                "managed_by": r.managed_by, "spec_digest": r.spec_digest,
                "native_version": str(r.current_version),
                "fingerprint": f"managed:v{r.current_version}:{spec.digest()}", "writable": True,
                "handle": ManagedHandle(r.view_id),
            })
        return snap

    def native_history(self, view: ViewId) -> list[NativeVersion]:
        m, v = view_meta, view_version_info
        q = (sa.select(v.c.version, v.c.audit_info, v.c.representations, v.c.spec_digest)
             .join(m, m.c.view_id == v.c.view_id)
             .where(m.c.catalog_name == view.catalog, m.c.schema_name == view.schema,
                    m.c.view_name == view.name)
             .order_by(v.c.version))
        rows = self._read(f"read the versions of {view}", q)
        out = []
        for r in rows:
            audit = json.loads(r.audit_info)
            out.append(NativeVersion(
                version=str(r.version), timestamp_ms=audit.get("last_modified_time"),
                summary={"actor": str(audit.get("last_modifier", "")), "digest": r.spec_digest or ""},
                dialects=tuple(x["dialect"] for x in json.loads(r.representations))))
        return out

    # ----------------------------------------------------------------- writes
    @staticmethod
    def _version_row(view_id: int, version: int, spec: ViewSpec, digest: str, actor: str) -> dict[str, Any]:
        return {
            "view_id": view_id, "version": version, "view_comment": spec.comment,
            "columns": json.dumps([c.model_dump() for c in spec.columns]),
            "properties": json.dumps(spec.properties, sort_keys=True),
            "security_mode": spec.security, "owner": spec.owner, "default_catalog": spec.default_catalog,
            "default_namespace": json.dumps(spec.default_namespace) if spec.default_namespace is not None
            else None,
            "representations": json.dumps([r.model_dump() for r in spec.representations]),
            "spec_digest": digest, "audit_info": _audit(actor), "deleted_at": 0,
        }

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        self._writable()
        m = view_meta
        try:
            with self.engine.begin() as conn:
                res = conn.execute(m.insert().values(
                    catalog_name=view.catalog, schema_name=view.schema, view_name=view.name,
                    managed_by=marker.project, spec_digest=marker.spec_digest, audit_info=_audit(ctx.actor),
                    current_version=1, last_version=1, deleted_at=0))
                view_id = int(res.inserted_primary_key[0])  # type: ignore[index]
                conn.execute(view_version_info.insert().values(
                    self._version_row(view_id, 1, spec, marker.spec_digest, ctx.actor)))
        except sa.exc.IntegrityError as err:
            if view.name in self.fetch(view.schema).views:
                raise ConflictError(f"view {view} already exists in catalog {self.name!r}") from None
            raise self.error(f"managed store refused {view}: {err.orig}") from None
        except SQLAlchemyError as err:
            raise self.error(f"managed store error creating {view}: {err}") from None

    def _view_id(self, live: LiveView) -> int:
        handle = self.handle_of(live, ManagedHandle)
        if handle is None:
            raise self.error(f"catalog {self.name!r}: {live.id} was not read from this catalog")
        return handle.view_id

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        self._writable()
        m = view_meta
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
                    self._version_row(row.view_id, new_version, spec, marker.spec_digest, ctx.actor)))
                # Guarded on the version read: a concurrent writer makes this match no row.
                done = conn.execute(m.update()
                                    .where(m.c.view_id == row.view_id, m.c.current_version == expected)
                                    .values(current_version=new_version, last_version=new_version,
                                            managed_by=marker.project, spec_digest=marker.spec_digest,
                                            audit_info=_audit(ctx.actor, json.loads(row.audit_info))))
                if done.rowcount != 1:
                    raise ConflictError(f"view {live.id} changed concurrently")
        except SQLAlchemyError as err:
            raise self.error(f"managed store error updating {live.id}: {err}") from None

    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        self._writable()
        m = view_meta
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
        except SQLAlchemyError as err:
            raise self.error(f"managed store error dropping {live.id}: {err}") from None
