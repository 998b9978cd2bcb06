"""Trino's view encoding (also written by AWS Athena into Glue).

viewOriginalText = "/* Presto View: " + base64(JSON) + " */", where the JSON is
Trino's ConnectorViewDefinition: originalSql, catalog, schema,
columns[{name, type, comment?}] (Trino type signatures), comment, owner,
runAsInvoker. Materialized views use "Presto Materialized View" instead; they
are decoded for reporting only and never written.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from reconciler import types as vtypes
from reconciler.formats import params as P
from reconciler.formats.common import FormatError, sql_for
from reconciler.formats.table import HiveColumn, TableDesc
from reconciler.model import Column, Representation, ViewSpec

FORMAT = "trino"
MATERIALIZED = "trino-materialized-view"
DIALECT = "trino"
VIEW_PREFIX = "/* Presto View: "
MV_PREFIX = "/* Presto Materialized View: "
SUFFIX = " */"
EXPANDED_TEXT = "/* Presto View */"
VIEW_COMMENT = "Presto View"
MV_COMMENT = "Presto Materialized View"
DEFAULT_CATALOG = "hive"  # the usual Trino catalog name for a metastore; adapters may override


def owns(key: str) -> bool:
    return key in ("presto_view", "comment", "trino_created_by")


# ------------------------------------------------------------------ envelope
def encode_envelope(definition: dict[str, Any], prefix: str = VIEW_PREFIX) -> str:
    payload = json.dumps(definition, separators=(",", ":"), ensure_ascii=False).encode()
    return prefix + base64.b64encode(payload).decode("ascii") + SUFFIX


def decode_envelope(text: str) -> dict[str, Any]:
    body = text.strip()
    for prefix in (VIEW_PREFIX, MV_PREFIX):
        if body.startswith(prefix) and body.endswith(SUFFIX):
            encoded = body[len(prefix):-len(SUFFIX)].strip()
            break
    else:
        raise FormatError("not a Trino view envelope ('/* Presto View: <base64> */')")
    try:
        doc = json.loads(base64.b64decode(encoded, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise FormatError(f"unreadable Trino view definition: {exc}") from None
    if not isinstance(doc, dict):
        raise FormatError("unreadable Trino view definition: not a JSON object")
    return doc


# --------------------------------------------------------------- definition
def to_definition(spec: ViewSpec, *, engine_catalog: str | None = None) -> dict[str, Any]:
    """ConnectorViewDefinition JSON for a spec. Trino needs `catalog` whenever
    `schema` is set, and allows `owner` only for definer views."""
    doc: dict[str, Any] = {"originalSql": sql_for(spec, DIALECT)}
    ns = spec.default_namespace
    if ns is not None and len(ns) == 1:
        doc["catalog"] = spec.default_catalog or engine_catalog or DEFAULT_CATALOG
        doc["schema"] = ns[0]
    elif spec.default_catalog is not None and ns is None:
        doc["catalog"] = spec.default_catalog
    columns = []
    for c in spec.columns:
        entry: dict[str, Any] = {"name": c.name, "type": vtypes.to_trino(vtypes.parse(c.type))}
        if c.comment is not None:
            entry["comment"] = c.comment
        columns.append(entry)
    doc["columns"] = columns
    if spec.comment is not None:
        doc["comment"] = spec.comment
    invoker = spec.security == "invoker"
    if spec.owner is not None and not invoker:
        doc["owner"] = spec.owner
    doc["runAsInvoker"] = invoker
    return doc


def from_definition(doc: dict[str, Any], properties: dict[str, str] | None = None) -> ViewSpec:
    try:
        sql = doc["originalSql"]
        columns = []
        for c in doc.get("columns") or []:
            try:
                ctype = vtypes.parse_from(c["type"], "trino")
            except vtypes.TypeError_ as exc:
                raise FormatError(f"column {c.get('name')!r}: {exc}") from None
            columns.append(Column(name=c["name"], type=ctype, comment=c.get("comment")))
        schema = doc.get("schema")
        return ViewSpec(
            comment=doc.get("comment"),
            columns=columns,
            representations=[Representation(dialect=DIALECT, sql=sql)],
            default_catalog=doc.get("catalog"),
            default_namespace=[schema] if schema is not None else None,
            security="invoker" if doc.get("runAsInvoker") else "definer",
            owner=doc.get("owner"),
            properties=properties or {},
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise FormatError(f"unreadable Trino view definition: missing or bad {exc}") from None
    except ValueError as exc:  # pydantic validation (e.g. empty originalSql)
        raise FormatError(f"unreadable Trino view definition: {exc}") from None


# -------------------------------------------------------------------- table
def encode(database: str, name: str, spec: ViewSpec, *, engine_catalog: str | None = None) -> TableDesc:
    params = {"presto_view": "true", "comment": VIEW_COMMENT, "trino_created_by": "viewsync"}
    params.update(P.plain_properties(spec.properties))
    return TableDesc(
        database=database, name=name,
        view_original_text=encode_envelope(to_definition(spec, engine_catalog=engine_catalog)),
        view_expanded_text=EXPANDED_TEXT, parameters=params,
        columns=[HiveColumn("dummy", "string")], owner=spec.owner,
    )


def decode(table: TableDesc) -> ViewSpec:
    doc = decode_envelope(table.view_original_text or "")
    return from_definition(doc, P.user_properties(table.parameters))
