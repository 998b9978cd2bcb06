"""Flink's generic view encoding in a Hive Metastore.

The schema lives only in parameters (`flink.schema.N.name` / `.data-type` /
`.comment`, Flink's serializable type strings), the view comment in
`flink.comment`, other options prefixed `flink.`, plus `is_generic=true`;
sd.cols stays empty. viewOriginalText is the query as written, viewExpandedText
the one Flink expanded (fully qualified) and runs.

References (apache/flink): `flink-table-common/.../catalog/CatalogPropertiesUtil.java`
(`serializeCatalogView`, `serializeColumnsWithKey`: name, data-type, expr,
metadata, virtual, comment per column), `flink-connectors/flink-connector-hive/
.../HiveCatalog.java` and `HiveTableUtil.java` (the `flink.` prefix, the view
texts; `FlinkPlannerImpl.expandView`: a view's expanded query resolves names in the
view's database, then in its catalog). A rewrite keeps what Flink wrote and the spec does not model (NOT NULL,
BINARY(n)/VARBINARY(n) lengths, the expanded text of unchanged SQL); new SQL gets an
expanded text with unqualified tables qualified by the database, which Flink and Trino's
Hive view translation both read.
Golden vectors: tests/adapters/metastore/formats/golden/flink/.
"""

from __future__ import annotations

import re

from reconciler.adapters.metastore.formats import params as P
from reconciler.adapters.metastore.formats.common import FormatError, qualify_tables, text_of
from reconciler.adapters.metastore.formats.engine import EngineFormat
from reconciler.adapters.metastore.formats.table import TableDesc
from reconciler.core import coltypes
from reconciler.core.model import Column, Representation, ViewSpec

PREFIX = "flink."
_SCHEMA_KEY = re.compile(r"^flink\.schema\.(\d+)\.(name|data-type|comment)$")


class FlinkFormat(EngineFormat):
    FORMAT = "flink"
    DIALECT = "flink"
    TYPES = "flink"
    OWNED_KEYS = frozenset({"is_generic"})
    OWNED_PREFIXES = (PREFIX,)

    def encode(self, database: str, name: str, spec: ViewSpec, *, engine_catalog: str | None = None,
               base: TableDesc | None = None, default_owner: str | None = None) -> TableDesc:
        sql = self.sql(spec)
        bp = base.parameters if base is not None else {}
        base_types = {bp.get(f"flink.schema.{i}.name"): bp.get(f"flink.schema.{i}.data-type")
                      for i in range(len(bp))
                      if f"flink.schema.{i}.name" in bp}
        params: dict[str, str] = {"is_generic": "true"}
        for i, col in enumerate(spec.columns):
            params[f"flink.schema.{i}.name"] = col.name
            native = base_types.get(col.name)
            params[f"flink.schema.{i}.data-type"] = (native if native is not None and self.same_type(native, col.type)
                                                     else coltypes.to_flink(coltypes.parse(col.type)))
            if col.comment is not None and P.storable_param(f"flink.schema.{i}.comment", col.comment):
                params[f"flink.schema.{i}.comment"] = col.comment
        if spec.comment is not None and P.storable_param("flink.comment", spec.comment):
            params["flink.comment"] = spec.comment
        for key, value in spec.properties.items():
            if not key.startswith("schema.") and key != "comment" and P.storable_param(PREFIX + key, value):
                params[PREFIX + key] = value
        # Flink resolves `db`.`t` in the view's catalog (FlinkPlannerImpl.expandView), as it does `t`.
        original, expanded = sql, qualify_tables(sql, self.DIALECT, self.qualifier(spec, database))
        if (base is not None and (base.view_original_text or "").strip() == sql.strip()
                and base.view_expanded_text and base.view_expanded_text != base.view_original_text):
            # Unchanged SQL that Flink expanded: keep Flink's texts (its qualified query is what it runs).
            original = base.view_original_text or sql
            expanded = base.view_expanded_text
        return self.table(database, name, original=original, expanded=expanded, parameters=params, columns=[],
                          owner=spec.owner)

    def decode(self, table: TableDesc) -> ViewSpec:
        p = table.parameters
        props = P.user_properties(p)
        for key, value in p.items():
            if key.startswith(PREFIX) and not key.startswith(PREFIX + "schema.") and key != PREFIX + "comment":
                props[key[len(PREFIX):]] = value
        return ViewSpec(
            comment=p.get("flink.comment"),
            columns=_columns(p),
            representations=[Representation(dialect=self.DIALECT, sql=text_of(table.view_original_text,
                                                                                   table.view_expanded_text))],
            owner=table.owner or None,
            properties={k: v for k, v in props.items() if not k.startswith(P.VIEWSYNC_PREFIX)},
        )


def _columns(p: dict[str, str]) -> list[Column]:
    found: dict[int, dict[str, str]] = {}
    for key, value in p.items():
        m = _SCHEMA_KEY.match(key)
        if m:
            found.setdefault(int(m.group(1)), {})[m.group(2)] = value
    out = []
    for i in sorted(found):
        entry = found[i]
        if "name" not in entry or "data-type" not in entry:
            raise FormatError(f"flink.schema.{i} lacks its name or data-type")
        try:
            ctype = coltypes.parse_from(entry["data-type"], "flink")
        except coltypes.ColumnTypeError as exc:
            raise FormatError(f"column {entry['name']!r}: {exc}") from None
        out.append(Column(name=entry["name"], type=ctype, comment=entry.get("comment")))
    return out


FLINK = FlinkFormat()
FORMAT = FLINK.FORMAT
