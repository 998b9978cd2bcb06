"""Legacy Glue views (VIRTUAL_VIEW tables in one engine's format) through the shared codecs.

Glue is HMS-compatible: an Athena view is the Trino envelope, a Spark or Hive
view is what those engines write into a metastore. This module only converts
Glue table dicts to and from the neutral `reconciler.adapters.metastore.formats.TableDesc`; all
encoding and decoding is reconciler.adapters.metastore.formats (the code the HMS adapter uses).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.adapters.metastore import formats
from reconciler.adapters.metastore.base import Decoded
from reconciler.adapters.metastore.formats import trino
from reconciler.adapters.metastore.glue import codec
from reconciler.core.model import ViewSpec

# catalog option view_format -> shared codec format
ENGINE_FORMAT = {"athena": trino.FORMAT, "spark": "spark", "hive": "hive"}
# Athena's name for the Glue catalog: what it writes into the envelope's `catalog`
ATHENA_CATALOG = "awsdatacatalog"


# --------------------------------------------------------- Glue <-> TableDesc
def to_desc(table: Mapping[str, Any], schema: str) -> formats.TableDesc:
    sd = table.get("StorageDescriptor") or {}
    serde = sd.get("SerdeInfo") or {}
    return formats.TableDesc(
        database=schema,
        name=str(table["Name"]),
        table_type=str(table.get("TableType") or ""),
        view_original_text=table.get("ViewOriginalText"),
        view_expanded_text=table.get("ViewExpandedText"),
        parameters=codec.params_of(table),
        columns=[formats.HiveColumn(str(c["Name"]), str(c.get("Type", "")), c.get("Comment") or None)
                 for c in sd.get("Columns") or []],
        owner=table.get("Owner") or None,
        input_format=sd.get("InputFormat"),
        output_format=sd.get("OutputFormat"),
        serde_lib=serde.get("SerializationLibrary"),
    )


def to_table_input(desc: formats.TableDesc) -> dict[str, Any]:
    sd: dict[str, Any] = {
        "Columns": [{"Name": c.name, "Type": c.type, **({"Comment": c.comment} if c.comment else {})}
                    for c in desc.columns],
    }
    if desc.input_format:
        sd["InputFormat"] = desc.input_format
    if desc.output_format:
        sd["OutputFormat"] = desc.output_format
    if desc.serde_lib:
        sd["SerdeInfo"] = {"SerializationLibrary": desc.serde_lib}
    table: dict[str, Any] = {
        "Name": desc.name,
        "TableType": desc.table_type,
        "StorageDescriptor": sd,
        "Parameters": dict(desc.parameters),
    }
    if desc.view_original_text is not None:
        table["ViewOriginalText"] = desc.view_original_text
    if desc.view_expanded_text is not None:
        table["ViewExpandedText"] = desc.view_expanded_text
    if desc.owner:
        table["Owner"] = desc.owner
    return table


# ------------------------------------------------------------------ reading
def is_format_param(key: str) -> bool:
    """Parameters an engine format owns (never carried over into another format)."""
    return key in ("comment", "is_generic") or key.startswith(
        ("presto_", "trino_", "spark.sql.", "view.", "flink."))


def decode(table: Mapping[str, Any], schema: str) -> Decoded:
    read = formats.read_view(to_desc(table, schema))  # FormatError is a DecodeError
    spec = read.spec
    if read.format == trino.FORMAT and codec.athena_name(codec.params_of(table)) == "athena":
        spec = _rename(spec, "trino", "athena")
    return Decoded(spec=spec, format=read.format, managed_by=read.managed_by,
                         spec_digest=read.spec_digest, writable=read.writable)


# ------------------------------------------------------------------ writing
def _rename(spec: ViewSpec, old: str, new: str) -> ViewSpec:
    if spec.sql_for(new) is not None or spec.sql_for(old) is None:
        return spec
    reps = [r.model_copy(update={"dialect": new}) if r.dialect == old else r for r in spec.representations]
    return spec.model_copy(update={"representations": reps})


def encode(
    view_format: str,
    name: str,
    schema: str,
    spec: ViewSpec,
    marker_params: Mapping[str, str],
    base: Mapping[str, Any] | None = None,
    default_owner: str | None = None,
) -> dict[str, Any]:
    """TableInput for `spec` (resolved) in a legacy format; `base` is the live table on update."""
    fmt = ENGINE_FORMAT[view_format]
    athena_alias = fmt == trino.FORMAT and spec.sql_for("trino") is None and spec.sql_for("athena") is not None
    engine_spec = _rename(spec, "athena", "trino") if athena_alias else spec
    marker = dict(marker_params)
    if athena_alias:
        marker[codec.ATHENA_NAME_PARAM] = "athena"
    desc = formats.write_view(
        fmt, schema, name, engine_spec, marker,
        base=to_desc(base, schema) if base is not None else None,
        engine_catalog=ATHENA_CATALOG if fmt == trino.FORMAT else None,
        column_comment_limit=codec.MAX_COLUMN_COMMENT, default_owner=default_owner,
    )
    table = to_table_input(desc)
    if fmt == trino.FORMAT:
        # Athena lists a view's real columns in Glue (Trino writes a dummy one); readers of the
        # envelope ignore them, Glue's console and crawlers-style tools show them.
        table["StorageDescriptor"]["Columns"] = codec.glue_columns(codec.coerce_columns(spec.columns))
    if base is not None:
        _keep_unmanaged(table, base)
    return table


def _keep_unmanaged(table: dict[str, Any], base: Mapping[str, Any]) -> None:
    """An update replaces the whole TableInput: carry over what the live table holds and no
    legacy format sets (another tool's Description, storage location and SerDe parameters,
    partition keys), as the HMS adapter keeps its base storage descriptor."""
    if base.get("Description") and not codec.is_multi_dialect(base):  # there, Description is ours
        table.setdefault("Description", base["Description"])
    if base.get("PartitionKeys"):
        table.setdefault("PartitionKeys", [dict(k) for k in base["PartitionKeys"]])
    base_sd = base.get("StorageDescriptor") or {}
    sd = table["StorageDescriptor"]
    if base_sd.get("Location"):
        sd.setdefault("Location", base_sd["Location"])
    if base_sd.get("Parameters"):
        sd.setdefault("Parameters", dict(base_sd["Parameters"]))
    base_serde = base_sd.get("SerdeInfo") or {}
    for key in ("Name", "Parameters"):
        if base_serde.get(key):
            value = base_serde[key]
            sd.setdefault("SerdeInfo", {}).setdefault(key, dict(value) if isinstance(value, Mapping) else value)


def check(view_format: str, where: str, spec: ViewSpec, default_owner: str | None = None) -> list[tuple[str, str]]:
    """The shared codec's plan errors, minus the HMS/Derby size limits (Glue has its own)."""
    fmt = ENGINE_FORMAT[view_format]
    engine_spec = _rename(spec, "athena", "trino") if fmt == trino.FORMAT else spec
    errors = [e for e in formats.check_view(fmt, engine_spec, where, default_owner=default_owner)
              if e[0] != "value_too_long"]
    if fmt == trino.FORMAT and spec.sql_for("trino") is None and spec.sql_for("athena") is None:
        errors = [(code, msg.replace("a 'trino' representation", "a 'trino' or 'athena' representation"))
                  for code, msg in errors]
    return errors
