"""What every Spark child shares: the java and PySpark it runs on, local defaults, and the
class-data-sharing (CDS) archive that halves a JVM's start.

The archive of the JDK's and Spark's classes is made on a child's first run (the JVM writes it
as it exits) under the viewsync cache directory, one per java, Spark jars and class path, and
used by every later child with the same three.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from reconciler.core.cache import cache_dir
from reconciler.spark.errors import SparkUnavailable

INSTALL_PYSPARK = "install the Spark extra: pip install 'viewsync[spark]'"
INSTALL_JAVA = "install Java 17+ (e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"


def java() -> str:
    """The java Spark's launcher will run: $JAVA_HOME/bin/java when JAVA_HOME is set (it
    never falls back to PATH then), else `java` on PATH. Raises SparkUnavailable."""
    home = os.environ.get("JAVA_HOME")
    if home:
        found = Path(home) / "bin" / "java"
        if not found.is_file():
            raise SparkUnavailable(f"Spark verification needs Java (JAVA_HOME={home} has no bin/java): {INSTALL_JAVA}")
        return str(found)
    on_path = shutil.which("java")
    if on_path is None:
        raise SparkUnavailable(f"Spark verification needs Java (`java` not found): {INSTALL_JAVA}")
    return on_path


def pyspark_dir() -> Path | None:
    """Where this interpreter's PySpark is (None: not installed)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def local_defaults(work: Path) -> dict[str, str]:
    """The conf of every child: a warehouse in its work directory, no UI, no console bars."""
    return {"spark.sql.warehouse.dir": (work / "warehouse").as_uri(),
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false"}


def archive_path(java_exe: str, pyspark: Path, class_path: str = "") -> Path:
    """The CDS archive for this JDK, these jars and this extra class path: a JDK or Spark upgrade,
    or other jars on the driver, get a new one (a JVM ignores an archive of another class path)."""
    jars = sorted((pyspark / "jars").glob("*.jar"))
    lines = [os.path.realpath(java_exe), *(f"{j}:{j.stat().st_mtime_ns}" for j in jars)]
    if class_path:
        lines.append(class_path)
    key = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
    return cache_dir() / f"spark-cds-{key}.jsa"


@dataclass
class Archive:
    """One child's use of the CDS archive: the flags that use it, or that write it at exit."""

    path: Path
    tmp: Path | None = None  # set when this child writes the archive

    @classmethod
    def for_child(cls, java_exe: str, pyspark: Path, class_path: str = "") -> Archive | None:
        path = archive_path(java_exe, pyspark, class_path)
        with contextlib.suppress(OSError):
            _adopt(path)
        if path.exists():
            return cls(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return cls(path, path.with_name(f"{path.name}.{os.getpid()}.{id(path)}.tmp"))

    def jvm_flags(self) -> list[str]:
        if self.tmp is None:
            return [f"-XX:SharedArchiveFile={self.path}", "-Xshare:auto"]
        return [f"-XX:ArchiveClassesAtExit={self.tmp}"]

    def started(self, jvm_pid: int | None) -> None:
        """Leave the writer's pid beside the archive it writes (see _adopt)."""
        if self.tmp is not None and jvm_pid is not None:
            with contextlib.suppress(OSError):
                self.tmp.with_name(self.tmp.name + ".pid").write_text(str(jvm_pid))

    def finish(self, jvm_pid: int | None) -> None:
        """The JVM writes the archive as it exits; publish it when complete, or leave that
        to the next start (see _adopt) rather than keep the user waiting."""
        if self.tmp is None:
            return
        deadline = time.monotonic() + 20
        while jvm_pid is not None and alive(jvm_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        with contextlib.suppress(OSError):
            _adopt(self.path)


def _adopt(archive: Path) -> None:
    """Publish an archive a finished JVM left under a temporary name; drop abandoned ones."""
    for tmp in archive.parent.glob(f"{archive.name}.*.tmp"):
        pid_file = tmp.with_name(tmp.name + ".pid")
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            continue
        if alive(pid):
            continue
        with contextlib.suppress(OSError):
            if not archive.exists() and tmp.stat().st_size > 0:
                os.replace(tmp, archive)
            else:
                tmp.unlink()
        with contextlib.suppress(OSError):
            pid_file.unlink()


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, exited but not reaped, has finished for our purpose)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
