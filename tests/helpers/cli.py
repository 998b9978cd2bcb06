"""The one CLI runner of the tests, and which modules a command imports."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(repo: Path, *args: str, env: Mapping[str, str] | None = None, process: bool = False,
            timeout: float = 300) -> CliResult:
    """The one way tests run `viewsync --repo REPO ARGS...`, with `env` added to the
    environment. In-process by default, exactly as the console script runs (fast);
    `process=True` runs it in a child process, as a shell would (nothing shared with
    the test process: logging, caches, the secrets seen)."""
    if process:
        done = subprocess.run([sys.executable, "-m", "reconciler.cli", "--repo", str(repo), *args],
                              capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
        return CliResult(done.returncode, done.stdout, done.stderr)
    from reconciler.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    argv, saved_env = sys.argv, {k: os.environ.get(k) for k in env or {}}
    sys.argv = ["viewsync", "--repo", str(repo), *args]
    os.environ.update(env or {})
    code = 0
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            main()
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = argv
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return CliResult(code, stdout.getvalue(), stderr.getvalue())


_LOADED = """
import json, sys
from reconciler import cli
watched = json.loads(sys.argv[1])
sys.argv = ["viewsync", *sys.argv[2:]]
code = None
try:
    cli.main()
except SystemExit as e:
    code = e.code
print(json.dumps([sorted(m for m in watched if m in sys.modules), code]))
"""


def modules_loaded(repo: Path | None, *args: str, modules: Iterable[str],
                   env: Mapping[str, str] | None = None) -> tuple[list[str], int | None]:
    """Which of `modules` `viewsync [--repo REPO] ARGS...` imports in a fresh process, and its
    exit code: a command must import only what it uses."""
    argv = [*(["--repo", str(repo)] if repo is not None else []), *args]
    res = subprocess.run([sys.executable, "-c", _LOADED, json.dumps(list(modules)), *argv], capture_output=True,
                         text=True, timeout=120, env={**os.environ, **(env or {})})
    try:
        loaded, code = json.loads(res.stdout.splitlines()[-1])
    except (IndexError, ValueError):
        raise AssertionError(f"viewsync {' '.join(argv)} did not finish:\n{res.stdout}{res.stderr}") from None
    return loaded, code
