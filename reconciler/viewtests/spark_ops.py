"""View tests' operation in the scratch Spark child (reconciler/spark/serve.py, beside the
verifier's, in its session): run the tests' queries, which read only inline tables.

    {"op": "tests", "queries": [{"id", "sql"}]} -> {"answers": [{"id", "schema", "rows"} | {"id", "error"}]}
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

# Tests run tiny inline tables: Spark's machinery for big data costs more than the data. Each
# broadcast join is a job of its own, adaptive execution re-plans every stage, and generated
# code is compiled for every query (on a JVM that only uses its first compiler). Set for the
# tests' queries only, and restored; the literals' escaping relies on the last one.
_TEST_CONF = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.parser.escapedStringLiterals": "false",
    "spark.sql.shuffle.partitions": "1",  # one partition per union branch: row positions are the order
    # Every input is one partition, so no join or aggregate needs an exchange: a test's query is
    # one stage. Two things would still shuffle a single partition: an inner join's output is a
    # collection of its sides' partitionings, which the next join does not take as single (one
    # candidate keeps it plain), and joins' size estimates multiply past the single-partition cap.
    "spark.sql.optimizer.expressionProjectionCandidateLimit": "1",
    "spark.sql.maxSinglePartitionBytes": str(2**63 - 1),
    # A CHAR(n) column stays CHAR(n) in the test's result (not a plain string), so the expected
    # values are read as CHAR(n), padded as Spark pads what it reads ("a" is "a  " in CHAR(3)).
    "spark.sql.preserveCharVarcharTypeInfo": "true",
    # Each query's start event carries its plan as text for the UI (off here): the simple text,
    # not the formatted one, which cost 3% of the tests' JVM time in a profile.
    "spark.sql.ui.explainMode": "simple",
    # Spark cleans each closure it ships (reads its classes' bytecode) and serializes it to check it:
    # a fifth of the tests' JVM time in a profile, mostly for the hash aggregate's and the sort-merge
    # join's. The sort-based aggregates and the partition-evaluator path ship none that need it.
    # The results are the same; rows come out of an aggregate in another order, which only
    # `ordered: true` tests look at, and they have an ORDER BY.
    "spark.sql.execution.useHashAggregateExec": "false",
    "spark.sql.execution.usePartitionEvaluator": "true",
}


# Every RDD and SQL execution records where it was made: Spark walks the JVM thread's stack for
# it (6% of the tests' JVM time in a profile) unless the thread names its call site. Only the
# Spark UI and event log show it. PySpark's collect sets the short form for its own span and clears
# it after, so each query names it again.
CALL_SITE = {"callSite.short": "viewsync test", "callSite.long": "viewsync view tests"}

TEST_THREADS = 3  # test queries in flight at once (the driver-side work of some overlaps the job of another)


def handlers(child: Any) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    return {"tests": TestQueries(child).tests}


class TestQueries:
    def __init__(self, child: Any) -> None:
        self.spark = child.spark
        self.errors: tuple[type[BaseException], ...] = child.errors
        self._error = child.error

    def tests(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run view tests' queries (reconciler.viewtests): each {"id", "sql"} answers
        {"id", "schema", "rows"} or {"id", "error"}. The queries read only inline tables."""
        from reconciler.viewtests.values import to_wire

        answers: list[dict[str, Any]] = []
        saved = {k: self.spark.conf.get(k, None) for k in _TEST_CONF}
        for k, v in _TEST_CONF.items():
            self.spark.conf.set(k, v)
        try:
            self._run_tests(request.get("queries", []), answers, to_wire)
        finally:
            for k, old in saved.items():
                if old is None:
                    self.spark.conf.unset(k)
                else:
                    self.spark.conf.set(k, old)
        return {"answers": answers}

    def _run_tests(self, queries: list[dict[str, Any]], answers: list[dict[str, Any]], to_wire: Any) -> None:
        """TEST_THREADS queries in flight: some are parsed and analysed on the driver while
        another's job runs (each thread its own JVM thread); answers keep the queries' order."""
        from concurrent.futures import ThreadPoolExecutor

        def one(item: dict[str, Any]) -> dict[str, Any]:
            self._name_call_site()
            try:
                df = self.spark.sql(item["sql"])
                rows = _collect(df)
                return {"id": item["id"], "schema": [f.jsonValue() for f in df.schema.fields],
                        "rows": [[to_wire(v) for v in r] for r in rows]}
            except self.errors as exc:
                return {"id": item["id"], "error": self._error(exc)}
            except Exception as exc:  # noqa: BLE001 - a Py4J or conversion failure is that query's
                return {"id": item["id"], "error": {"class": type(exc).__name__,
                                                    "message": str(exc).splitlines()[0][:2000]}}

        if len(queries) < 2:
            with self._call_site_kept():
                answers.extend(one(q) for q in queries)
            return
        # Each pool thread is a JVM thread of its own (PySpark's pinned threads), ending with the pool.
        with ThreadPoolExecutor(max_workers=TEST_THREADS, thread_name_prefix="viewsync-tests") as pool:
            answers.extend(pool.map(one, queries))

    def _name_call_site(self) -> None:
        for key, value in CALL_SITE.items():
            self.spark.sparkContext.setLocalProperty(key, value)

    @contextlib.contextmanager
    def _call_site_kept(self) -> Iterator[None]:
        """This thread's call site as it was before the block (each query names its own, and this
        thread serves other operations too)."""
        sc = self.spark.sparkContext
        saved = {key: sc.getLocalProperty(key) for key in CALL_SITE}
        try:
            yield
        finally:
            for key, old in saved.items():
                sc.setLocalProperty(key, old)


def _collect(df: Any) -> list[Any]:
    """The rows, with top-level timestamps formatted by Spark in the session's time zone: PySpark's
    own conversion goes through the Python process's local time and fails on year 1."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampNTZType, TimestampType

    stamps = [isinstance(f.dataType, (TimestampType, TimestampNTZType)) for f in df.schema.fields]
    if not any(stamps):
        return list(df.collect())
    cols = [F.date_format(df[i], "yyyy-MM-dd HH:mm:ss.SSSSSS") if stamp else df[i] for i, stamp in enumerate(stamps)]
    return list(df.select(*cols).collect())
