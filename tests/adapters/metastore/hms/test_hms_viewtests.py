"""View tests against a real Hive Metastore catalog: the input table's columns come from the
metastore (no sources/ file), the tests run, and nothing in the metastore changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adapters.metastore.hms.test_hms_verify import make_repo, metastore_state, orders, view
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow


def test_tests_read_columns_from_the_metastore_and_write_nothing(tmp_path: Path, metastore: Any, spark: Any,
                                                                 database: str, hms_client: Any) -> None:
    orders(spark, database)
    totals = view("totals", "SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id")
    totals["tests"] = [{"name": "sums_per_customer",
                        "given": {"orders": {"rows": [{"order_id": 1, "customer_id": 7, "amount": 1.5},
                                                      {"order_id": 2, "customer_id": 7, "amount": 2.25}]}},
                        "expect": {"rows": [{"customer_id": 7, "total": 3.75}]}},
                       {"name": "typed_by_the_metastore",
                        "given": {"orders": {"rows": [{"order_id": 1, "customer_id": 7, "amount": 1.555}]}},
                        "expect": {"count": 1}}]
    repo = make_repo(tmp_path, metastore.uri, database, [totals])
    before = metastore_state(hms_client)
    res = run_cli(repo, "test")
    assert res.code == 1, res.text
    # decimal(18,2) is the metastore's type of orders.amount: 1.555 does not fit it
    assert "more than 2 decimal places" in res.text
    del totals["tests"][1]
    repo = make_repo(tmp_path, metastore.uri, database, [totals])
    res = run_cli(repo, "test")
    assert res.code == 0, res.text
    plan = run_cli(repo, "plan", "--spark")
    assert "1 passed" in plan.out, plan.text
    assert metastore_state(hms_client) == before
