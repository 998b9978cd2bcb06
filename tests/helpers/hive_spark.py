"""A PySpark session with Hive support on a test metastore, in a child process: a test
process may already hold a SparkSession of another catalog kind (one per process), so the
tables a test seeds are written from here."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

SERVER = """
import json, sys
from pyspark.sql import SparkSession
uri, work = sys.argv[1], sys.argv[2]
spark = (SparkSession.builder.master("local[1]").appName("viewsync-test-seed")
         .config("spark.sql.catalogImplementation", "hive").config("spark.hadoop.hive.metastore.uris", uri)
         .config("spark.sql.warehouse.dir", f"file://{work}/warehouse")
         .config("spark.hadoop.hive.downloaded.resources.dir", f"{work}/resources")
         .config("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={work}")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
         .enableHiveSupport().getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
print(json.dumps({"ready": spark.version}), flush=True)
for line in sys.stdin:
    try:
        rows = [list(r) for r in spark.sql(json.loads(line)["sql"]).collect()]
        print(json.dumps({"rows": rows}, default=str), flush=True)
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:3000]}), flush=True)
spark.stop()
"""


class HiveSpark:
    """`sql(statement)` runs a statement in the child's Hive-backed session and returns its rows
    (values JSON can hold; others as text); raises AssertionError with Spark's error."""

    def __init__(self, uri: str, work: Path) -> None:
        self.log: IO[bytes] = (work / "seed-spark.log").open("wb")
        env = {k: v for k, v in os.environ.items() if k != "PYSPARK_SUBMIT_ARGS"}
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, uri, str(work)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, env=env, cwd=work)
        first = self._reply()
        if "ready" not in first:
            raise RuntimeError(f"seeding Spark did not start: {first}")

    def _reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        return dict(json.loads(line)) if line else {"error": "exited"}

    def sql(self, statement: str) -> list[list[Any]]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"sql": statement}) + "\n")
        self.proc.stdin.flush()
        reply = self._reply()
        if "error" in reply:
            raise AssertionError(f"Spark failed on {statement!r}: {reply['error']}")
        return list(reply.get("rows", []))

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
