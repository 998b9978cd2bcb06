"""Trino's view encoding (also written by AWS Athena into Glue).

viewOriginalText = "/* Presto View: " + base64(JSON) + " */", where the JSON is
Trino's ConnectorViewDefinition: originalSql, catalog, schema,
columns[{name, type, comment?}] (Trino type signatures), comment, owner,
runAsInvoker, path. Materialized views use "Presto Materialized View" instead;
they are decoded for reporting only and never written.

References (trinodb/trino): `core/trino-spi/.../connector/ConnectorViewDefinition.java`
(the JSON fields; `owner` only for definer views), `plugin/trino-hive/.../ViewReaderUtil.java`
(the envelope, the metastore table owner overriding the JSON owner of a definer
view), `plugin/trino-hive/.../TrinoViewHiveMetastore.java` (what CREATE VIEW
stores), `core/trino-main/.../metadata/MetadataManager.java` (`getView`: a
definer view without an owner is refused under system security, "Catalog does
not support run-as DEFINER views"). Trino's stale-view check compares the stored
column types with the query's, so a rewrite keeps Trino's own type strings.
Golden vectors: tests/adapters/metastore/formats/golden/trino/.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import ValidationError

from reconciler.adapters import catalog_json
from reconciler.adapters.metastore.formats import params as P
from reconciler.adapters.metastore.formats.common import FormatError, invalid_spec, sql_for
from reconciler.adapters.metastore.formats.engine import EngineFormat
from reconciler.adapters.metastore.formats.table import HiveColumn, TableDesc
from reconciler.core import coltypes
from reconciler.core.model import Column, Representation, ViewSpec

VIEW_PREFIX = "/* Presto View: "
MV_PREFIX = "/* Presto Materialized View: "
SUFFIX = " */"
EXPANDED_TEXT = "/* Presto View */"
VIEW_COMMENT = "Presto View"
MV_COMMENT = "Presto Materialized View"


# ------------------------------------------------------------------ envelope
def encode_envelope(definition: dict[str, Any], prefix: str = VIEW_PREFIX) -> str:
    payload = catalog_json.dumps(definition, separators=(",", ":"), ensure_ascii=False).encode()
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
        doc = catalog_json.loads(base64.b64decode(encoded, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise FormatError(f"unreadable Trino view definition: {exc}") from None
    if not isinstance(doc, dict):
        raise FormatError("unreadable Trino view definition: not a JSON object")
    return doc


# --------------------------------------------------------------- definition
MODELLED = frozenset({"originalSql", "catalog", "schema", "columns", "comment", "owner", "runAsInvoker"})


def definer(spec: ViewSpec, default_owner: str | None) -> str | None:
    """The user a definer view runs as: the declared owner, else the catalog's default."""
    return None if spec.security == "invoker" else spec.owner or default_owner


def to_definition(spec: ViewSpec, *, engine_catalog: str | None = None, default_owner: str | None = None,
                  base: dict[str, Any] | None = None) -> dict[str, Any]:
    """ConnectorViewDefinition JSON for a spec. Trino needs `catalog` whenever
    `schema` is set, and allows `owner` only for definer views.

    `base` is the live definition being replaced: whatever it holds that the spec
    means the same way is kept as Trino wrote it (the SQL's surrounding whitespace,
    type spellings, no `schema`, fields we do not model such as `path`)."""
    base = base or {}
    sql = sql_for(spec, TrinoFormat.DIALECT)
    base_sql = base.get("originalSql")
    doc: dict[str, Any] = {k: v for k, v in base.items() if k not in MODELLED}
    doc["originalSql"] = base_sql if isinstance(base_sql, str) and base_sql.strip() == sql.strip() else sql
    ns = spec.default_namespace
    if ns is not None and len(ns) == 1:
        doc["catalog"] = spec.default_catalog or engine_catalog or TrinoFormat.DEFAULT_CATALOG
        doc["schema"] = ns[0]
    elif spec.default_catalog is not None and not ns:
        doc["catalog"] = spec.default_catalog
    base_types = {c.get("name"): c.get("type") for c in base.get("columns") or [] if isinstance(c, dict)}
    columns = []
    for c in spec.columns:
        native = base_types.get(c.name)
        ctype = native if TRINO.same_type(native, c.type) else coltypes.to_trino(coltypes.parse(c.type))
        entry: dict[str, Any] = {"name": c.name, "type": ctype}
        if c.comment is not None:
            entry["comment"] = c.comment
        columns.append(entry)
    doc["columns"] = columns
    if spec.comment is not None:
        doc["comment"] = spec.comment
    owner = definer(spec, default_owner)
    if owner is not None:
        doc["owner"] = owner
    doc["runAsInvoker"] = spec.security == "invoker"
    return doc


def from_definition(doc: dict[str, Any], properties: dict[str, str] | None = None) -> ViewSpec:
    try:
        sql = doc["originalSql"]
        columns = []
        for c in doc.get("columns") or []:
            try:
                ctype = coltypes.parse_from(c["type"], "trino")
            except coltypes.ColumnTypeError as exc:
                raise FormatError(f"column {c.get('name')!r}: {exc}") from None
            columns.append(Column(name=c["name"], type=ctype, comment=c.get("comment")))
        schema = doc.get("schema")
        catalog = doc.get("catalog")
        # No schema: unqualified names resolve in the reader's session ([] = no default namespace,
        # which a rewrite keeps); otherwise the view's schema in its catalog.
        namespace = [schema] if schema is not None else []
        return ViewSpec(
            comment=doc.get("comment"),
            columns=columns,
            representations=[Representation(dialect=TrinoFormat.DIALECT, sql=sql)],
            default_catalog=catalog,
            default_namespace=namespace,
            security="invoker" if doc.get("runAsInvoker") else "definer",
            owner=doc.get("owner"),
            properties=properties or {},
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise FormatError(f"unreadable Trino view definition: missing or bad {exc}") from None
    except ValidationError as exc:  # e.g. empty originalSql
        raise FormatError(f"unreadable Trino view definition: {invalid_spec(exc)}") from None
    except ValueError as exc:
        raise FormatError(f"unreadable Trino view definition: {exc}") from None


# -------------------------------------------------------------------- table
class TrinoFormat(EngineFormat):
    FORMAT = "trino"
    DIALECT = "trino"
    TYPES = "trino"
    OWNED_KEYS = frozenset({"presto_view", "comment", "trino_created_by"})
    DEFAULT_CATALOG = "hive"  # the usual Trino catalog name for a metastore; adapters may override
    OWNER_IS_CREATOR = False  # the owner is the definer (JSON `owner`, or the table's when Trino set it)

    def encode(self, database: str, name: str, spec: ViewSpec, *, engine_catalog: str | None = None,
               base: TableDesc | None = None, default_owner: str | None = None) -> TableDesc:
        params = {"presto_view": "true", "comment": VIEW_COMMENT, "trino_created_by": "viewsync"}
        params.update(P.plain_properties(spec.properties))
        base_doc: dict[str, Any] | None = None
        if base is not None:
            params["trino_created_by"] = base.parameters.get("trino_created_by", params["trino_created_by"])
            try:
                base_doc = decode_envelope(base.view_original_text or "")
            except FormatError:
                base_doc = None
        doc = to_definition(spec, engine_catalog=engine_catalog, default_owner=default_owner, base=base_doc)
        return self.table(database, name, original=encode_envelope(doc), expanded=EXPANDED_TEXT,
                          parameters=params, columns=[HiveColumn("dummy", "string")], owner=spec.owner)

    def decode(self, table: TableDesc) -> ViewSpec:
        doc = decode_envelope(table.view_original_text or "")
        spec = from_definition(doc, P.user_properties(table.parameters))
        # Trino runs a definer view as the metastore table's owner, not the JSON's
        # (plugin/trino-hive/.../ViewReaderUtil.java): `ALTER VIEW ... SET AUTHORIZATION` changes
        # only the former.
        if spec.security == "definer" and table.owner and table.owner != spec.owner:
            spec = spec.model_copy(update={"owner": table.owner})
        return spec


class TrinoMaterializedView(TrinoFormat):
    """Trino's materialized views: read for reporting (same envelope), never written."""

    FORMAT = "trino-materialized-view"
    WRITABLE = False

    def encode(self, database: str, name: str, spec: ViewSpec, *, engine_catalog: str | None = None,
               base: TableDesc | None = None, default_owner: str | None = None) -> TableDesc:
        raise FormatError("viewsync never writes Trino materialized views")


TRINO = TrinoFormat()
TRINO_MATERIALIZED = TrinoMaterializedView()
FORMAT = TRINO.FORMAT
MATERIALIZED = TRINO_MATERIALIZED.FORMAT
