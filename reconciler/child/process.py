"""Our side of a child process (its side: serve.py): start it with a handshake, requests and
answers one JSON object per line, its refusals and failures mapped to the engine's errors, stop.

An engine subclasses `ChildProcess`: its error types (`unavailable`, `refused`), how a failed
start reads (`start_failure`), and what it does around the start (`starting`, `spawned`,
`ready`) and the stop (`close`).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from reconciler.core.engine import OnProgress
from reconciler.core.errors import UserError

SERVE = Path(__file__).with_name("serve.py")

# A Java stack trace's frame lines: a JVM that fails prints its trace last.
_JAVA_FRAME = re.compile(r"^\s+at \S|^\s*\.\.\. \d+ more$")


def last_message(text: str) -> str:
    """The last line of a child's error or log that is not a Java stack frame, or "?"."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not _JAVA_FRAME.match(line)]
    return lines[-1] if lines else "?"


@dataclass(frozen=True)
class Names:
    """How a kind of child is named in what the user reads."""

    child: str  # "the Spark verifier": "... stopped unexpectedly"
    failed: str  # "Spark verification failed": "...: <fatal error>"
    start_failed: str  # "Spark could not start": "...: <its last line>"


def command(python: str, engine: str, handlers: tuple[str, ...] | list[str] = (), by_path: bool = False
            ) -> list[str]:
    """The command line of a child run by `python`, serving `engine` and `handlers` (modules:
    dotted names, or file paths when `by_path`: an interpreter that cannot import viewsync)."""
    if by_path:
        return [python, str(SERVE), engine, *handlers]
    return [python, "-m", "reconciler.child.serve", engine, *handlers]


class ChildProcess:
    """One child process and the engine session it holds."""

    log_name = "child.log"  # in its work directory, which is removed at stop
    unavailable: type[UserError] = UserError  # the engine cannot run here, or it died

    def __init__(self, command: list[str], conf: dict[str, Any], env: dict[str, str], work: Path,
                 names: Names) -> None:
        self.names = names
        self.dir = work
        self.jvm_pid: int | None = None
        self.hello: dict[str, Any] = {}
        self.start_seconds = 0.0
        self._lock = threading.Lock()
        self._log: IO[bytes] = open(self.dir / self.log_name, "wb")  # noqa: SIM115 - closed in close()
        started = time.monotonic()
        self.starting()
        try:
            self._proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._log, cwd=self.dir, env=env, text=True, encoding="utf-8")
        except OSError as exc:
            self._log.close()
            shutil.rmtree(self.dir, ignore_errors=True)
            self.ready()
            self.cannot_run()
            raise self.unavailable(self.start_failure(f"{command[0]!r} cannot run: {exc.strerror or exc}",
                                                      spawned=False)) from None
        self.spawned(self._proc.pid)
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(conf) + "\n")
        self._proc.stdin.flush()
        hello = self._read()
        self.ready()
        if not hello or not hello.get("ready"):
            detail = (hello or {}).get("error") or self.log_tail()
            self.cannot_run()
            self.close()
            raise self.unavailable(f"{self.names.start_failed}: {self.start_failure(detail, spawned=True)}")
        self.jvm_pid = hello.get("pid")
        self.hello = hello
        self.start_seconds = time.monotonic() - started

    # What an engine may change.
    def refused(self, error: dict[str, Any]) -> UserError:
        """The engine's own refusal of a request (its answer's "error")."""
        return UserError(f"[{error.get('class')}] {error.get('message')}")

    def start_failure(self, detail: str, spawned: bool) -> str:
        """What the user reads when the child did not start: the command that cannot run
        (`spawned` False) or the last line of the child's error or log (`last_message`)."""
        if not spawned:
            return detail
        return last_message(detail)

    def starting(self) -> None:
        """Before the process starts."""

    def spawned(self, pid: int) -> None:
        """The process runs (it has not said hello yet)."""

    def ready(self) -> None:
        """The start is over, whether it worked or not."""

    def cannot_run(self) -> None:
        """The start failed (before `close`)."""

    # The protocol.
    def call(self, request: dict[str, Any], progress: OnProgress | None = None) -> dict[str, Any]:
        """Send one request; progress lines go to `progress`; returns the answer. Raises the
        engine's `refused` error for its own refusals, UserError for a handler's failure,
        `unavailable` when the process died."""
        with self._lock:
            if self._proc.poll() is not None or self._proc.stdin is None:
                raise self.unavailable(f"{self.names.child} stopped unexpectedly")
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            while True:
                answer = self._read()
                if answer is None:
                    self._reap()
                    raise self.unavailable(f"{self.names.child} stopped unexpectedly: "
                                           + last_message(self.log_tail()))
                if "progress" not in answer:
                    break
                if progress is not None:
                    progress(answer["progress"])
        if "fatal" in answer:
            raise UserError(f"{self.names.failed}: {answer['fatal']}")
        if "error" in answer:
            raise self.refused(answer["error"])
        return answer

    def alive(self) -> bool:
        return self._proc.poll() is None

    def _reap(self) -> None:
        """After its output ended: the child is exiting, so wait for it (killing one that lingers)
        and "stopped" is true when it is said, not a moment later."""
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def peak_rss_mb(self) -> float | None:
        """The JVM's peak resident memory (Linux), for the benchmarks."""
        if self.jvm_pid is None:
            return None
        try:
            for line in Path(f"/proc/{self.jvm_pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def _read(self) -> dict[str, Any] | None:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            return None
        answer: dict[str, Any] = json.loads(line)
        return answer

    def log_tail(self) -> str:
        try:
            return (self.dir / self.log_name).read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def close(self) -> None:
        """Stop the child and remove its work directory."""
        self.shutdown({"op": "stop"}, detach=False)

    def shutdown(self, stop: dict[str, Any], detach: bool) -> bool:
        """Send `stop`; wait for the child unless `detach` (then it removes its work directory
        itself: `stop` says so). Returns whether it was left to finish in the background."""
        proc = getattr(self, "_proc", None)
        background = False
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(stop) + "\n")
                proc.stdin.close()
                background = detach
            if not background:
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        with contextlib.suppress(OSError):
            self._log.close()
        if not background:
            shutil.rmtree(self.dir, ignore_errors=True)
        return background
