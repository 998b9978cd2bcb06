"""The kind of each update, from the SQL's syntax trees: a table of real SQL edits and the
category (and edit summary) each must get (issue 42, "Categories")."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.plan.change_kind import ChangeKind, classify

ORDERS = "SELECT order_id, customer_id, amount, ordered_at\nFROM sales.orders\nWHERE status = 'completed'"
REVENUE = ("SELECT CAST(ordered_at AS DATE) AS order_date, SUM(amount) AS revenue, COUNT(*) AS orders\n"
           "FROM completed_orders\nGROUP BY CAST(ordered_at AS DATE)")
SUMMARY = ("WITH paid AS (SELECT customer_id, amount FROM sales.orders WHERE status = 'completed')\n"
           "SELECT customer_id, SUM(amount) AS total FROM paid GROUP BY customer_id")


def spec(sql: str, dialect: str = "spark", columns: list[tuple[str, str]] | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"representations": [{"dialect": dialect, "sql": sql}],
            "columns": [{"name": n, "type": t} for n, t in columns or []], **extra}


# (case, before SQL, after SQL, category, a phrase the edit summary must hold)
EDITS = [
    ("formatting only", ORDERS, "select order_id,\n       customer_id, amount, ordered_at\n  from sales.orders"
     "\n where status = 'completed'", "cosmetic", "formatting only"),
    ("a comment added", ORDERS, ORDERS + "  -- only finished orders", "cosmetic", "comments only"),
    ("a block comment", ORDERS, "/* completed orders, see JIRA-12 */\n" + ORDERS, "cosmetic", "comments only"),
    ("identifier quoting", ORDERS, "SELECT `order_id`, customer_id, `amount`, ordered_at FROM `sales`.`orders` "
     "WHERE status = 'completed'", "cosmetic", "identifier spelling or quoting"),
    ("identifier case", ORDERS, "SELECT Order_Id, CUSTOMER_ID, amount, ordered_at FROM Sales.Orders "
     "WHERE Status = 'completed'", "cosmetic", "identifier spelling or quoting"),
    ("a column added at the end", ORDERS, ORDERS.replace("ordered_at\n", "ordered_at, status\n"), "additive",
     "columns added at the end: status"),
    ("two columns added at the end", REVENUE, REVENUE.replace("AS orders", "AS orders, MIN(amount) AS smallest, "
     "MAX(amount) AS largest"), "additive", "columns added at the end: smallest, largest"),
    ("a column removed", ORDERS, ORDERS.replace("amount, ", ""), "breaking", "columns removed or renamed: amount"),
    ("a column renamed", ORDERS, ORDERS.replace("amount,", "amount AS total,"), "breaking",
     "columns renamed: amount → total"),
    ("a column retyped by CAST", REVENUE, REVENUE.replace("SUM(amount)", "CAST(SUM(amount) AS DOUBLE)"),
     "breaking", "column retyped: revenue"),
    ("a CAST's type changed", REVENUE, REVENUE.replace("CAST(ordered_at AS DATE) AS order_date",
     "CAST(ordered_at AS STRING) AS order_date"), "breaking", "column retyped: order_date: DATE → STRING"),
    ("columns reordered", ORDERS, ORDERS.replace("order_id, customer_id", "customer_id, order_id"), "breaking",
     "columns reordered"),
    ("a column added in the middle", ORDERS, ORDERS.replace("customer_id,", "customer_id, status,"), "breaking",
     "columns added before others: status"),
    ("a filter changed", ORDERS, ORDERS.replace("status = 'completed'", "status <> 'cancelled'"), "logic",
     "WHERE: status = 'completed' → status <> 'cancelled'"),
    ("a filter added", REVENUE, REVENUE.replace("FROM completed_orders", "FROM completed_orders WHERE amount > 0"),
     "logic", "WHERE added: amount > 0"),
    ("a filter removed", ORDERS, ORDERS.replace("\nWHERE status = 'completed'", ""), "logic",
     "WHERE removed: status = 'completed'"),
    ("a join added", ORDERS, "SELECT o.order_id, o.customer_id, o.amount, o.ordered_at FROM sales.orders AS o "
     "JOIN crm.customers AS c ON o.customer_id = c.customer_id WHERE o.status = 'completed'", "logic",
     "JOIN added: crm.customers"),
    ("a join's kind changed", "SELECT o.id FROM a AS o JOIN b ON o.id = b.id",
     "SELECT o.id FROM a AS o LEFT JOIN b ON o.id = b.id", "logic", "JOIN changed"),
    ("an aggregate changed", REVENUE, REVENUE.replace("SUM(amount)", "AVG(amount)"), "logic",
     "aggregate changed: revenue: SUM(amount) → AVG(amount)"),
    ("an aggregate's argument changed", SUMMARY, SUMMARY.replace("SUM(amount)", "SUM(amount * 0.9)"), "logic",
     "aggregate changed: total"),
    ("a CTE's filter changed", SUMMARY, SUMMARY.replace("status = 'completed'", "status IN ('completed', 'shipped')"),
     "logic", "CTE paid: WHERE: status = 'completed' → status IN ('completed', 'shipped')"),
    ("a CTE added", "SELECT id FROM t", "WITH x AS (SELECT id FROM t) SELECT id FROM x", "logic", "CTE added: x"),
    ("the table read changed", ORDERS, ORDERS.replace("sales.orders", "sales.orders_v2"), "logic",
     "FROM: sales.orders → sales.orders_v2"),
    ("grouping changed", "SELECT a, COUNT(*) AS n FROM t GROUP BY a",
     "SELECT a, COUNT(*) AS n FROM t GROUP BY a, b", "logic", "GROUP BY"),
    ("HAVING added", "SELECT a, COUNT(*) AS n FROM t GROUP BY a",
     "SELECT a, COUNT(*) AS n FROM t GROUP BY a HAVING COUNT(*) > 1", "logic", "HAVING added: COUNT(*) > 1"),
    ("DISTINCT added", "SELECT a FROM t", "SELECT DISTINCT a FROM t", "logic", "DISTINCT added"),
    ("LIMIT changed", "SELECT a FROM t ORDER BY a LIMIT 10", "SELECT a FROM t ORDER BY a LIMIT 100", "logic",
     "LIMIT: LIMIT 10 → LIMIT 100"),
    ("an expression changed", ORDERS, ORDERS.replace("amount,", "amount * 100 AS amount,"), "logic",
     "column amount: amount → amount * 100"),
    ("UNION branch filter changed", "SELECT id FROM a UNION ALL SELECT id FROM b WHERE x = 1",
     "SELECT id FROM a UNION ALL SELECT id FROM b WHERE x = 2", "logic", "WHERE: x = 1 → x = 2"),
    ("UNION ALL became UNION", "SELECT id FROM a UNION ALL SELECT id FROM b",
     "SELECT id FROM a UNION SELECT id FROM b", "logic", "set operation"),
    ("SELECT * reads other columns", "SELECT * FROM a", "SELECT *, 1 AS one FROM a", "unknown",
     "the output columns cannot be told from the SQL"),
    ("unparseable SQL", ORDERS, "SELECT order_id FROM (((", "unknown", "sqlglot cannot read it"),
    ("a CAST removed", REVENUE, REVENUE.replace("CAST(ordered_at AS DATE) AS order_date",
     "ordered_at AS order_date"), "unknown", "CAST to DATE removed"),
]


@pytest.mark.parametrize(("before", "after", "category", "phrase"), [e[1:] for e in EDITS],
                         ids=[e[0] for e in EDITS])
def test_each_real_edit_gets_its_category_and_says_where(before: str, after: str, category: str,
                                                         phrase: str) -> None:
    kind = classify(spec(before), spec(after))
    assert kind.category == category, kind
    assert any(phrase in e for e in kind.edits), kind.edits


def test_the_table_covers_every_kind_the_issue_names() -> None:
    assert len(EDITS) >= 20
    assert {e[3] for e in EDITS} == {"cosmetic", "additive", "breaking", "logic", "unknown"}


def test_declared_columns_decide_the_output_as_impact_analysis_does() -> None:
    cols = [("order_id", "bigint"), ("amount", "decimal(18,2)")]
    sql = "SELECT order_id, amount FROM sales.orders"
    retyped = classify(spec(sql, columns=cols), spec(sql.replace("amount", "CAST(amount AS DOUBLE) AS amount"),
                                                     columns=[("order_id", "bigint"), ("amount", "double")]))
    assert retyped.category == "breaking"
    assert "columns retyped: amount decimal(18,2) → double" in retyped.edits
    added = classify(spec(sql, columns=cols), spec(sql.replace("amount", "amount, status"),
                                                   columns=[*cols, ("status", "string")]))
    assert (added.category, added.edits) == ("additive", ("columns added at the end: status",))


def test_a_comment_or_owner_change_is_cosmetic_and_a_logic_change_outranks_an_added_column() -> None:
    meta = classify(spec(ORDERS, comment="old", owner="a"), spec(ORDERS, comment="new", owner="a"))
    assert (meta.category, meta.edits, meta.changes_meaning) == ("cosmetic", ("metadata: comment",), False)
    both = classify(spec(ORDERS), spec(ORDERS.replace("ordered_at\n", "ordered_at, status\n")
                                       .replace("= 'completed'", "<> 'cancelled'")))
    assert both.category == "logic"
    assert "columns added at the end: status" in both.edits


def test_dialects_that_differ_are_named_and_an_added_representation_is_a_logic_change() -> None:
    before = {"representations": [{"dialect": "spark", "sql": ORDERS}, {"dialect": "trino", "sql": ORDERS}]}
    after = {"representations": [{"dialect": "spark", "sql": ORDERS.replace("'completed'", "'done'")},
                                 {"dialect": "trino", "sql": ORDERS + " -- same"}]}
    kind = classify(before, after)
    assert kind.category == "logic"
    assert "[spark] WHERE: status = 'completed' → status = 'done'" in kind.edits
    assert "[trino] comments only" in kind.edits
    grown = classify(spec(ORDERS), {"representations": [*spec(ORDERS)["representations"],
                                                         {"dialect": "trino", "sql": ORDERS}]})
    assert (grown.category, grown.edits) == ("logic", ("representation added: trino",))


def test_round_trips_through_json() -> None:
    kind = classify(spec(ORDERS), spec(ORDERS.replace("amount, ", "")))
    assert ChangeKind.from_json(kind.to_json()) == kind
    with pytest.raises(ValueError, match="unknown change category"):
        ChangeKind.from_json({"category": "harmless", "edits": []})
