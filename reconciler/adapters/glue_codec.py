"""Pure translation between Glue table dicts and ViewSpec (no I/O).

Glue holds views two ways:
- legacy VIRTUAL_VIEW tables in one engine's format (Athena/Trino envelope,
  Spark, Hive) -- read and written with the shared codecs of reconciler.formats
  (see glue_legacy.py);
- multi-dialect Data Catalog views: `ViewDefinition.Representations` with one
  entry per Glue dialect (ATHENA, SPARK, REDSHIFT) -- this module.

Dialect names: viewsync `trino` and `athena` both map to Glue ATHENA, `spark`
to SPARK, `redshift` to REDSHIFT. Glue does not remember which name was
declared, so we write it into the parameter `viewsync.athena-dialect`; an
ATHENA representation without that parameter (a view Athena or someone else
wrote) reads back as `trino`, the engine Athena runs. Dialects Glue cannot hold
natively are kept in parameters (see `extra_dialect_params`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler import types as vtypes
from reconciler.model import MANAGED_BY, MARKER_PREFIX, SPEC_DIGEST, Column, Representation, ViewSpec

VIEW_FORMATS = ("multi-dialect", "athena", "spark", "hive")
MULTI_DIALECT_FORMAT = "glue-multi-dialect"

# viewsync dialect -> Glue dialect
GLUE_DIALECT = {"trino": "ATHENA", "athena": "ATHENA", "spark": "SPARK", "redshift": "REDSHIFT"}
# Glue dialect -> viewsync dialect when nothing says otherwise
DEFAULT_DIALECT = {"ATHENA": "trino", "SPARK": "spark", "REDSHIFT": "redshift"}

ATHENA_NAME_PARAM = "viewsync.athena-dialect"
DEFAULT_CATALOG_PARAM = "viewsync.default-catalog"
DEFAULT_NAMESPACE_PARAM = "viewsync.default-namespace"

# Glue API limits (botocore service model): ViewTextString, ParametersMapValue, DescriptionString.
MAX_VIEW_TEXT = 409_600
MAX_PARAM_VALUE = 512_000
MAX_DESCRIPTION = 2_048


class DecodeError(ValueError):
    """A Glue table that claims to be a view but cannot be read as one."""


@dataclass
class Decoded:
    """A Glue view as read back: spec plus ownership markers."""

    spec: ViewSpec
    format: str
    managed_by: str | None = None
    spec_digest: str | None = None
    writable: bool = True
    warnings: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ dialects
def native_split(reps: list[Representation]) -> tuple[dict[str, Representation], list[Representation]]:
    """Split representations into {GLUE_DIALECT: rep} held natively and the rest.

    Both `athena` and `trino` map to ATHENA; when both are declared `athena`
    (the more specific name) takes the native slot and `trino` goes to parameters.
    """
    native: dict[str, Representation] = {}
    extra: list[Representation] = []
    ordered = sorted(reps, key=lambda r: (r.dialect != "athena", r.dialect))
    for rep in ordered:
        glue = GLUE_DIALECT.get(rep.dialect)
        if glue is not None and glue not in native:
            native[glue] = rep
        else:
            extra.append(rep)
    extra.sort(key=lambda r: r.dialect)
    return native, extra


def athena_name(params: Mapping[str, str]) -> str:
    name = params.get(ATHENA_NAME_PARAM, "")
    return name if name in ("trino", "athena") else "trino"


# ---------------------------------------------------------------- parameters
# Dialects Glue cannot hold natively: one parameter per dialect, the SQL as is.
EXTRA_SQL_PREFIX = "viewsync.sql."


def extra_dialect_params(extra: list[Representation]) -> dict[str, str]:
    return {EXTRA_SQL_PREFIX + rep.dialect: rep.sql.strip() for rep in extra}


def read_extra_dialects(params: Mapping[str, str]) -> list[Representation]:
    out: list[Representation] = []
    for key, value in sorted(params.items()):
        if key.startswith(EXTRA_SQL_PREFIX) and value.strip():
            dialect = key[len(EXTRA_SQL_PREFIX):]
            try:
                out.append(Representation(dialect=dialect, sql=value))
            except ValueError:
                continue  # a hand-made parameter with a bad dialect name: not ours to interpret
    return out


# Keys Glue, Athena and the engines set for themselves: never user properties.
_INTERNAL_EXACT = frozenset({
    "transient_lastDdlTime", "comment", "presto_view", "presto_version", "presto_query_id",
    "is_generic", "EXTERNAL", "last_modified_by", "last_modified_time",
})
_INTERNAL_PREFIXES = ("spark.sql.", "view.", "presto_", "trino_", "flink.", MARKER_PREFIX)


def is_internal_param(key: str) -> bool:
    return key in _INTERNAL_EXACT or key.startswith(_INTERNAL_PREFIXES)


def user_properties(params: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in params.items() if not is_internal_param(k)}


def markers(params: Mapping[str, str]) -> tuple[str | None, str | None]:
    return params.get(MANAGED_BY) or None, params.get(SPEC_DIGEST) or None


# ------------------------------------------------------------------- columns
def columns_to_glue(columns: list[Column]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for col in columns:
        entry = {"Name": col.name, "Type": vtypes.to_hive(vtypes.parse(col.type))}
        if col.comment:
            entry["Comment"] = col.comment
        out.append(entry)
    return out


def columns_from_glue(cols: list[Mapping[str, Any]]) -> list[Column]:
    out: list[Column] = []
    for col in cols:
        try:
            type_ = vtypes.parse_from(str(col.get("Type", "")), "hive")
        except vtypes.TypeError_ as exc:
            raise DecodeError(f"column {col.get('Name')!r}: {exc}") from None
        out.append(Column(name=str(col["Name"]), type=type_, comment=col.get("Comment") or None))
    return out


def coerce_columns(columns: list[Column]) -> list[Column]:
    """What a Hive-typed column list (Glue StorageDescriptor) keeps."""
    return [
        Column(name=c.name, type=vtypes.coerce_str(c.type, "hive"), comment=c.comment or None)
        for c in columns
    ]


# ------------------------------------------------------- multi-dialect views
def is_multi_dialect(table: Mapping[str, Any]) -> bool:
    vd = table.get("ViewDefinition")
    if table.get("IsMultiDialectView"):
        return True
    return isinstance(vd, Mapping) and bool(vd.get("Representations"))


def storable_multi_dialect(spec: ViewSpec) -> ViewSpec:
    """What a multi-dialect view reads back: Hive column types, no empty comments."""
    return spec.model_copy(update={
        "columns": coerce_columns(spec.columns),
        "comment": spec.comment or None,
        "representations": [Representation(dialect=r.dialect, sql=r.sql.strip())
                            for r in spec.representations],
    })


def encode_multi_dialect(
    name: str,
    schema: str,
    spec: ViewSpec,
    marker_params: Mapping[str, str],
    *,
    definer: str | None = None,
    dialect_versions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """TableInput for a multi-dialect Data Catalog view. `spec` must be resolved."""
    native, extra = native_split(spec.representations)
    reps: list[dict[str, Any]] = []
    for glue in ("ATHENA", "REDSHIFT", "SPARK"):
        rep = native.get(glue)
        if rep is None:
            continue
        entry: dict[str, Any] = {"Dialect": glue, "ViewOriginalText": rep.sql.strip()}
        if glue == "SPARK":
            # Glue rejects ViewExpandedText for ATHENA; Spark runs the expanded text.
            entry["ViewExpandedText"] = rep.sql.strip()
        version = (dialect_versions or {}).get(glue)
        if version:
            entry["DialectVersion"] = version
        reps.append(entry)
    view_def: dict[str, Any] = {"Representations": reps}
    if definer:
        view_def["Definer"] = definer
    params: dict[str, str] = dict(spec.properties)
    params.update(extra_dialect_params(extra))
    if "ATHENA" in native:
        params[ATHENA_NAME_PARAM] = native["ATHENA"].dialect
    if spec.default_catalog is not None:
        params[DEFAULT_CATALOG_PARAM] = spec.default_catalog
    if spec.default_namespace is not None and spec.default_namespace != schema.split("."):
        params[DEFAULT_NAMESPACE_PARAM] = json.dumps(spec.default_namespace)
    params.update(marker_params)
    table_input: dict[str, Any] = {
        "Name": name,
        "TableType": "VIRTUAL_VIEW",
        "StorageDescriptor": {"Columns": columns_to_glue(spec.columns)},
        "Parameters": params,
        "ViewDefinition": view_def,
    }
    if spec.comment:
        table_input["Description"] = spec.comment
    if spec.owner:
        table_input["Owner"] = spec.owner
    return table_input


def representation_sql(
    rep: Mapping[str, Any],
    validations: Mapping[str, str],
    decode_envelope: Callable[[str], str | None],
) -> str | None:
    """The SQL a Glue representation holds, as submitted.

    Validated ATHENA views come back with Glue's own encoding (Terraform AWS
    provider #49731): the exact submitted text is in the status details when
    asked for; otherwise the original text may be a Presto envelope to decode.
    """
    dialect = str(rep.get("Dialect", ""))
    if validations.get(dialect):
        return validations[dialect]
    for key in ("ViewOriginalText", "ViewExpandedText"):
        text = rep.get(key)
        if not isinstance(text, str) or not text.strip():
            continue
        decoded = decode_envelope(text)
        if decoded is not None:
            return decoded
        if text.strip() == "/* Presto View */":
            continue  # the expanded-text stub of an envelope carries no SQL
        return text
    return None


def _validation_texts(table: Mapping[str, Any]) -> dict[str, str]:
    status = table.get("Status") or {}
    details = status.get("Details") or {} if isinstance(status, Mapping) else {}
    out: dict[str, str] = {}
    for item in details.get("ViewValidations") or []:
        text = item.get("ViewValidationText")
        if item.get("Dialect") and isinstance(text, str) and text.strip():
            out[str(item["Dialect"])] = text
    return out


def decode_multi_dialect(
    table: Mapping[str, Any], schema: str, decode_envelope: Callable[[str], str | None]
) -> Decoded:
    params: dict[str, str] = {str(k): str(v) for k, v in (table.get("Parameters") or {}).items()}
    view_def = table.get("ViewDefinition") or {}
    validations = _validation_texts(table)
    reps: list[Representation] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for rep in view_def.get("Representations") or []:
        glue = str(rep.get("Dialect", "")).upper()
        dialect = athena_name(params) if glue == "ATHENA" else DEFAULT_DIALECT.get(glue, glue.lower())
        sql = representation_sql(rep, validations, decode_envelope)
        if sql is None:
            warnings.append(f"Glue returned no SQL for the {glue} representation")
            continue
        if dialect in seen:
            continue
        seen.add(dialect)
        reps.append(Representation(dialect=dialect, sql=sql.strip()))
    for rep in read_extra_dialects(params):
        if rep.dialect not in seen:
            seen.add(rep.dialect)
            reps.append(rep)
    if not reps:
        raise DecodeError("multi-dialect view without any readable representation")
    namespace = schema.split(".")
    raw_ns = params.get(DEFAULT_NAMESPACE_PARAM)
    if raw_ns:
        try:
            parsed = json.loads(raw_ns)
            if isinstance(parsed, list) and all(isinstance(p, str) for p in parsed):
                namespace = parsed
        except ValueError:
            warnings.append(f"ignoring unreadable {DEFAULT_NAMESPACE_PARAM} parameter")
    sd = table.get("StorageDescriptor") or {}
    managed_by, spec_digest = markers(params)
    spec = ViewSpec(
        comment=table.get("Description") or None,
        columns=columns_from_glue(sd.get("Columns") or []),
        representations=reps,
        default_catalog=params.get(DEFAULT_CATALOG_PARAM) or None,
        default_namespace=namespace,
        security="definer",  # Data Catalog views always run with the definer's rights
        owner=table.get("Owner") or None,
        properties=user_properties(params),
    )
    return Decoded(spec=spec, format=MULTI_DIALECT_FORMAT, managed_by=managed_by,
                   spec_digest=spec_digest, warnings=warnings)


# --------------------------------------------------------------------- checks
def check_lengths(where: str, spec: ViewSpec) -> list[tuple[str, str]]:
    """Glue API length limits, as plan errors instead of apply-time failures."""
    errors: list[tuple[str, str]] = []

    def too_long(what: str, size: int, limit: int, unit: str) -> None:
        errors.append(("value_too_long", f"{where}: {what} is {size} {unit}; Glue keeps at most {limit}"))

    if spec.comment and len(spec.comment) > MAX_DESCRIPTION:
        too_long("comment", len(spec.comment), MAX_DESCRIPTION, "characters")
    for rep in spec.representations:
        if len(rep.sql.strip()) > MAX_VIEW_TEXT:
            too_long(f"the {rep.dialect} SQL", len(rep.sql.strip()), MAX_VIEW_TEXT, "characters")
    for key, value in spec.properties.items():
        if len(value.encode()) > MAX_PARAM_VALUE:
            too_long(f"property {key!r}", len(value.encode()), MAX_PARAM_VALUE, "bytes")
    return errors
