"""The metastore codecs convert each column type once per type string (coltypes.hive_text,
spark._spark_type) instead of once per column. What they write must be what the uncached
conversion writes, for every kind of type, and no column's schema may share a cached
object with another's (a caller changing one would change every later view)."""

from __future__ import annotations

import pytest

from reconciler.adapters.metastore.formats import spark
from reconciler.core import coltypes
from reconciler.core.model import Column

TYPES = [
    "bigint", "int", "string", "decimal(18,2)", "timestamp", "timestamp_ltz", "date", "binary", "varchar(12)",
    "char(3)", "array<string>", "array<varchar(5)>", "map<string,array<char(2)>>",
    "struct<a:int,b:struct<c:varchar(7),d:map<int,string>>>", "json", "uuid", "time",
]


def _uncached_field(col: Column) -> dict[str, object]:
    t = coltypes.parse(col.type)
    metadata: dict[str, str] = {}
    if spark._has_char(t):
        metadata["__CHAR_VARCHAR_TYPE_STRING"] = coltypes.to_spark_ddl(t)
    if col.comment is not None:
        metadata["comment"] = col.comment
    return {"name": col.name, "type": coltypes.to_spark(coltypes.map_prims(t, spark._as_string)), "nullable": True,
            "metadata": metadata}


@pytest.mark.parametrize("text", TYPES)
def test_cached_conversions_write_what_the_uncached_ones_write(text: str) -> None:
    for _ in range(2):  # the first call fills the cache, the second reads it
        assert coltypes.hive_text(text) == coltypes.to_hive(coltypes.parse(text))
        col = Column(name="c", type=text, comment="note")
        assert spark._field(col) == _uncached_field(col)


def test_no_column_shares_the_cached_schema_of_a_composite_type() -> None:
    first = spark._field(Column(name="a", type="struct<x:int,y:array<string>>"))
    first["type"]["fields"][0]["name"] = "changed"  # a caller editing its schema
    second = spark._field(Column(name="b", type="struct<x:int,y:array<string>>"))
    assert second["type"]["fields"][0]["name"] == "x"


def test_an_unknown_type_is_still_an_error_each_time() -> None:
    for _ in range(2):  # errors are never cached as results
        with pytest.raises(coltypes.ColumnTypeError):
            coltypes.hive_text("bigitn")
        with pytest.raises(coltypes.ColumnTypeError):
            spark._field(Column.model_construct(name="c", type="bigitn", comment=None))
