"""Our side of a Spark child process (its side: serve.py, served by reconciler.child.serve): the
child process (reconciler.child.process) with Spark's errors, start notices and CDS archive; and a
pool of children.

A JVM takes seconds to start, so a child lives as long as its pool: the command line keeps one
per process and kind (closed at exit); a caller that runs many commands in one process (the
tests) shares them too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.child.process import ChildProcess, Names
from reconciler.core.engine import Engine, OnProgress
from reconciler.core.errors import UserError
from reconciler.spark.conf import INSTALL_JAVA, Archive
from reconciler.spark.errors import SparkError, SparkUnavailable

SERVE = Path(__file__).with_name("serve.py")  # the engine module a Spark child serves (reconciler.child.serve)
__all__ = ["SERVE", "Launch", "Names", "Notice", "OnProgress", "Pool", "SparkChild", "child_env", "notify",
           "starts", "work_dir"]

# What the user is told while a child starts and after it stops: "starting" (first: whether this
# start writes the class-data-sharing archive), "ready", "archive" (its JVM writes the archive in
# the background). The command line listens (on a terminal); nobody else does.
Notice = Callable[[str, bool], None]
_LISTENERS: list[Notice] = []


_STARTS = [0]  # children started by this process (`viewsync review` reports its own)


def starts() -> int:
    """How many Spark children this process has started (each a JVM), whatever their kind."""
    return _STARTS[0]


def notify(listener: Notice | None) -> None:
    """Send the children's notices to `listener` (None: to nobody)."""
    _LISTENERS[:] = [listener] if listener is not None else []


def _tell(event: str, first: bool = False) -> None:
    for listener in list(_LISTENERS):
        with contextlib.suppress(Exception):  # telling the user never fails a command
            listener(event, first)


@dataclass(frozen=True)
class Launch:
    """One child to start: its command, its conf (sent on stdin: it may hold credentials), the
    environment, its work directory (removed at stop) and its CDS archive."""

    command: list[str]
    conf: dict[str, str]
    env: dict[str, str]
    work: Path
    names: Names
    archive: Archive | None = None


class SparkChild(ChildProcess):
    """One Spark child process and the session it holds (the process itself: reconciler.child)."""

    log_name = "spark.log"
    unavailable = SparkUnavailable

    def __init__(self, launch: Launch) -> None:
        self._archive = launch.archive
        super().__init__(launch.command, launch.conf, launch.env, launch.work, launch.names)
        self.spark_version = str(self.hello.get("spark", ""))

    def refused(self, error: dict[str, Any]) -> UserError:
        return SparkError(error)

    def start_failure(self, detail: str, spawned: bool) -> str:
        if spawned and ("JAVA_GATEWAY_EXITED" in detail or "Java gateway" in detail):
            detail += f" ({INSTALL_JAVA})"
        return super().start_failure(detail, spawned)

    def starting(self) -> None:
        _tell("starting", self._archive is not None and self._archive.writes)
        _STARTS[0] += 1

    def spawned(self, pid: int) -> None:
        if self._archive is not None:
            self._archive.started(pid)  # the child publishes the archive (see close)

    def ready(self) -> None:
        _tell("ready")

    def cannot_run(self) -> None:
        self._archive = None  # nothing worth publishing: a writer that died is tidied by the next start

    def close(self) -> None:
        """Stop the child without waiting for it: it stops Spark, publishes the CDS archive when its
        JVM writes one as it exits, and removes its work directory itself, in the background.
        Waiting for Spark to stop was ~0.4 s at the end of every `plan --spark` and `test`."""
        publish = self._archive.publish() if self._archive is not None else None
        stop: dict[str, Any] = {"op": "stop", "remove": str(self.dir)}
        if publish is not None:
            stop.update(archive=publish)
        if self.shutdown(stop, detach=True) and publish is not None:
            _tell("archive")


def work_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


def child_env(python: str, foreign: bool) -> dict[str, str]:
    """The child's environment: this one, without a parent's Spark submit arguments; for
    `foreign` (another interpreter) nothing of ours may leak into its PySpark."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_SUBMIT", "SPARK_HOME"))}
    if foreign:
        env = {k: v for k, v in env.items() if not k.startswith(("SPARK_", "PYSPARK_", "_PYSPARK"))
               and k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update({"PYSPARK_PYTHON": python, "SPARK_LOCAL_IP": env.get("SPARK_LOCAL_IP", "127.0.0.1")})
    return env


class Pool:
    """Children by key, started ahead (`prestart`) or on first use (`get`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the three maps below
        self._children: dict[str, SparkChild] = {}
        self._starting: dict[str, threading.Thread] = {}
        self._failed: dict[str, BaseException] = {}

    def _start(self, key: str, start: Callable[[], SparkChild]) -> None:
        try:
            child = start()
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that needs the child
            with self._lock:
                self._failed[key] = exc
            return
        with self._lock:
            self._children[key] = child

    def prestart(self, key: str, start: Callable[[], SparkChild]) -> None:
        """Start the child in the background: Spark's start-up overlaps the caller's other work."""
        with self._lock:
            if key in self._children or key in self._starting:
                return
            self._failed.pop(key, None)
            thread = threading.Thread(target=self._start, args=(key, start), name="viewsync-spark-start",
                                      daemon=True)
            self._starting[key] = thread
        thread.start()

    def get(self, key: str, start: Callable[[], SparkChild]) -> SparkChild:
        """The child for `key`, started now unless started ahead; raises what its start raised
        (no Java, no PySpark...)."""
        with self._lock:
            thread = self._starting.pop(key, None)
        if thread is not None:
            thread.join()
        with self._lock:
            failed = self._failed.pop(key, None)
            if failed is not None:
                raise failed
            child = self._children.get(key)
            if child is None or not child.alive():
                child = start()
                self._children[key] = child
            return child

    def close(self) -> None:
        """Stop every child of the pool."""
        with self._lock:
            children, self._children = list(self._children.values()), {}
        for child in children:
            child.close()


def _is_an_engine(child: SparkChild) -> Engine:
    return child  # mypy checks that a Spark child is an Engine (reconciler.core.engine)
