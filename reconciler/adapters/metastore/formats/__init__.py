"""Engine-native view encodings for metastore catalogs (HMS, Glue). Pure functions, no I/O.

Public API (kept stable for the adapters):
    TableDesc, HiveColumn, VIRTUAL_VIEW    neutral table description
    detect(table) -> format | None
    read_view(table) -> ReadView(format, spec, managed_by, spec_digest, writable)
    write_view(fmt, database, name, spec, marker, base=None, engine_catalog=None, default_owner=None,
               writer=None) -> TableDesc
    check_view(fmt, spec, where) -> [(code, message)]
    FormatError, WRITE_FORMATS, DIALECT_OF
Engine formats are classes (`engine.EngineFormat`, one leaf per engine holding only its
differences as class data): spark.SPARK, trino.TRINO (+ TRINO_MATERIALIZED, read only),
hive.HIVE, flink.FLINK; `codec.FORMATS` maps names to them. params: splitting, extras.
"""

from reconciler.adapters.metastore.formats.codec import (
    DIALECT_OF,
    WRITE_FORMATS,
    ReadView,
    check_view,
    read_view,
    write_view,
)
from reconciler.adapters.metastore.formats.common import FormatError
from reconciler.adapters.metastore.formats.detect import detect
from reconciler.adapters.metastore.formats.table import VIRTUAL_VIEW, HiveColumn, TableDesc

__all__ = [
    "DIALECT_OF", "VIRTUAL_VIEW", "WRITE_FORMATS", "FormatError", "HiveColumn", "ReadView", "TableDesc",
    "check_view", "detect", "read_view", "write_view",
]
