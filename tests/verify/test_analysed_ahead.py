"""The Spark child analyses a job's views on several threads (spark_ops.Ahead): the answers must
be the ones the views taken one by one give, on a job with every case the order decides."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reconciler.source.spark_settings import SparkSettings
from reconciler.verify.session import worker

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]

ORDERS = {"type": "struct", "fields": [
    {"name": n, "type": t, "nullable": True, "metadata": {}}
    for n, t in [("id", "long"), ("amount", "decimal(18,2)"), ("region", "string")]]}


def view(name: str, sql: str, *, db: str = "m", use: str | None = None, deps: tuple[str, ...] = (),
         columns: list[str] | None = None) -> dict[str, Any]:
    return {"key": f"{db}.{name}", "db": db, "name": name, "use": use or db, "sql": sql, "columns": columns,
            "deps": list(deps)}


def job() -> dict[str, Any]:
    plain = [view(f"plain_{i}", f"SELECT region, SUM(amount) AS total_{i} FROM src.orders GROUP BY region")
             for i in range(40)]  # enough to keep the other threads busy around the cases below
    cases = [
        view("base", "SELECT id, region FROM src.orders"),
        view("reads_base", "SELECT region, COUNT(*) AS n FROM base GROUP BY region", deps=("m.base",)),
        view("broken", "SELECT nope FROM src.orders"),
        view("reads_broken", "SELECT * FROM broken", deps=("m.broken",)),
        # reads plain_3 without saying so: found once the views checked without CREATE VIEW are created
        view("unseen_earlier", "SELECT * FROM plain_3"),
        # reads a view later in the job without saying so: not there yet when its turn comes
        view("unseen_later", "SELECT * FROM zz_last"),
        view("orders", "SELECT 1 AS id", db="src"),  # a table of that name is there already
        view("Dup", "SELECT 1 AS a"), view("dup", "SELECT 2 AS b"),  # one name to Spark
        view("twice", "SELECT id, id AS ID FROM src.orders"),
        view("unaliased", "SELECT id + 1 FROM src.orders"),
        view("elsewhere", "SELECT * FROM orders", db="n", use="src"),  # created in its own database's terms
        view("reads_elsewhere", "SELECT * FROM n.elsewhere", deps=("n.elsewhere",)),
        view("renamed", "SELECT id, region FROM src.orders", columns=["order_id", "area"]),
        view("zz_last", "SELECT 3 AS c"),
    ]
    stubs = [{"db": "src", "name": "orders", "schema": ORDERS},
             {"db": "src", "name": "bad", "schema": {"type": "struct", "fields": [
                 {"name": "x", "type": "no_such_type", "nullable": True, "metadata": {}}]}}]
    return {"op": "check", "stubs": stubs, "views": plain[:20] + cases + plain[20:]}


def test_views_analysed_on_several_threads_answer_as_one_by_one() -> None:
    spark = worker(SparkSettings())
    alone = spark.call({**job(), "threads": 1})
    together = [spark.call({**job(), "threads": n}) for n in (2, 3, 2)]  # sessions reused across jobs
    for answer in together:
        assert answer == alone
    by_key = {r["key"]: r for r in alone["results"]}
    assert [e["name"] for e in alone["stub_errors"]] == ["bad"]
    assert by_key["m.reads_base"]["status"] == "ok" and by_key["m.plain_39"]["status"] == "ok"
    assert by_key["m.broken"]["error"]["class"] == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    assert by_key["m.reads_broken"] == {"key": "m.reads_broken", "status": "not_checked", "blocked_by": "m.broken"}
    assert by_key["m.unseen_earlier"]["status"] == "ok"
    assert by_key["m.unseen_later"]["error"]["class"] == "TABLE_OR_VIEW_NOT_FOUND"
    assert by_key["src.orders"]["status"] == "error" and by_key["m.dup"]["status"] == "error"
    assert by_key["m.Dup"]["status"] == "ok"
    assert by_key["m.twice"]["error"]["class"] == "COLUMN_ALREADY_EXISTS"
    assert by_key["m.unaliased"]["error"]["class"] == "CREATE_PERMANENT_VIEW_WITHOUT_ALIAS"
    assert by_key["n.elsewhere"]["status"] == "ok" and by_key["m.reads_elsewhere"]["status"] == "ok"
    assert [f["name"] for f in by_key["m.renamed"]["schema"]] == ["id", "region"]


CHILD = r"""
import json, sys
from pyspark.sql import SparkSession
from reconciler.spark.serve import Child
from reconciler.verify import spark_ops
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.catalogImplementation", "in-memory").getOrCreate())
scratch = spark_ops.Scratch(Child(spark, print))
job = json.loads(sys.stdin.read())
alone = scratch.job({**job, "threads": 1})
def no_session(self):
    raise RuntimeError("no helper session here")
spark_ops._Lease.__enter__ = no_session
print(json.dumps({"same": scratch.job({**job, "threads": 2}) == alone, "results": len(alone["results"])}))
"""


def test_without_helper_sessions_every_view_and_table_is_made_on_the_job_thread(tmp_path: Path) -> None:
    """Where the pool cannot get a session, nothing is lost: each stub and each view is done again
    on the job's thread, with the one-by-one answers."""
    out = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(job()), capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"same": True, "results": len(job()["views"])}
