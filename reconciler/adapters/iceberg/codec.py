"""Pure mapping between ViewSpec and Iceberg view metadata (format-version 1).

No I/O here: these functions read the JSON of a LoadViewResponse's `metadata`
and build the JSON bodies of CreateViewRequest parts and CommitViewRequest.
Where a ViewSpec field has no Iceberg field, it is a view property:
`comment`, `owner`, `security` (definer|invoker), plus the ownership markers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from reconciler.core import coltypes
from reconciler.core.errors import DecodeError
from reconciler.core.model import (
    MANAGED_BY,
    MARKER_PREFIX,
    SPEC_DIGEST,
    Column,
    Representation,
    ViewSpec,
    digest_of,
)
from reconciler.core.sql import output_names

ENGINE_NAME = "viewsync"
COMMENT = "comment"
OWNER = "owner"
SECURITY = "security"
# Trino's own view property (AbstractTrinoCatalog.ICEBERG_VIEW_RUN_AS_OWNER): a view carrying it runs
# as that user (definer), one without it as the invoker (TrinoRestCatalog.getView).
TRINO_RUN_AS_OWNER = "trino.run-as-owner"
DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"
GIT_COMMIT = "viewsync.git-commit"
ACTOR = "viewsync.actor"

# Properties that hold ViewSpec fields: never user properties.
SPEC_PROPERTIES = frozenset({COMMENT, OWNER, SECURITY})
# Properties engines (or we) set for their own use; not user properties, never removed by us.
# Catalog servers add their own too: Nessie stamps `created-at` and `nessie.*` (its commit, ref and
# content id) on every view it serves (measured on Nessie 0.99 in the contract suite).
INTERNAL_PROPERTIES = frozenset({DROP_DIALECT_ALLOWED, "create_engine_version", "engine_version", "created-at"})
INTERNAL_PREFIXES = ("spark.", "trino.", "presto.", "flink.", "dremio.", "hive.", "impala.", "starrocks.",
                     "nessie.")

# What Iceberg's Spark integration writes with a view (iceberg spark/v3.5 SparkCatalog.createView /
# CreateV2ViewExec: the query's output column names, comma-joined, and the writing engine), so
# Spark's DESCRIBE shows "View Query Output Columns" and "Created By" for our views too.
QUERY_COLUMN_NAMES = "spark.query-column-names"
CREATE_ENGINE_VERSION = "create_engine_version"
ENGINE_VERSION = "engine_version"


def is_engine_property(key: str) -> bool:
    """An Iceberg view property engines (or we) set for their own use, never a user property."""
    return key in INTERNAL_PROPERTIES or key.startswith(INTERNAL_PREFIXES)


def reserved_reason(key: str) -> str | None:
    """Why a user property key cannot be declared on an Iceberg view (None = it can)."""
    if key in SPEC_PROPERTIES:
        return f"holds the view's {key}; declare `{key}` instead"
    if is_engine_property(key):
        return "is an engine-internal Iceberg view property"
    return None


# ----------------------------------------------------------------- to Iceberg
def storable(spec: ViewSpec) -> ViewSpec:
    """What Iceberg keeps for an already resolved spec: types widened (no tinyint, varchar...)."""
    columns = [c.model_copy(update={"type": coltypes.coerce_str(c.type, "iceberg")}) for c in spec.columns]
    return spec.model_copy(update={"columns": columns})


def schema_json(columns: list[Column], schema_id: int) -> dict[str, Any]:
    """Iceberg schema JSON: top-level ids 1..n, nested ids after them, all optional."""
    counter = [len(columns)]  # to_iceberg increments before use: nested ids start at n+1
    fields: list[dict[str, Any]] = []
    for i, col in enumerate(columns, start=1):
        f: dict[str, Any] = {"id": i, "name": col.name, "required": False,
                             "type": coltypes.to_iceberg(coltypes.parse(col.type), counter)}
        if col.comment is not None:
            f["doc"] = col.comment
        fields.append(f)
    return {"type": "struct", "schema-id": schema_id, "fields": fields}


def representations_json(spec: ViewSpec) -> list[dict[str, str]]:
    return [{"type": "sql", "sql": r.sql, "dialect": r.dialect} for r in spec.representations]


def summary(engine_version: str, git_commit: str | None, actor: str | None) -> dict[str, str]:
    out = {"engine-name": ENGINE_NAME, "engine-version": engine_version}
    if git_commit:
        out[GIT_COMMIT] = git_commit
    if actor:
        out[ACTOR] = actor
    return out


def version_json(spec: ViewSpec, version_id: int, schema_id: int, summ: dict[str, str],
                 timestamp_ms: int | None = None) -> dict[str, Any]:
    """A view version for a resolved spec (default_namespace set)."""
    version: dict[str, Any] = {
        "version-id": version_id,
        "schema-id": schema_id,
        "timestamp-ms": timestamp_ms if timestamp_ms is not None else int(time.time() * 1000),
        "summary": summ,
        "representations": representations_json(spec),
        "default-namespace": list(spec.default_namespace or []),
    }
    if spec.default_catalog is not None:
        version["default-catalog"] = spec.default_catalog
    return version


def engine_properties(spec: ViewSpec, engine_version: str, *, create: bool) -> dict[str, str]:
    """Engine properties for a view written with `spec` (create: also who created it)."""
    who = f"{ENGINE_NAME} {engine_version}"
    out = {ENGINE_VERSION: who}
    if create:
        out[CREATE_ENGINE_VERSION] = who
    sql = spec.sql_for("spark")
    if sql is not None:
        names = output_names(sql, "spark", len(spec.columns)) or []
        # An unnamed expression: the view's own column name (Spark binds view columns by position).
        out[QUERY_COLUMN_NAMES] = ",".join(n or c.name for n, c in zip(names, spec.columns, strict=True)) \
            if names else ",".join(c.name for c in spec.columns)
    return out


def spec_properties(spec: ViewSpec) -> dict[str, str]:
    """All view properties a spec stands for (markers excluded)."""
    props = dict(spec.properties)
    props[SECURITY] = spec.security
    if spec.comment is not None:
        props[COMMENT] = spec.comment
    if spec.owner is not None:
        props[OWNER] = spec.owner
        if spec.security == "definer":  # so Trino runs it as its owner too
            props[TRINO_RUN_AS_OWNER] = spec.owner
    return props


# --------------------------------------------------------------- from Iceberg
@dataclass
class ReadView:
    spec: ViewSpec
    managed_by: str | None
    spec_digest: str | None
    current_version_id: int
    warnings: list[str] = field(default_factory=list)


def current_version(metadata: dict[str, Any]) -> dict[str, Any]:
    cur = metadata.get("current-version-id")
    for version in metadata.get("versions") or []:
        if version.get("version-id") == cur:
            return dict(version)
    raise DecodeError(f"current version {cur} is not among the view's versions")


def _schema(metadata: dict[str, Any], schema_id: Any) -> dict[str, Any]:
    for schema in metadata.get("schemas") or []:
        if schema.get("schema-id") == schema_id:
            return dict(schema)
    raise DecodeError(f"schema {schema_id} of the current version is missing")


def columns_from_schema(schema: dict[str, Any]) -> list[Column]:
    cols: list[Column] = []
    for f in schema.get("fields") or []:
        try:
            ctype = coltypes.render(coltypes.from_iceberg(f["type"]))
        except coltypes.ColumnTypeError as exc:
            raise DecodeError(f"column {f.get('name')!r}: {exc}") from None
        cols.append(Column(name=f["name"], type=ctype, comment=f.get("doc")))
    return cols


def read_view(metadata: dict[str, Any]) -> ReadView:
    """The ViewSpec (and markers) an Iceberg view's metadata stands for."""
    version = current_version(metadata)
    warnings: list[str] = []
    reps: list[tuple[str, str]] = []
    seen: set[str] = set()
    for rep in version.get("representations") or []:
        if rep.get("type") != "sql":
            warnings.append(f"ignored a representation of type {rep.get('type')!r}")
            continue
        dialect = str(rep.get("dialect", "")).lower()
        if dialect in seen:
            warnings.append(f"ignored a second representation for dialect {dialect!r}")
            continue
        seen.add(dialect)
        reps.append((dialect, str(rep.get("sql", ""))))
    props: dict[str, str] = {str(k): str(v) for k, v in (metadata.get("properties") or {}).items()}
    security = props.get(SECURITY)
    owner = props.get(OWNER) or props.get(TRINO_RUN_AS_OWNER)
    if security is None and "trino" in {d for d, _ in reps}:  # not ours: Trino's rule decides
        security = "definer" if TRINO_RUN_AS_OWNER in props else "invoker"
    user = {k: v for k, v in props.items()
            if k not in SPEC_PROPERTIES and not k.startswith(MARKER_PREFIX) and not is_engine_property(k)}
    default_ns = version.get("default-namespace")
    try:
        spec = ViewSpec(
            comment=props.get(COMMENT),
            columns=columns_from_schema(_schema(metadata, version.get("schema-id"))),
            representations=[Representation(dialect=d, sql=sql) for d, sql in reps],
            default_catalog=version.get("default-catalog"),
            default_namespace=list(default_ns) if default_ns is not None else None,
            security="invoker" if security == "invoker" else "definer",
            owner=owner,
            properties=user,
        )
    except ValidationError as exc:
        raise DecodeError(first_line(str(exc))) from None
    return ReadView(spec=spec, managed_by=props.get(MANAGED_BY), spec_digest=props.get(SPEC_DIGEST),
                    current_version_id=int(metadata.get("current-version-id", -1)), warnings=warnings)


def placeholder(metadata: dict[str, Any]) -> ReadView:
    """A stand-in for a view `read_view` cannot read (a type outside our grammar, names our
    model rejects...): its valid SQL representations, no columns, and its markers, so the
    planner still knows the name is taken, and by whom. Never raises."""
    raw_props = metadata.get("properties")
    props = {str(k): str(v) for k, v in raw_props.items()} if isinstance(raw_props, dict) else {}
    try:
        raw_reps = current_version(metadata).get("representations") or []
    except (DecodeError, AttributeError, TypeError):
        raw_reps = []
    reps: list[Representation] = []
    seen: set[str] = set()
    for rep in raw_reps if isinstance(raw_reps, list) else []:
        if not isinstance(rep, dict) or rep.get("type") != "sql":
            continue
        dialect = str(rep.get("dialect", "")).lower()
        if dialect in seen:
            continue
        try:
            reps.append(Representation(dialect=dialect, sql=str(rep.get("sql", ""))))
        except ValidationError:
            continue
        seen.add(dialect)
    if not reps:  # a ViewSpec needs one representation
        reps = [Representation(dialect="unknown", sql="-- not readable by viewsync")]
    try:
        version_id = int(metadata.get("current-version-id", -1))
    except (TypeError, ValueError):
        version_id = -1
    return ReadView(spec=ViewSpec(representations=reps), managed_by=props.get(MANAGED_BY),
                    spec_digest=props.get(SPEC_DIGEST), current_version_id=version_id)


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return "; ".join(lines[:3]) if lines else text


def fingerprint(metadata: dict[str, Any], metadata_location: str | None) -> str:
    """Changes with every commit: the metadata location is new per commit; the version id,
    uuid and properties cover servers that do not return a location."""
    return digest_of({
        "metadata_location": metadata_location,
        "view_uuid": metadata.get("view-uuid"),
        "current_version_id": metadata.get("current-version-id"),
        "version_ids": sorted(v.get("version-id", 0) for v in metadata.get("versions") or []),
        "properties": dict(sorted((metadata.get("properties") or {}).items())),
    })


# -------------------------------------------------------------------- commits
def _version_part(spec: ViewSpec) -> dict[str, Any]:
    c = spec.canonical()
    return {k: c[k] for k in ("columns", "representations", "default_catalog", "default_namespace")}


def conflicts(planned: ViewSpec, fresh: ViewSpec, desired: ViewSpec) -> list[str]:
    """Fields someone else changed since we planned that our change would overwrite.

    A field we do not change, or one the other writer already set to our value, is no conflict.
    """
    out: list[str] = []
    p, f, d = _version_part(planned), _version_part(fresh), _version_part(desired)
    if p != d and f != p and f != d:
        out.append("definition (columns/SQL/default namespace)")
    pp, fp, dp = spec_properties(planned), spec_properties(fresh), spec_properties(desired)
    for key in sorted(set(pp) | set(dp)):
        if pp.get(key) != dp.get(key) and fp.get(key) not in (pp.get(key), dp.get(key)):
            out.append(f"property {key!r}")
    return out


def _same_fields(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a.get("fields") == b.get("fields"))


def commit_request(base: dict[str, Any], planned: ViewSpec | None, desired: ViewSpec,
                   markers: dict[str, str], summ: dict[str, str],
                   timestamp_ms: int | None = None, engine_version: str | None = None) -> dict[str, Any]:
    """A CommitViewRequest turning `base` (fresh metadata) into `desired` (a storable spec).

    Properties are a three-way merge: we set what `desired` says and remove only keys that
    were ours to remove when we planned (`planned`'s user properties, comment, owner), so
    properties another client added since then survive. A new view version is added only
    when the definition changes; dropping a dialect also sets replace.drop-dialect.allowed
    (a reviewed Git change is the permission Iceberg asks for).
    """
    fresh_props: dict[str, str] = {str(k): str(v) for k, v in (base.get("properties") or {}).items()}
    fresh = read_view(base).spec
    updates: list[dict[str, Any]] = []

    new_version = _version_part(fresh) != _version_part(desired)
    want = spec_properties(desired) | markers
    ours = set(planned.properties) if planned is not None else set(fresh.properties)
    ours |= {COMMENT, OWNER, TRINO_RUN_AS_OWNER}
    if new_version and engine_version is not None:
        want |= engine_properties(desired, engine_version, create=False)
        ours.add(QUERY_COLUMN_NAMES)  # stale once the spark SQL is gone
    removals = sorted(k for k in ours if k not in want and k in fresh_props)
    sets = {k: v for k, v in want.items() if fresh_props.get(k) != v}

    dropped = set(fresh.dialects()) - set(desired.dialects())
    if new_version and dropped and fresh_props.get(DROP_DIALECT_ALLOWED, "false").lower() != "true":
        sets[DROP_DIALECT_ALLOWED] = "true"

    if sets:
        updates.append({"action": "set-properties", "updates": dict(sorted(sets.items()))})
    if removals:
        updates.append({"action": "remove-properties", "removals": removals})
    if new_version:
        schemas = base.get("schemas") or []
        schema_id = max((int(s.get("schema-id", 0)) for s in schemas), default=-1) + 1
        schema = schema_json(desired.columns, schema_id)
        for existing in schemas:
            if _same_fields(existing, schema):
                schema_id = int(existing["schema-id"])
                break
        else:
            updates.append({"action": "add-schema", "schema": schema,
                            "last-column-id": _last_column_id(schema)})
        versions = base.get("versions") or []
        version_id = max((int(v.get("version-id", 0)) for v in versions), default=0) + 1
        version = version_json(desired, version_id, schema_id, summ, timestamp_ms)
        existing_id = same_version_id(versions, version)
        if existing_id is None:
            updates.append({"action": "add-view-version", "view-version": version})
            updates.append({"action": "set-current-view-version", "view-version-id": -1})
        else:
            # Iceberg reuses an equal version instead of adding it, so "-1" (last added) would
            # point nowhere; its Java client sends the existing id (ViewMetadata.Builder
            # .setCurrentVersionId). This is what a re-apply after an out-of-band replace needs.
            updates.append({"action": "set-current-view-version", "view-version-id": existing_id})
    return {
        "requirements": [{"type": "assert-view-uuid", "uuid": base.get("view-uuid")}],
        "updates": updates,
    }


def same_version_id(versions: list[dict[str, Any]], version: dict[str, Any]) -> int | None:
    """The id of an existing version Iceberg treats as `version`, else None.

    Mirrors Iceberg's ViewMetadata.Builder.sameViewVersion (core/.../view/ViewMetadata.java):
    equal summary, representations (in order), default catalog, default namespace and
    schema id; the version id and timestamp do not count.
    """
    def key(v: dict[str, Any]) -> tuple[Any, ...]:
        reps = [(str(r.get("type", "sql")).lower(), r.get("sql"), r.get("dialect"))
                for r in v.get("representations") or []]
        return (v.get("summary") or {}, reps, v.get("default-catalog"), list(v.get("default-namespace") or []),
                v.get("schema-id"))

    want = key(version)
    for existing in versions:
        if key(existing) == want:
            return int(existing["version-id"])
    return None


def _last_column_id(schema: dict[str, Any]) -> int:
    best = 0

    def walk(node: Any) -> None:
        nonlocal best
        if isinstance(node, dict):
            for key in ("id", "element-id", "key-id", "value-id"):
                if isinstance(node.get(key), int):
                    best = max(best, node[key])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema.get("fields"))
    return best


def landed(metadata: dict[str, Any], desired: ViewSpec, spec_digest: str) -> bool:
    """Does this (reloaded) metadata hold our change?"""
    try:
        got = read_view(metadata)
    except DecodeError:
        return False
    return got.spec_digest == spec_digest and got.spec.digest() == desired.digest()
