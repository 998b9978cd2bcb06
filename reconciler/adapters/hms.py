"""Hive Metastore: format-aware delegation over Thrift (hmsclient).

Views are HMS tables of type VIRTUAL_VIEW in whatever engine format wrote
them (detected by `reconciler.formats`); views we write use the catalog's
`write_format` (spark | trino | hive | flink), and an update keeps the live
view's engine format. Everything of a ViewSpec the engine format cannot hold
(other dialects, security, ...) travels in `viewsync.extra` parameters, so a
read returns exactly what was applied.

Options: uri (thrift://host:port), write_format (default spark), timeout
(seconds, default 30), spark_catalog / trino_catalog (the names those engines
give this metastore, written when a view declares no default_catalog).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlparse

from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore.ttypes import (
    AlreadyExistsException,
    FieldSchema,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    SerDeInfo,
    StorageDescriptor,
    Table,
)
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TException
from thrift.transport import TSocket, TTransport

from reconciler import formats
from reconciler.adapters.base import (
    AdapterError,
    Capabilities,
    CatalogAdapter,
    ConflictError,
    Marker,
    SchemaSnapshot,
    WriteContext,
)
from reconciler.formats import DIALECT_OF, WRITE_FORMATS, FormatError, HiveColumn, TableDesc
from reconciler.model import MANAGED_BY, SPEC_DIGEST, LiveView, Representation, ViewId, ViewSpec

# thrift's TSocket logs every failed connect itself (with a traceback at INFO, the
# address at ERROR), to whatever handlers the application configured: that bypasses
# our redacted AdapterError messages and duplicates them. The adapter reports instead.
_thrift_log = logging.getLogger("thrift")
_thrift_log.addHandler(logging.NullHandler())
_thrift_log.propagate = False

T = TypeVar("T")

CHUNK = 100  # table names per get_table_objects_by_name call
_HMS_NAME = re.compile(r"^[a-z0-9_]+$")  # HMS lowercases names and accepts only word characters


# ------------------------------------------------------------ thrift <-> desc
def from_thrift(table: Table) -> TableDesc:
    sd = table.sd or StorageDescriptor()
    serde = sd.serdeInfo or SerDeInfo()
    return TableDesc(
        database=table.dbName or "",
        name=table.tableName or "",
        table_type=table.tableType or "",
        view_original_text=table.viewOriginalText,
        view_expanded_text=table.viewExpandedText,
        parameters=dict(table.parameters or {}),
        columns=[HiveColumn(c.name, c.type, c.comment) for c in (sd.cols or [])],
        owner=table.owner,
        input_format=sd.inputFormat,
        output_format=sd.outputFormat,
        serde_lib=serde.serializationLib,
    )


def to_thrift(desc: TableDesc, base: Table | None = None) -> Table:
    """A Thrift Table for `desc`; on update, `base` supplies what we do not manage
    (createTime, location, storage parameters...)."""
    base_sd = base.sd if base is not None and base.sd is not None else None
    base_serde = base_sd.serdeInfo if base_sd is not None and base_sd.serdeInfo is not None else None
    sd = StorageDescriptor(
        cols=[FieldSchema(name=c.name, type=c.type, comment=c.comment) for c in desc.columns],
        location=base_sd.location if base_sd is not None else None,
        inputFormat=desc.input_format or (base_sd.inputFormat if base_sd is not None else None),
        outputFormat=desc.output_format or (base_sd.outputFormat if base_sd is not None else None),
        compressed=False,
        numBuckets=-1,
        # The metastore requires a SerDeInfo, even an empty one.
        serdeInfo=SerDeInfo(
            name=base_serde.name if base_serde is not None else None,
            serializationLib=desc.serde_lib or (base_serde.serializationLib if base_serde is not None else None),
            parameters=dict(base_serde.parameters or {}) if base_serde is not None else {},
        ),
        bucketCols=[],
        sortCols=[],
        parameters=dict(base_sd.parameters or {}) if base_sd is not None else {},
    )
    return Table(
        tableName=desc.name,
        dbName=desc.database,
        owner=desc.owner,
        createTime=base.createTime if base is not None else int(time.time()),
        lastAccessTime=base.lastAccessTime if base is not None else 0,
        retention=base.retention if base is not None else 0,
        sd=sd,
        partitionKeys=[],
        parameters=dict(desc.parameters),
        viewOriginalText=desc.view_original_text,
        viewExpandedText=desc.view_expanded_text,
        tableType=formats.VIRTUAL_VIEW,  # always set, or list-by-type calls miss the view
    )


def fingerprint(desc: TableDesc) -> str:
    """Changes whenever anything about the stored table changes."""
    payload = json.dumps(
        [desc.table_type, desc.view_original_text, desc.view_expanded_text, sorted(desc.parameters.items()),
         [list(c) for c in desc.columns], desc.owner],
        separators=(",", ":"), ensure_ascii=False,
    )
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()


def _reason(exc: TException) -> str:
    """Why a connection failed, without thrift's wording (which repeats the address)."""
    inner = getattr(exc, "inner", None)
    if isinstance(inner, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(inner, OSError) and inner.strerror:
        return inner.strerror.lower()
    return str(getattr(exc, "message", None) or exc or type(exc).__name__)


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


class HiveMetastoreAdapter(CatalogAdapter):
    kind = "hms"

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        super().__init__(name, options)
        uri = str(options.get("uri") or "")
        parsed = urlparse(uri)
        if parsed.scheme != "thrift" or not parsed.hostname:
            raise AdapterError(f"catalog {name!r} (hms): uri must look like thrift://host:9083, got {uri!r}")
        self.host: str = parsed.hostname
        self.port: int = parsed.port or 9083
        fmt = str(options.get("write_format") or "spark")
        if fmt not in WRITE_FORMATS:
            raise AdapterError(f"catalog {name!r} (hms): write_format must be one of "
                               f"{', '.join(WRITE_FORMATS)}, got {fmt!r}")
        self.write_format = fmt
        try:
            self.timeout_ms = int(float(options.get("timeout", 30)) * 1000)
        except (TypeError, ValueError):
            raise AdapterError(f"catalog {name!r} (hms): timeout must be a number of seconds") from None
        self.engine_catalogs = {"spark": options.get("spark_catalog"), "trino": options.get("trino_catalog")}
        # The user a Trino definer view runs as when the declaration names no owner.
        self.trino_owner = str(options["trino_owner"]) if options.get("trino_owner") else None
        self._local = threading.local()
        self._clients: list[hmsclient.HMSClient] = []
        self._clients_lock = threading.Lock()

    # ------------------------------------------------------------ connection
    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(strategy="format-aware", writable=True, multi_dialect=True, native_versions=False,
                            writable_dialects=None, requires_columns=True, fold_names=True)

    def describe(self) -> str:
        return f"{self.name} (hms, thrift://{self.host}:{self.port}, write_format={self.write_format})"

    def _client(self) -> hmsclient.HMSClient:
        client: hmsclient.HMSClient | None = getattr(self._local, "client", None)
        if client is None:
            sock = TSocket.TSocket(self.host, self.port)
            sock.setTimeout(self.timeout_ms)
            protocol = TBinaryProtocol.TBinaryProtocol(TTransport.TBufferedTransport(sock))
            client = hmsclient.HMSClient(iprot=protocol)
            try:
                client.open()
            except TException as exc:
                raise AdapterError(f"catalog {self.name!r}: cannot reach the Hive Metastore at "
                                   f"{self.host}:{self.port} ({_reason(exc)})") from None
            self._local.client = client
            with self._clients_lock:
                self._clients.append(client)
        return client

    def _drop_client(self) -> None:
        client = getattr(self._local, "client", None)
        self._local.client = None
        if client is not None:
            with self._clients_lock:
                if client in self._clients:
                    self._clients.remove(client)
            with contextlib.suppress(TException):
                client.close()

    def _call(self, what: str, fn: Callable[[hmsclient.HMSClient], T], *, retry: bool = True) -> T:
        """One metastore round trip; a broken connection is reopened once for reads."""
        for attempt in (1, 2):
            self.count_call()
            client = self._client()
            try:
                return fn(client)
            except (TTransport.TTransportException, OSError) as exc:
                self._drop_client()
                if attempt == 2 or not retry:
                    raise AdapterError(f"catalog {self.name!r}: {what} failed: lost the connection to "
                                       f"{self.host}:{self.port} ({exc})") from None
            except TException as exc:
                # Anything the metastore raised that `fn` did not expect: a message, not a traceback.
                self._drop_client()  # the protocol state may be out of step after an error
                detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
                raise AdapterError(f"catalog {self.name!r}: {what} failed: {type(exc).__name__}: "
                                   f"{detail}") from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._clients_lock:
            clients, self._clients = self._clients, []
        for client in clients:
            with contextlib.suppress(TException):
                client.close()

    # ------------------------------------------------------------------ read
    def list_schemas(self) -> list[str]:
        return sorted(self._call("listing databases", lambda c: c.get_all_databases()))

    def _database_exists(self, schema: str) -> bool:
        def get(c: hmsclient.HMSClient) -> bool:
            try:
                c.get_database(schema)
                return True
            except NoSuchObjectException:
                return False
        return self._call(f"reading database {schema!r}", get)

    def fetch(self, schema: str) -> SchemaSnapshot:
        snap = SchemaSnapshot(catalog=self.name, schema=schema)
        if not _HMS_NAME.match(schema):
            snap.exists = False  # HMS database names are lowercase words; no nested namespaces
            return snap
        metas = self._call(f"listing tables of {schema!r}", lambda c: c.get_table_meta(schema, "*", []))
        if not metas and not self._database_exists(schema):
            snap.exists = False
            return snap
        views: list[str] = []
        for meta in metas:
            if meta.dbName != schema:
                continue
            if (meta.tableType or "").upper() == formats.VIRTUAL_VIEW:
                views.append(meta.tableName)
            else:
                snap.tables.add(meta.tableName)
        for chunk in _chunks(sorted(views), CHUNK):
            for table in self._read_tables(schema, chunk):
                live = self._live(from_thrift(table), table, snap.warnings)
                snap.views[live.id.name] = live
        return snap

    def _read_tables(self, schema: str, names: list[str]) -> list[Table]:
        tables: list[Table] = self._call(f"reading views of {schema!r}",
                                         lambda c: c.get_table_objects_by_name(schema, names))
        return tables

    def _live(self, desc: TableDesc, table: Table, warnings: list[str]) -> LiveView:
        vid = ViewId(self.name, desc.database, desc.name)
        try:
            read = formats.read_view(desc)
        except (FormatError, ValueError) as exc:
            fmt = formats.detect(desc) or "hive"
            warnings.append(f"catalog {self.name!r}: view {vid} ({fmt} format) cannot be read and is left "
                            f"untouched: {exc}")
            text = desc.view_original_text or desc.view_expanded_text or ""
            spec = ViewSpec(representations=[Representation(dialect=DIALECT_OF.get(fmt, "trino"),
                                                            sql=text if text.strip() else "-- unreadable")])
            return LiveView(id=vid, spec=spec, format=fmt, fingerprint=fingerprint(desc), writable=False,
                            managed_by=desc.parameters.get(MANAGED_BY),
                            spec_digest=desc.parameters.get(SPEC_DIGEST), handle=table)
        return LiveView(id=vid, spec=read.spec, format=read.format, managed_by=read.managed_by,
                        spec_digest=read.spec_digest, fingerprint=fingerprint(desc), writable=read.writable,
                        handle=table)

    # ----------------------------------------------------------------- plan
    def storable(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> ViewSpec:
        # The extras make read-back exact in every format: only defaults need resolving.
        return spec.resolved(view)

    def check(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> list[tuple[str, str]]:
        where = f"catalog {self.name!r} (hms, write_format={self.write_format}): view {view}"
        errors: list[tuple[str, str]] = []
        for label, value in (("database", view.schema), ("view", view.name)):
            if not _HMS_NAME.match(value):
                errors.append(("name_not_storable",
                               f"{where}: the metastore lowercases names and allows only letters, digits and "
                               f"'_' (no nested namespaces); {label} name {value!r} cannot be stored as is"))
        fmt = self._format_for(spec, live)
        if fmt != self.write_format:
            where = f"{where} (kept in its live {fmt} format)"
        return errors + formats.check_view(fmt, self.storable(view, spec), where, default_owner=self.trino_owner)

    def _format_for(self, spec: ViewSpec, live: LiveView | None) -> str:
        """The engine format a write uses: an update keeps the live view's format when the
        spec has SQL in its dialect (engines reading the view keep working), else the
        catalog's write_format. check() and update() must agree on this."""
        if live is not None and live.format in WRITE_FORMATS and spec.sql_for(DIALECT_OF[live.format]):
            return live.format
        return self.write_format

    # ---------------------------------------------------------------- write
    def _engine_catalog(self, fmt: str) -> str | None:
        value = self.engine_catalogs.get(fmt)
        return str(value) if value else None

    def _fail(self, what: str, view: ViewId, exc: TException) -> AdapterError:
        detail = getattr(exc, "message", None) or type(exc).__name__
        return AdapterError(f"catalog {self.name!r}: {what} {view} failed: {detail}")

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        spec = self.storable(view, spec)
        fmt = self.write_format
        try:
            desc = formats.write_view(fmt, view.schema, view.name, spec, marker.as_properties(),
                                      engine_catalog=self._engine_catalog(fmt), default_owner=self.trino_owner)
        except FormatError as exc:
            raise AdapterError(f"catalog {self.name!r}: cannot store {view} in the {fmt} format: {exc}") from None
        table = to_thrift(desc)

        def create(c: hmsclient.HMSClient) -> None:
            try:
                c.create_table(table)
            except AlreadyExistsException:
                # The plan saw the name free: someone took it since.
                raise ConflictError(f"catalog {self.name!r}: cannot create {view}: a table or view with that "
                                    f"name was created since the plan (plan again)") from None
            except (InvalidObjectException, NoSuchObjectException) as exc:
                if not self._database_exists(view.schema):
                    raise AdapterError(f"catalog {self.name!r}: cannot create {view}: database "
                                       f"{view.schema!r} does not exist") from None
                raise self._fail("creating", view, exc) from None
            except (MetaException, InvalidOperationException) as exc:
                raise self._fail("creating", view, exc) from None

        self._call(f"creating {view}", create, retry=False)

    def _current(self, live: LiveView) -> Table | None:
        def get(c: hmsclient.HMSClient) -> Table | None:
            try:
                return c.get_table(live.id.schema, live.id.name)
            except NoSuchObjectException:
                return None
        return self._call(f"reading {live.id}", get)

    def _guard(self, live: LiveView, what: str) -> Table | None:
        if not live.writable:
            raise AdapterError(f"catalog {self.name!r}: {live.id} ({live.format}) is never modified by viewsync")
        current = self._current(live)
        if current is not None and fingerprint(from_thrift(current)) != live.fingerprint:
            raise ConflictError(f"catalog {self.name!r}: {live.id} changed since it was read; "
                                f"not {what} it (plan again)")
        return current

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        view = live.id
        spec = self.storable(view, spec)
        current = self._guard(live, "updating")
        if current is None:
            raise ConflictError(f"catalog {self.name!r}: {view} disappeared since it was read (plan again)")
        fmt = self._format_for(spec, live)
        try:
            desc = formats.write_view(fmt, view.schema, view.name, spec, marker.as_properties(),
                                      base=from_thrift(current), engine_catalog=self._engine_catalog(fmt),
                                      default_owner=self.trino_owner)
        except FormatError as exc:
            raise AdapterError(f"catalog {self.name!r}: cannot store {view} in the {fmt} format: {exc}") from None
        table = to_thrift(desc, base=current)

        def alter(c: hmsclient.HMSClient) -> None:
            try:
                c.alter_table(view.schema, view.name, table)
            except (InvalidOperationException, MetaException, InvalidObjectException) as exc:
                raise self._fail("updating", view, exc) from None

        self._call(f"updating {view}", alter, retry=False)

    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        view = live.id
        if self._guard(live, "dropping") is None:
            return  # already gone: a re-run converges

        def drop(c: hmsclient.HMSClient) -> None:
            try:
                c.drop_table(view.schema, view.name, False)
            except NoSuchObjectException:
                pass
            except (MetaException, InvalidOperationException) as exc:
                raise self._fail("dropping", view, exc) from None

        self._call(f"dropping {view}", drop, retry=False)
