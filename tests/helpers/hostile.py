"""Hostile-input checks: a good view file, and 'rejected with one located line, nothing written'."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.cli import run_cli

COMMANDS = (["validate"], ["plan"], ["apply", "--auto-approve", "--allow-dirty"], ["drift"])
GOOD = """\
catalog: local
schema: sales
views:
  - name: v1
    representations:
      - dialect: spark
        sql: SELECT 1 AS x
"""
MAX_LINE = 400  # an error line never echoes a hostile input back


def snapshot(repo: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(repo)): p.read_bytes() if p.is_file() else None
            for p in sorted(repo.rglob("*")) if not p.is_symlink()}


def assert_rejected(repo: Path, prefix: str, message: str, commands: tuple[list[str], ...] = COMMANDS) -> None:
    before = snapshot(repo)
    for command in commands:
        res = run_cli(repo, *command)
        assert res.code == 1, (command, res.text[:2000])
        assert "Traceback" not in res.text and "Error: unexpected" not in res.text, res.text[:2000]
        assert all(len(line) <= MAX_LINE for line in res.text.splitlines()), max(map(len, res.text.splitlines()))
        line = next((ln for ln in res.err.splitlines() if prefix in ln and message in ln), None)
        assert line is not None, (command, res.err[:2000])
        if prefix.endswith(".yaml") or ".yaml:" in prefix:
            assert re.search(r"\.ya?ml:\d+:\d+: ", line), line  # file:line:col
    assert snapshot(repo) == before  # nothing written: no catalog, no state, no files


def write(repo: Path, rel: str, content: str | bytes) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
