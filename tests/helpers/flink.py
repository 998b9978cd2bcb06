"""PyFlink for the tests: its own venv, cached outside the repo (~/.cache/viewsync-tests/flink-venv,
VIEWSYNC_TEST_CACHE overrides the root), because `apache-flink` is about 850 MB with Apache Beam
and its JVM jars, and no dependency of viewsync. A developer without it skips the Flink tests;
CI (VIEWSYNC_REQUIRE_BACKENDS=1) builds it on first use: about 25 s with a warm network, a
330 MB download of apache-flink-libraries on a cold pip cache."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

from reconciler.flink.client import APACHE_FLINK
from tests.helpers.paths import tests_cache_dir
from tests.helpers.servers import REQUIRE_BACKENDS, backend_unavailable


def flink_python() -> str:
    """The Flink venv's interpreter: skips (or, in CI, builds it) when absent."""
    root = tests_cache_dir() / "flink-venv"
    python = root / "bin" / "python"
    if shutil.which("java") is None:
        backend_unavailable("java not found (PyFlink needs Java 11 or 17)")
    if _has_pyflink(python):
        return str(python)
    if not REQUIRE_BACKENDS:
        backend_unavailable(f"no PyFlink venv at {root}: python3 -m venv {root} && "
                            f"{root}/bin/pip install {APACHE_FLINK}")
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / ".flink-venv.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _has_pyflink(python):
            for cmd in ([sys.executable, "-m", "venv", str(root)], [str(python), "-m", "pip", "install", "-q",
                                                                    APACHE_FLINK]):
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
                if proc.returncode != 0:
                    backend_unavailable(f"{' '.join(cmd)} failed: {(proc.stderr or proc.stdout)[-1500:]}")
    return str(python)


def _has_pyflink(python: Path) -> bool:
    if not python.exists():
        return False
    return subprocess.run([str(python), "-c", "import pyflink.table"], capture_output=True).returncode == 0
