"""Column schemas of metastore tables (HMS, Glue), for the Spark verifier's stubs.

Spark data-source tables keep their true schema as JSON in table parameters
(`spark.sql.sources.schema`, or split into numbered parts) and a placeholder
in the storage descriptor; Hive tables have real columns there, with partition
keys after them (Spark's order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconciler.adapters import catalog_json
from reconciler.adapters.metastore.formats.table import HiveColumn
from reconciler.core import coltypes
from reconciler.core.model import Column

_SCHEMA = "spark.sql.sources.schema"


def _spark_schema(params: Mapping[str, str]) -> str | None:
    if _SCHEMA in params:
        return params[_SCHEMA]
    parts = params.get(f"{_SCHEMA}.numParts")
    if parts and parts.isdigit():
        pieces = [params.get(f"{_SCHEMA}.part.{i}") for i in range(int(parts))]
        if all(p is not None for p in pieces):
            return "".join(p for p in pieces if p is not None)
    return None


def metastore_columns(columns: Sequence[HiveColumn], partition_keys: Sequence[HiveColumn],
                      params: Mapping[str, str]) -> list[Column] | None:
    """The table's columns in our grammar, or None when a type cannot be read."""
    try:
        raw = _spark_schema(params)
        if raw is not None:
            out = []
            for f in catalog_json.loads(raw)["fields"]:
                declared = (f.get("metadata") or {}).get("__CHAR_VARCHAR_TYPE_STRING")
                t = coltypes.parse(declared) if declared else coltypes.from_spark(f["type"])
                out.append(Column(name=f["name"], type=coltypes.render(t), comment=(f.get("metadata") or {})
                                  .get("comment")))
            return out
        return [Column(name=c.name, type=coltypes.render(coltypes.from_hive(c.type)), comment=c.comment)
                for c in [*columns, *partition_keys]]
    except (coltypes.ColumnTypeError, ValueError, KeyError, TypeError):
        return None
