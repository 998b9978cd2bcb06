"""AWS Glue Data Catalog: format-aware delegation (boto3).

Catalog options:
  region          AWS region (else the default chain's region)
  catalog_id      the Data Catalog's account id (default: the caller's account)
  endpoint_url    a VPC endpoint or a local Glue (moto) for testing
  view_format     how views are written: multi-dialect | athena | spark | hive
                  (default athena, the format Athena itself writes)
  definer         IAM role ARN stamped as ViewDefinition.Definer (multi-dialect)
  dialect_versions  {ATHENA: "3", SPARK: "3.5", ...} for multi-dialect representations
  profile         a named profile of the shared AWS config files
  timeout         wall-time seconds per Glue call, botocore's retries included (default 30)
Credentials come from the default AWS chain (environment variables, shared
files, SSO, instance/task roles) via boto3; viewsync never prints or stores them.

Reads every Glue view kind (see `codec` and `legacy_codec`); creates views in
the format chosen by `view_format`. An update keeps a legacy view's engine
format (Athena/Trino envelope, Spark, Hive) when the declaration has SQL in its
dialect, so the engines reading it keep working, exactly like the HMS adapter;
a declaration lacking it is a `format_change` plan error, never a silent
rewrite into another engine's format. Updates carry the table's VersionId so a concurrent
change surfaces as ConflictError instead of being overwritten.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ReadTimeoutError,
)
from pydantic import Field

from reconciler.adapters.base import (
    DECODE_FAILURES,
    AdapterError,
    ConflictError,
    Marker,
    NativeVersion,
    SchemaSnapshot,
    WriteContext,
)
from reconciler.adapters.deadline import deadline, expired
from reconciler.adapters.deadline.http import bound_botocore
from reconciler.adapters.metastore import formats
from reconciler.adapters.metastore.base import Decoded, MetastoreAdapter, Unreadable, markers
from reconciler.adapters.metastore.formats import HiveColumn
from reconciler.adapters.metastore.formats import params as P
from reconciler.adapters.metastore.glue import codec
from reconciler.adapters.metastore.glue import legacy_codec as legacy
from reconciler.adapters.metastore.table_columns import metastore_columns
from reconciler.adapters.options import CatalogOptions, replaced_by
from reconciler.core import model
from reconciler.core.model import MANAGED_BY, SPEC_DIGEST, Column, LiveView, ViewId, ViewSpec

# live legacy engine format -> the view_format that writes it
_KEEPABLE = {engine: view_format for view_format, engine in legacy.ENGINE_FORMAT.items()}
_DIALECTS = {"athena": ("trino", "athena"), "spark": ("spark",), "hive": ("hive",)}

ViewFormat = Literal["multi-dialect", "athena", "spark", "hive"]


DEFAULT_TIMEOUT = 30.0
# botocore's standard retries (throttling, 5xx, dropped connections), at most this many
# attempts: with the backoff (under 1 + 2 s) a failing call stays within its timeout + 5 s.
MAX_ATTEMPTS = 3


class GlueOptions(CatalogOptions):
    """credentials from the default AWS chain"""

    region: str | None = Field(None, description="AWS region (else the default chain's)")
    catalog_id: str | None = Field(None, description="the Data Catalog's account id")
    endpoint_url: str | None = Field(None, description="a VPC endpoint, or a local Glue for tests")
    profile: str | None = Field(None, description="a named profile of the shared AWS config files")
    engine_format: ViewFormat = Field("athena", description="the format of the views viewsync creates")
    view_format: ViewFormat | None = Field(None, deprecated="use engine_format",
                                           json_schema_extra=replaced_by("engine_format"))
    definer: str | None = Field(None, description="IAM principal that defines multi-dialect views")
    dialect_versions: dict[str, str] | None = Field(None, description="e.g. {ATHENA: '3'}, multi-dialect views")
    trino_owner: str | None = Field(None, description="the user an athena (Trino) definer view runs as when it "
                                                "declares no owner")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0, description="wall-time seconds per Glue call, its retries "
                                                             "included (default 30)")


_KNOWN_OPTIONS = GlueOptions.names()


class GlueCallError(AdapterError):
    """A Glue API error, with the AWS error code kept for the adapter's own decisions."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class GlueHandle(model.AdapterHandle):
    """What update/drop need from the fetched table."""

    version_id: str | None
    table: dict[str, Any] = field(default_factory=dict)


class GlueAdapter(MetastoreAdapter):
    kind = "glue"
    Options = GlueOptions
    DEPRECATED_FORMAT_OPTION = "view_format"
    ENGINE_FORMATS = codec.VIEW_FORMATS
    DEFAULT_FORMAT = "athena"
    REWRITES_SQL = True  # validated ATHENA views come back in Glue's own encoding

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        unknown = sorted(set(options) - _KNOWN_OPTIONS)
        if unknown:
            raise AdapterError(f"catalog {name!r} (glue): unknown option(s) {', '.join(unknown)}")
        super().__init__(name, options)
        self.region = str(options["region"]) if options.get("region") else None
        self.catalog_id = str(options["catalog_id"]) if options.get("catalog_id") else None
        self.endpoint_url = str(options["endpoint_url"]) if options.get("endpoint_url") else None
        self.definer = str(options["definer"]) if options.get("definer") else None
        # The user an Athena/Trino definer view runs as when the declaration names no owner.
        self.trino_owner = str(options["trino_owner"]) if options.get("trino_owner") else None
        raw_versions = options.get("dialect_versions") or {}
        if not isinstance(raw_versions, dict):
            raise self.error(f"catalog {name!r} (glue): dialect_versions must be a mapping")
        self.dialect_versions = {str(k).upper(): str(v) for k, v in raw_versions.items()}
        self.timeout = self.seconds_option("timeout", DEFAULT_TIMEOUT)
        self._client: Any = None
        self._client_lock = threading.Lock()

    @property
    def view_format(self) -> str:
        return self.engine_format

    # ------------------------------------------------------------ connection
    @property
    def client(self) -> Any:
        """The boto3 Glue client (thread-safe once built; built once, lazily)."""
        with self._client_lock:
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def use_client(self, client: Any) -> None:
        """Use a prepared client (tests: botocore Stubber)."""
        with self._client_lock:
            self._client = client

    def _make_client(self) -> Any:
        profile = str(self.options["profile"]) if self.options.get("profile") else None
        try:
            session = boto3.session.Session(region_name=self.region, profile_name=profile)
            client = session.client(
                "glue",
                endpoint_url=self.endpoint_url,
                config=Config(retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "standard"},
                              connect_timeout=self.timeout, read_timeout=self.timeout,
                              user_agent_extra="viewsync"),
            )
            bound_botocore(client)  # each call (retries included) ends by the deadline `_call` sets
            return client
        except NoRegionError:
            raise self.error(f"catalog {self.name!r} (glue): no AWS region; set the catalog option "
                             "'region' or AWS_REGION") from None
        except BotoCoreError as exc:
            raise self.error(f"catalog {self.name!r} (glue): cannot build a Glue client: {exc}") from None

    def describe(self) -> str:
        parts = [f"region {self.region or 'default'}"]
        if self.catalog_id:
            parts.append(f"catalog {self.catalog_id}")
        if self.endpoint_url:
            u = urlsplit(self.endpoint_url)
            host = u.hostname or ""
            parts.append(f"endpoint {u.scheme}://{host}{':' + str(u.port) if u.port else ''}")
        parts.append(f"engine_format {self.engine_format}")
        return f"{self.name} (glue, {', '.join(parts)})"

    def _ids(self) -> dict[str, str]:
        return {"CatalogId": self.catalog_id} if self.catalog_id else {}

    def _call(self, op: str, **kwargs: Any) -> dict[str, Any]:
        """One Glue round trip; library errors become AdapterError subclasses."""
        self.count_call()
        client = self.client  # built outside the deadline (reading AWS config is no request)
        try:
            with deadline(self.timeout):
                try:
                    result: dict[str, Any] = getattr(client, op)(**self._ids(), **kwargs)
                    return result
                except (BotoCoreError, ClientError) as exc:
                    if expired() or isinstance(exc, ConnectTimeoutError | ReadTimeoutError):
                        raise self.error(f"catalog {self.name!r} (glue): {op} failed: timed out (no complete "
                                         f"answer within {self.timeout:g} s)") from None
                    raise
        except ClientError as exc:
            err = exc.response.get("Error", {})
            code = str(err.get("Code", "Unknown"))
            detail = f"{code}: {err.get('Message', '')}".rstrip(": ")
            if code.isdigit():  # no AWS error in the body: botocore's code is the HTTP status
                detail = f"HTTP {code} from the endpoint, no AWS error in the answer"
            message = f"catalog {self.name!r} (glue): {op} failed: {detail}"
            if code == "ConcurrentModificationException":
                raise self.error(message, ConflictError) from None
            raise GlueCallError(code, self.redact(message)) from None
        except (NoCredentialsError, PartialCredentialsError):
            raise self.error(f"catalog {self.name!r} (glue): no usable AWS credentials (configure the "
                             "default AWS chain, e.g. AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)") from None
        except EndpointConnectionError:
            raise self.error(f"catalog {self.name!r} (glue): cannot reach the Glue endpoint "
                             f"({self.describe()})") from None
        except BotoCoreError as exc:
            raise self.error(f"catalog {self.name!r} (glue): {op} failed: {type(exc).__name__}: {exc}") from None

    # --------------------------------------------------------------- reading
    def list_schemas(self) -> list[str]:
        names: list[str] = []
        token: str | None = None
        while True:
            page = self._call("get_databases", **({"NextToken": token} if token else {}))
            names.extend(str(db["Name"]) for db in page.get("DatabaseList", []))
            token = page.get("NextToken")
            if not token:
                return sorted(names)

    def create_schema(self, schema: str, properties: Mapping[str, str]) -> bool:
        """A Glue database with `properties` as its parameters."""
        try:
            self._call("create_database", DatabaseInput={"Name": schema, "Description": "viewsync preview",
                                                         "Parameters": dict(properties)})
            return True
        except GlueCallError as exc:
            if exc.code == "AlreadyExistsException":
                return False
            raise

    def drop_schema(self, schema: str) -> bool:
        """Glue's DeleteDatabase removes the tables in it too: it is called only on an empty one."""
        try:
            if self._call("get_tables", DatabaseName=schema, MaxResults=1).get("TableList"):
                return False
            self._call("delete_database", Name=schema)
            return True
        except GlueCallError as exc:
            if exc.code == "EntityNotFoundException":
                return False
            raise

    def parameters_of(self, raw: Any) -> Mapping[str, str]:
        return codec.params_of(raw)

    def _tables(self, schema: str) -> list[dict[str, Any]]:
        tables: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"DatabaseName": schema, "IncludeStatusDetails": True}
            if token:
                kwargs["NextToken"] = token
            page = self._call("get_tables", **kwargs)
            tables.extend(page.get("TableList", []))
            token = page.get("NextToken")
            if not token:
                return tables

    def table_schemas(self, tables: list[tuple[str, str]]) -> dict[tuple[str, str], list[Column]]:
        wanted: dict[str, set[str]] = {}
        for schema, name in tables:
            wanted.setdefault(schema.lower(), set()).add(name.lower())
        out: dict[tuple[str, str], list[Column]] = {}
        for schema, names in sorted(wanted.items()):
            try:
                listed = self._tables(schema)  # get_tables: one paged call per database
            except GlueCallError as exc:
                if exc.code == "EntityNotFoundException":
                    continue
                raise
            for table in listed:
                if str(table["Name"]).lower() not in names or _is_view(table):
                    continue
                sd = table.get("StorageDescriptor") or {}
                cols = metastore_columns(
                    [HiveColumn(c["Name"], c["Type"], c.get("Comment")) for c in sd.get("Columns") or []],
                    [HiveColumn(c["Name"], c["Type"], c.get("Comment")) for c in table.get("PartitionKeys") or []],
                    table.get("Parameters") or {})
                if cols:
                    out[(schema, str(table["Name"]))] = cols
        return out

    def fetch(self, schema: str) -> SchemaSnapshot:
        snap = SchemaSnapshot(catalog=self.name, schema=schema)
        try:
            tables = self._tables(schema)
        except GlueCallError as exc:
            if exc.code == "EntityNotFoundException":
                return SchemaSnapshot(catalog=self.name, schema=schema, exists=False)
            raise
        for table in tables:
            name = str(table["Name"])
            if not _is_view(table):
                snap.tables.add(name)
                continue
            version_id = str(table["VersionId"]) if table.get("VersionId") is not None else None
            snap.views[name] = self.live_view(ViewId(self.name, schema, name), table, snap.warnings,
                                              native_version=version_id,
                                              handle=GlueHandle(version_id=version_id, table=table))
        return snap

    # ----------------------------------------------------------------- codec
    def decode(self, view: ViewId, raw: Any) -> Decoded:
        table: dict[str, Any] = raw
        if table.get("IsMaterializedView"):
            shown = self.unreadable(view, table)
            managed_by, digest = markers(shown.parameters)
            spec = ViewSpec(representations=[model.Representation(dialect=shown.dialect, sql=shown.text)],
                            default_namespace=shown.default_namespace)
            return Decoded(spec=spec,
                           format="glue-materialized-view", managed_by=managed_by, spec_digest=digest,
                           writable=False)
        if codec.is_multi_dialect(table):
            return codec.decode_multi_dialect(table, view.schema)
        return legacy.decode(table, view.schema)

    def unreadable(self, view: ViewId, raw: Any) -> Unreadable:
        table: dict[str, Any] = raw
        return Unreadable(format="glue-unknown", dialect="unknown",
                          text=str(table.get("ViewOriginalText") or "") or "-- unreadable Glue view",
                          parameters=codec.params_of(table), default_namespace=view.namespace)

    def kept_format(self, live_format: str) -> str | None:
        return _KEEPABLE.get(live_format)

    def format_dialects(self, fmt: str) -> tuple[str, ...]:
        return _DIALECTS.get(fmt, ())

    # ---------------------------------------------------------------- checks
    def storable(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> ViewSpec:
        """What fetch will return after writing `spec`: the spec through our own encoder and
        decoder (Hive column types for multi-dialect views, the shared codecs for the rest)."""
        return self._storable(view, spec, self.engine_format_for(spec, live))

    def _storable(self, view: ViewId, spec: ViewSpec, fmt: str) -> ViewSpec:
        prepared = self._prepare(view, spec, fmt)
        try:
            table = self._encode(view, prepared, {}, fmt=fmt)
            return self.decode(view, table).spec
        except DECODE_FAILURES:
            return prepared  # check() reports why this spec cannot be stored

    def _prepare(self, view: ViewId, spec: ViewSpec, fmt: str | None = None) -> ViewSpec:
        """Defaults made explicit the way format `fmt` holds them (idempotent)."""
        fmt = fmt or self.view_format
        resolved = spec.resolved(view)
        if fmt == "multi-dialect":
            return codec.storable_multi_dialect(resolved)
        if fmt == "athena" and resolved.default_catalog is None:
            # Athena resolves names in its Glue catalog, and writes that name into every view.
            return resolved.model_copy(update={"default_catalog": legacy.ATHENA_CATALOG})
        return resolved

    def check(self, view: ViewId, spec: ViewSpec, live: LiveView | None = None) -> list[tuple[str, str]]:
        where = f"catalog {self.name!r} (glue) view {view}"
        fmt = self.engine_format_for(spec, live)
        kept = _KEEPABLE.get(live.format) if live is not None else None
        if kept is not None and kept != fmt:
            wanted = " or ".join(repr(d) for d in _DIALECTS[kept])
            return [("format_change", f"{where}: the live view is stored in the {kept} format and the "
                     f"declaration has no {wanted} representation, so updating it would rewrite it in the "
                     f"catalog's {self.engine_format} format, which {kept} readers cannot use; declare its "
                     f"{wanted} SQL to keep the {kept} format, or drop the view and create it anew")]
        resolved = spec.resolved(view)
        if fmt != "multi-dialect":
            errors = legacy.check(fmt, where, resolved, default_owner=self.trino_owner)
        else:
            errors = []
            if not codec.native_split(spec.representations):
                errors.append(("dialect_not_storable", f"{where}: view_format 'multi-dialect' needs at least "
                               "one representation Glue holds natively (trino or athena -> ATHENA, spark -> "
                               f"SPARK, redshift -> REDSHIFT); the view has only {', '.join(spec.dialects())}"))
            if not spec.columns:
                errors.append(("columns_required", f"{where}: Glue views need their columns declared"))
            if spec.security == "invoker":
                errors.append(("security_not_storable", f"{where}: Glue Data Catalog views always run with "
                               "the definer's rights; 'security: invoker' cannot be honoured"))
        if errors:
            return errors
        try:
            table = self._encode(view, self._storable(view, spec, fmt), {}, fmt=fmt)
        except DECODE_FAILURES as exc:
            return [("not_storable", f"{where}: {exc}")]
        return codec.check_table_input(where, table)

    # --------------------------------------------------------------- writing
    def _encode(self, view: ViewId, spec: ViewSpec, marker: dict[str, str],
                base: dict[str, Any] | None = None, fmt: str | None = None) -> dict[str, Any]:
        """TableInput for a resolved spec in `fmt` (default: view_format). Glue keeps table
        names in lower case."""
        fmt = fmt or self.view_format
        name = view.name.lower()
        if fmt == "multi-dialect":
            return codec.encode_multi_dialect(name, view.schema, spec, marker, definer=self.definer,
                                              dialect_versions=self.dialect_versions)
        return legacy.encode(fmt, name, view.schema, spec, marker, base=base, default_owner=self.trino_owner)

    def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        table_input = self._encode(view, self._prepare(view, spec), marker.as_properties())
        try:
            self._call("create_table", DatabaseName=view.schema, TableInput=table_input)
        except GlueCallError as exc:
            if exc.code == "AlreadyExistsException":
                raise ConflictError(f"catalog {self.name!r} (glue): {view} was created by someone else "
                                    "since the plan; re-plan") from None
            raise

    def update(self, live: LiveView, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
        view = live.id
        handle = self.handle_of(live, GlueHandle) or GlueHandle(live.native_version)
        fmt = self.engine_format_for(spec, live)  # the same choice check() and storable() made
        table_input = self._encode(view, self._prepare(view, spec, fmt), marker.as_properties(),
                                   base=handle.table or None, fmt=fmt)
        if fmt == "multi-dialect":
            table_input["Parameters"] = _merged_params(handle.table, table_input["Parameters"])
        kwargs: dict[str, Any] = {"DatabaseName": view.schema, "TableInput": table_input}
        if handle.version_id is not None:
            kwargs["VersionId"] = handle.version_id
        old_native: set[str] = set()
        if codec.is_multi_dialect(handle.table):
            old_native = {str(r.get("Dialect")) for r in
                          (handle.table.get("ViewDefinition") or {}).get("Representations") or []}
        if "ViewDefinition" in table_input:
            new_native = {r["Dialect"] for r in table_input["ViewDefinition"]["Representations"]}
            # Glue requires an explicit action for any change of a view definition.
            kwargs["ViewUpdateAction"] = "REPLACE" if new_native == old_native else "ADD_OR_REPLACE"
            kwargs["Force"] = True
            dropped = old_native - new_native
            if dropped:
                self._drop_representations(view, handle, table_input, dropped)
                kwargs["VersionId"] = self._current_version(view)
        try:
            self._call("update_table", **kwargs)
        except GlueCallError as exc:
            if exc.code == "EntityNotFoundException":
                raise ConflictError(f"catalog {self.name!r} (glue): {view} was dropped since the plan; "
                                    "re-plan") from None
            raise

    def _drop_representations(self, view: ViewId, handle: GlueHandle, table_input: dict[str, Any],
                              dropped: set[str]) -> None:
        """Glue removes representations only with an explicit DROP action."""
        old_reps = (handle.table.get("ViewDefinition") or {}).get("Representations") or []
        drop_input = dict(table_input)
        drop_input["ViewDefinition"] = {
            **table_input["ViewDefinition"],
            "Representations": [{"Dialect": r["Dialect"], "ViewOriginalText": r.get("ViewOriginalText") or ""}
                                for r in old_reps if r.get("Dialect") in dropped],
        }
        kwargs: dict[str, Any] = {"DatabaseName": view.schema, "TableInput": drop_input,
                                  "ViewUpdateAction": "DROP", "Force": True}
        if handle.version_id is not None:
            kwargs["VersionId"] = handle.version_id
        self._call("update_table", **kwargs)

    def _current_version(self, view: ViewId) -> str:
        table = self._call("get_table", DatabaseName=view.schema, Name=view.name)["Table"]
        return str(table.get("VersionId", ""))

    def drop(self, live: LiveView, ctx: WriteContext) -> None:
        view = live.id
        # DeleteTable has no VersionId: re-read first so we never drop a view changed since the plan.
        try:
            current = self._call("get_table", DatabaseName=view.schema, Name=view.name)["Table"]
        except GlueCallError as exc:
            if exc.code == "EntityNotFoundException":
                return  # already gone: drop is idempotent
            raise
        if live.native_version is not None and str(current.get("VersionId")) != live.native_version:
            raise ConflictError(f"catalog {self.name!r} (glue): {view} changed since the plan "
                                f"(version {live.native_version} -> {current.get('VersionId')}); re-plan")
        try:
            self._call("delete_table", DatabaseName=view.schema, Name=view.name)
        except GlueCallError as exc:
            if exc.code != "EntityNotFoundException":
                raise

    # --------------------------------------------------------------- history
    def native_history(self, view: ViewId) -> list[NativeVersion]:
        """Glue's own table versions, oldest first."""
        versions: list[NativeVersion] = []
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"DatabaseName": view.schema, "TableName": view.name}
            if token:
                kwargs["NextToken"] = token
            try:
                page = self._call("get_table_versions", **kwargs)
            except GlueCallError as exc:
                if exc.code == "EntityNotFoundException":
                    return []
                raise
            for item in page.get("TableVersions", []):
                versions.append(_native_version(item))
            token = page.get("NextToken")
            if not token:
                break
        return sorted(versions, key=lambda v: (int(v.version) if v.version.isdigit() else 0, v.version))


# ------------------------------------------------------------------ helpers
def _is_view(table: dict[str, Any]) -> bool:
    return (table.get("TableType") == "VIRTUAL_VIEW" or codec.is_multi_dialect(table)
            or bool(table.get("IsMaterializedView")))


def _merged_params(live_table: dict[str, Any], new: dict[str, str]) -> dict[str, str]:
    """New parameters plus the live ones viewsync neither sets nor reads as properties
    (transient_lastDdlTime, Glue/Lake Formation bookkeeping...)."""
    live = codec.params_of(live_table)
    keep = {k: v for k, v in live.items()
            if k not in new and P.is_engine_parameter(k) and not legacy.is_format_param(k)
            and not k.startswith(model.MARKER_PREFIX)}
    return {**keep, **new}


def _native_version(item: dict[str, Any]) -> NativeVersion:
    table = item.get("Table") or {}
    params = {str(k): str(v) for k, v in (table.get("Parameters") or {}).items()}
    when = table.get("UpdateTime") or table.get("CreateTime")
    ts = int(when.timestamp() * 1000) if isinstance(when, datetime) else None
    summary = {k: params[k] for k in (MANAGED_BY, SPEC_DIGEST) if params.get(k)}
    reps = (table.get("ViewDefinition") or {}).get("Representations") or []
    if reps:
        dialects = tuple(sorted(str(r.get("Dialect")) for r in reps))
    else:  # a legacy view: the dialect of the engine format it is in
        fmt = formats.detect(legacy.to_desc(table, str(table.get("DatabaseName", "")))) if table.get("Name") else None
        dialects = (formats.DIALECT_OF[fmt],) if fmt in formats.DIALECT_OF else ()
    return NativeVersion(version=str(item.get("VersionId", table.get("VersionId", ""))),
                         timestamp_ms=ts, summary=summary, dialects=dialects)
