"""A command does not wait for its Spark child to stop (that was ~0.4 s at the end of every
`plan --spark` and `test`): the child stops Spark and removes its work directory itself, and
nothing of it is left behind."""

from __future__ import annotations

import time

import pytest

from reconciler.source.spark_settings import SparkSettings
from reconciler.spark.conf import alive
from reconciler.verify import session

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("spark_verifier")]


def test_a_stopped_spark_child_leaves_no_jvm_and_no_work_directory() -> None:
    child = session.start(SparkSettings(class_data_sharing=False))
    jvm, work = child.jvm_pid, child.dir
    assert jvm is not None and work.exists()
    assert child.call({"op": "tests", "queries": [{"id": "q", "sql": "SELECT 1 AS x"}]})["answers"][0]["rows"] == [[1]]
    child.close()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (alive(jvm) or work.exists()):
        time.sleep(0.2)
    assert not alive(jvm), "the JVM outlived its child's stop"
    assert not work.exists(), "the work directory was left behind"
