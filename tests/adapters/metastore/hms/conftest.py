"""A real Hive Metastore (from the pyspark wheel's jars) and one PySpark session pointed at it.

Both are session-scoped: the metastore starts in ~4 s, Spark in ~7 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reconciler.adapters.metastore.hms import HiveMetastoreAdapter
from tests.helpers.servers import backend_unavailable, free_port, port_open, stop, wait_ready


@dataclass
class Metastore:
    port: int
    dir: Path

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"


def _pyspark_jars() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    return jars if any(jars.glob("hive-metastore-*.jar")) else None


@pytest.fixture(scope="session")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Metastore]:
    java = shutil.which("java")
    jars = _pyspark_jars()
    if java is None:
        backend_unavailable("Hive Metastore needs Java 17 (`java` not on PATH)")
    if jars is None:
        backend_unavailable("Hive Metastore needs the pyspark wheel (its jars hold Hive 2.3 + Derby)")
    d = tmp_path_factory.mktemp("hms")
    port = free_port()
    cmd = [
        java, "-Xmx384m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
        "-Dhive.async.log.enabled=false", f"-Dhive.log.dir={d}",
        f"-Djavax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={d}/metastore_db;create=true",
        "-Ddatanucleus.schema.autoCreateAll=true", "-Dhive.metastore.schema.verification=false",
        "-Ddatanucleus.connectionPoolingType=HikariCP",
        f"-Dhive.metastore.warehouse.dir=file://{d}/warehouse", f"-Dderby.stream.error.file={d}/derby.log",
        "-cp", f"{jars}/*", "org.apache.hadoop.hive.metastore.HiveMetaStore", "-p", str(port),
    ]
    log = open(d / "metastore.out", "wb")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=d)
    try:
        # The port opens only once the schema exists: port open = ready.
        why = wait_ready(proc, port_open(port), what="Hive Metastore", timeout=90, log=d / "metastore.out",
                         interval=0.2)
        if why:
            backend_unavailable(why)
        yield Metastore(port, d)
    finally:
        stop(proc, log, timeout=20)


@pytest.fixture(scope="session")
def spark(metastore: Metastore) -> Iterator[Any]:
    # pyspark warns about pandas 3 on import; the tests do not use pandas.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        backend_unavailable("pyspark is not installed")
    d = metastore.dir
    (d / "tmp").mkdir(exist_ok=True)
    os.environ.setdefault("PYSPARK_PYTHON", shutil.which("python") or "python")
    try:
        session = (
            SparkSession.builder.master("local[1]").appName("viewsync-hms-tests")
            .config("spark.sql.catalogImplementation", "hive")
            .config("spark.hadoop.hive.metastore.uris", metastore.uri)
            .config("spark.sql.warehouse.dir", f"file://{d}/warehouse")
            .config("spark.hadoop.hive.downloaded.resources.dir", f"{d}/resources")
            .config("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={d}/tmp")
            .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
            .enableHiveSupport().getOrCreate()
        )
    except Exception as exc:  # noqa: BLE001 - any JVM start failure means "cannot run here"
        backend_unavailable(f"Spark could not start: {exc}")
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def hms_client(metastore: Metastore) -> Iterator[Any]:
    from hmsclient import hmsclient

    client = hmsclient.HMSClient(host="127.0.0.1", port=metastore.port)
    client.open()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def database(hms_client: Any, metastore: Metastore) -> Iterator[str]:
    """A fresh database per test, dropped (with its tables) at the end."""
    from hmsclient.genthrift.hive_metastore.ttypes import Database

    name = "t_" + uuid.uuid4().hex[:10]
    hms_client.create_database(Database(name=name, locationUri=f"file://{metastore.dir}/warehouse/{name}.db",
                                        parameters={}))
    yield name
    hms_client.drop_database(name, True, True)


AdapterFactory = Callable[..., HiveMetastoreAdapter]


@pytest.fixture
def make_adapter(metastore: Metastore) -> Iterator[AdapterFactory]:
    """make_adapter(write_format="spark", **options): adapters closed at the end of the test."""
    made: list[HiveMetastoreAdapter] = []

    def make(write_format: str = "spark", **options: Any) -> HiveMetastoreAdapter:
        a = HiveMetastoreAdapter("hive", {"uri": metastore.uri, "write_format": write_format, **options})
        made.append(a)
        return a

    yield make
    for a in made:
        a.close()


@pytest.fixture
def adapter(make_adapter: AdapterFactory) -> HiveMetastoreAdapter:
    return make_adapter()
