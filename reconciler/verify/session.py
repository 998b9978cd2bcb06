"""The scratch Spark child: one per process and settings, started ahead (`prestart`) or on first
use (`worker`), reused by every verification and view-test run of the process (the tests run
many plans in one process), stopped at exit.

It serves the verifier's operations (verify/spark_ops.py) and the view tests' (viewtests/
spark_ops.py) in one session on a throwaway in-memory catalog. Spark's start-up dominates a small
verification: the class-data-sharing archive (spark/conf.py) halves it.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import sys

from reconciler.child.process import command
from reconciler.source.spark_settings import SparkSettings
from reconciler.spark import conf as spark_conf
from reconciler.spark.client import Launch, Names, Pool, SparkChild, work_dir
from reconciler.spark.conf import Archive, install_pyspark
from reconciler.spark.errors import SparkUnavailable

__all__ = ["PROCESS", "SparkUnavailable", "prestart", "start", "worker"]

HANDLERS = ("reconciler.verify.spark_ops", "reconciler.viewtests.spark_ops")
NAMES = Names(child="the Spark verifier", failed="Spark verification failed", start_failed="Spark could not start")


def start(settings: SparkSettings) -> SparkChild:
    """A new scratch child. Raises SparkUnavailable (no PySpark, no Java, no start)."""
    pyspark = spark_conf.pyspark_dir()
    if pyspark is None:
        raise SparkUnavailable(f"Spark verification needs PySpark: {install_pyspark()}")
    java = spark_conf.java()
    work = work_dir("viewsync-spark-")
    archive = Archive.for_child(java, pyspark) if settings.class_data_sharing else None
    gc = spark_conf.collector(settings.jvm_options, spark_conf.TESTS_COLLECTOR)
    jvm = ["-XX:TieredStopAtLevel=1", *gc, f"-Djava.io.tmpdir={work}",
           *(archive.jvm_flags() if archive is not None else []), *settings.jvm_options]
    # Tests type timestamps with a local time zone in UTC (viewtests.values); a conf may say otherwise.
    # Tests' jobs are tiny: waiting for a task's preferred locality only adds delay (one executor).
    # Every statement's text is parsed twice unless parameter markers are left to the one parse (the
    # legacy rule): the first parse substitutes markers, which no view's SQL and no test query has
    # (a tenth of the tests' JVM time in a profile). `?` and `:name` fail alike either way.
    conf = {"spark.sql.session.timeZone": "UTC", "spark.locality.wait": "0",
            "spark.sql.legacy.parameterSubstitution.constantsOnly": "true", **settings.conf}
    conf.update({
        "spark.master": settings.master,
        "spark.app.name": "viewsync-verify",
        "spark.sql.catalogImplementation": "in-memory",
        **spark_conf.local_defaults(work),
        "spark.sql.shuffle.partitions": "1",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.memory": settings.driver_memory,
        "spark.driver.extraJavaOptions": " ".join(jvm),
    })
    # TZ=UTC: PySpark hands timestamps back in the Python process's local time zone; view tests
    # type timestamp_ltz values in UTC, so a laptop in Los Angeles compares what CI compares.
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1", "TZ": "UTC"}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return SparkChild(Launch(command(sys.executable, "reconciler.spark.serve", HANDLERS), conf, env, work, NAMES,
                             archive))


def _key(settings: SparkSettings) -> str:
    return json.dumps({**dataclasses.asdict(settings), "verify": None}, sort_keys=True)


PROCESS = Pool()  # the command line's: one per process, its JVMs stopped at exit
atexit.register(PROCESS.close)


def prestart(settings: SparkSettings) -> None:
    """Start the child in the background: Spark's start-up overlaps reading the catalogs."""
    PROCESS.prestart(_key(settings), lambda: start(settings))


def worker(settings: SparkSettings) -> SparkChild:
    """The child for these settings, started now unless started ahead; raises what its start
    raised (no Java, no PySpark...)."""
    return PROCESS.get(_key(settings), lambda: start(settings))
