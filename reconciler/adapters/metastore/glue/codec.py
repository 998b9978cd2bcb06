"""Multi-dialect Glue Data Catalog views <-> ViewSpec (pure, no I/O).

A Data Catalog view keeps one SQL text per Glue dialect in
`ViewDefinition.Representations` (ATHENA, SPARK, REDSHIFT), its columns in the
StorageDescriptor (Hive types), its comment in Description. Whatever else a
declaration says (other dialects, a default namespace or catalog, long
comments...) is kept with the shared "extras" of reconciler.adapters.metastore.formats.params --
the same mechanism the legacy (HMS-style) formats use -- so a read through
viewsync is exact while Glue and its engines see their own format.

Dialect names: viewsync `trino` and `athena` both map to Glue ATHENA, `spark`
to SPARK, `redshift` to REDSHIFT. Glue does not remember which name was
declared, so a view declared with `athena` carries the parameter
`viewsync.athena-dialect=athena`; without it (also for views Athena or anyone
else wrote) ATHENA reads back as `trino`, the engine Athena runs and the
dialect of the shared Trino codec. When a view declares both, `trino` takes
the ATHENA slot and `athena` goes to the extras.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from reconciler.adapters.metastore import formats
from reconciler.adapters.metastore.base import Decoded, markers
from reconciler.adapters.metastore.formats import params as P
from reconciler.adapters.metastore.formats import trino
from reconciler.adapters.metastore.formats.common import from_hive_columns, hive_columns
from reconciler.core import coltypes
from reconciler.core.errors import DecodeError
from reconciler.core.model import Column, Representation, ViewSpec, spec_from_canonical

VIEW_FORMATS = ("multi-dialect", "athena", "spark", "hive")
MULTI_DIALECT_FORMAT = "glue-multi-dialect"

# viewsync dialect -> Glue dialect, and back when nothing says otherwise
GLUE_DIALECT = {"trino": "ATHENA", "athena": "ATHENA", "spark": "SPARK", "redshift": "REDSHIFT"}
DEFAULT_DIALECT = {"ATHENA": "trino", "SPARK": "spark", "REDSHIFT": "redshift"}
ATHENA_NAME_PARAM = "viewsync.athena-dialect"

# Glue API limits (botocore's service model)
MAX_VIEW_TEXT = 409_600  # ViewTextString
MAX_PARAM_VALUE = 512_000  # ParametersMapValue (bytes)
MAX_DESCRIPTION = 2_048  # DescriptionString
MAX_NAME = 255  # NameString: owner, column names, parameter keys
MAX_COLUMN_COMMENT = 255  # CommentString
MAX_TYPE = 131_072  # ColumnTypeString


def params_of(table: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (table.get("Parameters") or {}).items()}


def decode_envelope_sql(text: str) -> str | None:
    """originalSql of a Presto/Trino view envelope, None when `text` is not one."""
    if not text.strip().startswith(trino.VIEW_PREFIX):
        return None
    try:
        sql = trino.decode_envelope(text).get("originalSql")
    except formats.FormatError:
        return None
    return sql if isinstance(sql, str) and sql.strip() else None


# ------------------------------------------------------------------ dialects
def native_split(reps: list[Representation]) -> dict[str, Representation]:
    """{GLUE_DIALECT: rep} for the representations Glue holds natively."""
    native: dict[str, Representation] = {}
    for rep in sorted(reps, key=lambda r: (r.dialect != "trino", r.dialect)):
        glue = GLUE_DIALECT.get(rep.dialect)
        if glue is not None and glue not in native:
            native[glue] = rep
    return native


def athena_name(params: Mapping[str, str]) -> str:
    return "athena" if params.get(ATHENA_NAME_PARAM) == "athena" else "trino"


# ------------------------------------------------------------------- columns
def glue_columns(columns: list[Column]) -> list[dict[str, str]]:
    """StorageDescriptor.Columns through the metastores' one column codec, with Glue's own
    comment limit; comments Glue cannot hold are left to the extras."""
    return [{"Name": c.name, "Type": c.type, **({"Comment": c.comment} if c.comment else {})}
            for c in hive_columns(columns, MAX_COLUMN_COMMENT)]


def read_columns(cols: list[Mapping[str, Any]]) -> list[Column]:
    """Glue, like the metastore, treats column names case-insensitively: read them lowercased
    (original case comes back through the extras)."""
    return from_hive_columns(formats.HiveColumn(str(c["Name"]), str(c.get("Type", "")), c.get("Comment") or None)
                             for c in cols)


def coerce_columns(columns: list[Column]) -> list[Column]:
    """Hive types are what Glue's StorageDescriptor and its engines see (timestamp_ltz -> timestamp)."""
    return [c.model_copy(update={"type": coltypes.coerce_str(c.type, "hive")}) for c in columns]


# ------------------------------------------------------- multi-dialect views
def is_multi_dialect(table: Mapping[str, Any]) -> bool:
    if table.get("IsMultiDialectView"):
        return True
    vd = table.get("ViewDefinition")
    return isinstance(vd, Mapping) and bool(vd.get("Representations"))


def encode_multi_dialect(
    name: str,
    schema: str,
    spec: ViewSpec,
    marker_params: Mapping[str, str],
    *,
    definer: str | None = None,
    dialect_versions: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """TableInput for a Data Catalog view; `spec` must be resolved (storable)."""
    native = native_split(spec.representations)
    reps: list[dict[str, Any]] = []
    for glue in ("ATHENA", "REDSHIFT", "SPARK"):
        rep = native.get(glue)
        if rep is None:
            continue
        entry: dict[str, Any] = {"Dialect": glue, "ViewOriginalText": rep.sql.strip()}
        if glue == "SPARK":
            # Glue rejects ViewExpandedText for ATHENA (Terraform AWS provider #49419); Spark runs it.
            entry["ViewExpandedText"] = rep.sql.strip()
        version = (dialect_versions or {}).get(glue)
        if version:
            entry["DialectVersion"] = version
        reps.append(entry)
    view_def: dict[str, Any] = {"Representations": reps}
    if definer:
        view_def["Definer"] = definer
    params = P.plain_properties(spec.properties)
    if "ATHENA" in native and native["ATHENA"].dialect == "athena":
        params[ATHENA_NAME_PARAM] = "athena"
    table: dict[str, Any] = {
        "Name": name,
        "TableType": "VIRTUAL_VIEW",
        "StorageDescriptor": {"Columns": glue_columns(spec.columns)},
        "Parameters": params,
        "ViewDefinition": view_def,
    }
    if spec.comment and len(spec.comment) <= MAX_DESCRIPTION:
        table["Description"] = spec.comment
    if spec.owner and len(spec.owner) <= MAX_NAME:
        table["Owner"] = spec.owner
    # What Glue holds by itself, read the way fetch reads it (our texts are never envelopes);
    # the rest goes to the extras.
    engine = _decode_native(table, schema, decode_envelopes=False).canonical()
    params.update(P.extras_params(spec.canonical(), engine))
    params.update(marker_params)
    return table


def representation_sql(rep: Mapping[str, Any], validations: Mapping[str, str],
                       decode_envelopes: bool = True) -> str | None:
    """The SQL of a Glue representation as it was submitted.

    For validated ATHENA views Glue answers with its own encoding (Terraform
    AWS provider #49731): the exact submitted text is in the status details
    (get_tables IncludeStatusDetails); otherwise the original text may be a
    Presto envelope, decoded with the shared Trino codec.
    """
    dialect = str(rep.get("Dialect", ""))
    if validations.get(dialect):
        return validations[dialect]
    for key in ("ViewOriginalText", "ViewExpandedText"):
        text = rep.get(key)
        if not isinstance(text, str) or not text.strip():
            continue
        decoded = decode_envelope_sql(text) if decode_envelopes else None
        if decoded is not None:
            return decoded
        if text.strip().startswith("/* Presto View"):
            continue  # the envelope's expanded-text stub carries no SQL
        return text
    return None


def _validation_texts(table: Mapping[str, Any]) -> dict[str, str]:
    status = table.get("Status")
    details = status.get("Details") if isinstance(status, Mapping) else None
    out: dict[str, str] = {}
    for item in (details or {}).get("ViewValidations") or []:
        text = item.get("ViewValidationText")
        if item.get("Dialect") and isinstance(text, str) and text.strip():
            out[str(item["Dialect"])] = text
    return out


def _decode_native(table: Mapping[str, Any], schema: str, *, decode_envelopes: bool = True,
                   warnings: list[str] | None = None) -> ViewSpec:
    """What Glue itself holds, without the extras."""
    params = params_of(table)
    validations = _validation_texts(table)
    reps: list[Representation] = []
    for rep in (table.get("ViewDefinition") or {}).get("Representations") or []:
        glue = str(rep.get("Dialect", "")).upper()
        dialect = athena_name(params) if glue == "ATHENA" else DEFAULT_DIALECT.get(glue, glue.lower())
        sql = representation_sql(rep, validations, decode_envelopes)
        if sql is None or not sql.strip():
            if warnings is not None:
                warnings.append(f"Glue returned no SQL for the {glue} representation")
            continue
        if dialect not in {r.dialect for r in reps}:
            reps.append(Representation(dialect=dialect, sql=sql.strip()))
    if not reps:
        raise DecodeError("a multi-dialect view without any readable representation")
    sd = table.get("StorageDescriptor") or {}
    return ViewSpec(
        comment=table.get("Description") or None,
        columns=read_columns(sd.get("Columns") or []),
        representations=reps,
        default_namespace=schema.split("."),  # Glue resolves names in the view's own database
        security="definer",  # Data Catalog views run with the definer's rights
        owner=table.get("Owner") or None,
        properties=P.user_properties(params),
    )


def decode_multi_dialect(table: Mapping[str, Any], schema: str) -> Decoded:
    warnings: list[str] = []
    params = params_of(table)
    engine = _decode_native(table, schema, warnings=warnings).canonical()
    try:
        spec = spec_from_canonical(P.apply_extras(engine, params))
    except (DecodeError, ValidationError):
        spec = spec_from_canonical(engine)  # damaged extras must not hide what Glue holds
        warnings.append("ignoring unreadable viewsync extras")
    managed_by, spec_digest = markers(params)
    return Decoded(spec=spec, format=MULTI_DIALECT_FORMAT, managed_by=managed_by,
                   spec_digest=spec_digest, warnings=warnings)


def storable_multi_dialect(spec: ViewSpec) -> ViewSpec:
    """`spec` (resolved) as a multi-dialect view holds it: Hive column types, trimmed SQL."""
    return spec.model_copy(update={
        "columns": coerce_columns(spec.columns),
        "comment": spec.comment or None,
        "representations": [r.model_copy(update={"sql": r.sql.strip()}) for r in spec.representations],
    })


# --------------------------------------------------------------------- checks
def check_table_input(where: str, table: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Glue API limits on the TableInput we would send, as plan errors (not apply failures)."""
    errors: list[tuple[str, str]] = []

    def too_long(what: str, size: int, limit: int, unit: str = "characters") -> None:
        errors.append(("value_too_long", f"{where}: {what} is {size} {unit}; Glue holds at most {limit}"))

    texts = [("view text", table.get("ViewOriginalText")), ("expanded view text", table.get("ViewExpandedText"))]
    for rep in (table.get("ViewDefinition") or {}).get("Representations") or []:
        texts.append((f"{rep['Dialect']} view text", rep.get("ViewOriginalText")))
    for label, text in texts:
        if isinstance(text, str) and len(text) > MAX_VIEW_TEXT:
            too_long(f"the {label}", len(text), MAX_VIEW_TEXT)
    for key, value in (table.get("Parameters") or {}).items():
        if len(key) > MAX_NAME:
            too_long(f"the property name {key[:40]!r}...", len(key), MAX_NAME)
        if len(value.encode()) > MAX_PARAM_VALUE:
            too_long(f"parameter {key!r}", len(value.encode()), MAX_PARAM_VALUE, "bytes")
    for col in (table.get("StorageDescriptor") or {}).get("Columns") or []:
        if len(col["Name"]) > MAX_NAME:
            too_long(f"column name {col['Name'][:40]!r}...", len(col["Name"]), MAX_NAME)
        if len(col["Type"]) > MAX_TYPE:
            too_long(f"the type of column {col['Name']!r}", len(col["Type"]), MAX_TYPE)
    return errors
