"""A webhook receiver process and edits of a repository's events and views."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.helpers.servers import port_open, stop, wait_ready

RECEIVER = Path(__file__).with_name("receiver.py")


@dataclass
class Receiver:
    """`python receiver.py PORT LOG` as a child process; restartable on the same port."""

    port: int
    log: Path
    status: int = 200
    proc: subprocess.Popen[bytes] | None = None
    _out: Any = field(default=None)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> None:
        out_path = self.log.with_suffix(".out")
        self._out = open(out_path, "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen([sys.executable, str(RECEIVER), str(self.port), str(self.log), str(self.status)],
                                     stdout=self._out, stderr=subprocess.STDOUT)
        problem = wait_ready(self.proc, port_open(self.port), what="receiver", timeout=20, log=out_path)
        assert problem is None, problem

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            stop(self.proc, self._out)
        elif self._out is not None:
            self._out.close()
        self.proc = None

    def received(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(r["body"]) for r in self.received()]


def set_events(repo: Path, sinks: dict[str, Any]) -> None:
    path = repo / "viewsync.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["events"] = sinks
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def edit_views(repo: Path, rel: str, fn: Any) -> None:
    path = repo / rel
    doc = yaml.safe_load(path.read_text())
    fn(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
