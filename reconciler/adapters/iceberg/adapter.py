"""Iceberg REST catalog adapter: complete delegation to native multi-dialect views.

Reads, create, drop and exists go through pyiceberg's RestCatalog. pyiceberg 0.12
has no view replace, so an update is an Iceberg CommitViewRequest posted over the
catalog's own authenticated HTTP session (same auth, headers, prefix). The pure
mapping lives in `codec`; this module is the I/O edge: connections (one
RestCatalog per thread), error translation with secrets redacted, and the
conflict handling of commits (409: reload, re-check, retry; 5xx: reload and say
whether the commit landed).
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import json
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata as importlib_metadata
from typing import Any, Concatenate, NoReturn, ParamSpec, TypeVar
from urllib.parse import quote, urlsplit, urlunsplit

import requests
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError
from pyiceberg import exceptions as ice_exc
from pyiceberg.catalog.rest import Capability, Endpoints, IdentifierKind, RestCatalog, ViewResponse
from pyiceberg.schema import Schema
from pyiceberg.view.metadata import ViewVersion
from urllib3 import exceptions as urllib3_exc

from reconciler.adapters import catalog_json
from reconciler.adapters.base import (
    AdapterError,
    Capabilities,
    ClientPool,
    ConflictError,
    Marker,
    NativeVersion,
    SchemaSnapshot,
    WritableAdapter,
    WriteContext,
    detail_of,
)
from reconciler.adapters.deadline.http import bound_requests, use_deadline_pools
from reconciler.adapters.iceberg import codec as fmt
from reconciler.adapters.iceberg import endpoints
from reconciler.adapters.metastore.formats.common import FormatError, too_deep
from reconciler.adapters.options import CatalogOptions
from reconciler.core.errors import DecodeError
from reconciler.core.model import AdapterHandle, Column, LiveView, ViewId, ViewSpec, marks_of


def _schema_model(columns: list[Column]) -> Schema:
    """The pyiceberg Schema of a view's columns. pyiceberg's models validate and serialise
    recursively, and so does the JSON of a commit: a type nested too deeply for them is a
    FormatError (check() makes it a plan error), never a RecursionError on apply."""
    raw = fmt.schema_json(columns, 0)
    try:
        with catalog_json.writing():
            catalog_json.dumps(raw)  # the commit body of an update
            schema = Schema.model_validate(raw)
            schema.model_dump_json()  # the request create_view sends
    except catalog_json.TooDeep:
        raise too_deep(columns, "an Iceberg view") from None
    return schema


DEFAULT_TIMEOUT = 30.0  # wall-time seconds per HTTP request; pyiceberg sets none, so a stalled server hung us


class IcebergOptions(CatalogOptions):
    uri: str = Field(description="the REST catalog's base URL")
    warehouse: str | None = None
    prefix: str | None = None
    token: str | None = Field(None, description="bearer token")
    credential: str | None = Field(None, description="OAuth2 `id:secret`")
    oauth2_server_uri: str | None = Field(None, alias="oauth2-server-uri")
    scope: str | None = None
    headers: dict[str, str] | None = Field(None, description="extra HTTP headers")
    properties: dict[str, str] | None = Field(None, description="raw pyiceberg properties")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0,
                           description="wall-time seconds per HTTP request, whole answer included (default 30)")


# Options of a `type: iceberg-rest` catalog in viewsync.yaml.
OPTIONS = IcebergOptions.names()
UNREADABLE_FORMAT = "iceberg-unreadable"
_SECRET_OPTIONS = ("token", "credential")
_SECRET_WORDS = ("token", "secret", "password", "credential", "key", "auth")
MAX_COMMIT_ATTEMPTS = 3
MAX_REDIRECTS = 5  # a REST catalog has no reason to redirect more: a loop fails fast

# Errors a REST round trip can raise that are expected failures (not bugs).
_CLIENT_ERRORS: tuple[type[BaseException], ...] = (
    ice_exc.RESTError, ice_exc.NoSuchNamespaceError, ice_exc.NoSuchViewError, ice_exc.NoSuchTableError,
    ice_exc.NoSuchIdentifierError, ice_exc.ViewAlreadyExistsError, ice_exc.TableAlreadyExistsError,
    ice_exc.NamespaceAlreadyExistsError, ice_exc.CommitFailedException, ice_exc.ValidationError,
    requests.RequestException, PydanticValidationError,
)
_UNKNOWN_STATE: tuple[type[BaseException], ...] = (
    ice_exc.ServerError, ice_exc.ServiceUnavailableError, ice_exc.CommitStateUnknownException,
    requests.ConnectionError, requests.Timeout,
)


class _ConfigShape(BaseModel):
    """The shapes of /v1/config's answer, checked before pyiceberg reads it: its model iterates
    `endpoints` before validating it (5 raised TypeError, [5] AttributeError)."""

    model_config = ConfigDict(title="ConfigResponse")  # what the error line names
    defaults: dict[str, str] | None = None
    overrides: dict[str, str] | None = None
    endpoints: list[str] | None = None


class _TimeoutRestCatalog(RestCatalog):
    """A RestCatalog whose every HTTP request has a wall-time limit, including the ones
    pyiceberg makes during construction (/v1/config, the OAuth2 token request), and which
    keeps the endpoints /v1/config listed (pyiceberg's own set cannot tell a list from its
    defaults for servers that list none)."""

    def __init__(self, name: str, timeout: float, **properties: str) -> None:
        self._viewsync_timeout = timeout  # set first: the constructor already makes requests
        self.served: frozenset[str] | None = None  # None: /v1/config lists no endpoints
        super().__init__(name, **properties)

    def _check_config(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        if response.ok and urlsplit(response.url).path.endswith("/v1/config"):
            # PydanticValidationError: a protocol failure
            self.served = endpoints.offered(_ConfigShape.model_validate_json(response.content).endpoints)

    def _config_headers(self, session: requests.Session) -> None:
        # the first thing pyiceberg does with each new session, before any request
        bound_requests(session, self._viewsync_timeout)
        session.max_redirects = MAX_REDIRECTS
        super()._config_headers(session)

    def _create_session(self) -> requests.Session:
        session = super()._create_session()
        if not any(self.properties.get(key) for key in ("token", "credential", "auth")):
            # without credentials pyiceberg sends "Authorization: Bearer None", over any
            # Authorization header of the `headers` option
            session.auth = None
        use_deadline_pools(session)  # adapters mounted after _config_headers (SigV4)
        session.hooks["response"].append(self._check_config)
        return session


@dataclass(frozen=True)
class IcebergHandle(AdapterHandle):
    """What a fetch saw: the base of the next commit."""

    metadata: dict[str, Any]
    metadata_location: str | None
    problem: str | None = None  # why pyiceberg rejected the metadata (then the view is unreadable)


def _engine_version() -> str:
    try:
        return importlib_metadata.version("viewsync")
    except importlib_metadata.PackageNotFoundError:
        return "0+unknown"


def catalog_properties(options: dict[str, Any]) -> dict[str, str]:
    """pyiceberg RestCatalog properties for our connection options."""
    props: dict[str, str] = {"uri": str(options["uri"]),
                             # legacy servers without an `endpoints` list: assume views exist
                             "view-endpoints-supported": "true"}
    for key in ("warehouse", "prefix", "token", "credential", "oauth2-server-uri", "scope"):
        if options.get(key) not in (None, ""):
            props[key] = str(options[key])
    for name, value in (options.get("headers") or {}).items():
        props[f"header.{name}"] = str(value)
    for key, value in (options.get("properties") or {}).items():
        props[str(key)] = str(value)
    return props


def secrets_of(options: dict[str, Any]) -> list[str]:
    """Every value that must never be shown, longest first."""
    found: list[str] = [str(options[k]) for k in _SECRET_OPTIONS if options.get(k)]
    cred = str(options.get("credential") or "")
    if ":" in cred:
        found.append(cred.split(":", 1)[1])
    found += [str(v) for v in (options.get("headers") or {}).values() if v]
    for key, value in (options.get("properties") or {}).items():
        if value and any(word in str(key).lower() for word in _SECRET_WORDS):
            found.append(str(value))
    userinfo = urlsplit(str(options.get("uri") or "")).password
    if userinfo:
        found.append(userinfo)
    out = {s for s in found if len(s) >= 3}
    out |= {quote(s, safe="") for s in out}
    return sorted(out, key=len, reverse=True)


def _safe_uri(uri: str) -> str:
    parts = urlsplit(uri)
    if parts.username or parts.password:
        host = parts.hostname or ""
        if parts.port:
            host += f":{parts.port}"
        parts = parts._replace(netloc=host)
    return urlunsplit(parts)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it wraps (urllib3 keeps causes in `reason` and `args`), breadth first."""
    seen: list[BaseException] = []
    pending = [exc]
    while pending and len(seen) < 20:
        cur = pending.pop(0)
        if any(cur is s for s in seen):
            continue
        seen.append(cur)
        yield cur
        pending += [c for c in (getattr(cur, "reason", None), cur.__cause__, cur.__context__, *cur.args)
                    if isinstance(c, BaseException)]


def _detail(exc: BaseException | str, timeout: float) -> str:
    """One line saying why a request failed (library wrappers and dumps left out)."""
    if isinstance(exc, str):
        return detail_of(exc)
    if isinstance(exc, PydanticValidationError):  # the server's answer has the wrong shapes
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": str(exc)}
        where = ".".join(map(str, first["loc"])) or "the body"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"the server's answer is not a valid {exc.title}: {where}: {first['msg']}{more}"
    if isinstance(exc, ice_exc.ServerError | ice_exc.ServiceUnavailableError):
        return f"server error: {detail_of(exc)}"
    if isinstance(exc, requests.TooManyRedirects):
        return f"the server redirects in a loop (more than {MAX_REDIRECTS} redirects)"
    if isinstance(exc, requests.RequestException):
        causes = list(_causes(exc))
        for cause in causes:  # e.g. connection refused (urllib3 counts that as a timeout)
            if isinstance(cause, OSError) and cause.strerror and not isinstance(cause, TimeoutError):
                return cause.strerror.lower()
        if any(isinstance(c, requests.Timeout | TimeoutError | urllib3_exc.TimeoutError) for c in causes):
            return f"timed out (no complete answer within {timeout:g} s)"
        for cause in causes:
            if isinstance(cause, http.client.HTTPException):
                return f"the server's answer is not HTTP ({type(cause).__name__})"
    return detail_of(exc)


def _error_text(response: requests.Response) -> str:
    """The message of an Iceberg ErrorResponse body, else the HTTP reason."""
    try:
        err = catalog_json.loads(response.text).get("error") or {}
        kind, message = err.get("type"), err.get("message")
        if message:
            return f"{kind}: {message}" if kind else str(message)
    except (ValueError, AttributeError):
        pass
    return response.reason or "no details"


P = ParamSpec("P")
T = TypeVar("T")


def _leasing(method: Callable[Concatenate[IcebergRestAdapter, P], T]
             ) -> Callable[Concatenate[IcebergRestAdapter, P], T]:
    """The method's catalog calls go through one REST client, leased from the adapter's pool
    for its duration (and shared with any such method it calls)."""

    @functools.wraps(method)
    def leased(adapter: IcebergRestAdapter, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with adapter._catalogs.lease():
            return method(adapter, *args, **kwargs)

    return leased


class IcebergRestAdapter(WritableAdapter):
    kind = "iceberg-rest"
    Options = IcebergOptions

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        super().__init__(name, options)
        unknown = sorted(set(options) - OPTIONS)
        if unknown:
            raise self.error(f"catalog {name!r} (iceberg-rest): unknown option(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(OPTIONS))}")
        if not options.get("uri"):
            raise self.error(f"catalog {name!r} (iceberg-rest): option 'uri' is required")
        for key in ("headers", "properties"):
            if options.get(key) is not None and not isinstance(options[key], dict):
                raise self.error(f"catalog {name!r} (iceberg-rest): option {key!r} must be a mapping")
        self._timeout = self.seconds_option("timeout", DEFAULT_TIMEOUT)
        self._props = catalog_properties(options)
        self._catalogs: ClientPool[_TimeoutRestCatalog] = ClientPool(self._connect, _close_catalog)
        self._engine_version = _engine_version()

    # ------------------------------------------------------------ plumbing
    def secret_values(self) -> list[str]:
        return secrets_of(self.options)

    @property
    def capabilities(self) -> Capabilities:
        # a REST client per call in flight (ClientPool): apply may write concurrently
        return Capabilities(strategy="delegate", writable=self.WRITABLE, parallel_writes=True)

    def describe(self) -> str:
        extra = "".join(f", {k}={self.options[k]}" for k in ("warehouse", "prefix") if self.options.get(k))
        uri = _safe_uri(str(self.options["uri"]))
        return self.redact(f"{self.name} (iceberg-rest {uri}{extra})")

    def _fail(self, what: str, exc: BaseException | str) -> NoReturn:
        raise self.fail(what, _detail(exc, self._timeout)) from None

    @contextlib.contextmanager
    def _translate(self, what: str) -> Iterator[None]:
        """Expected client-library failures become AdapterError, secrets redacted."""
        try:
            yield
        except AdapterError as exc:
            raise self.error(str(exc), type(exc)) from None
        except _CLIENT_ERRORS as exc:
            self._fail(what, exc)
        except NotImplementedError as exc:  # pyiceberg's word for an endpoint the server lacks
            self._fail(what, f"the server does not support this ({exc})")

    def _count_response(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        self.count_call()

    def _connect(self) -> _TimeoutRestCatalog:
        """A RestCatalog for the pool (its requests session is not thread-safe: one call at a time)."""
        with self._translate(f"cannot connect to {_safe_uri(self._props['uri'])}"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # legacy OAuth2 flow warns
            # /v1/config, plus a token request per session pyiceberg opens with a credential
            self.count_call(3 if "credential" in self._props else 1)
            try:
                cat = _TimeoutRestCatalog(self.name, self._timeout, **self._props)
            except PydanticValidationError as exc:  # /v1/config's answer (a ValueError too)
                self._fail(f"cannot connect to {_safe_uri(self._props['uri'])}", exc)
            except ValueError as exc:  # pyiceberg rejecting one of the `properties`
                self._fail("invalid catalog properties", exc)
        cat._session.hooks["response"].append(self._count_response)
        lacking = endpoints.missing(cat.served, endpoints.READS)
        if lacking:
            self._fail("not usable", "the REST server does not offer " + ", ".join(f'"{e}"' for e in lacking))
        if Capability.V1_LIST_VIEWS not in cat._supported_endpoints:  # properties turned the default off
            self._fail("not usable", "the REST server does not advertise the view endpoints")
        return cat

    @property
    def connections_opened(self) -> int:
        """REST clients opened so far, each with its GET /v1/config (and token request)."""
        return self._catalogs.opened

    def _catalog(self) -> _TimeoutRestCatalog:
        """The client the running method leased (`_leasing`)."""
        cat = self._catalogs.held()
        if cat is None:
            raise RuntimeError("IcebergRestAdapter: a method that calls the catalog must be @_leasing")
        return cat

    @_leasing
    def preflight(self, writes: Sequence[tuple[str, ViewId]]) -> None:
        """Every endpoint these writes need is one /v1/config lists (a server that lists none
        is assumed to offer them all); else one line naming each missing endpoint."""
        why = endpoints.refusal(self._catalog().served, writes)
        if why:
            raise self.error(f"catalog {self.name!r}: {why}")

    def close(self) -> None:
        self._catalogs.close_all()

    @staticmethod
    def _ident(view: ViewId) -> tuple[str, ...]:
        return (*view.namespace, view.name)

    def _view_url(self, cat: RestCatalog, view: ViewId) -> str:
        path = cat._split_identifier_for_path(self._ident(view), IdentifierKind.VIEW)
        return cat.url(Endpoints.load_view, prefixed=True, **path)

    def _load(self, cat: RestCatalog, view: ViewId) -> IcebergHandle | None:
        """One GET of a view: its metadata and metadata location (None: no such view).

        Raw because pyiceberg's load_view drops the metadata location (our fingerprint)."""
        with self._translate(f"cannot load view {view}"):
            response = cat._session.get(self._view_url(cat, view))
            if response.status_code == 404:
                return None
            if response.status_code != 200:
                self._fail(f"cannot load view {view}",
                           f"HTTP {response.status_code}: {_error_text(response)}")
            problem = None
            try:  # Iceberg's shape, checked by pyiceberg
                ViewResponse.model_validate_json(response.text)
            except PydanticValidationError as exc:  # e.g. a type newer than pyiceberg: unreadable, not fatal
                problem = fmt.first_line(str(exc))
            try:
                body = catalog_json.loads(response.text)
            except ValueError as exc:
                self._fail(f"cannot load view {view}", exc)
            if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
                self._fail(f"cannot load view {view}", "the server's answer has no view metadata")
        return IcebergHandle(metadata=body["metadata"], metadata_location=body.get("metadata-location"),
                             problem=problem)

    def _live(self, view: ViewId, handle: IcebergHandle) -> tuple[LiveView, list[str]]:
        """The live view; one we cannot read is a read-only placeholder, never left out (the
        planner would take the name for free and plan a create that fails)."""
        try:
            if handle.problem:
                raise DecodeError(handle.problem)
            read = fmt.read_view(handle.metadata)
            kind, writable, notes = "iceberg", True, read.warnings
        except DecodeError as exc:
            read = fmt.placeholder(handle.metadata)
            kind, writable = UNREADABLE_FORMAT, False
            notes = [f"cannot read this Iceberg view ({exc}); viewsync will not update it"]
        try:
            fingerprint = fmt.fingerprint(handle.metadata, handle.metadata_location)
        except (TypeError, ValueError, AttributeError):  # malformed metadata: the default fingerprint
            fingerprint = ""
        live = LiveView(
            id=view, spec=read.spec, format=kind, managed_by=read.managed_by, spec_digest=read.spec_digest,
            native_version=str(read.current_version_id), fingerprint=fingerprint, writable=writable,
            handle=handle, marks=marks_of(_properties(handle.metadata)),
        )
        return live, notes

    # --------------------------------------------------------------- reads
    @_leasing
    def list_schemas(self) -> list[str]:
        cat = self._catalog()
        out: list[str] = []
        with self._translate("cannot list namespaces"):
            pending: list[tuple[str, ...]] = []
            seen: set[tuple[str, ...]] = set()

            def visit(children: list[tuple[str, ...]], parent: tuple[str, ...]) -> None:
                # only true children, each once: a server that ignores ?parent= must not loop us
                for child in map(tuple, children):
                    if child[:len(parent)] == parent and len(child) > len(parent) and child not in seen:
                        seen.add(child)
                        pending.append(child)

            visit(cat.list_namespaces(), ())
            while pending:
                ns = pending.pop(0)
                out.append(".".join(ns))
                visit(cat.list_namespaces(ns), ns)
        return sorted(out)

    @_leasing
    def fetch(self, schema: str) -> SchemaSnapshot:
        cat = self._catalog()
        ns = tuple(schema.split("."))
        snap = SchemaSnapshot(catalog=self.name, schema=schema)
        with self._translate(f"cannot read namespace {schema!r}"):
            try:
                names = sorted(ident[-1] for ident in cat.list_views(ns))
                snap.tables = {ident[-1] for ident in cat.list_tables(ns)}
            except ice_exc.NoSuchNamespaceError:
                return SchemaSnapshot(catalog=self.name, schema=schema, exists=False)
        for name in names:
            view = ViewId(self.name, schema, name)
            handle = self._load(cat, view)
            if handle is None:  # dropped between list and load
                continue
            live, notes = self._live(view, handle)
            snap.views[name] = live
            snap.warnings.extend(f"{view}: {note}" for note in notes)
        return snap

    @_leasing
    def table_schemas(self, tables: list[tuple[str, str]]) -> dict[tuple[str, str], list[Column]]:
        cat = self._catalog()
        out: dict[tuple[str, str], list[Column]] = {}
        for schema, name in sorted(set(tables)):
            ident = (*schema.split("."), name)
            with self._translate(f"cannot read table {'.'.join(ident)}"):
                try:
                    table = cat.load_table(ident)
                except (ice_exc.NoSuchTableError, ice_exc.NoSuchNamespaceError, ice_exc.NoSuchIdentifierError):
                    continue  # not a table here: the reference resolves elsewhere or nowhere
                out[(schema, name)] = fmt.columns_from_schema(json.loads(table.schema().model_dump_json()))
        return out

    # The namespace property `owner` is the schema owner (reconciler.apply.schema_owners).
    KEEPS_SCHEMA_OWNER = True
    OWNER_PROPERTY = "owner"

    @_leasing
    def read_schema_owner(self, schema: str) -> str | None:
        with self._translate(f"cannot read namespace {schema!r}"):
            try:
                props = self._catalog().load_namespace_properties(tuple(schema.split(".")))
            except ice_exc.NoSuchNamespaceError:
                raise LookupError(schema) from None
        return props.get(self.OWNER_PROPERTY) or None

    @_leasing
    def write_schema_owner(self, schema: str, owner: str) -> None:
        with self._translate(f"cannot set the owner of namespace {schema!r}"):
            self._catalog().update_namespace_properties(tuple(schema.split(".")),
                                                        updates={self.OWNER_PROPERTY: owner})

    @_leasing
    def create_schema(self, schema: str, properties: Mapping[str, str]) -> bool:
        """The namespace (its parents too, when missing), `properties` on the namespace itself."""
        parts = tuple(schema.split("."))
        cat = self._catalog()
        with self._translate(f"cannot create namespace {schema!r}"):
            if cat.namespace_exists(parts):
                return False
            for depth in range(1, len(parts) + 1):
                ns = parts[:depth]
                if depth == len(parts) or not cat.namespace_exists(ns):
                    try:
                        cat.create_namespace(ns, properties=dict(properties) if depth == len(parts) else {})
                    except ice_exc.NamespaceAlreadyExistsError:
                        if depth == len(parts):
                            return False
        return True

    @_leasing
    def drop_schema(self, schema: str) -> bool:
        """Drops the namespace only when it holds no view, table or namespace."""
        parts = tuple(schema.split("."))
        cat = self._catalog()
        with self._translate(f"cannot drop namespace {schema!r}"):
            try:
                if cat.list_views(parts) or cat.list_tables(parts) or cat.list_namespaces(parts):
                    return False
                cat.drop_namespace(parts)
            except ice_exc.NoSuchNamespaceError:
                return False
            except ice_exc.NamespaceNotEmptyError:
                return False
        return True

    @_leasing
    def view_exists(self, view: ViewId) -> bool:
        """HEAD on the view (pyiceberg's view_exists)."""
        with self._translate(f"cannot check view {view}"):
            return bool(self._catalog().view_exists(self._ident(view)))

    @_leasing
    def native_history(self, view: ViewId) -> list[NativeVersion]:
        handle = self._load(self._catalog(), view)
        if handle is None:
            return []
        out: list[NativeVersion] = []
        for version in sorted(handle.metadata.get("versions") or [], key=lambda v: int(v["version-id"])):
            dialects = tuple(str(r.get("dialect", "")).lower() for r in version.get("representations") or [])
            summ = {str(k): str(v) for k, v in (version.get("summary") or {}).items()}
            out.append(NativeVersion(version=str(version["version-id"]),
                                     timestamp_ms=version.get("timestamp-ms"),
                                     summary=summ, dialects=dialects, spec=_version_spec(handle.metadata, version)))
        return out

    # ---------------------------------------------------------- plan hooks
    def storable(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> ViewSpec:
        return fmt.storable(spec.resolved(view))

    def check(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> list[tuple[str, str]]:
        errors: list[tuple[str, str]] = []
        if live is not None and live.format == UNREADABLE_FORMAT:
            errors.append(("unreadable_view",
                           f"catalog {self.name!r}: view {view}: the live Iceberg view has a definition "
                           f"viewsync cannot read (see the warnings), so it cannot be created or updated; "
                           f"fix or drop it with another tool, or declare another name"))
        if not spec.columns:
            errors.append(("columns_required",
                           f"catalog {self.name!r}: view {view}: Iceberg views need their columns declared "
                           f"(add `columns` with names and types)"))
        for key in sorted(spec.properties):
            reason = fmt.reserved_reason(key)
            if reason:
                errors.append(("reserved_property",
                               f"catalog {self.name!r}: view {view}: property {key!r} {reason}"))
        if spec.columns:
            try:
                _schema_model(self.storable(view, spec).columns)
            except FormatError as exc:
                errors.append(("not_storable", f"catalog {self.name!r}: view {view}: {exc}"))
        return errors

    # -------------------------------------------------------------- writes
    def _summary(self, ctx: WriteContext) -> dict[str, str]:
        actor = ctx.actor if ctx.actor != "unknown" else None
        return fmt.summary(self._engine_version, ctx.git_commit, actor)

    @_leasing
    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        spec = self.storable(view, spec)
        cat = self._catalog()
        schema = _schema_model(spec.columns)
        version = ViewVersion.model_validate(fmt.version_json(spec, 1, 0, self._summary(ctx)))
        props = (fmt.spec_properties(spec) | fmt.engine_properties(spec, self._engine_version, create=True)
                 | marker.as_properties())
        what = f"cannot create view {view}"
        for _ in range(2):
            try:
                cat.create_view(self._ident(view), schema, version, properties=props)
                return
            except _UNKNOWN_STATE as exc:
                self._after_unknown(cat, view, spec, marker, what, exc)
                return
            except ice_exc.ViewAlreadyExistsError as exc:
                # the plan saw the name free: someone took it since
                raise self.error(f"catalog {self.name!r}: {what}: the name is taken by an existing view or "
                                 f"table ({exc})", ConflictError) from None
            except (ice_exc.NoSuchNamespaceError, ice_exc.RESTError) as exc:
                # pyiceberg reports a missing namespace on create as a bare RESTError (404);
                # its subclasses (401, 403, 400...) are other failures
                missing = isinstance(exc, ice_exc.NoSuchNamespaceError) or type(exc) is ice_exc.RESTError
                if not missing or not self._ensure_namespace(cat, view):
                    self._fail(what, exc)
            except _CLIENT_ERRORS as exc:
                self._fail(what, exc)
        self._fail(what, f"namespace {view.schema!r} could not be created")

    def _ensure_namespace(self, cat: RestCatalog, view: ViewId) -> bool:
        """Create the view's namespace (and its parents) if missing; False if it already existed."""
        parts = tuple(view.namespace)
        with self._translate(f"cannot create namespace {view.schema!r}"):
            if cat.namespace_exists(parts):
                return False
            for depth in range(1, len(parts) + 1):
                ns = parts[:depth]
                if depth == len(parts) or not cat.namespace_exists(ns):
                    with contextlib.suppress(ice_exc.NamespaceAlreadyExistsError):
                        cat.create_namespace(ns)
        return True

    @_leasing
    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        view = live.id
        spec = self.storable(view, spec)
        cat = self._catalog()
        # A view commit can only assert the view's uuid, so the server never refuses a commit
        # based on a state that changed since the plan: compare the fresh state ourselves.
        planned = self.handle_of(live, IcebergHandle)
        handle = self._load(cat, view)
        if handle is None:
            raise ConflictError(f"catalog {self.name!r}: view {view} no longer exists")
        uuid = (planned or handle).metadata.get("view-uuid")
        if fmt.fingerprint(handle.metadata, handle.metadata_location) != live.fingerprint:
            handle = self._reload_for_retry(cat, live, uuid, spec, marker)
        what = f"cannot replace view {view}"
        last = ""
        for attempt in range(MAX_COMMIT_ATTEMPTS):
            if attempt:
                handle = self._reload_for_retry(cat, live, uuid, spec, marker)
            body = fmt.commit_request(handle.metadata, live.spec, spec, marker.as_properties(),
                                      self._summary(ctx), engine_version=self._engine_version)
            if not body["updates"]:
                return  # the live view already is what we want
            try:
                response = cat._session.post(self._view_url(cat, view), data=catalog_json.dumps(body))
            except (requests.ConnectionError, requests.Timeout) as exc:
                self._after_unknown(cat, view, spec, marker, what, exc)
                return
            except _CLIENT_ERRORS as exc:
                self._fail(what, exc)
            if response.status_code == 200:
                return
            last = f"HTTP {response.status_code}: {_error_text(response)}"
            if response.status_code == 409:
                continue  # someone committed in between: reload, re-check, retry
            if response.status_code == 404:
                raise self.error(f"catalog {self.name!r}: {what}: the view (or its namespace) no "
                                 f"longer exists ({last}); run plan again", ConflictError)
            if response.status_code >= 500:
                self._after_unknown(cat, view, spec, marker, what, last)
                return
            self._fail(what, last)
        raise self.error(f"catalog {self.name!r}: {what}: still conflicting after "
                         f"{MAX_COMMIT_ATTEMPTS} attempts ({last}); run plan again", ConflictError)

    def _reload_for_retry(self, cat: RestCatalog, live: LiveView, uuid: Any, spec: ViewSpec,
                          marker: Marker) -> IcebergHandle:
        """After a 409: the fresh state, if our change still applies cleanly on top of it."""
        view = live.id
        fresh = self._load(cat, view)
        if fresh is None:
            raise ConflictError(f"catalog {self.name!r}: view {view} was dropped by another client")
        if fresh.metadata.get("view-uuid") != uuid:
            raise ConflictError(f"catalog {self.name!r}: view {view} was replaced by another client")
        if fmt.fingerprint(fresh.metadata, fresh.metadata_location) == live.fingerprint:
            return fresh
        try:
            read = fmt.read_view(fresh.metadata)
        except DecodeError as exc:
            raise ConflictError(f"catalog {self.name!r}: view {view} was changed by another client "
                                f"into something viewsync cannot read ({exc})") from None
        if read.managed_by not in (None, marker.project):
            raise ConflictError(f"catalog {self.name!r}: view {view} is now managed by {read.managed_by!r}")
        clash = fmt.conflicts(live.spec, read.spec, spec)
        if clash:
            raise ConflictError(f"catalog {self.name!r}: view {view} was changed by another client since "
                                f"the plan ({', '.join(clash)}); run plan again")
        return fresh

    def _after_unknown(self, cat: RestCatalog, view: ViewId, spec: ViewSpec, marker: Marker, what: str,
                       cause: BaseException | str) -> None:
        """Commit state unknown (5xx, connection lost): reload to find out what happened."""
        detail = _detail(cause, self._timeout)
        try:
            fresh = self._load(cat, view)
        except AdapterError as exc:
            self._fail(what, f"commit state unknown ({detail}) and the view could not be reloaded "
                             f"to check ({exc}); run plan again to see the live state")
        if fresh is not None and fmt.landed(fresh.metadata, spec, marker.spec_digest):
            return  # our change is live: the error came after the commit
        self._fail(what, f"commit state unknown ({detail}); a reload shows the change did NOT land "
                         f"(the view does not hold it); run apply again")

    @_leasing
    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        cat = self._catalog()
        with self._translate(f"cannot drop view {live.id}"), contextlib.suppress(ice_exc.NoSuchViewError):
            cat.drop_view(self._ident(live.id))


def _version_spec(metadata: dict[str, Any], version: dict[str, Any]) -> ViewSpec | None:
    """One version read as if it were current (its SQL, schema and namespace; the view's
    properties are not versioned); None when viewsync cannot read it."""
    try:
        return fmt.read_view({**metadata, "current-version-id": version.get("version-id")}).spec
    except DecodeError:
        return None


def _close_catalog(cat: RestCatalog) -> None:
    with contextlib.suppress(Exception):  # closing must never fail a run
        cat._session.close()


def _properties(metadata: Any) -> Mapping[str, str]:
    """A view metadata's properties (empty when the metadata is malformed)."""
    props = metadata.get("properties") if isinstance(metadata, dict) else None
    return props if isinstance(props, dict) else {}
