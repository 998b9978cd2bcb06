"""The child's side of a Spark child process (our side: client.py): the engine module that
reconciler/child/serve.py serves. Standard library and PySpark only: another interpreter
(`spark.live.python`) loads this file by its path.

    python -m reconciler.child.serve reconciler.spark.serve HANDLERS...
    python reconciler/child/serve.py reconciler/spark/serve.py HANDLERS...    (another interpreter)

The conf is Spark's; the hello adds {"pid", "spark"}. Handlers get a `Child`; a handler's Spark
error is its answer's {"error": {"class", "message", ...}}; a stop's {"archive": {"tmp", "path"}}
publishes the class-data-sharing archive once the JVM exited cleanly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]

_PARSE_POS = re.compile(r"\(line (\d+), pos (\d+)\)")
_ANALYSIS_POS = re.compile(r"; line (\d+) pos (\d+)")


def spark_error(exc: BaseException) -> dict[str, Any]:
    """Spark's error class and message (without its SQL echo, stack and position text), and
    where in the SQL it points: 0-based offsets `start`/`stop` and the `fragment`, or `line`/`pos`."""
    get = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    try:
        condition = get() if get is not None else None
    except Exception:  # noqa: BLE001 - older PySpark
        condition = None
    text = str(exc).strip()
    message = text.split("\n== SQL")[0].split("\nJVM stacktrace")[0].split("\n\tat ")[0].strip()
    if message.startswith("An error occurred while calling") and "\n: " in message:  # py4j's wrapper
        message = message.split("\n: ", 1)[1]
        message = message.split(": ", 1)[1] if message.startswith("org.apache.spark.SparkException") else message
    message = _ANALYSIS_POS.sub("", _PARSE_POS.sub("", message.split(";\n")[0])).strip()
    out: dict[str, Any] = {"class": condition or type(exc).__name__, "message": message[:2000]}
    try:
        contexts = list(exc.getQueryContext())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - not every error carries a context
        contexts = []
    for ctx in contexts:
        try:
            out["start"], out["stop"] = int(ctx.startIndex()), int(ctx.stopIndex())
            out["fragment"] = ctx.fragment()
            break
        except Exception:  # noqa: BLE001 - DataFrame contexts have no SQL offsets
            continue
    if "start" not in out:
        m = _PARSE_POS.search(text) or _ANALYSIS_POS.search(text)
        if m:
            out["line"], out["pos"] = int(m.group(1)), int(m.group(2))
    return out


class Child:
    """What handlers get: the session, the protocol writer, Spark's exception types, the error mapping."""

    def __init__(self, spark: Any, write: Callable[[dict[str, Any]], None]) -> None:
        self.spark = spark
        self.write = write
        from pyspark.errors import PySparkException

        self.errors: tuple[type[BaseException], ...] = (PySparkException,)  # Spark's own errors
        self.java_errors: tuple[type[BaseException], ...] = ()  # any JVM exception through py4j
        try:
            from py4j.protocol import Py4JJavaError

            self.java_errors = (Py4JJavaError,)
        except ImportError:
            pass

    @staticmethod
    def error(exc: BaseException) -> dict[str, Any]:
        return spark_error(exc)

    @contextlib.contextmanager
    def stage_progress(self) -> Iterator[None]:
        """Report Spark's active stages every half second while the block runs."""
        tracker = self.spark.sparkContext.statusTracker()
        stop = threading.Event()

        def report() -> None:
            last = None
            while not stop.wait(0.5):
                try:
                    stages = []
                    for sid in tracker.getActiveStageIds():
                        info = tracker.getStageInfo(sid)
                        if info is not None:
                            stages.append({"stage": sid, "done": info.numCompletedTasks, "total": info.numTasks})
                except Exception:  # noqa: BLE001 - progress is best effort
                    continue
                if stages and stages != last:
                    last = stages
                    self.write({"progress": {"stages": stages}})

        thread = threading.Thread(target=report, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()


def session(conf: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(conf.pop("spark.master", "local[1]"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    # Spark rewrites ${env:NAME}, ${system:NAME} and ${conf} in every SQL text by default: a view,
    # fixture value or check of a pull request could print CI secrets. Forced, whatever the conf says.
    builder = builder.config("spark.sql.variable.substitute", "false")
    if conf.get("spark.sql.catalogImplementation") == "hive":
        builder = builder.enableHiveSupport()
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    return spark


def _jvm_pid(spark: Any) -> int | None:
    try:
        return int(spark._jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - only used for memory figures
        return None


class SparkStartError(Exception):
    """Spark's own reason a session could not be made, in one line."""


def start(conf: dict[str, str], channel: Any) -> Child:
    warnings.filterwarnings("ignore")
    # Otherwise every analysis error is logged with a JVM stack trace.
    logging.getLogger("SQLQueryContextLogger").disabled = True
    try:
        spark = session(conf)
    except Exception as exc:
        # py4j's text is its wrapper, Spark's message and the JVM's stack; the user reads the
        # message (e.g. a driver_memory below Spark's minimum), not the stack's last frame.
        raise SparkStartError(" ".join(spark_error(exc)["message"].split())) from None
    return Child(spark, channel.write)


def hello(child: Child) -> dict[str, Any]:
    return {"pid": _jvm_pid(child.spark), "spark": child.spark.version}


def stop(child: Child, request: dict[str, Any]) -> None:
    child.spark.stop()
    if request.get("archive"):
        _publish_archive(request["archive"]["tmp"], request["archive"]["path"])


def _publish_archive(tmp: str, final: str) -> None:
    """Our client has let go (the user has their prompt back): let the JVM exit, writing the
    class-data-sharing archive to `tmp` as it does, and publish it at `final` only when the JVM
    exited cleanly; a broken archive is never published."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None:
        return
    with contextlib.suppress(OSError, ValueError):
        proc.stdin.close()  # the JVM exits when its stdin closes
    ok = proc.wait() == 0
    try:
        if ok and os.path.getsize(tmp) > 0 and not os.path.exists(final):
            os.replace(tmp, final)
    except OSError:
        pass
    for leftover in (tmp, tmp + ".pid"):
        with contextlib.suppress(OSError):
            os.unlink(leftover)

