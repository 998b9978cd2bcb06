"""Spark's view encoding in a Hive Metastore (what Spark 4.x writes).

SQL in viewOriginalText/viewExpandedText; the schema with original-case names
and comments in `spark.sql.sources.schema` (split when long); the query's
output names in `view.query.out.*`; the catalog and namespace that resolve
unqualified names in `view.catalogAndNamespace.*`; the schema mode and the SQL
configs captured at creation (`view.schemaMode`, `view.sqlConfig.*`).

Reference: Spark `sql/core/.../execution/command/views.scala`
(`ViewHelper.generateViewProperties`: query output names, current catalog and
namespace, captured SQL configs, referred temp names) and
`sql/catalyst/.../catalog/interface.scala` (`CatalogTable.viewQueryColumnNames`,
`viewSchemaMode`, `viewSQLConfigs`). Spark runs viewExpandedText (HiveClientImpl reads it
as CatalogTable.viewText), which we write with unqualified tables qualified (as Hive
writes it) so Trino's Hive view translation reads the view too. Spark reads a view by resolving each
`view.query.out.col.N` in the query's output by name, then casts and renames
it to the schema field N; in COMPENSATION mode a narrower declared type is a
cast instead of an error. Golden vectors: tests/adapters/metastore/formats/golden/spark/.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from reconciler.adapters import catalog_json
from reconciler.adapters.metastore.formats import params as P
from reconciler.adapters.metastore.formats.common import (
    FormatError,
    alias_outputs,
    from_hive_columns,
    qualify_tables,
    text_of,
    to_hive_columns,
)
from reconciler.adapters.metastore.formats.engine import SEQUENCE_FILE, EngineFormat
from reconciler.adapters.metastore.formats.table import TableDesc
from reconciler.core import coltypes
from reconciler.core.model import Column, Representation, ViewSpec
from reconciler.core.sql import output_names

CREATE_VERSION = "spark.sql.create.version"
SCHEMA = "spark.sql.sources.schema"
OUT_COLS = "view.query.out"
CATALOG_NS = "view.catalogAndNamespace"
SCHEMA_MODE = "view.schemaMode"
SQL_CONFIG = "view.sqlConfig."
# What Spark 4 writes for a view created with the default session: COMPENSATION
# (spark.sql.legacy.viewSchemaCompensation) and the two configs it always captures.
DEFAULT_SCHEMA_MODE = "COMPENSATION"
DEFAULT_SQL_CONFIG = {"spark.sql.ansi.enabled": "true", "spark.sql.session.timeZone": "UTC"}
REFERRED_TEMP = ("view.referredTempViewNames", "view.referredTempFunctionsNames",
                 "view.referredTempVariablesNames")
SPARK_SCHEMA_PART = 4000  # spark.sql.sources.schemaStringLengthThreshold
WRITER_VERSION = "4.3.0"  # Spark only displays this; it marks the table as a Spark view


def _has_char(t: coltypes.Type) -> bool:
    found = False

    def visit(p: coltypes.Prim) -> coltypes.Prim:
        nonlocal found
        found = found or p.name in ("varchar", "char")
        return p

    coltypes.map_prims(t, visit)
    return found


def _as_string(p: coltypes.Prim) -> coltypes.Prim:
    return coltypes.Prim("string") if p.name in ("varchar", "char") else p


@functools.lru_cache(maxsize=4096)
def _spark_type(text: str) -> tuple[Any, str | None]:
    """Spark's DataType JSON of a declared column type and, when it holds CHAR/VARCHAR, the
    type's catalog string: once per type string per process (types repeat over columns).
    The JSON of a composite type is a dict: callers get a copy (see _field)."""
    t = coltypes.parse(text)
    # Spark keeps CHAR/VARCHAR (also nested) as string, plus the declared type's catalog
    # string in the field metadata (CharVarcharUtils.replaceCharVarcharWithStringInSchema).
    return coltypes.to_spark(coltypes.map_prims(t, _as_string)), coltypes.to_spark_ddl(t) if _has_char(t) else None


def _field(col: Column) -> dict[str, Any]:
    spark_type, char_type = _spark_type(col.type)
    if not isinstance(spark_type, str):  # the cached dict is never handed out
        try:
            spark_type = copy.deepcopy(spark_type)
        except RecursionError:  # too deep to copy: a fresh one, whose JSON then fails as one plan error
            spark_type = _spark_type.__wrapped__(col.type)[0]
    metadata: dict[str, str] = {}
    if char_type is not None:
        metadata["__CHAR_VARCHAR_TYPE_STRING"] = char_type
    if col.comment is not None:
        metadata["comment"] = col.comment
    return {"name": col.name, "type": spark_type, "nullable": True, "metadata": metadata}


def _engine_state(base: TableDesc | None) -> dict[str, str]:
    """Schema mode and captured SQL configs: Spark's own when it wrote the live view (a
    rewrite must not change how the view evaluates), else what Spark 4 captures by default."""
    kept = {k: v for k, v in (base.parameters if base is not None else {}).items()
            if k == SCHEMA_MODE or k.startswith(SQL_CONFIG) or k in REFERRED_TEMP}
    out = {SCHEMA_MODE: DEFAULT_SCHEMA_MODE}
    if not any(k.startswith(SQL_CONFIG) for k in kept):
        out.update({SQL_CONFIG + k: v for k, v in DEFAULT_SQL_CONFIG.items()})
    out.update({k: "[]" for k in REFERRED_TEMP})
    return out | kept


class SparkFormat(EngineFormat):
    FORMAT = "spark"
    DIALECT = "spark"
    TYPES = "spark"
    OWNED_KEYS = frozenset({"comment", CREATE_VERSION, SCHEMA_MODE, *REFERRED_TEMP})
    OWNED_PREFIXES = (OUT_COLS + ".", CATALOG_NS + ".", SQL_CONFIG)
    STORAGE = SEQUENCE_FILE
    DEFAULT_CATALOG = "spark_catalog"  # Spark's name for the session (Hive) catalog

    def owns(self, key: str) -> bool:
        return super().owns(key) or P.is_family(key, SCHEMA)

    def encode(self, database: str, name: str, spec: ViewSpec, *, engine_catalog: str | None = None,
               base: TableDesc | None = None, default_owner: str | None = None) -> TableDesc:
        sql = self.sql(spec)
        # Spark shows the version that created the view; a rewrite keeps it.
        created = base.parameters.get(CREATE_VERSION) if base is not None else None
        params: dict[str, str] = {CREATE_VERSION: created or WRITER_VERSION}
        schema = catalog_json.dumps({"type": "struct", "fields": [_field(c) for c in spec.columns]},
                                    separators=(",", ":"), ensure_ascii=False)
        params.update(P.split_value(SCHEMA, schema, SPARK_SCHEMA_PART))
        # view.query.out holds the query's own output names (Spark resolves them in the query
        # output by name); the declared names are the schema. An unnamed expression gets the
        # declared name as an alias in the text Spark runs (viewExpandedText).
        declared = [c.name for c in spec.columns]
        found = output_names(sql, "spark", len(declared))
        expanded = sql
        if found is None:
            names = declared
        else:
            names = [n if n else d for n, d in zip(found, declared, strict=True)]
            if any(not n for n in found):
                expanded = alias_outputs(sql, "spark", names)
        params[f"{OUT_COLS}.numCols"] = str(len(names))
        params.update({f"{OUT_COLS}.col.{i}": n for i, n in enumerate(names)})
        params.update(_engine_state(base))
        # Spark resolves unqualified names in view.catalogAndNamespace, and `db`.`t` as the same
        # table in that catalog; Trino's Hive view translation needs them qualified.
        expanded = qualify_tables(expanded, self.DIALECT, self.qualifier(spec, database, engine_catalog))
        catalog = spec.default_catalog or engine_catalog or self.DEFAULT_CATALOG
        ns = spec.default_namespace if spec.default_namespace is not None else [database]
        parts = [catalog, *ns]
        params[f"{CATALOG_NS}.numParts"] = str(len(parts))
        params.update({f"{CATALOG_NS}.part.{i}": p for i, p in enumerate(parts)})
        if spec.comment is not None and P.storable_param("comment", spec.comment):
            params["comment"] = spec.comment
        params.update(P.plain_properties(spec.properties))
        return self.table(database, name, original=sql, expanded=expanded, parameters=params,
                          columns=to_hive_columns(spec), owner=spec.owner)

    def decode(self, table: TableDesc) -> ViewSpec:
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
            representations=[Representation(dialect=self.DIALECT, sql=sql)],
            default_catalog=catalog,
            default_namespace=namespace,
            owner=table.owner or None,
            properties=P.user_properties(p),
        )


def _columns(table: TableDesc) -> list[Column]:
    raw = P.join_value(table.parameters, SCHEMA)
    if raw is None:
        return from_hive_columns(table.columns)
    try:
        fields = catalog_json.loads(raw)["fields"]
        out = []
        for f in fields:
            raw_type = (f.get("metadata") or {}).get("__CHAR_VARCHAR_TYPE_STRING") or f["type"]
            ctype = coltypes.parse_from(raw_type, "spark")
            comment = (f.get("metadata") or {}).get("comment")
            out.append(Column(name=f["name"], type=ctype, comment=comment))
        return out
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FormatError(f"unreadable {SCHEMA}: {exc}") from None


SPARK = SparkFormat()
FORMAT = SPARK.FORMAT
