"""A Spark that cannot start says Spark's own reason, in one line. A `spark.driver_memory` below
Spark's minimum (the schema takes any size) was reported as "Spark could not start: at
java.base/java.lang.Thread.run(Thread.java:840)": the last frame of the JVM's stack trace."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.child.process import last_message


@pytest.mark.usefixtures("spark_verifier")
def test_a_driver_memory_spark_refuses_is_named_in_the_error(sample_repo: Path, tmp_path: Path) -> None:
    config = sample_repo / "viewsync.yaml"
    config.write_text(config.read_text() + "spark:\n  driver_memory: 300m\n")
    done = subprocess.run([sys.executable, "-m", "reconciler.cli", "validate", "--spark"], cwd=sample_repo,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")})
    shown = done.stdout + done.stderr
    assert done.returncode == 1, shown
    [line] = [line for line in shown.splitlines() if "Spark could not start" in line]
    assert "INVALID_DRIVER_MEMORY" in line and "Insufficient driver memory" in line, line
    assert "must be at least" in line and "spark.driver.memory" in line, line
    assert "\tat " not in shown and "Traceback" not in shown


def test_the_last_message_of_a_child_is_not_a_java_stack_frame() -> None:
    trace = ("Py4JJavaError: An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext.\n"
             ": java.lang.IllegalStateException: the reason\n"
             "\tat org.apache.spark.SparkContext.<init>(SparkContext.scala:600)\n"
             "Caused by: java.io.IOException: the cause\n"
             "\tat java.base/java.lang.Thread.run(Thread.java:840)\n"
             "\t... 12 more\n\n")
    assert last_message(trace) == "Caused by: java.io.IOException: the cause"
    assert last_message("one\ntwo  \n") == "two"
    assert last_message(" \n\tat a.B.c(B.java:1)\n") == "?"
