"""Hive-native views: no engine markers, SQL in the view texts, schema in sd.cols.

Engines (Hive, Spark, Trino's Hive view translation) run viewExpandedText with no
default database, so the expanded text we write has unqualified tables qualified and
backquoted, as Hive writes it; viewOriginalText keeps the SQL as declared and is what
we read back.
"""

from __future__ import annotations

from reconciler.adapters.metastore.formats import params as P
from reconciler.adapters.metastore.formats.common import from_hive_columns, qualify_tables, text_of, to_hive_columns
from reconciler.adapters.metastore.formats.engine import SEQUENCE_FILE, EngineFormat
from reconciler.adapters.metastore.formats.table import TableDesc
from reconciler.core.model import Representation, ViewSpec


class HiveFormat(EngineFormat):
    FORMAT = "hive"
    DIALECT = "hive"
    TYPES = "hive"
    OWNED_KEYS = frozenset({"comment"})
    STORAGE = SEQUENCE_FILE

    def encode(self, database: str, name: str, spec: ViewSpec, *, engine_catalog: str | None = None,
               base: TableDesc | None = None, default_owner: str | None = None) -> TableDesc:
        sql = self.sql(spec)
        # Hive knows no catalogs: the last part of a declared namespace is the database.
        default_db = spec.default_namespace[-1] if spec.default_namespace else database
        params: dict[str, str] = {}
        if spec.comment is not None and P.storable_param("comment", spec.comment):
            params["comment"] = spec.comment
        params.update(P.plain_properties(spec.properties))
        return self.table(database, name, original=sql, expanded=qualify_tables(sql, self.DIALECT, [default_db]),
                          parameters=params, columns=to_hive_columns(spec), owner=spec.owner)

    def decode(self, table: TableDesc) -> ViewSpec:
        p = table.parameters
        return ViewSpec(
            comment=p.get("comment"),
            columns=from_hive_columns(table.columns),
            representations=[Representation(dialect=self.DIALECT, sql=text_of(table.view_original_text,
                                                                                   table.view_expanded_text))],
            owner=table.owner or None,
            properties=P.user_properties(p),
        )


HIVE = HiveFormat()
FORMAT = HIVE.FORMAT
