"""A Spark standalone cluster on this machine: one master and N workers started with the
scripts the pyspark wheel ships (`pyspark/bin/spark-class`), stopped by their pids."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from tests.helpers.servers import free_port, port_open, stop, wait_ready


class ClusterUnavailable(RuntimeError):
    """The cluster could not start here (the message says why)."""


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@contextlib.contextmanager
def standalone(work: Path, workers: int = 1, cores: int = 1, memory: str = "1g") -> Iterator[str]:
    """Yields the master URL (spark://127.0.0.1:PORT); every process is stopped at exit."""
    home = _spark_home()
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(work),
           "SPARK_WORKER_DIR": str(work / "worker")}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    cls = str(home / "bin" / "spark-class")
    port = free_port()
    procs: list[tuple[subprocess.Popen[Any], IO[bytes]]] = []

    def start(name: str, *args: str) -> tuple[subprocess.Popen[Any], Path]:
        log_path = work / f"{name}.log"
        log = log_path.open("wb")
        proc = subprocess.Popen([cls, *args], stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
        procs.append((proc, log))
        return proc, log_path

    try:
        master, log = start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                            str(port), "--webui-port", str(free_port()))
        why = wait_ready(master, port_open(port), what="Spark master", timeout=90, log=log, interval=0.2)
        if why:
            raise ClusterUnavailable(why)
        url = f"spark://127.0.0.1:{port}"
        for i in range(workers):
            start(f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", str(cores),
                  "--memory", memory, "--webui-port", str(free_port()), "--work-dir", str(work / f"worker{i}"), url)
        yield url
    finally:
        for proc, plog in reversed(procs):
            stop(proc, plog, timeout=20)
