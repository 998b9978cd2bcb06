"""The Spark verifier needs PySpark and Java; without them its tests skip (fail in CI)."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from tests.servers import backend_unavailable


@pytest.fixture(scope="session")
def spark_verifier() -> None:
    if importlib.util.find_spec("pyspark") is None:
        backend_unavailable("the Spark verifier needs pyspark (pip install 'viewsync[spark]')")
    if shutil.which("java") is None:
        backend_unavailable("the Spark verifier needs Java 17 (`java` not on PATH)")
