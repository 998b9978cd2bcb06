"""What every Spark child shares: the java and PySpark it runs on, local defaults, and the
class-data-sharing (CDS) archive that halves a JVM's start.

The archive of the JDK's and Spark's classes is made on a child's first run (the JVM writes it
as it exits, in the background: see `Archive`) under the viewsync cache directory, one per java,
Spark jars and class path, and used by every later child with the same three.
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

INSTALL_JAVA = "install Java 17+ (e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"


def install_pyspark() -> str:
    """How to add the Spark extra to this viewsync: in its clone when it runs from one (an
    editable install, `pip install -e .`), else from the package index."""
    clone = Path(__file__).resolve().parents[2]
    if (clone / "pyproject.toml").is_file() and (clone / "reconciler").is_dir():
        return f"install the Spark extra: python3 -m pip install -e '.[spark]' (run in {clone})"
    return "install the Spark extra: python3 -m pip install 'viewsync[spark]'"


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


# The scratch child's collector (verification and view tests). Parallel, not serial: a view test
# run allocates ~20 GB in ~25 s, and the serial collector's pauses (~4 s) stopped every thread while
# the second core idled; two GC threads halve them, for ~70 MB more at the peak.
TESTS_COLLECTOR = "-XX:+UseParallelGC"
# The review session's: its driver's memory stays small and flat (measured with this one).
REVIEW_COLLECTOR = "-XX:+UseSerialGC"


def collector(jvm_options: tuple[str, ...] | list[str], default: str) -> list[str]:
    """`default`, unless the user's JVM options name a collector (a JVM given two refuses to start)."""
    named = any(o.startswith("-XX:+Use") and o.endswith("GC") for o in jvm_options)
    return [] if named else [default]


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
    """One child's use of the CDS archive: the flags that use it, or that write it at exit.

    The JVM writes the archive as it exits, seconds after the command's answer: the child
    process (serve.py) waits for its JVM in the background, after our side has let go, and
    publishes the archive under its final name only when the JVM exited cleanly. The user's
    terminal is not held; the next start uses the archive once it is there."""

    path: Path
    tmp: Path | None = None  # set when this child writes the archive

    @classmethod
    def for_child(cls, java_exe: str, pyspark: Path, class_path: str = "") -> Archive | None:
        """The archive to use, or to write (None: none this time: another child is writing it,
        or the cache directory cannot be written)."""
        path = archive_path(java_exe, pyspark, class_path)
        try:
            writing = _tidy(path)
        except OSError:
            writing = False
        if path.exists():
            return cls(path)
        if writing:
            return None  # another child writes it now: one write per machine, not one per command
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return cls(path, path.with_name(f"{path.name}.{os.getpid()}.{id(path)}.tmp"))

    @property
    def writes(self) -> bool:
        return self.tmp is not None

    def jvm_flags(self) -> list[str]:
        if self.tmp is None:
            return [f"-XX:SharedArchiveFile={self.path}", "-Xshare:auto"]
        return [f"-XX:ArchiveClassesAtExit={self.tmp}"]

    def started(self, writer_pid: int) -> None:
        """Leave the pid of the process that will publish the archive beside it (see _tidy)."""
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                self.tmp.with_name(self.tmp.name + ".pid").write_text(str(writer_pid))

    def publish(self) -> dict[str, str] | None:
        """What the child is told at stop: where its JVM writes the archive, and its final name."""
        return {"tmp": str(self.tmp), "path": str(self.path)} if self.tmp is not None else None


def _tidy(archive: Path) -> bool:
    """Drop what writers that died left (an archive is published complete by its writer, never
    here); returns whether a writer of this archive still runs. A writer's pid file exists from
    its start; its JVM creates the temporary archive only as it exits."""
    running = False
    for pid_file in archive.parent.glob(f"{archive.name}.*.tmp.pid"):
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            pid = None
        if pid is not None and alive(pid):
            running = True
            continue
        for leftover in (pid_file.with_suffix(""), pid_file):
            with contextlib.suppress(OSError):
                leftover.unlink()
    for tmp in archive.parent.glob(f"{archive.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if not tmp.with_name(tmp.name + ".pid").exists() and time.time() - tmp.stat().st_mtime > 600:
                tmp.unlink()  # an old version's leftover
    return running


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
