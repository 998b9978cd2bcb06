"""A view test's query is one Spark stage: its inputs are single partitions, so no join or
aggregate shuffles. Each shuffle is a stage of its own (tens of milliseconds on tiny rows),
and chains of inner joins used to add one per join; the 1,000-test benchmark depends on this.
Nor do its joins and aggregates ship closures Spark cleans and serializes for every query
(spark_ops._TEST_CONF: a fifth of the tests' JVM time in a profile)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.services import viewtests
from reconciler.viewtests import runner
from reconciler.workspace import Workspace
from tests.helpers.repos import managed_config, write_repo

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]

SQL = """SELECT g.country, p.category, COUNT(*) AS orders, SUM(o.amount) AS revenue
FROM src.orders o
JOIN src.customers c ON o.customer_id = c.customer_id
JOIN src.products p ON o.product_id = p.product_id
JOIN src.regions g ON c.region = g.region
LEFT JOIN (SELECT order_id, SUM(amount) AS refunded FROM src.refunds GROUP BY order_id) r ON o.order_id = r.order_id
WHERE COALESCE(r.refunded, 0) < o.amount
GROUP BY g.country, p.category"""

TABLES = {
    "orders": [("order_id", "bigint"), ("customer_id", "bigint"), ("product_id", "bigint"),
               ("amount", "decimal(18,2)")],
    "customers": [("customer_id", "bigint"), ("region", "string")],
    "products": [("product_id", "bigint"), ("category", "string")],
    "regions": [("region", "string"), ("country", "string")],
    "refunds": [("order_id", "bigint"), ("amount", "decimal(18,2)")],
}
ROWS = {
    "orders": [{"order_id": 1, "customer_id": 1, "product_id": 1, "amount": 10},
               {"order_id": 2, "customer_id": 2, "product_id": 1, "amount": 5},
               {"order_id": 3, "customer_id": 1, "product_id": 2, "amount": 7}],
    "customers": [{"customer_id": 1, "region": "north"}, {"customer_id": 2, "region": "south"}],
    "products": [{"product_id": 1, "category": "books"}, {"product_id": 2, "category": "games"}],
    "regions": [{"region": "north", "country": "NO"}, {"region": "south", "country": "IT"}],
    "refunds": [{"order_id": 2, "amount": 5}],
}

CHILD = r"""
import json, sys
from pyspark.sql import SparkSession
from reconciler.viewtests.spark_ops import _TEST_CONF
b = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
for k, v in {"spark.sql.session.timeZone": "UTC", **_TEST_CONF}.items():
    b = b.config(k, v)
spark = b.getOrCreate()
df = spark.sql(sys.stdin.read())
plan = df._jdf.queryExecution().executedPlan().toString()
rdds = df._jdf.queryExecution().toRdd().toDebugString()
rows = sorted([r[0], r[1], r[2], str(r[3])] for r in df.collect())
print(json.dumps({"exchanges": plan.count("Exchange"), "hash_aggregates": plan.count("HashAggregate"),
                  "zipped": rdds.count("ZippedPartitionsRDD"), "joins": plan.count("Join"), "rows": rows}))
"""


def test_a_multi_join_test_query_runs_without_a_shuffle(tmp_path: Path) -> None:
    sources = {"catalog": "local", "schema": "src", "tables": [
        {"name": t, "columns": [{"name": n, "type": ty} for n, ty in cols]} for t, cols in TABLES.items()]}
    view = {"name": "country_categories", "representations": [{"dialect": "spark", "sql": SQL}],
            "tests": [{"name": "t", "given": {f"src.{t}": {"rows": rows} for t, rows in ROWS.items()},
                       "expect": {"count": 2}}]}
    repo = write_repo(tmp_path / "repo", managed_config(tmp_path), {
        "sources/local/src.yaml": sources,
        "views/local/marts.yaml": {"catalog": "local", "schema": "marts", "views": [view]}})
    ws = Workspace.open(repo)
    decl = ws.declarations_at(None)
    [prepared] = runner.prepare_all(viewtests.universe(ws, decl, None, offline=True), viewtests.selected(decl))
    assert not prepared.issues, prepared.issues
    out = subprocess.run([sys.executable, "-c", CHILD], input=prepared.sql, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # order 2 is fully refunded; orders 1 and 3 stay, in two (country, category) groups
    assert got["rows"] == [["NO", "books", 1, "10.00"], ["NO", "games", 1, "7.00"]]
    assert got["exchanges"] == 0, "a view test's query shuffled: each shuffle is a stage of its own"
    # HashAggregateExec and a join's plain zipPartitions each hand Spark a closure to clean (read its
    # classes' bytecode) and serialize, per query; the sort-based aggregate and the evaluator path do not
    assert got["joins"] == 4 and got["hash_aggregates"] == 0 and got["zipped"] == 0, got
