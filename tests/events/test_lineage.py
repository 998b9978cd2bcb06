"""Column lineage read from view SQL: joins, aggregates, SELECT * over a declared view, CTEs."""

from __future__ import annotations

from reconciler.events.lineage import InputColumn, diff, view_lineage


def _lin(sql: str, known: dict[str, list[str]] | None = None):  # type: ignore[no-untyped-def]
    return view_lineage("lake.sales.v", sql, "spark", "lake", "sales", known)


def test_join_maps_each_column_to_its_side_and_join_keys_are_indirect() -> None:
    lin = _lin("SELECT o.order_id, c.name AS customer, upper(c.country) AS country "
               "FROM orders o JOIN crm.customers c ON o.customer_id = c.id WHERE o.status = 'done'")
    assert lin.tables == ["lake.sales.orders", "lake.crm.customers"]
    assert lin.columns == {
        "order_id": [InputColumn("lake.sales.orders", "order_id", "IDENTITY")],
        "customer": [InputColumn("lake.crm.customers", "name", "IDENTITY")],
        "country": [InputColumn("lake.crm.customers", "country", "TRANSFORMATION")],
    }
    assert set(lin.indirect) == {InputColumn("lake.sales.orders", "customer_id", "JOIN"),
                                 InputColumn("lake.crm.customers", "id", "JOIN"),
                                 InputColumn("lake.sales.orders", "status", "FILTER")}


def test_aggregates_are_marked_and_grouping_is_indirect() -> None:
    lin = _lin("SELECT customer_id, SUM(amount) AS total, SUM(amount) / COUNT(order_id) AS avg_amount, "
               "COUNT(*) AS n FROM orders GROUP BY customer_id HAVING SUM(amount) > 10")
    assert lin.columns["customer_id"] == [InputColumn("lake.sales.orders", "customer_id", "IDENTITY")]
    assert lin.columns["total"] == [InputColumn("lake.sales.orders", "amount", "AGGREGATION")]
    assert lin.columns["avg_amount"] == [InputColumn("lake.sales.orders", "amount", "AGGREGATION"),
                                         InputColumn("lake.sales.orders", "order_id", "AGGREGATION")]
    assert lin.columns["n"] == []
    assert set(lin.indirect) == {InputColumn("lake.sales.orders", "customer_id", "GROUP_BY"),
                                 InputColumn("lake.sales.orders", "amount", "FILTER")}


def test_select_star_over_a_declared_view_expands_to_its_declared_columns() -> None:
    lin = _lin("SELECT * FROM sales.order_facts", {"lake.sales.order_facts": ["order_id", "amount"]})
    assert lin.tables == ["lake.sales.order_facts"]
    assert lin.columns == {"order_id": [InputColumn("lake.sales.order_facts", "order_id", "IDENTITY")],
                           "amount": [InputColumn("lake.sales.order_facts", "amount", "IDENTITY")]}
    qualified = _lin("SELECT f.*, 1 AS one FROM order_facts f", {"lake.sales.order_facts": ["order_id"]})
    assert list(qualified.columns) == ["order_id", "one"]


def test_ctes_are_followed_to_the_tables_they_read() -> None:
    lin = _lin("WITH t AS (SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id), "
               "u AS (SELECT customer_id, total * 100 AS cents FROM t WHERE total > 1000) "
               "SELECT customer_id AS id, cents FROM u")
    assert lin.tables == ["lake.sales.orders"]  # the CTEs are not datasets
    assert lin.columns == {"id": [InputColumn("lake.sales.orders", "customer_id", "IDENTITY")],
                           "cents": [InputColumn("lake.sales.orders", "amount", "AGGREGATION")]}
    assert InputColumn("lake.sales.orders", "amount", "FILTER") in lin.indirect


def test_unions_subqueries_and_unparsable_sql() -> None:
    lin = _lin("SELECT a FROM x UNION ALL SELECT b FROM (SELECT b FROM y) s WHERE b IN (SELECT k FROM z)")
    assert lin.tables == ["lake.sales.x", "lake.sales.y", "lake.sales.z"]
    assert lin.columns == {"a": [InputColumn("lake.sales.x", "a", "IDENTITY"),
                                 InputColumn("lake.sales.y", "b", "IDENTITY")]}
    bad = _lin("SELECT FROM WHERE (")
    assert bad.error and bad.tables == [] and bad.columns == {}


def test_diff_names_what_changes() -> None:
    before = _lin("SELECT id, amount FROM orders")
    after = _lin("SELECT o.id, r.amount FROM orders o JOIN refunds r ON o.id = r.order_id")
    assert diff(before, after) == ["+ reads lake.sales.refunds", "~ amount <- lake.sales.refunds.amount"]
    assert diff(None, before) == ["+ reads lake.sales.orders", "+ id <- lake.sales.orders.id",
                                  "+ amount <- lake.sales.orders.amount"]
