"""The adapter contract: the one interface every catalog kind implements.

This module is the single source of truth for what an adapter receives,
returns and raises; the planner and apply rely on nothing else. A new catalog
kind is one module (or package) with one subclass of `ReadOnlyAdapter` or
`WritableAdapter` (both `CatalogAdapter`s; metastore-style catalogs extend
`metastore.base.MetastoreAdapter`), registered by its `kind` in
`reconciler.adapters.REGISTRY`; `tests/adapters/contract/` then runs the shared
contract suite on it. Every contract method documents its Args, Returns and Raises.

Call pattern. plan: `list_schemas()` once per catalog, `fetch(schema)` once per
schema (one bulk read, so a plan costs O(schemas) catalog calls), then per
declared view `check()` and `storable()`. apply: `fetch()` again under the lock,
`preflight()` once per catalog with all of the run's writes there, then `create` /
`update` / `drop` per action. `history`: `native_history()`.
Every method may be called from several threads at once (fetches run in a pool).

Errors. Everything an adapter raises on purpose is an `AdapterError` (a
`ViewsyncError`): the catalog is unreachable, refused, or is read-only; its
`ConflictError` subclass means the live view changed since it was read (plan
again). Content the adapter cannot read is never an error: it becomes a
read-only placeholder (`writable=False`) plus a warning, so the planner still
knows the name is taken. Messages name the catalog, fit on one line and hold no
secrets: build them with `error()` / `fail()`, which go through `redact()`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import ValidationError

from reconciler.adapters.options import CatalogOptions
from reconciler.core import coltypes, secrets

# The contract's exceptions, re-exported for adapters.
from reconciler.core.errors import AdapterError as AdapterError
from reconciler.core.errors import ConflictError as ConflictError
from reconciler.core.errors import DecodeError as DecodeError
from reconciler.core.model import (
    MANAGED_BY,
    SPEC_DIGEST,
    AdapterHandle,
    Column,
    LiveView,
    Representation,
    ViewId,
    ViewSpec,
)

Strategy = Literal["managed", "delegate", "format-aware", "read-only"]

# What decoding catalog content may raise: our decoders' error, or the model / the type
# grammar rejecting a value the catalog holds. Adapters catch exactly these when reading.
DECODE_FAILURES: tuple[type[Exception], ...] = (DecodeError, ValidationError, coltypes.ColumnTypeError)

H = TypeVar("H", bound=AdapterHandle)
C = TypeVar("C")


def detail_of(exc: BaseException | str) -> str:
    """The first line of what a client library said (DBAPI errors keep theirs in `orig`;
    many add hints on further lines), or the exception's type when it said nothing."""
    text = exc if isinstance(exc, str) else str(getattr(exc, "orig", None) or exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines:
        return lines[0]
    return exc if isinstance(exc, str) else type(exc).__name__


@dataclass(frozen=True)
class Capabilities:
    """What the planner may assume about a catalog. Every flag here is read by the planner,
    apply or the workspace; a flag nobody reads does not belong here."""

    strategy: Strategy  # shown on every plan action
    writable: bool  # False: declarations are expectations; create/update/drop raise
    # dialects a writable catalog can store; None = any (the planner refuses the others)
    writable_dialects: frozenset[str] | None = None
    # the catalog rewrites SQL (PostgreSQL, Glue): compare through sqlglot normalisation
    rewrites_sql: bool = False
    # fetches wait on a server (True) or are Python work in this process (False, e.g.
    # SQLite): only the former gains from the --parallelism thread pool.
    io_bound_fetch: bool = True
    # the catalog folds names to lower case (HMS, Glue): `Orders` and `orders` are one view.
    # Case-sensitive catalogs (Iceberg, PostgreSQL) must never match them to each other.
    fold_names: bool = False
    # writes from several threads at once are safe and gain (each thread its own connection,
    # or a thread-safe client): apply then runs independent actions concurrently.
    parallel_writes: bool = False
    # a connection takes creates ahead of their answers and carries them out in order (Thrift):
    # apply keeps several in flight per writer through `send_create`.
    creates_sent_ahead: bool = False


@dataclass
class SchemaSnapshot:
    """Everything the planner needs to know about one schema, from one fetch."""

    catalog: str
    schema: str
    exists: bool = True
    views: dict[str, LiveView] = field(default_factory=dict)  # keyed by view name
    tables: set[str] = field(default_factory=set)  # names taken by non-view objects
    warnings: list[str] = field(default_factory=list)
    _folded: dict[str, str] | None = field(default=None, repr=False, compare=False)

    def find(self, name: str, fold: bool) -> LiveView | None:
        """The live view called `name`; with `fold` (catalogs that lowercase names,
        see Capabilities.fold_names) matched case-insensitively."""
        live = self.views.get(name)
        if live is not None or not fold:
            return live
        if self._folded is None:
            self._folded = {key.lower(): key for key in self.views}
        key = self._folded.get(name.lower())
        return self.views[key] if key is not None else None

    def has_table(self, name: str, fold: bool) -> bool:
        return name in self.tables or (fold and name.lower() in {t.lower() for t in self.tables})


@dataclass(frozen=True)
class Marker:
    """Ownership marker stamped on every view we write."""

    project: str
    spec_digest: str
    # further marks stamped beside the ownership marker (a preview copy's, see model.PREVIEW_MARKS)
    extra: tuple[tuple[str, str], ...] = ()

    def as_properties(self) -> dict[str, str]:
        return {MANAGED_BY: self.project, SPEC_DIGEST: self.spec_digest, **dict(self.extra)}


@dataclass
class WriteContext:
    """Who and why, for adapters that record it natively (Iceberg summary, Glue...)."""

    actor: str = "unknown"
    git_commit: str | None = None
    run_id: str | None = None


@dataclass(frozen=True)
class NativeVersion:
    version: str
    timestamp_ms: int | None
    summary: dict[str, str]
    dialects: tuple[str, ...] = ()
    # The spec this version stands for, when the catalog keeps enough of it (`viewsync revert`):
    # an Iceberg version's SQL, schema and namespace, with the view's properties of today.
    spec: ViewSpec | None = field(default=None, compare=False)


class ClientPool(Generic[C]):
    """Catalog clients shared by an adapter's threads, each used by one thread at a time (thrift
    clients and requests sessions are not thread-safe): a call leases an idle client, or opens
    one, and gives it back when it ends. A command then opens as many clients as it makes calls
    at once, not one per thread that ever called: a metastore spends ~14 ms of CPU setting up
    each connection, an Iceberg REST client costs a GET /v1/config (and a token with OAuth), and
    a plan's listing, prefetch and reader threads and apply's writers would otherwise hold one each."""

    def __init__(self, open_client: Callable[[], C], close_client: Callable[[C], None]) -> None:
        self._open, self._close = open_client, close_client
        self._local = threading.local()  # the client this thread holds
        self._all: list[C] = []
        self._idle: list[C] = []
        self._opened = 0
        self._lock = threading.Lock()

    @property
    def opened(self) -> int:
        """How many clients have been opened."""
        return self._opened

    @contextmanager
    def lease(self, fresh: bool = False) -> Iterator[C]:
        """A client for one call; `fresh`: a newly opened one (a retry after a broken connection,
        whose idle siblings may be as stale). A call made inside another on the same thread
        (a create checking its database) uses the outer call's client."""
        held = self.held()
        if held is not None:
            yield held
            return
        client = self.take(fresh)
        self._local.client = client
        try:
            yield client
        finally:
            self._local.client = None
            self.give_back(client)

    def take(self, fresh: bool = False) -> C:
        """An idle client, or a new one, that no lease holds until `give_back`: for calls whose
        answers come later (requests sent ahead), so the thread's own calls meanwhile use another."""
        with self._lock:
            client = self._idle.pop() if self._idle and not fresh else None
        if client is None:
            client = self._open()
            with self._lock:
                self._all.append(client)
                self._opened += 1
        return client

    def give_back(self, client: C) -> None:
        """A taken or leased client is idle again, unless it was discarded."""
        with self._lock:
            if client in self._all:
                self._idle.append(client)

    def held(self) -> C | None:
        """The client this thread leased, while its lease lasts."""
        client: C | None = getattr(self._local, "client", None)
        return client

    def discard(self, client: C | None = None) -> None:
        """Close and forget `client`, by default the one this thread holds (a broken connection)."""
        held = self.held()
        if client is None or client is held:
            client, self._local.client = held, None
        if client is None:
            return
        with self._lock:
            if client in self._all:
                self._all.remove(client)
        self._close(client)

    def close_all(self) -> None:
        with self._lock:
            clients, self._all, self._idle = self._all, [], []
        for client in clients:
            self._close(client)


class CatalogAdapter(ABC):
    """One catalog of one kind, opened from its viewsync.yaml options.

    Extend `ReadOnlyAdapter` or `WritableAdapter`, not this class: which one states
    whether the catalog is writable (`WRITABLE`, which `capabilities` reports), and a
    writable adapter that does not implement every write cannot be instantiated.

    The constructor validates the options and raises AdapterError for bad ones; it
    must not connect (`validate` and `audit` never touch catalogs)."""

    kind: ClassVar[str]
    # The catalog's options in viewsync.yaml (generates the config schema and README table).
    Options: ClassVar[type[CatalogOptions]] = CatalogOptions
    # Whether views are written (set by ReadOnlyAdapter / WritableAdapter; reported as
    # Capabilities.writable).
    WRITABLE: ClassVar[bool]
    # Why writes are refused, for read-only kinds: shown in plan errors and apply failures.
    READ_ONLY_MESSAGE: ClassVar[str] = ("this catalog is read-only in viewsync; views can be managed in catalogs "
                                        "of type managed, iceberg-rest, hms or glue")
    # Schema owners (reconciler.apply.schema_owners): only catalogs that keep one implement
    # read_schema_owner / write_schema_owner; callers check this first.
    KEEPS_SCHEMA_OWNER: ClassVar[bool] = False

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        """Validate `options` (without connecting).

        Args:
            name: the catalog's name in viewsync.yaml.
            options: its options, without `type`.

        Raises:
            AdapterError: an option is missing or invalid (one line naming the catalog).
        """
        self.name = name
        self.options = options
        self.calls = 0  # catalog round trips, counted by the adapter
        # How many calls one operation (a bulk read's chunks) may have in flight at once;
        # the workspace sets it from --parallelism.
        self.concurrency = 8
        self._calls_lock = threading.Lock()
        # longest first, so a secret containing another is masked whole
        self._secrets = sorted({s for s in self.secret_values() if s}, key=len, reverse=True)

    def count_call(self, n: int = 1) -> None:
        with self._calls_lock:
            self.calls += n

    # ------------------------------------------------------------ redaction & errors
    def secret_values(self) -> Iterable[str]:
        """Option values of this catalog that must never be shown (tokens, passwords...),
        beyond what `reconciler.core.secrets` already masks (environment values, URL passwords)."""
        return ()

    def redact(self, text: str) -> str:
        """The one redactor of adapter output: this catalog's secrets, then everything
        `reconciler.core.secrets.redact` masks."""
        for secret in self._secrets:
            text = text.replace(secret, secrets.MASK)
        return secrets.redact(text)

    def error(self, message: str, cls: type[AdapterError] = AdapterError) -> AdapterError:
        """An error to raise with `message` (which should name the catalog), redacted."""
        return cls(self.redact(message))

    def fail(self, what: str, cause: BaseException | str, cls: type[AdapterError] = AdapterError) -> AdapterError:
        """`catalog 'name': what: <first line of cause>`, redacted."""
        return self.error(f"catalog {self.name!r}: {what}: {detail_of(cause)}", cls)

    def seconds_option(self, key: str, default: float) -> float:
        """A duration option (a timeout): a number of seconds > 0, else a located error."""
        value = self.options.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.error(f"catalog {self.name!r} ({self.kind}): option {key!r} must be a number of "
                             f"seconds > 0, not {value!r}")
        return float(value)

    def read_only_message(self, view: ViewId | None = None) -> str:
        where = f"catalog {self.name!r}" + (f", view {view}" if view is not None else "")
        return f"{where}: {self.READ_ONLY_MESSAGE}"

    @staticmethod
    def handle_of(live: LiveView, kind: type[H]) -> H | None:
        """The adapter-private handle `fetch` put on `live`, if it is of this adapter's type."""
        return live.handle if isinstance(live.handle, kind) else None

    def placeholder(self, view: ViewId, text: str, dialect: str, fmt: str, *, fingerprint: str = "",
                    managed_by: str | None = None, spec_digest: str | None = None,
                    native_version: str | None = None, handle: AdapterHandle | None = None,
                    default_namespace: list[str] | None = None) -> LiveView:
        """A live view this adapter cannot read: listed, never written (writable=False),
        holding its raw SQL text so a user can see what is there."""
        spec = ViewSpec(representations=[Representation(dialect=dialect, sql=text if text.strip()
                                                        else "-- unreadable")],
                        default_namespace=default_namespace)
        return LiveView(id=view, spec=spec, format=fmt, fingerprint=fingerprint, writable=False,
                        managed_by=managed_by, spec_digest=spec_digest, native_version=native_version,
                        handle=handle)

    # ------------------------------------------------------------------ the contract: reads
    @property
    @abstractmethod
    def capabilities(self) -> Capabilities:
        """What the planner may assume about this catalog.

        Returns:
            Capabilities, constant for the adapter's lifetime; `writable` is `WRITABLE`.
        """

    @abstractmethod
    def list_schemas(self) -> list[str]:
        """The schemas that exist.

        Returns:
            Their names (dotted for nested namespaces), sorted.

        Raises:
            AdapterError: the catalog cannot be read.
        """

    @abstractmethod
    def fetch(self, schema: str) -> SchemaSnapshot:
        """All views of one schema (and the names of its other objects), in bulk.

        Each LiveView's `fingerprint` changes whenever anything about the stored view
        changes (apply compares it to refuse stale plans); its `spec` is what `storable()`
        predicts for the spec that was written, so an unchanged view plans as no change.

        Args:
            schema: a schema name (dotted for nested namespaces).

        Returns:
            The snapshot; `exists=False` for a missing schema (not an error). Views the
            adapter cannot read are placeholders (see `placeholder`) with a warning in
            `warnings`.

        Raises:
            AdapterError: the catalog cannot be read.
        """

    def fetch_owned(self, schema: str, project: str) -> SchemaSnapshot:
        """The views of `project` in a schema nothing is declared in (plan looks there only
        for views to prune); catalogs that can filter on the marker skip the rest.

        Args:
            schema: a schema name.
            project: the project whose ownership marker to look for.

        Returns:
            A snapshot holding at least the views stamped by `project`.

        Raises:
            AdapterError: the catalog cannot be read.
        """
        return self.fetch(schema)

    def fetch_views(self, schema: str, names: list[str]) -> SchemaSnapshot:
        """The objects called `names` (apply re-reads what it will touch, under the lock);
        catalogs with a bulk read by name skip the rest of the schema.

        Args:
            schema: a schema name.
            names: view names in it.

        Returns:
            A snapshot holding at least those of `names` that exist.

        Raises:
            AdapterError: the catalog cannot be read.
        """
        return self.fetch(schema)

    def storable(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> ViewSpec:
        """What this catalog will hold, and `fetch` read back, after writing `spec` over
        `live`: defaults resolved, types widened. Pure: no I/O.

        Invariant: `fetch()` after `create`/`update` of `spec` returns a LiveView whose
        spec equals `storable(view, spec, live)`, or every plan would show a change.

        Args:
            view: the view to write.
            spec: its declared spec.
            live: the live view it replaces; None for a create.

        Returns:
            The spec as stored.
        """
        return spec.resolved(view)

    def check(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> list[tuple[str, str]]:
        """Why this catalog cannot store `spec` over `live`. Pure: no I/O.

        Invariant: check, storable and update make the same choices (e.g. the engine
        format of a metastore view); a spec check() accepts must not fail in create/update
        for a reason check() could have seen.

        Args:
            view: the view to write.
            spec: its declared spec.
            live: the live view it replaces; None for a create.

        Returns:
            Plan errors as (code, message) pairs; [] when it can.
        """
        return []

    # ------------------------------------------------------------------ the contract: writes
    def preflight(self, writes: Sequence[tuple[str, ViewId]]) -> None:  # noqa: B027 - optional hook
        """Refuse, before anything is written, writes this catalog cannot carry out at all (an
        operation the server does not offer). apply calls it once per catalog, under the lock
        after the re-read, with every write of the run there; a refusal stops the run before its
        first write. It may read the catalog. The default accepts everything.

        Args:
            writes: (action, view) pairs, action one of create, update, adopt, drop.

        Raises:
            AdapterError: one line naming the catalog and what it cannot do.
        """

    @abstractmethod
    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        """Create `view` holding `spec` (as `storable` predicts) stamped with `marker`.

        Args:
            view: the view to create.
            spec: what it holds.
            marker: the ownership marker to stamp on it.
            ctx: who and why, for catalogs that record it.

        Raises:
            ConflictError: the name was taken since the plan.
            AdapterError: the catalog refuses, is unreachable, or is read-only.
        """

    def send_create(self, view: ViewId, spec: ViewSpec, marker: Marker,
                    ctx: WriteContext) -> Callable[[], None]:
        """`create`, sent without waiting for its answer; only for catalogs whose capabilities
        say `creates_sent_ahead`. Creates sent from one thread are carried out in the order sent;
        that thread calls what each returns once, in that order, before any other call.

        Args:
            view, spec, marker, ctx: as for `create`.

        Returns:
            What waits for the answer: it returns once the view is created, and raises what
            `create` raises. When the connection is lost with creates in flight, each one
            returns if the catalog holds its view as sent (read on another connection), and
            raises otherwise.

        Raises:
            AdapterError: the create could not be sent (e.g. the view cannot be encoded).
        """
        raise self.error(f"catalog {self.name!r} ({self.kind}) takes one create at a time")

    @abstractmethod
    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        """Replace `live` with `spec` stamped with `marker`, only if the stored view still
        has `live.fingerprint`.

        Args:
            live: the view as fetched for the plan.
            spec: what it holds from now on.
            marker: the ownership marker to stamp on it.
            ctx: who and why, for catalogs that record it.

        Raises:
            ConflictError: the stored view changed or disappeared since it was read.
            AdapterError: the catalog refuses, is unreachable, or is read-only.
        """

    @abstractmethod
    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        """Drop `live` if it still has `live.fingerprint`. Idempotent: a view that is
        already gone is not an error, so a re-run converges.

        Args:
            live: the view as fetched for the plan.
            ctx: who and why, for catalogs that record it.

        Raises:
            ConflictError: the stored view changed since it was read.
            AdapterError: the catalog refuses, is unreachable, or is read-only.
        """

    # ------------------------------------------------------------------ the contract: extras
    def read_schema_owner(self, schema: str) -> str | None:
        """The owner of `schema`, for catalogs that keep one (KEEPS_SCHEMA_OWNER).

        Returns:
            The owner; None when none is set.

        Raises:
            LookupError: the schema does not exist.
            AdapterError: the catalog keeps no schema owner, or cannot be read.
        """
        raise self.error(self._no_schema_owner(schema))

    def write_schema_owner(self, schema: str, owner: str) -> None:
        """Set the owner of `schema`, for catalogs that keep one (KEEPS_SCHEMA_OWNER).

        Raises:
            AdapterError: the catalog keeps no schema owner, or refuses.
        """
        raise self.error(self._no_schema_owner(schema))

    def _no_schema_owner(self, schema: str) -> str:
        return f"catalog {self.name!r}, schema {schema}: {self.kind} catalogs keep no schema owner"

    def create_schema(self, schema: str, properties: Mapping[str, str]) -> bool:
        """Create `schema` when it is missing (a preview's namespace), stamped with `properties`
        where the catalog keeps namespace properties.

        Args:
            schema: a schema name.
            properties: marks to stamp on it (e.g. the preview environment).

        Returns:
            True when this call created it; False when it existed already.

        Raises:
            AdapterError: the catalog cannot create schemas, refuses, or is read-only.
        """
        raise self.error(f"catalog {self.name!r} ({self.kind}): viewsync cannot create schemas in it")

    def drop_schema(self, schema: str) -> bool:
        """Drop `schema` if it exists and holds nothing (never a schema with any table or view).

        Args:
            schema: a schema name.

        Returns:
            True when this call dropped it; False when it is gone already or not empty.

        Raises:
            AdapterError: the catalog cannot drop schemas, refuses, or is read-only.
        """
        raise self.error(f"catalog {self.name!r} ({self.kind}): viewsync cannot drop schemas in it")

    def native_history(self, view: ViewId) -> list[NativeVersion]:
        """The catalog's own versions of `view`.

        Returns:
            Its versions, oldest first; [] when the catalog keeps none.

        Raises:
            AdapterError: the catalog cannot be read.
        """
        return []

    def table_schemas(self, tables: list[tuple[str, str]]) -> dict[tuple[str, str], list[Column]]:
        """Columns of tables, read in bulk (the Spark verifier stubs them).

        Args:
            tables: (schema, table) pairs.

        Returns:
            The columns of those pairs that are tables in this catalog; the others are left out.

        Raises:
            AdapterError: the catalog cannot be read.
        """
        return {}

    def describe(self) -> str:
        """Returns: a description of the connection, safe to print (no secrets)."""
        return f"{self.name} ({self.kind})"

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections; the adapter is not used afterwards. Never raises."""


class ReadOnlyAdapter(CatalogAdapter):
    """A catalog viewsync reads and never writes: declarations are expectations, and every
    write raises AdapterError with READ_ONLY_MESSAGE."""

    WRITABLE: ClassVar[bool] = False

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        """Raises: AdapterError with READ_ONLY_MESSAGE, always."""
        raise self.error(self.read_only_message(view))

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        """Raises: AdapterError with READ_ONLY_MESSAGE, always."""
        raise self.error(self.read_only_message(live.id))

    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        """Raises: AdapterError with READ_ONLY_MESSAGE, always."""
        raise self.error(self.read_only_message(live.id))

    def create_schema(self, schema: str, properties: Mapping[str, str]) -> bool:
        """Raises: AdapterError with READ_ONLY_MESSAGE, always."""
        raise self.error(self.read_only_message())

    def drop_schema(self, schema: str) -> bool:
        """Raises: AdapterError with READ_ONLY_MESSAGE, always."""
        raise self.error(self.read_only_message())


class WritableAdapter(CatalogAdapter):
    """A catalog viewsync writes: `create`, `update` and `drop` stay abstract, so a
    subclass missing one cannot be instantiated (TypeError)."""

    WRITABLE: ClassVar[bool] = True
