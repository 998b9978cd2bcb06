"""The tests' queries name their call site (spark_ops.CALL_SITE): otherwise Spark walks the JVM
thread's stack for every RDD and SQL execution it makes (6% of the JVM's time in the 1,000-test
benchmark's profile). Checked where Spark records it: each SQL execution's details (the long
form, ours) and description (ours, or PySpark's own `collect at <file>` for its collect)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CHILD = r"""
import json
from types import SimpleNamespace
from pyspark.sql import SparkSession
from reconciler.viewtests.spark_ops import TestQueries
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
child = SimpleNamespace(spark=spark, errors=(Exception,), error=lambda e: {"class": "x", "message": str(e)})
queries = TestQueries(child)
many = queries.tests({"queries": [{"id": f"q{i}", "sql": f"SELECT {i} AS x"} for i in range(4)]})
one = queries.tests({"queries": [{"id": "one", "sql": "SELECT 9 AS x"}]})
jsc = spark.sparkContext._jsc.sc()
jsc.listenerBus().waitUntilEmpty()
executions = spark._jsparkSession.sharedState().statusStore().executionsList()
print(json.dumps({"answers": [a["rows"] for a in many["answers"] + one["answers"]],
                  "descriptions": [executions.apply(i).description() for i in range(executions.size())],
                  "details": [executions.apply(i).details() for i in range(executions.size())],
                  "left_on_main_thread": spark.sparkContext.getLocalProperty("callSite.short")}))
"""


def test_test_queries_name_their_call_site_and_leave_the_thread_as_it_was(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["answers"] == [[[0]], [[1]], [[2]], [[3]], [[9]]]
    assert len(got["descriptions"]) == 5
    assert set(got["details"]) == {"viewsync view tests"}, got["details"]
    assert all(d == "viewsync test" or (d.startswith("collect at ") and "spark_ops.py" in d)
               for d in got["descriptions"]), got["descriptions"]
    assert got["left_on_main_thread"] is None  # the handler's thread serves the verifier's operations too
