"""End to end through the real `viewsync` command: plan, apply, plan again, and Spark sees the view."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml


def viewsync(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reconciler.cli", "--repo", str(repo), *args],
                          capture_output=True, text=True, timeout=300)


def test_plan_apply_plan_through_cli(tmp_path: Path, metastore: Any, spark: Any, database: str) -> None:
    spark.sql(f"CREATE TABLE {database}.sales (region STRING, amount BIGINT) USING parquet")
    spark.sql(f"INSERT INTO {database}.sales VALUES ('eu', 3), ('eu', 4), ('us', 5)")
    repo = tmp_path / "repo"
    (repo / "views" / "hive").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": metastore.uri, "write_format": "spark"}},
    }))
    (repo / "views" / "hive" / f"{database}.yaml").write_text(yaml.safe_dump({
        "catalog": "hive", "schema": database,
        "views": [{
            "name": "region_totals", "comment": "Sales per region",
            "columns": [{"name": "Region", "type": "string", "comment": "Sales region"},
                        {"name": "total", "type": "bigint"}],
            "representations": [
                {"dialect": "spark", "sql": "SELECT region AS Region, SUM(amount) AS total FROM sales GROUP BY region"},
                {"dialect": "trino", "sql": "SELECT region, sum(amount) AS total FROM sales GROUP BY region"}],
            "properties": {"tier": "gold"},
        }],
    }, sort_keys=False))

    plan = viewsync(repo, "plan", "--detailed-exitcode")
    assert plan.returncode == 2, plan.stdout + plan.stderr
    assert "region_totals" in plan.stdout
    applied = viewsync(repo, "apply", "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    again = viewsync(repo, "plan", "--detailed-exitcode")
    assert again.returncode == 0, again.stdout + again.stderr

    rows = spark.sql(f"SELECT * FROM {database}.region_totals ORDER BY Region").collect()
    assert [(r["Region"], r["total"]) for r in rows] == [("eu", 7), ("us", 5)]
