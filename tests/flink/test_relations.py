"""Fixture rows as Flink SQL, offline: every cell typed, strings quoted the standard way."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from reconciler.core import coltypes
from reconciler.core.model import Column
from reconciler.flink.relations import literal, values_query


def test_cells_are_cast_to_their_columns_flink_types() -> None:
    sql = values_query([Column(name="id", type="bigint"), Column(name="amount", type="decimal(18,2)"),
                        Column(name="at", type="timestamp")],
                       [[1, Decimal("1.50"), dt.datetime(2026, 1, 1, 10)], [None, None, None]])
    assert "CAST('1' AS BIGINT)" in sql and "CAST('1.50' AS DECIMAL(18, 2))" in sql
    assert "CAST('2026-01-01 10:00:00' AS TIMESTAMP(6))" in sql and "CAST(NULL AS BIGINT)" in sql
    assert sql.endswith("AS t(`id`, `amount`, `at`)")


def test_a_quote_is_doubled_and_a_backslash_stays() -> None:
    assert literal("it's a \\n", coltypes.parse("string")) == "CAST('it''s a \\n' AS VARCHAR(2147483647))"


def test_no_rows_is_a_typed_empty_relation() -> None:
    sql = values_query([Column(name="id", type="int")], [])
    assert sql == "SELECT CAST(NULL AS INT) AS `id` FROM (VALUES (1)) AS t(`_`) WHERE FALSE"


def test_an_empty_array_is_one_null_removed_and_an_empty_map_is_built_from_two() -> None:
    assert literal((), coltypes.parse("array<int>")) == \
        "CAST(ARRAY_REMOVE(ARRAY[CAST(NULL AS INT)], CAST(NULL AS INT)) AS ARRAY<INT>)"
    assert literal((), coltypes.parse("map<string,int>")) == (
        "CAST(MAP_FROM_ARRAYS(ARRAY_REMOVE(ARRAY[CAST(NULL AS VARCHAR(2147483647))], "
        "CAST(NULL AS VARCHAR(2147483647))), ARRAY_REMOVE(ARRAY[CAST(NULL AS INT)], CAST(NULL AS INT))) "
        "AS MAP<VARCHAR(2147483647), INT>)")
