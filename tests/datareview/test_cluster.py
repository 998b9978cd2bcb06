"""The same diff on a Spark standalone cluster (a master and a worker started by the test)
gives the same report as local Spark: nothing in the diff assumes a local driver."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.datareview.test_diff_hms import applied, declare
from tests.helpers.cli import run_cli
from tests.helpers.servers import backend_unavailable
from tests.helpers.spark_cluster import ClusterUnavailable, standalone

pytestmark = pytest.mark.slow  # a metastore, a cluster and three Sparks


def report(repo: Path, master: str) -> list[dict[str, Any]]:
    res = run_cli(repo, "diff", "--format", "json")
    assert res.code == 0, res.text
    data = json.loads(res.out)
    assert data["spark"]["master"] == master
    views = data["views"]
    for v in views:
        v.pop("seconds")
    return list(views)


def test_a_standalone_cluster_gives_the_same_report_as_local(tmp_path: Path, metastore: Any, spark: Any,
                                                             database: str) -> None:
    repo = applied(tmp_path, metastore, spark, database)
    declare(repo, database, "SELECT o.order_id, o.customer_id, CAST(o.amount * 2 AS DECIMAL(18,2)) AS amount, "
            "o.status FROM orders o JOIN emails e ON o.customer_id = e.customer_id WHERE o.status <> 'void'",
            key=["order_id"])
    local = report(repo, "local[1]")

    work = tmp_path / "cluster"
    work.mkdir()
    try:
        with standalone(work) as master:
            config = yaml.safe_load((repo / "viewsync.yaml").read_text())
            config["spark"]["live"].update({"master": master, "conf": {"spark.executor.memory": "512m",
                                                                        "spark.cores.max": "1"}})
            (repo / "viewsync.yaml").write_text(yaml.safe_dump(config))
            on_cluster = report(repo, master)
    except ClusterUnavailable as exc:
        backend_unavailable(f"Spark standalone cluster: {exc}")
    assert on_cluster == local
    assert local[0]["counts"]["removed"] == 3 and local[0]["duplicates"]["after"]["keys"] > 0
