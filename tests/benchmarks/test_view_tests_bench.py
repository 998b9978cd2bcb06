"""benchmarks/view_tests.py: a warm run starts only once the cold run's CDS archive is published.

The cold run's JVM writes the archive in the background after its process has answered; a run
started meanwhile got no archive, and the benchmark reported it as warm (6 s slower than warm).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _bench() -> ModuleType:
    sys.path.insert(0, str(BENCH))  # view_tests imports machine.py from beside it
    spec = importlib.util.spec_from_file_location("view_tests_bench", BENCH / "view_tests.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_warm_waits_until_the_archive_writer_has_published(tmp_path: Path) -> None:
    bench = _bench()
    cache = tmp_path / "viewsync"
    cache.mkdir()
    final = cache / "spark-cds-0123456789abcdef.jsa"
    tmp = cache / f"{final.name}.42.7.tmp"
    # A writer as serve.py's _publish_archive: writes the temporary archive, publishes it, removes its pid file.
    writer = subprocess.Popen([sys.executable, "-c", (
        "import os, sys, time; time.sleep(0.6); open(sys.argv[1], 'wb').write(b'x'); "
        "os.replace(sys.argv[1], sys.argv[2]); os.unlink(sys.argv[1] + '.pid')"), str(tmp), str(final)])
    try:
        Path(f"{tmp}.pid").write_text(str(writer.pid))
        assert not bench.archive_ready(tmp_path)
        started = time.perf_counter()
        waited = bench.wait_for_archive(tmp_path, timeout=30)
        assert final.exists() and bench.archive_ready(tmp_path)
        assert waited >= 0.3 and time.perf_counter() - started >= 0.3
    finally:
        writer.wait()


def test_a_dead_writer_does_not_hold_the_warm_runs(tmp_path: Path) -> None:
    bench = _bench()
    cache = tmp_path / "viewsync"
    cache.mkdir()
    final = cache / "spark-cds-0123456789abcdef.jsa"
    final.write_bytes(b"x")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (cache / f"{final.name}.9.9.tmp.pid").write_text(dead.stdout.strip())
    assert bench.archive_ready(tmp_path)
    assert bench.wait_for_archive(tmp_path, timeout=5) < 1


def test_no_archive_is_not_ready(tmp_path: Path) -> None:
    assert not _bench().archive_ready(tmp_path)


def test_a_run_ends_only_when_every_process_it_started_has_exited(tmp_path: Path) -> None:
    """A JVM still shutting down after its parent answered ran into the next measurement (Trino's,
    after Spark's): a run returns once its whole process group is gone, that wait kept apart."""
    bench = _bench()
    script = ("import json, subprocess, sys\n"
              "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1.5)'])\n"
              "print(json.dumps({'wall_s': 0.0}))\n")
    started = time.perf_counter()
    result = bench._child([sys.executable, "-c", script], {}, "a run leaving a child behind")
    assert time.perf_counter() - started >= 1.4
    assert result["wall_s"] == 0.0 and result["settle_s"] >= 1.0
