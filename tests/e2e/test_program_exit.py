"""The `viewsync` program ends without the interpreter's teardown (reconciler.cli.app.exit_now),
and loses nothing by it: its exit status, every byte of its output, the other threads' work
and the atexit handlers (Spark and Trino children, temporary directories) are the same as
with the interpreter's own exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

# A program like the console script, with work left for the exit: a thread still writing, an
# atexit handler, and an object whose finalizer only the interpreter's teardown would run.
PROGRAM = r"""
import atexit, sys, threading, time
from pathlib import Path
out = Path(sys.argv.pop(1))

def late() -> None:
    time.sleep(0.3)
    (out / "thread").write_text("done")

threading.Thread(target=late).start()
atexit.register(lambda: (out / "atexit").write_text("ran"))
atexit.register(lambda: sys.stdout.write("said at exit"))  # runs first; left in stdout's buffer

class Teardown:
    def __del__(self) -> None:
        (out / "teardown").write_text("ran")

kept = Teardown()
from reconciler.cli import run
sys.argv = ["viewsync", *sys.argv[1:]]
run()
"""


def _buffered() -> dict[str, str]:
    """The environment with stdout block-buffered, as a pipe's is by default."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def test_the_program_exits_with_its_commands_status_and_all_of_its_output(sample_repo: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "reconciler", "--repo", str(sample_repo), "plan",
                           "--detailed-exitcode", "--format", "json"], capture_output=True, text=True, timeout=300,
                          env=_buffered())
    assert done.returncode == 2, done.stderr  # --detailed-exitcode: changes
    plan = json.loads(done.stdout)
    assert len(plan["actions"]) == 6
    bad = subprocess.run([sys.executable, "-m", "reconciler.cli", "--repo", str(sample_repo), "plan", "--select"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and "--select" in bad.stderr  # a usage error: its message and status


def test_other_threads_and_atexit_handlers_finish_and_the_teardown_is_skipped(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path), "--version"], capture_output=True,
                          text=True, timeout=120, env=_buffered())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("viewsync ")
    assert done.stdout.endswith("said at exit")  # stdout is flushed after the atexit handlers
    assert (tmp_path / "thread").read_text() == "done"  # waited for, as the interpreter waits
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "teardown").exists()  # the process ended before tearing objects down


def _marked(mark: str) -> list[int]:
    """Processes whose environment holds `mark` (a child inherits its parent's environment)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if mark.encode() in (proc / "environ").read_bytes():
                    found.append(int(proc.name))
            except OSError:  # gone, or not ours to read
                continue
    return found


def test_a_spark_command_leaves_no_process_behind(sample_repo: Path) -> None:
    name, value = "VIEWSYNC_EXIT_MARK", uuid.uuid4().hex
    mark = f"{name}={value}"
    done = subprocess.run([sys.executable, "-m", "reconciler", "--repo", str(sample_repo), "test"],
                          capture_output=True, text=True, timeout=600, env={**_buffered(), name: value})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed" in done.stdout
    # A Spark child writing its class-data archive finishes that on its own after the command.
    deadline = time.monotonic() + 120
    while (left := _marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left
