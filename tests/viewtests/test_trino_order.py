"""An `ordered: true` test's order on Trino as a window over its query's outputs
(viewtests.trino_order): the same keys, directions and NULL placement, or None when the order
cannot be said over the outputs (the test then runs alone)."""

from __future__ import annotations

import pytest

from reconciler.viewtests.trino_order import window_order


@pytest.mark.parametrize(("sql", "keys"), [
    ("SELECT a, b AS c FROM t ORDER BY c DESC, 1", '"c" DESC NULLS LAST, "a" ASC NULLS LAST'),
    ("SELECT region, SUM(x) AS total FROM t GROUP BY region ORDER BY SUM(x) DESC LIMIT 3",
     '"total" DESC NULLS LAST'),
    ("SELECT t.a FROM t ORDER BY t.a NULLS FIRST", '"a" ASC NULLS FIRST'),
    ("SELECT a AS b FROM t AS o ORDER BY o.a", '"b" ASC NULLS LAST'),
    ("SELECT a FROM t UNION ALL SELECT b FROM u ORDER BY a DESC", '"a" DESC NULLS LAST'),
    # a test's query reads its view through CTEs; a column list renames the outputs by position
    ('WITH __vs_in_0 AS (SELECT 1 AS a), __vs_v_0("x", "y") AS (\nSELECT a, a + 1 AS b FROM __vs_in_0 '
     'ORDER BY b DESC, 1\n)\nSELECT * FROM __vs_v_0', '"y" DESC NULLS LAST, "x" ASC NULLS LAST'),
])
def test_an_order_over_the_outputs_becomes_the_windows(sql: str, keys: str) -> None:
    assert window_order(sql) == keys


@pytest.mark.parametrize("sql", [
    "SELECT a FROM t ORDER BY b",  # a key the output does not carry
    "SELECT o.a FROM t AS o JOIN u AS p ON o.k = p.k ORDER BY p.a",  # another table's column of that name
    "SELECT * FROM t ORDER BY 1",  # outputs unknown
    "SELECT a FROM t",  # no order at all
    "SELECT region, SUM(x) FROM t GROUP BY region ORDER BY 2",  # an unnamed output
    "SELECT a, b AS a FROM t ORDER BY a",  # a repeated name
    "WITH v AS (SELECT a FROM t ORDER BY a) SELECT * FROM v WHERE a > 1",  # the order is not the rows' last
    "SELECT (",  # not SQL Trino would run either
])
def test_an_order_that_cannot_be_said_over_the_outputs_is_none(sql: str) -> None:
    assert window_order(sql) is None
