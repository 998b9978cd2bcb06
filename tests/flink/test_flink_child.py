"""Real PyFlink (batch mode) running a view's flink SQL over fixture rows: the rows it returns,
an error placed in the view's own SQL, the types that come back exactly, and the view as
viewsync stores it in a Hive Metastore (its expanded text) accepted by Flink."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from reconciler.adapters.metastore.formats.flink import FLINK
from reconciler.core.model import Column, Representation, ViewSpec
from reconciler.flink.client import FlinkChild, FlinkError, FlinkUnavailable
from reconciler.flink.relations import values_query
from tests.helpers.flink import flink_python

pytestmark = pytest.mark.slow

ORDERS = [Column(name="order_id", type="bigint"), Column(name="customer_id", type="bigint"),
          Column(name="amount", type="decimal(18,2)"), Column(name="status", type="string"),
          Column(name="ordered_at", type="timestamp")]
# views/local/sales.yaml, completed_orders' test keeps_only_completed_orders (its rows, typed)
ROWS = [[1, 10, Decimal("10.00"), "completed", dt.datetime(2026, 1, 1, 10)],
        [2, 10, Decimal("5.00"), "cancelled", dt.datetime(2026, 1, 1, 11)],
        [3, 11, Decimal("7.50"), "pending", dt.datetime(2026, 1, 2, 9)],
        [4, 11, Decimal("2.25"), "completed", dt.datetime(2026, 1, 2, 9, 30)]]
COMPLETED = "SELECT order_id, customer_id, amount, ordered_at\nFROM sales.orders\nWHERE status = 'completed'"


@pytest.fixture(scope="module")
def flink() -> Iterator[FlinkChild]:
    child = FlinkChild(flink_python())
    yield child
    child.close()


def orders(rows: list[list[Any]] = ROWS) -> list[dict[str, Any]]:
    return [{"path": ["sales", "orders"], "sql": values_query(ORDERS, rows)}]


def test_a_views_flink_sql_runs_over_fixture_rows_named_as_its_tables(flink: FlinkChild) -> None:
    answer = flink.query(COMPLETED, orders(), catalog="local", database="sales")
    assert [c["name"] for c in answer["columns"]] == ["order_id", "customer_id", "amount", "ordered_at"]
    assert answer["columns"][2]["type"].startswith("DECIMAL(18, 2)")
    assert sorted(answer["rows"]) == [[1, 10, "10.00", "2026-01-01 10:00:00.000000"],
                                      [4, 11, "2.25", "2026-01-02 09:30:00.000000"]]


def test_an_empty_fixture_is_a_typed_relation_without_rows(flink: FlinkChild) -> None:
    answer = flink.query(COMPLETED, orders([]), catalog="local", database="sales")
    assert answer["rows"] == []


def test_an_error_is_placed_in_the_views_own_sql(flink: FlinkChild) -> None:
    with pytest.raises(FlinkError) as err:
        flink.query("SELECT order_id,\n       refunded\nFROM sales.orders", orders(), catalog="local",
                    database="sales")
    assert err.value.error["in"] == "query"
    assert (err.value.error["line"], err.value.error["column"]) == (2, 8)
    assert "refunded" in err.value.error["message"] and "\tat " not in err.value.error["message"]


def test_relations_last_one_request_and_live_in_memory(flink: FlinkChild) -> None:
    flink.query(COMPLETED, orders(), catalog="local", database="sales")
    with pytest.raises(FlinkError, match="'orders' not found"):
        flink.query(COMPLETED, [], catalog="local", database="sales")
    assert flink.query("SELECT 1 AS x", [], catalog="local", database="sales")["rows"] == [[1]]


def test_values_come_back_exactly(flink: FlinkChild) -> None:
    # PyFlink's own conversion cuts timestamps to milliseconds and fails on arrays and TIMESTAMP_LTZ.
    cols = [Column(name="ts", type="timestamp"), Column(name="ltz", type="timestamptz"),
            Column(name="tags", type="array<int>"), Column(name="s", type="struct<x:int,y:decimal(5,2)>"),
            Column(name="m", type="map<string,int>"), Column(name="b", type="binary"),
            Column(name="d", type="date"), Column(name="txt", type="string")]
    row = [dt.datetime(2026, 1, 2, 3, 4, 5, 123456), dt.datetime(2026, 1, 2, 3, 4, 5, 7), (1, None, 3),
           (7, Decimal("1.50")), (("k", 1),), b"\x00\xff", dt.date(1, 1, 1), "it's"]
    answer = flink.query("SELECT * FROM t", [{"path": ["t"], "sql": values_query(cols, [row])}])
    assert answer["rows"] == [["2026-01-02 03:04:05.123456", "2026-01-02 03:04:05.000007", [1, None, 3],
                               {"x": 7, "y": "1.50"}, [["k", 1]], {"$binary": "AP8="}, "0001-01-01", "it's"]]


def test_the_view_as_stored_in_a_metastore_runs_on_flink(flink: FlinkChild) -> None:
    """viewExpandedText as viewsync writes a flink view (unqualified tables qualified by the
    view's database) is Flink SQL that Flink parses and runs to the same rows."""
    sql = "SELECT o.order_id, o.amount\nFROM orders AS o\nJOIN sales.orders AS p ON p.order_id = o.order_id\n" \
          "WHERE o.status = 'completed'"
    spec = ViewSpec(columns=[Column(name="order_id", type="bigint"), Column(name="amount", type="decimal(18,2)")],
                    representations=[Representation(dialect="flink", sql=sql)])
    table = FLINK.encode("sales", "completed_amounts", spec)
    assert table.view_expanded_text != sql and "`sales`.`orders`" in (table.view_expanded_text or "")
    for text in (table.view_original_text, table.view_expanded_text):
        answer = flink.query(text or "", orders(), catalog="myhive", database="sales")
        assert sorted(answer["rows"]) == [[1, "10.00"], [4, "2.25"]]


def test_a_missing_interpreter_says_how_to_install_pyflink(tmp_path: Any) -> None:
    with pytest.raises(FlinkUnavailable, match="apache-flink"):
        FlinkChild(str(tmp_path / "no-python"))
