"""Spark's view encoding in a Hive Metastore (what Spark 4.x writes).

SQL in viewOriginalText/viewExpandedText; the schema with original-case names
and comments in `spark.sql.sources.schema` (split when long); the query's
output names in `view.query.out.*`; the catalog and namespace that resolve
unqualified names in `view.catalogAndNamespace.*`.
"""

from __future__ import annotations

import json
from typing import Any

from reconciler import types as vtypes
from reconciler.formats import params as P
from reconciler.formats.common import (
    FormatError,
    from_hive_columns,
    output_names,
    sql_for,
    text_of,
    to_hive_columns,
)
from reconciler.formats.table import TableDesc
from reconciler.model import Column, Representation, ViewSpec

FORMAT = "spark"
DIALECT = "spark"
DEFAULT_CATALOG = "spark_catalog"  # Spark's name for the session (Hive) catalog

CREATE_VERSION = "spark.sql.create.version"
SCHEMA = "spark.sql.sources.schema"
OUT_COLS = "view.query.out"
CATALOG_NS = "view.catalogAndNamespace"
SPARK_SCHEMA_PART = 4000  # spark.sql.sources.schemaStringLengthThreshold
INPUT_FORMAT = "org.apache.hadoop.mapred.SequenceFileInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat"
SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
WRITER_VERSION = "4.3.0"  # Spark only displays this; it marks the table as a Spark view


def owns(key: str) -> bool:
    """Parameters this codec writes (an update replaces them all)."""
    return (P.is_family(key, SCHEMA) or key.startswith((OUT_COLS + ".", CATALOG_NS + "."))
            or key in ("comment", CREATE_VERSION))


def _field(col: Column) -> dict[str, Any]:
    t = vtypes.parse(col.type)
    metadata: dict[str, str] = {}
    if isinstance(t, vtypes.Prim) and t.name in ("varchar", "char"):
        # Spark keeps CHAR/VARCHAR as string plus the declared type in metadata.
        spark_type: Any = "string"
        metadata["__CHAR_VARCHAR_TYPE_STRING"] = vtypes.render(t)
    else:
        spark_type = vtypes.to_spark(t)
    if col.comment is not None:
        metadata["comment"] = col.comment
    return {"name": col.name, "type": spark_type, "nullable": True, "metadata": metadata}


def encode(database: str, name: str, spec: ViewSpec, *, engine_catalog: str | None = None) -> TableDesc:
    sql = sql_for(spec, DIALECT)
    params: dict[str, str] = {CREATE_VERSION: WRITER_VERSION}
    schema = json.dumps({"type": "struct", "fields": [_field(c) for c in spec.columns]},
                        separators=(",", ":"), ensure_ascii=False)
    params.update(P.split_value(SCHEMA, schema, SPARK_SCHEMA_PART))
    names = output_names(sql, "spark", len(spec.columns)) or [c.name for c in spec.columns]
    params[f"{OUT_COLS}.numCols"] = str(len(names))
    params.update({f"{OUT_COLS}.col.{i}": n for i, n in enumerate(names)})
    catalog = spec.default_catalog or engine_catalog or DEFAULT_CATALOG
    ns = spec.default_namespace if spec.default_namespace is not None else [database]
    parts = [catalog, *ns]
    params[f"{CATALOG_NS}.numParts"] = str(len(parts))
    params.update({f"{CATALOG_NS}.part.{i}": p for i, p in enumerate(parts)})
    if spec.comment is not None and P.storable_param("comment", spec.comment):
        params["comment"] = spec.comment
    params.update(P.plain_properties(spec.properties))
    return TableDesc(
        database=database, name=name, view_original_text=sql, view_expanded_text=sql,
        parameters=params, columns=to_hive_columns(spec), owner=spec.owner,
        input_format=INPUT_FORMAT, output_format=OUTPUT_FORMAT, serde_lib=SERDE,
    )


def _columns(table: TableDesc) -> list[Column]:
    raw = P.join_value(table.parameters, SCHEMA)
    if raw is None:
        return from_hive_columns(table.columns)
    try:
        fields = json.loads(raw)["fields"]
        out = []
        for f in fields:
            raw_type = (f.get("metadata") or {}).get("__CHAR_VARCHAR_TYPE_STRING") or f["type"]
            ctype = vtypes.parse_from(raw_type, "spark")
            comment = (f.get("metadata") or {}).get("comment")
            out.append(Column(name=f["name"], type=ctype, comment=comment))
        return out
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FormatError(f"unreadable {SCHEMA}: {exc}") from None


def decode(table: TableDesc) -> ViewSpec:
    p = table.parameters
    sql = text_of(table.view_original_text, table.view_expanded_text)
    catalog: str | None = None
    namespace: list[str] | None = None
    parts = P.numbered(p, CATALOG_NS)
    if parts:
        catalog, namespace = parts[0], parts[1:] or None
    elif p.get("view.default.database"):  # views written by Spark 2.x
        namespace = [p["view.default.database"]]
    return ViewSpec(
        comment=p.get("comment"),
        columns=_columns(table),
        representations=[Representation(dialect=DIALECT, sql=sql)],
        default_catalog=catalog,
        default_namespace=namespace,
        owner=table.owner or None,
        properties=P.user_properties(p),
    )
