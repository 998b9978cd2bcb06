"""Hive Metastore: format-aware delegation over Thrift (hmsclient).

Views are HMS tables of type VIRTUAL_VIEW in whatever engine format wrote
them (detected by `reconciler.adapters.metastore.formats`); views we write use the catalog's
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
import getpass
import hashlib
import json
import os
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar
from urllib.parse import urlparse

from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore.ttypes import (
    AlreadyExistsException,
    Database,
    FieldSchema,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
    PrincipalType,
    SerDeInfo,
    StorageDescriptor,
    Table,
)
from pydantic import Field
from thrift.protocol import TBinaryProtocol, TProtocol
from thrift.Thrift import TApplicationException, TException
from thrift.transport import TSocket, TTransport

from reconciler.adapters.base import (
    AdapterError,
    ClientPool,
    ConflictError,
    Marker,
    SchemaSnapshot,
    WriteContext,
)
from reconciler.adapters.deadline import deadline, remaining
from reconciler.adapters.metastore import formats
from reconciler.adapters.metastore.base import Decoded, MetastoreAdapter, Unreadable
from reconciler.adapters.metastore.formats import DIALECT_OF, WRITE_FORMATS, FormatError, HiveColumn, TableDesc
from reconciler.adapters.metastore.table_columns import metastore_columns
from reconciler.adapters.options import CatalogOptions, replaced_by
from reconciler.core.model import MANAGED_BY_FILTERABLE, AdapterHandle, Column, LiveView, ViewId, ViewSpec

T = TypeVar("T")

CHUNK = 100  # table names per get_table_objects_by_name call
_HMS_NAME = re.compile(r"^[a-z0-9_]+$")  # HMS lowercases names and accepts only word characters
_FILTER_VALUE = re.compile(r"^[A-Za-z0-9_.@:/ -]+$")  # a project name we can quote in a table filter
READS_IN_FLIGHT = 4  # bulk reads on their own connections at once, per catalog
ENCODED_KEPT = 4096  # tables kept between a plan's check and its creates (a few KB each)


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


def _reason(exc: OSError) -> str:
    """Why a connection failed, in a few words."""
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    return exc.strerror.lower() if exc.strerror else str(exc) or type(exc).__name__


DEADLINE_SLACK_S = 0.05  # how far past its call's deadline one socket read or write may end


class _DeadlineSocket(TSocket.TSocket):  # type: ignore[misc]  # thrift has no type hints
    """A Thrift socket whose every read and write ends by the call's deadline (within
    DEADLINE_SLACK_S): a socket timeout alone bounds each read, so a server trickling bytes was
    never cut off. The timeout is set again only once it is off the deadline by more than the
    slack: settimeout releases the GIL (an ioctl), and the thread then waits for it behind the
    apply's records thread, twice per metastore call if set on every read and write. Short
    calls leave it as it is; a call after a slow one (whose deadline had shortened it) resets it."""

    def _until_deadline(self) -> None:
        left = remaining()
        if left is not None and self.handle is not None:
            if left <= 0:
                raise TTransport.TTransportException(TTransport.TTransportException.TIMED_OUT, "timed out")
            current = self.handle.gettimeout()
            if current is None or abs(current - left) > DEADLINE_SLACK_S:
                self.handle.settimeout(left)

    def read(self, sz: int) -> bytes:
        self._until_deadline()
        data: bytes = super().read(sz)
        return data

    def write(self, buff: bytes) -> None:
        self._until_deadline()
        super().write(buff)


class _NotAnAnswer(TProtocol.TProtocolException):  # type: ignore[misc]  # thrift has no type hints
    """Bytes after a reply header that decode to no answer of the call."""


class _Protocol(TBinaryProtocol.TBinaryProtocolAccelerated):  # type: ignore[misc]
    """The accelerated binary protocol, whose C decoder reports bytes that are no valid struct
    (what another Thrift service on the port answers) as TypeError ("Unexpected TType for skip"),
    ValueError or OverflowError: made the protocol's own error. Only decoding is wrapped, and it
    runs no code of ours."""

    def __init__(self, trans: Any) -> None:
        super().__init__(trans)
        fast: Any = getattr(self, "_fast_decode", None)
        if fast is None:  # no C extension: the pure-Python reader raises TProtocolException itself
            return

        def decode(*args: Any) -> Any:
            try:
                return fast(*args)
            except (TypeError, ValueError, OverflowError) as exc:
                raise _NotAnAnswer(TProtocol.TProtocolException.INVALID_DATA, str(exc)) from None
        self._fast_decode = decode


def _timed_out(exc: BaseException) -> bool:
    if isinstance(exc, TTransport.TTransportException):
        return bool(exc.type == TTransport.TTransportException.TIMED_OUT)
    return isinstance(exc, TimeoutError)


# What a call's connection can fail with (after which it is out of step and is closed).
_BROKEN = (TTransport.TTransportException, OSError, TException, UnicodeDecodeError)


def _stale(exc: BaseException) -> bool:
    """A connection found broken (a kept one the server or a balancer closed), which a read may
    retry on a new one: not a slow server (timed out) nor a foreign one."""
    return isinstance(exc, (TTransport.TTransportException, OSError)) and not _timed_out(exc) and not _not_thrift(exc)


def _not_thrift(exc: BaseException) -> bool:
    """Framing no Thrift server sends (garbage read as a size)."""
    return isinstance(exc, TTransport.TTransportException) and exc.type in (
        TTransport.TTransportException.SIZE_LIMIT, TTransport.TTransportException.NEGATIVE_SIZE)


class HmsHandle(AdapterHandle):
    """The Thrift table a fetch read: the base of an update (createTime, storage...)."""

    __slots__ = ("table",)

    def __init__(self, table: Table) -> None:
        self.table = table


def connecting_user() -> str | None:
    """The user Hive and Spark record as the owner of a view they create over an unsecured
    metastore (Hadoop's UserGroupInformation: HADOOP_USER_NAME, else the login user); None
    when the process has no user name."""
    try:
        return os.environ.get("HADOOP_USER_NAME") or getpass.getuser() or None
    except (OSError, KeyError):  # no USER/LOGNAME and no passwd entry (some containers)
        return None


def _stamp(marker: Marker) -> dict[str, str]:
    return {**marker.as_properties(), MANAGED_BY_FILTERABLE: marker.project}


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


EngineFormat = Literal["spark", "trino", "hive", "flink"]


class HmsOptions(CatalogOptions):
    uri: str = Field(description="`thrift://host:9083`")
    engine_format: EngineFormat = Field("spark", description="the format of the views viewsync creates")
    write_format: EngineFormat | None = Field(None, deprecated="use engine_format",
                                              json_schema_extra=replaced_by("engine_format"))
    timeout: float = Field(30, gt=0,
                           description="wall-time seconds per Thrift call, reconnect included (default 30)")
    spark_catalog: str | None = Field(None, description="the name Spark gives this metastore")
    trino_catalog: str | None = Field(None, description="the name Trino gives this metastore")
    trino_owner: str | None = Field(None, description="the user a Trino definer view runs as when it declares "
                                                    "no owner")


class _Line:
    """Creates one thread sent ahead of their answers on one connection, taken from the pool
    until none is in flight. Once the connection fails, the creates on it fail."""

    def __init__(self, client: hmsclient.HMSClient) -> None:
        self.client = client
        self.in_flight = 0
        self.lost: BaseException | None = None  # what broke the connection


class HiveMetastoreAdapter(MetastoreAdapter):
    kind = "hms"
    CREATES_SENT_AHEAD = True  # Thrift: requests queue on the connection, answered in order
    Options = HmsOptions
    DEPRECATED_FORMAT_OPTION = "write_format"
    ENGINE_FORMATS = WRITE_FORMATS
    DEFAULT_FORMAT = "spark"

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        super().__init__(name, options)
        uri = str(options.get("uri") or "")
        parsed = urlparse(uri)
        if parsed.scheme != "thrift" or not parsed.hostname:
            raise self.error(f"catalog {name!r} (hms): uri must look like thrift://host:9083, got {uri!r}")
        self.host: str = parsed.hostname
        self.port: int = parsed.port or 9083
        try:
            self.timeout_ms = int(float(options.get("timeout", 30)) * 1000)
        except (TypeError, ValueError):
            raise self.error(f"catalog {name!r} (hms): timeout must be a number of seconds") from None
        self.engine_catalogs = {"spark": options.get("spark_catalog"), "trino": options.get("trino_catalog")}
        # The user a Trino definer view runs as when the declaration names no owner.
        self.trino_owner = str(options["trino_owner"]) if options.get("trino_owner") else None
        # The owner of Hive, Spark and Flink views that declare none, as those engines record it.
        self.writer = connecting_user()
        self._clients: ClientPool[hmsclient.HMSClient] = ClientPool(self._connect, _close_client)
        self._sent = threading.local()  # .line: the creates this thread has sent ahead (send_create)
        self._reader: ThreadPoolExecutor | None = None  # bulk reads ahead of decoding (_bulk_read)
        self._reader_lock = threading.Lock()
        self._meta_listing = False  # the metastore lacks get_tables_by_type: list with get_table_meta
        # Tables the plan's check encoded for views to create, taken by create (one encoding per view).
        self._encoded: dict[tuple[ViewId, str, str], TableDesc] = {}

    @property
    def write_format(self) -> str:
        return self.engine_format

    # ------------------------------------------------------------ connection
    def describe(self) -> str:
        return f"{self.name} (hms, thrift://{self.host}:{self.port}, engine_format={self.engine_format})"

    def _connect(self) -> hmsclient.HMSClient:
        # Connect the socket ourselves: thrift's TSocket.open logs every failed attempt
        # (address, traceback) to the application's handlers; we report one clear line instead.
        left = remaining()
        left = self.timeout_ms / 1000 if left is None else max(left, 0.001)
        try:
            sock = socket.create_connection((self.host, self.port), timeout=left)
        except OSError as exc:
            raise self.error(f"catalog {self.name!r}: cannot reach the Hive Metastore at "
                             f"{self.host}:{self.port} ({_reason(exc)})") from None
        transport = _DeadlineSocket(self.host, self.port)
        transport.setHandle(sock)
        # thrift's C extension (fastbinary) decodes a 100-table read several times faster than the
        # pure-Python protocol; the accelerated class falls back to Python where it is missing.
        protocol = _Protocol(TTransport.TBufferedTransport(transport))
        return hmsclient.HMSClient(iprot=protocol)

    @property
    def connections_opened(self) -> int:
        return self._clients.opened

    def _drop_client(self) -> None:
        self._clients.discard()

    def _call(self, what: str, fn: Callable[[hmsclient.HMSClient], T], *, retry: bool = True) -> T:
        """One metastore round trip, all of it (a reconnect too) within the timeout once;
        a connection found broken is reopened once for reads."""
        # a call inside another (a create checking its database) gets its own timeout
        with deadline(self.timeout_ms / 1000, renew=True):
            for attempt in (1, 2):
                self.count_call()
                # a broken client is discarded, not given back; the retry opens a new one
                with self._clients.lease(fresh=attempt == 2) as client:
                    try:
                        return fn(client)
                    except _BROKEN as exc:
                        self._drop_client()  # the protocol state may be out of step after an error
                        if not (retry and attempt == 1 and _stale(exc)):
                            raise self._broken(what, exc) from None
            raise AssertionError("unreachable")

    def _broken(self, what: str, exc: BaseException) -> AdapterError:
        """The error of a call whose connection `exc` left unusable."""
        failed = f"catalog {self.name!r}: {what} failed"
        server = f"{self.host}:{self.port}"
        if isinstance(exc, (TTransport.TTransportException, OSError)):
            if _timed_out(exc):
                return self.error(f"{failed}: the Hive Metastore at {server} timed out (no complete answer "
                                  f"within {self.timeout_ms / 1000:g} s)")
            if _not_thrift(exc):
                return self.error(f"{failed}: the answer of {server} is not a Hive Metastore's ({exc})")
            return self.error(f"{failed}: lost the connection to {server} ({exc})")
        if isinstance(exc, _NotAnAnswer):
            return self.error(f"{failed}: the answer of {server} is not a Hive Metastore's ({exc})")
        if isinstance(exc, TException):  # anything the metastore raised that the call did not expect
            detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            return self.error(f"{failed}: {type(exc).__name__}: {detail}")
        return self.error(f"{failed}: the answer of {server} is not a Hive Metastore's")  # bytes, no answer

    def close(self) -> None:
        with self._reader_lock:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.shutdown(wait=True)
        self._clients.close_all()

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

    # The database owner is the schema owner (reconciler.apply.schema_owners).
    KEEPS_SCHEMA_OWNER = True

    def read_schema_owner(self, schema: str) -> str | None:
        def get(c: hmsclient.HMSClient) -> str | None:
            try:
                owner: str | None = c.get_database(schema).ownerName
            except NoSuchObjectException:
                raise LookupError(schema) from None
            return owner or None
        return self._call(f"reading database {schema!r}", get)

    def write_schema_owner(self, schema: str, owner: str) -> None:
        def alter(c: hmsclient.HMSClient) -> None:
            db = c.get_database(schema)
            db.ownerName, db.ownerType = owner, PrincipalType.USER
            c.alter_database(schema, db)
        self._call(f"setting the owner of database {schema!r}", alter, retry=False)

    def create_schema(self, schema: str, properties: Mapping[str, str]) -> bool:
        """A database at the metastore's default location, with `properties` as its parameters."""
        if not _HMS_NAME.match(schema):
            raise self.error(f"catalog {self.name!r}: cannot create database {schema!r}: Hive Metastore "
                             "database names are lowercase letters, digits and '_'")

        def create(c: hmsclient.HMSClient) -> bool:
            try:
                c.create_database(Database(name=schema, description="viewsync preview", parameters=dict(properties)))
                return True
            except AlreadyExistsException:
                return False
            except (MetaException, InvalidObjectException) as exc:
                raise self.error(f"catalog {self.name!r}: creating database {schema!r} failed: "
                                 f"{getattr(exc, 'message', None) or type(exc).__name__}") from None
        return self._call(f"creating database {schema!r}", create, retry=False)

    def drop_schema(self, schema: str) -> bool:
        """Drops the database only when it holds no table or view (never cascades)."""
        if not _HMS_NAME.match(schema):
            return False

        def drop(c: hmsclient.HMSClient) -> bool:
            try:
                c.get_database(schema)  # (listing the tables of a missing database fails on the server)
                if c.get_all_tables(schema):
                    return False
                c.drop_database(schema, True, False)  # deleteData (its empty directory), no cascade
                return True
            except NoSuchObjectException:
                return False
            except InvalidOperationException:  # not empty after all: someone added a table
                return False
            except MetaException as exc:
                raise self.error(f"catalog {self.name!r}: dropping database {schema!r} failed: "
                                 f"{exc.message or type(exc).__name__}") from None
        return self._call(f"dropping database {schema!r}", drop, retry=False)

    def fetch(self, schema: str) -> SchemaSnapshot:
        snap = SchemaSnapshot(catalog=self.name, schema=schema)
        if not _HMS_NAME.match(schema):
            snap.exists = False  # HMS database names are lowercase words; no nested namespaces
            return snap
        views, others = self._call(f"listing tables of {schema!r}", lambda c: self._list_tables(c, schema))
        if not views and not others and not self._database_exists(schema):
            snap.exists = False
            return snap
        snap.tables.update(others)
        for tables in self._bulk_read(schema, views):
            for table in tables:
                desc = from_thrift(table)
                live = self.live_view(ViewId(self.name, desc.database, desc.name), desc, snap.warnings,
                                      fingerprint=fingerprint(desc), handle=HmsHandle(table))
                snap.views[live.id.name] = live
        return snap

    def _list_tables(self, c: hmsclient.HMSClient, schema: str) -> tuple[list[str], set[str]]:
        """The names of the database's views (sorted) and of its other tables. Two name
        listings cost the metastore ~5 ms for 1,000 tables where get_table_meta, which builds
        a row per table, costs ~85 ms: the no-op plan's first read waits on this. A view made
        between the two calls counts as a table here, as one made just after the listing is not
        seen at all: the snapshot is a read at one moment, and apply reads its views again under
        its lock."""
        if not self._meta_listing:
            try:
                views: list[str] = c.get_tables_by_type(schema, "*", formats.VIRTUAL_VIEW)
                return sorted(views), set(c.get_all_tables(schema)) - set(views)
            except TApplicationException:  # a metastore before Hive 2.3: no get_tables_by_type
                self._meta_listing = True
        metas = c.get_table_meta(schema, "*", [])
        mine = [m for m in metas if m.dbName == schema]  # (the name is a pattern to the metastore)
        views = sorted(m.tableName for m in mine if (m.tableType or "").upper() == formats.VIRTUAL_VIEW)
        return views, {m.tableName for m in mine} - set(views)

    def fetch_owned(self, schema: str, project: str) -> SchemaSnapshot:
        """Our views of an undeclared database: one filtered listing (the metastore matches
        MANAGED_BY_FILTERABLE), then a bulk read of what it names. Views stamped only with
        the dotted key by releases before it are found in declared databases only."""
        if not _HMS_NAME.match(schema) or not _FILTER_VALUE.match(project):
            return self.fetch(schema)
        condition = f'hive_filter_field_params__{MANAGED_BY_FILTERABLE} = "{project}"'
        names = self._call(f"listing views of {schema!r}",
                           lambda c: c.get_table_names_by_filter(schema, condition, -1))
        return self._snapshot(schema, sorted(names))

    def fetch_views(self, schema: str, names: list[str]) -> SchemaSnapshot:
        if not _HMS_NAME.match(schema):
            return self.fetch(schema)
        return self._snapshot(schema, sorted({n.lower() for n in names}))

    def _snapshot(self, schema: str, names: list[str]) -> SchemaSnapshot:
        """The views (and the names of other tables) among `names`, in bulk reads."""
        snap = SchemaSnapshot(catalog=self.name, schema=schema)
        for tables in self._bulk_read(schema, names):
            for table in tables:
                if (table.tableType or "").upper() == formats.VIRTUAL_VIEW:
                    desc = from_thrift(table)
                    live = self.live_view(ViewId(self.name, desc.database, desc.name), desc, snap.warnings,
                                          fingerprint=fingerprint(desc), handle=HmsHandle(table))
                    snap.views[live.id.name] = live
                else:
                    snap.tables.add(table.tableName)
        return snap

    def table_schemas(self, tables: list[tuple[str, str]]) -> dict[tuple[str, str], list[Column]]:
        by_schema: dict[str, set[str]] = {}
        for schema, name in tables:
            if _HMS_NAME.match(schema.lower()):
                by_schema.setdefault(schema.lower(), set()).add(name.lower())
        out: dict[tuple[str, str], list[Column]] = {}
        for schema, names in sorted(by_schema.items()):
            for chunk in _chunks(sorted(names), CHUNK):
                try:
                    found = self._read_tables(schema, chunk)
                except AdapterError:
                    continue  # no such database: the tables resolve nowhere
                for table in found:
                    desc = from_thrift(table)
                    if desc.is_view:
                        continue
                    keys = [HiveColumn(c.name, c.type, c.comment) for c in (table.partitionKeys or [])]
                    cols = metastore_columns(desc.columns, keys, desc.parameters)
                    if cols:
                        out[(schema, desc.name)] = cols
        return out

    def _bulk_read(self, schema: str, names: list[str]) -> Iterator[list[Table]]:
        """The tables named, CHUNK per call, in order, with up to READS_IN_FLIGHT calls (no
        more than the adapter's concurrency) on their own connections while the caller decodes.
        The metastore spends one core on each bulk read, so reads on two connections take ~0.6
        of the time of one (3,000 views, two cores). The reader pool is the adapter's, so
        schemas read at once share its bound."""
        chunks = list(_chunks(names, CHUNK))
        if len(chunks) < 2:
            yield from (self._read_tables(schema, chunk) for chunk in chunks)
            return
        with self._reader_lock:
            if self._reader is None:  # READS_IN_FLIGHT threads (connections) for the adapter's lifetime
                self._reader = ThreadPoolExecutor(max_workers=READS_IN_FLIGHT,
                                                  thread_name_prefix=f"viewsync-hms-{self.name}")
            reader = self._reader
        in_flight = max(1, min(READS_IN_FLIGHT, self.concurrency))  # --parallelism 1: one call at a time
        pending = deque(reader.submit(self._read_tables, schema, chunk) for chunk in chunks[:in_flight])
        following = iter(chunks[in_flight:])
        try:
            while pending:
                tables = pending.popleft().result()
                chunk = next(following, None)
                if chunk is not None:
                    pending.append(reader.submit(self._read_tables, schema, chunk))
                yield tables
        finally:
            for read in pending:  # a caller that stops early (an error) leaves no reads queued
                read.cancel()

    def _read_tables(self, schema: str, names: list[str]) -> list[Table]:
        tables: list[Table] = self._call(f"reading views of {schema!r}",
                                         lambda c: c.get_table_objects_by_name(schema, names))
        return tables

    # ------------------------------------------------------------ codec
    def decode(self, view: ViewId, raw: Any) -> Decoded:
        read = formats.read_view(raw)
        managed_by = read.managed_by or raw.parameters.get(MANAGED_BY_FILTERABLE)
        return Decoded(spec=read.spec, format=read.format, managed_by=managed_by,
                       spec_digest=read.spec_digest, writable=read.writable)

    def unreadable(self, view: ViewId, raw: Any) -> Unreadable:
        desc: TableDesc = raw
        fmt = formats.detect(desc) or "hive"
        return Unreadable(format=fmt, dialect=DIALECT_OF.get(fmt, "trino"),
                          text=desc.view_original_text or desc.view_expanded_text or "",
                          parameters=desc.parameters)

    def kept_format(self, live_format: str) -> str | None:
        return live_format if live_format in WRITE_FORMATS else None

    def format_dialects(self, fmt: str) -> tuple[str, ...]:
        return (DIALECT_OF[fmt],)

    # ----------------------------------------------------------------- plan
    def storable(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> ViewSpec:
        # The extras make read-back exact in every format: only defaults need resolving.
        return spec.resolved(view)

    def check(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> list[tuple[str, str]]:
        where = f"catalog {self.name!r} (hms, engine_format={self.engine_format}): view {view}"
        errors: list[tuple[str, str]] = []
        for label, value in (("database", view.schema), ("view", view.name)):
            if not _HMS_NAME.match(value):
                errors.append(("name_not_storable",
                               f"{where}: the metastore lowercases names and allows only letters, digits and "
                               f"'_' (no nested namespaces); {label} name {value!r} cannot be stored as is"))
        fmt = self.engine_format_for(spec, live)
        if fmt != self.engine_format:
            where = f"{where} (kept in its live {fmt} format)"
        stored = self.storable(view, spec)
        kept = None if live is not None or len(self._encoded) >= ENCODED_KEPT else (
            lambda table: self._encoded.__setitem__((view, stored.digest(), fmt), table))
        return errors + formats.check_view(fmt, stored, where, default_owner=self.trino_owner, writer=self.writer,
                                           database=view.schema, name=view.name,
                                           engine_catalog=self._engine_catalog(fmt), keep=kept)

    # ---------------------------------------------------------------- write
    def _engine_catalog(self, fmt: str) -> str | None:
        value = self.engine_catalogs.get(fmt)
        return str(value) if value else None

    def _fail(self, what: str, view: ViewId, exc: TException) -> AdapterError:
        detail = getattr(exc, "message", None) or type(exc).__name__
        return self.error(f"catalog {self.name!r}: {what} {view} failed: {detail}")

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        table = self._table_to_create(view, spec, marker)
        self._call(f"creating {view}", lambda c: self._creating(view, lambda: c.create_table(table)), retry=False)

    def send_create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> Callable[[], None]:
        table = self._table_to_create(view, spec, marker)
        line = getattr(self._sent, "line", None)
        if line is None:  # nothing in flight on this thread: a connection of the pool's, not leased
            line = self._sent.line = _Line(self._clients.take())
        if line.lost is None:
            self.count_call()
            try:
                with deadline(self.timeout_ms / 1000, renew=True):
                    line.client.send_create_table(table)
            except _BROKEN as exc:
                line.lost = exc
        line.in_flight += 1
        return lambda: self._answer(line, view, marker)

    def _answer(self, line: _Line, view: ViewId, marker: Marker) -> None:
        """The answer to a create `line` sent ahead, the oldest it has in flight."""
        what = f"creating {view}"
        try:
            if line.lost is None:
                try:
                    with deadline(self.timeout_ms / 1000, renew=True):
                        self._creating(view, line.client.recv_create_table)
                except _BROKEN as exc:
                    line.lost = exc
            # The connection failed with this create in flight: whether the metastore carried it
            # out is read on another connection, so the records say what happened.
            if line.lost is not None and not self._holds(view, marker):
                raise self._broken(what, line.lost)
        finally:
            line.in_flight -= 1
            if not line.in_flight:
                self._sent.line = None
                if line.lost is None:
                    self._clients.give_back(line.client)
                else:
                    self._clients.discard(line.client)

    def _holds(self, view: ViewId, marker: Marker) -> bool:
        """`view` is stored stamped with `marker` (False also when it cannot be read now)."""
        def read(c: hmsclient.HMSClient) -> Table | None:
            try:
                return c.get_table(view.schema, view.name)
            except NoSuchObjectException:
                return None
        try:
            table = self._call(f"reading {view}", read)
        except AdapterError:
            return False
        stamp = _stamp(marker)
        return table is not None and all((table.parameters or {}).get(k) == v for k, v in stamp.items())

    def _creating(self, view: ViewId, call: Callable[[], None]) -> None:
        """`call` creates `view` (or answers its create): the metastore's refusals as our errors."""
        try:
            call()
        except AlreadyExistsException:
            # The plan saw the name free: someone took it since.
            raise ConflictError(f"catalog {self.name!r}: cannot create {view}: a table or view with that "
                                f"name was created since the plan (plan again)") from None
        except (InvalidObjectException, NoSuchObjectException) as exc:
            if not self._database_exists(view.schema):  # on another connection than `call`'s
                raise self.error(f"catalog {self.name!r}: cannot create {view}: database "
                                 f"{view.schema!r} does not exist") from None
            raise self._fail("creating", view, exc) from None
        except (MetaException, InvalidOperationException) as exc:
            raise self._fail("creating", view, exc) from None

    def _table_to_create(self, view: ViewId, spec: ViewSpec, marker: Marker) -> Table:
        spec = self.storable(view, spec)
        fmt = self.engine_format
        desc = self._encoded.pop((view, spec.digest(), fmt), None)  # encoded by the plan's check
        try:
            if desc is None:
                desc = formats.write_view(fmt, view.schema, view.name, spec, {},
                                          engine_catalog=self._engine_catalog(fmt),
                                          default_owner=self.trino_owner, writer=self.writer)
        except FormatError as exc:
            raise self.error(f"catalog {self.name!r}: cannot store {view} in the {fmt} format: {exc}") from None
        desc.parameters.update(_stamp(marker))  # write_view stamps last too
        return to_thrift(desc)

    def _current(self, live: LiveView) -> Table | None:
        def get(c: hmsclient.HMSClient) -> Table | None:
            try:
                return c.get_table(live.id.schema, live.id.name)
            except NoSuchObjectException:
                return None
        return self._call(f"reading {live.id}", get)

    def _guard(self, live: LiveView, what: str) -> Table | None:
        if not live.writable:
            raise self.error(f"catalog {self.name!r}: {live.id} ({live.format}) is never modified by viewsync")
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
        fmt = self.engine_format_for(spec, live)
        try:
            desc = formats.write_view(fmt, view.schema, view.name, spec, _stamp(marker),
                                      base=from_thrift(current), engine_catalog=self._engine_catalog(fmt),
                                      default_owner=self.trino_owner, writer=self.writer)
        except FormatError as exc:
            raise self.error(f"catalog {self.name!r}: cannot store {view} in the {fmt} format: {exc}") from None
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


def _close_client(client: hmsclient.HMSClient) -> None:
    with contextlib.suppress(TException, OSError):
        client.close()
