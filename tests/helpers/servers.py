"""Starting and stopping the real backend processes the tests talk to."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, NoReturn

import pytest

# .ci/run sets this: in CI a backend that cannot start is a failure, never a silent skip.
REQUIRE_BACKENDS = os.environ.get("VIEWSYNC_REQUIRE_BACKENDS") == "1"


def backend_unavailable(reason: str) -> NoReturn:
    """Skip (on a developer machine without the backend) or fail (in CI)."""
    if REQUIRE_BACKENDS:
        pytest.fail(f"required backend unavailable: {reason}", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> Callable[[], None]:
    def probe() -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            pass

    return probe


def wait_ready(proc: subprocess.Popen[Any], probe: Callable[[], None], *, what: str, timeout: float,
               log: Path, interval: float = 0.1) -> str | None:
    """Poll `probe` (raises OSError until ready). Returns None when ready, else why not."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            return f"{what} exited with {proc.returncode} (see {log}):\n{tail}"
        try:
            probe()
            return None
        except OSError:
            if time.monotonic() > deadline:
                return f"{what} did not start within {timeout:.0f} s (see {log})"
            time.sleep(interval)


def stop(proc: subprocess.Popen[Any], log: IO[bytes] | None = None, timeout: float = 10) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if log is not None:
        log.close()


@contextlib.contextmanager
def serve(cmd: list[str], work: Path, what: str, probe: Callable[[], None], *, timeout: float,
          interval: float = 0.1, stop_timeout: float = 10) -> Iterator[subprocess.Popen[bytes]]:
    """Run `cmd` in `work` (its output in work/<what>.log) until `probe` passes, yield the process,
    and stop it afterwards. A server that does not start skips (fails in CI), saying why."""
    log_path = work / f"{what.lower().replace(' ', '-')}.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    why = wait_ready(proc, probe, what=what, timeout=timeout, log=log_path, interval=interval)
    if why:
        stop(proc, log, timeout=stop_timeout)
        backend_unavailable(why)
    try:
        yield proc
    finally:
        stop(proc, log, timeout=stop_timeout)
