"""The first Spark start on a machine (issue 43, item 3): it says what it does, and the
class-data-sharing archive its JVM writes at exit never holds the user's terminal: the child
publishes it in the background, complete, and the next start uses it."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reconciler.spark import conf
from tests.helpers.paths import ROOT


def _on_a_terminal(repo: Path, cache: Path, *args: str) -> tuple[int, str, float]:
    """`viewsync ARGS` on a pseudo-terminal, as in a user's shell: exit code, what the terminal
    showed, and the seconds until the terminal was released (every writer gone)."""
    main, secondary = pty.openpty()
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "reconciler.cli", *args], cwd=repo, stdin=secondary,
                            stdout=secondary, stderr=secondary, env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    os.close(secondary)
    shown = b""
    while True:
        ready, _, _ = select.select([main], [], [], 300)
        if not ready:
            proc.kill()
            raise AssertionError(f"no output for 300 s: {shown!r}")
        try:
            data = os.read(main, 4096)
        except OSError:  # every writer closed the terminal
            break
        if not data:
            break
        shown += data
    released = time.monotonic() - started
    os.close(main)
    return proc.wait(timeout=60), shown.decode(errors="replace").replace("\r\n", "\n"), released


def _sample(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(ROOT / "viewsync.yaml", repo / "viewsync.yaml")
    shutil.copytree(ROOT / "views", repo / "views")
    shutil.copytree(ROOT / "sources", repo / "sources")
    return repo


@pytest.mark.slow
@pytest.mark.usefixtures("spark_verifier")
def test_the_first_start_says_so_and_writes_the_archive_without_holding_the_terminal(tmp_path: Path) -> None:
    repo, cache = _sample(tmp_path), tmp_path / "cache"
    code, shown, released = _on_a_terminal(repo, cache, "validate", "--spark")
    assert code == 0, shown
    archives = cache / "viewsync"
    assert not list(archives.glob("*.jsa")), "the command waited for the JVM to write the archive"
    assert "Starting Spark: the first start on this machine is slower" in shown, shown
    assert shown.index("Valid: 6 view(s)") < shown.index(
        "Spark's JVM is writing the class-data-sharing archive in the background"), shown

    deadline = time.monotonic() + 180  # the child publishes it once its JVM has exited
    while not list(archives.glob("*.jsa")) or list(archives.glob("*.tmp*")):
        assert time.monotonic() < deadline, sorted(p.name for p in archives.iterdir())
        time.sleep(0.5)
    [archive] = archives.glob("*.jsa")
    assert archive.stat().st_size > 10_000_000

    code, again, _ = _on_a_terminal(repo, cache, "validate", "--spark")
    assert code == 0, again
    assert "\r\x1b[KStarting Spark...\r\x1b[K" in again, again  # said in place, cleared when ready
    assert "first start" not in again and "class-data-sharing" not in again, again
    assert sorted(archives.iterdir()) == [archive]  # used, not written again


def _archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pyspark = tmp_path / "pyspark"
    (pyspark / "jars").mkdir(parents=True)
    return pyspark, conf.archive_path(sys.executable, pyspark)


def test_a_start_while_another_writes_the_archive_neither_waits_nor_writes_a_second(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyspark, path = _archive(tmp_path, monkeypatch)
    first = conf.Archive.for_child(sys.executable, pyspark)
    assert first is not None and first.writes
    first.started(os.getpid())  # its writer runs
    assert conf.Archive.for_child(sys.executable, pyspark) is None  # no CDS this time, no second write
    assert first.publish() == {"tmp": str(first.tmp), "path": str(path)}


def test_what_a_writer_that_died_left_is_dropped_never_published(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pyspark, path = _archive(tmp_path, monkeypatch)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    first = conf.Archive.for_child(sys.executable, pyspark)
    assert first is not None and first.tmp is not None
    first.started(int(dead.stdout))
    first.tmp.write_bytes(b"half an archive")  # its JVM was killed while writing
    second = conf.Archive.for_child(sys.executable, pyspark)
    assert second is not None and second.writes and not path.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == []
