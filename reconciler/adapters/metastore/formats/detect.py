"""Which engine wrote a metastore view (order of Gravitino's HiveView.detectDialect
and Trino's ViewReaderUtil; see FORMATS.md)."""

from __future__ import annotations

from reconciler.adapters.metastore.formats import flink, hive, spark, trino
from reconciler.adapters.metastore.formats.table import TableDesc


def detect(table: TableDesc) -> str | None:
    """'trino', 'trino-materialized-view', 'spark', 'flink' or 'hive'; None for a non-view."""
    if not table.is_view:
        return None
    p = table.parameters
    if p.get("presto_view", "").lower() == "true":
        comment = p.get("comment", "").strip().lower()
        if comment == trino.VIEW_COMMENT.lower():
            return trino.FORMAT
        if comment == trino.MV_COMMENT.lower():
            return trino.MATERIALIZED
        # Not in the reference order, but an envelope can only be read as Trino.
        text = (table.view_original_text or "").lstrip()
        if text.startswith(trino.MV_PREFIX):
            return trino.MATERIALIZED
        if text.startswith(trino.VIEW_PREFIX):
            return trino.FORMAT
    if spark.CREATE_VERSION in p:
        return spark.FORMAT
    if p.get("is_generic", "").lower() == "true" or any(k.startswith(flink.PREFIX) for k in p):
        return flink.FORMAT
    return hive.FORMAT
