"""A command that stops on bad declarations leaves the working tree byte-identical, even
when its prefetch was still reading the managed SQLite catalog (issue 27, item 7): a
SQLite reader cut off by the process's exit leaves the file's -wal/-shm behind. Run in-process,
the command returns while an abandoned read would still hold them open, so the check does not
depend on how fast the process dies."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.hostile import snapshot

BULK = 40_000  # views in one schema: its read outlasts the command's way to the YAML error


def _bulk_catalog(db: Path) -> None:
    """Copies of one stored view under new names, written straight into the managed store."""
    conn = sqlite3.connect(db)
    try:
        meta = [r[1] for r in conn.execute("PRAGMA table_info(view_meta)")]
        (vid,) = conn.execute("SELECT view_id FROM view_meta WHERE schema_name = 'sales' LIMIT 1").fetchone()
        row = conn.execute("SELECT * FROM view_meta WHERE view_id = ?", (vid,)).fetchone()
        versions = conn.execute("SELECT * FROM view_version_info WHERE view_id = ?", (vid,)).fetchall()
        version_cols = [r[1] for r in conn.execute("PRAGMA table_info(view_version_info)")]
        (top,) = conn.execute("SELECT max(view_id) FROM view_meta").fetchone()
        (top_version,) = conn.execute("SELECT max(id) FROM view_version_info").fetchone()
        metas, infos = [], []
        for i in range(1, BULK + 1):
            new = list(row)
            new[0], new[meta.index("view_name")] = top + i, f"bulk_{i}"
            metas.append(new)
            for v in versions:
                top_version += 1
                info = list(v)
                info[0], info[version_cols.index("view_id")] = top_version, top + i
                infos.append(info)
        conn.executemany(f"INSERT INTO view_meta VALUES ({','.join('?' * len(meta))})", metas)
        conn.executemany(f"INSERT INTO view_version_info VALUES ({','.join('?' * len(version_cols))})", infos)
        conn.commit()
    finally:
        conn.close()


def test_a_command_failing_on_its_input_leaves_the_managed_store_untouched(sample_repo: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.invalid",
                                                  "commit", "-qm", "sample"]):
        subprocess.run(["git", *args], cwd=sample_repo, check=True, capture_output=True)
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    _bulk_catalog(sample_repo / ".viewsync" / "catalog.db")
    views = sample_repo / "views" / "local" / "sales.yaml"
    views.write_text(views.read_text().replace("dialect: trino", "dialect: [trino", 1))
    before = snapshot(sample_repo)
    assert not [p for p in before if p.endswith(("-wal", "-shm"))]
    for command in (["plan"], ["apply", "--auto-approve", "--allow-dirty"], ["drift"]):
        for _ in range(2):
            res = run_cli(sample_repo, *command)
            assert res.code == 1 and "views/local/sales.yaml:" in res.err, res.text
            assert snapshot(sample_repo) == before, command


def test_sql_that_does_not_parse_is_a_located_plan_error_and_nothing_is_written(sample_repo: Path) -> None:
    """A view whose SQL ends in `WHERE` with the condition missing (issue 38, item 7): `validate`,
    `plan` and `apply` refuse it at its YAML line; the catalog is not touched."""
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.invalid",
                                                  "commit", "-qm", "sample"]):
        subprocess.run(["git", *args], cwd=sample_repo, check=True, capture_output=True)
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    views = sample_repo / "views" / "local" / "sales.yaml"
    good = "sql: SELECT order_id, SUM(amount) AS refunded FROM sales.refund_events GROUP BY order_id"
    broken = "sql: SELECT order_id, amount AS refunded FROM sales.refund_events WHERE"
    views.write_text(views.read_text().replace(good, broken))
    line = next(i for i, t in enumerate(views.read_text().splitlines(), 1) if t.rstrip().endswith("events WHERE"))
    before = snapshot(sample_repo)
    for command in (["validate"], ["plan"], ["apply", "--auto-approve", "--allow-dirty"]):
        res = run_cli(sample_repo, *command)
        assert res.code == 1, (command, res.text)
        assert f"views/local/sales.yaml:{line}:" in res.text and "does not parse" in res.text, (command, res.text)
        assert "Apply complete" not in res.out, res.out
        assert snapshot(sample_repo) == before, command
