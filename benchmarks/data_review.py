"""Data review at scale (issue 30), reported as a table with the machine's load.

On a real Hive Metastore (from the pyspark wheel) with parquet tables of 8 columns written by
Spark, one view per table (key `id`), its declared definition changing 1 % of the rows:

- `viewsync diff` of the 10M-row view vs a hand-written PySpark full-outer-join diff on the same
  data (the floor), twice: the join alone (no duplicate detection), and with duplicate keys
  counted per side (a window per side) as the report counts them; ratios to both, the join
  alone first; each end to end in a fresh process (Spark's start included) and the Spark part
  alone;
- `viewsync check` of 6 checks vs one hand-written aggregation pass computing them;
- the driver JVM's peak RSS of `viewsync diff` on 1M and on 10M rows (flat: nothing
  proportional to the table reaches the driver), in local mode (where the driver JVM also
  runs the tasks: its sort buffers grow with the data up to Spark's execution memory) and on
  the cluster (where it runs none);
- the same diff on a standalone cluster (a master and two 1-core workers started with the
  scripts pyspark ships): identical report, its time beside local[2];
- an anchor: datadiffer (a maintained successor of data-diff, whose install fails here; installed
  from the package index into its own venv, given with --anchor-python) on the same two result sets, written to parquet and read by DuckDB.

    python benchmarks/data_review.py                       # 10M and 1M rows, cluster, no anchor
    python benchmarks/data_review.py --rows 2000000 --small 200000 --no-cluster
    python benchmarks/data_review.py --anchor-python /path/to/venv/bin/python --runs 3

With --runs N the two floors and the two viewsync diffs run N times, interleaved; the table
gives medians (min-max), each ratio a ratio of medians.

Targets: diff <= 1.25x the floor, check <= 1.2x its floor, driver RSS flat from 1M to 10M.
Heavy: run it once on a quiet machine.
"""

# ruff: noqa: E501 - the PySpark scripts run in child processes are kept as one-line SQL strings
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from hms_vs_thrift import metastore  # noqa: E402 - beside this file

COLUMNS = [("id", "bigint"), ("a", "int"), ("b", "bigint"), ("c", "double"), ("d", "decimal(18,2)"),
           ("e", "string"), ("f", "date"), ("g", "boolean")]
LIVE = "SELECT id, a, b, c, d, e, f, g FROM {table}"
DECLARED = "SELECT id, CASE WHEN id % 100 = 0 THEN a + 1 ELSE a END AS a, b, c, d, e, f, g FROM {table}"
CHECKS = [{"not_null": ["id", "a"]}, {"unique": ["id"]},
          {"accepted_values": {"column": "e", "values": [f"s{i}" for i in range(50)]}},
          {"row_count": {"min": 1}}, {"expression": "c >= 0"}, {"not_null": ["e"]}]
SPARK_CONF = {"spark.master": "local[2]", "spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "8",
              "spark.sql.adaptive.enabled": "true", "spark.ui.enabled": "false"}

GENERATE = """
import sys
from pyspark.sql import SparkSession
uri, warehouse, small, big = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "2g")
         .config("spark.sql.catalogImplementation", "hive").config("spark.hadoop.hive.metastore.uris", uri)
         .config("spark.sql.warehouse.dir", warehouse).config("spark.ui.enabled", "false")
         .enableHiveSupport().getOrCreate())
spark.sql("CREATE DATABASE IF NOT EXISTS bench")
for name, n in (("t_small", small), ("t_big", big)):
    spark.sql(f"DROP TABLE IF EXISTS bench.{name}")
    (spark.range(n).selectExpr("id", "CAST(id % 1000 AS INT) AS a", "id * 7 % 100003 AS b", "id * 0.5 AS c",
                               "CAST(id % 10000 / 100 AS DECIMAL(18,2)) AS d", "concat('s', id % 50) AS e",
                               "date_add(DATE'2024-01-01', CAST(id % 365 AS INT)) AS f", "id % 3 = 0 AS g")
     .write.format("parquet").saveAsTable(f"bench.{name}"))
spark.stop()
"""

FLOOR = """
import json, sys, time
from pyspark.sql import SparkSession
uri, mode, table, live, declared, conf = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], json.loads(sys.argv[6])
b = SparkSession.builder.config("spark.sql.catalogImplementation", "hive").config("spark.hadoop.hive.metastore.uris", uri)
for k, v in conf.items():
    b = b.config(k, v)
spark = b.enableHiveSupport().getOrCreate()
started = time.monotonic()  # the metastore client starts at the first catalog access, as viewsync's does
spark.sql("USE bench")
cols = ["a", "b", "c", "d", "e", "f", "g"]
if mode in ("diff", "diff-dup"):
    # diff-dup also counts duplicate keys per side, as the report does (a window per side, as
    # the check floor counts `unique`); diff is the join alone
    dup = mode == "diff-dup"
    side = "SELECT *, COUNT(1) OVER (PARTITION BY id) AS n FROM {0}" if dup else "SELECT * FROM {0}"
    spark.sql(side.format(f"({live})")).createOrReplaceTempView("b0")
    spark.sql(side.format(f"({declared})")).createOrReplaceTempView("a0")
    differ = " OR ".join(f"NOT (b.{c} <=> a.{c})" for c in cols)
    per = ", ".join(f"SUM(CASE WHEN b.id IS NOT NULL AND a.id IS NOT NULL AND NOT (b.{c} <=> a.{c}) THEN 1 ELSE 0 END) AS ch_{c}" for c in cols)
    dups = ("SUM(CASE WHEN b.n > 1 THEN 1 ELSE 0 END) AS dup_rows_before, SUM(CASE WHEN a.n > 1 THEN 1 ELSE 0 END) AS dup_rows_after, "
            "ROUND(SUM(CASE WHEN b.n > 1 THEN 1 / b.n ELSE 0 END)) AS dup_keys_before, ROUND(SUM(CASE WHEN a.n > 1 THEN 1 / a.n ELSE 0 END)) AS dup_keys_after, "
            if dup else "")
    row = spark.sql(f"SELECT SUM(CASE WHEN b.id IS NOT NULL THEN 1 ELSE 0 END) AS rows_before, "
                    f"SUM(CASE WHEN a.id IS NOT NULL THEN 1 ELSE 0 END) AS rows_after, {dups}"
                    f"SUM(CASE WHEN b.id IS NULL THEN 1 ELSE 0 END) AS added, SUM(CASE WHEN a.id IS NULL THEN 1 ELSE 0 END) AS removed, "
                    f"SUM(CASE WHEN b.id IS NOT NULL AND a.id IS NOT NULL AND ({differ}) THEN 1 ELSE 0 END) AS changed, {per} "
                    f"FROM b0 b FULL OUTER JOIN a0 a ON b.id = a.id").collect()[0].asDict()
else:
    spark.sql(live).createOrReplaceTempView("v")
    row = spark.sql("SELECT COUNT(1) AS n, SUM(CASE WHEN id IS NULL OR a IS NULL THEN 1 ELSE 0 END) AS f0, "
                    "SUM(CASE WHEN n_id > 1 THEN 1 ELSE 0 END) AS f1, "
                    "SUM(CASE WHEN e IS NOT NULL AND e NOT IN (" + ", ".join(f"'s{i}'" for i in range(50)) + ") THEN 1 ELSE 0 END) AS f2, "
                    "SUM(CASE WHEN NOT (c >= 0) THEN 1 ELSE 0 END) AS f4, SUM(CASE WHEN e IS NULL THEN 1 ELSE 0 END) AS f5 "
                    "FROM (SELECT *, COUNT(1) OVER (PARTITION BY id) AS n_id FROM v)").collect()[0].asDict()
print(json.dumps({"seconds": time.monotonic() - started, "row": {k: int(v) for k, v in row.items()}}), flush=True)
spark.stop()
"""

EXPORT = """
import sys
from pyspark.sql import SparkSession
uri, live, declared, out = sys.argv[1:5]
spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "2g")
         .config("spark.sql.catalogImplementation", "hive").config("spark.hadoop.hive.metastore.uris", uri)
         .config("spark.ui.enabled", "false").enableHiveSupport().getOrCreate())
spark.sql("USE bench")
spark.sql(live).write.mode("overwrite").parquet(out + "/before")
spark.sql(declared).write.mode("overwrite").parquet(out + "/after")
spark.stop()
"""

ANCHOR = """
import json, sys, time
import duckdb
import datadiffer
out = sys.argv[1]
con = duckdb.connect()
for side in ("before", "after"):  # one parquet file per side (not timed)
    con.execute(f"COPY (SELECT * FROM read_parquet('{out}/{side}/*.parquet')) TO '{out}/{side}.parquet' (FORMAT parquet)")
con.close()
started = time.monotonic()
report = datadiffer.diff(f"{out}/before.parquet", f"{out}/after.parquet", keys=["id"], attribution="off")
rows = report.rows
print(json.dumps({"seconds": time.monotonic() - started, "modified": rows.modified, "matched": rows.matched}), flush=True)
"""


def run(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 3600) -> tuple[float, str]:
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout)
    elapsed = time.monotonic() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:4])}... failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, proc.stdout


def cli(repo: Path, *args: str) -> tuple[float, dict[str, Any]]:
    elapsed, out = run([sys.executable, "-m", "reconciler.cli", "--repo", str(repo), *args, "--format", "json"])
    return elapsed, json.loads(out)


def write_repo(repo: Path, uri: str, tmp: Path, master: str = "local[2]", conf: dict[str, str] | None = None,
               declared: bool = False) -> None:
    views = []
    for name, table in (("v_small", "t_small"), ("v_big", "t_big")):
        sql = (DECLARED if declared else LIVE).format(table=table)
        views.append({"name": name, "columns": [{"name": n, "type": t} for n, t in COLUMNS], "key": ["id"],
                      "checks": CHECKS, "representations": [{"dialect": "spark", "sql": sql}]})
    (repo / "views" / "hive").mkdir(parents=True, exist_ok=True)
    (repo / "views" / "hive" / "bench.yaml").write_text(yaml.safe_dump({"catalog": "hive", "schema": "bench",
                                                                         "views": views}))
    live_conf = {k: v for k, v in SPARK_CONF.items() if k not in ("spark.master", "spark.driver.memory")}
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "bench", "state": f"sqlite:///{tmp}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": uri, "engine_format": "spark"}},
        "spark": {"live": {"master": master, "driver_memory": "2g", "conf": {**live_conf, **(conf or {})}}}}))


def stripped(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The views of a report without their timings (to compare two runs)."""
    return [{k: v for k, v in view.items() if k != "seconds"} for view in report["views"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--small", type=int, default=1_000_000)
    ap.add_argument("--no-cluster", action="store_true")
    ap.add_argument("--anchor-python", help="a Python with datadiffer (and duckdb) installed")
    ap.add_argument("--runs", type=int, default=1, help="rounds of the four 10M diffs (medians reported)")
    args = ap.parse_args()
    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="viewsync-bench-review-"))
    results: list[tuple[str, str, str]] = []
    big_n, small_n = f"{args.rows / 1e6:g}M", f"{args.small / 1e6:g}M"
    with metastore(tmp) as (port, _, _):
        uri = f"thrift://127.0.0.1:{port}"
        gen, _ = run([sys.executable, "-c", GENERATE, uri, (tmp / "warehouse").as_uri(), str(args.small),
                      str(args.rows)])
        print(f"generated {args.small:,} + {args.rows:,} rows in {gen:.0f} s", file=sys.stderr)
        repo = tmp / "repo"
        write_repo(repo, uri, tmp)
        run([sys.executable, "-m", "reconciler.cli", "--repo", str(repo), "apply", "--auto-approve"])
        write_repo(repo, uri, tmp, declared=True)
        big_live, big_declared = LIVE.format(table="t_big"), DECLARED.format(table="t_big")

        timings: dict[str, list[tuple[float, float]]] = {"floor": [], "dfloor": [], "vs": [], "vs0": []}
        for _ in range(args.runs):  # interleaved rounds: a slow moment of the machine hits all four
            floors: dict[str, Any] = {}
            for name, mode in (("floor", "diff"), ("dfloor", "diff-dup")):
                took, text = run([sys.executable, "-c", FLOOR, uri, mode, "t_big", big_live, big_declared,
                                  json.dumps(SPARK_CONF)])
                floors[name] = json.loads(text.strip().splitlines()[-1])
                timings[name].append((took, floors[name]["seconds"]))
            floor, dfloor = floors["floor"], floors["dfloor"]
            vs_wall, vs = cli(repo, "diff", "--select", "hive.bench.v_big")
            [vd] = vs["views"]
            assert vd["counts"]["changed"] == floor["row"]["changed"], (vd["counts"], floor["row"])
            assert vd["columns"][0]["changed"] == floor["row"]["ch_a"]
            assert vd["duplicates"]["after"]["keys"] == dfloor["row"]["dup_keys_after"], (vd["duplicates"], dfloor)
            timings["vs"].append((vs_wall, vd["seconds"]))
            vs0_wall, vs0 = cli(repo, "diff", "--select", "hive.bench.v_big", "--sample", "0")
            timings["vs0"].append((vs0_wall, vs0["views"][0]["seconds"]))
        small_wall, small = cli(repo, "diff", "--select", "hive.bench.v_small")
        wall = {k: statistics.median(w for w, _ in v) for k, v in timings.items()}
        part = {k: statistics.median(p for _, p in v) for k, v in timings.items()}

        def spread(name: str, i: int) -> str:
            values = [t[i] for t in timings[name]]
            return f" ({min(values):.1f}-{max(values):.1f})" if len(values) > 1 else ""

        def ratios(name: str) -> str:
            return (f"{wall[name]:.1f} s{spread(name, 0)} ({wall[name] / wall['floor']:.2f}x; "
                    f"{wall[name] / wall['dfloor']:.2f}x)")

        def part_ratios(name: str) -> str:
            return (f"Spark part {part[name]:.1f} s ({part[name] / part['floor']:.2f}x; "
                    f"{part[name] / part['dfloor']:.2f}x)")

        results += [
            (f"diff {big_n}: hand-written full outer join (floor)", f"{wall['floor']:.1f} s{spread('floor', 0)}",
             f"Spark part {part['floor']:.1f} s"),
            (f"diff {big_n}: the floor with duplicate keys counted (the report's counts)",
             f"{wall['dfloor']:.1f} s{spread('dfloor', 0)}", f"Spark part {part['dfloor']:.1f} s"),
            (f"diff {big_n}: viewsync diff", ratios("vs"), part_ratios("vs") + f"; changed {vd['counts']['changed']:,}"),
            (f"diff {big_n}: viewsync diff --sample 0", ratios("vs0"), part_ratios("vs0")),
            (f"driver peak RSS, diff {small_n} / {big_n}", f"{small['spark']['driver_peak_rss_mb']} / "
             f"{vs['spark']['driver_peak_rss_mb']} MB", f"{small_n} diff {small_wall:.1f} s"),
        ]
        cfloor_wall, cfloor_out = run([sys.executable, "-c", FLOOR, uri, "check", "t_big", big_live, big_declared,
                                       json.dumps(SPARK_CONF)])
        cfloor = json.loads(cfloor_out.strip().splitlines()[-1])
        check_wall, checked = cli(repo, "check", "--select", "hive.bench.v_big", "--definition", "live")
        [cv] = checked["views"]
        assert cv["rows"] == cfloor["row"]["n"], (cv["rows"], cfloor)
        results += [
            (f"check {big_n}, 6 checks: one hand-written pass (floor)", f"{cfloor_wall:.1f} s",
             f"Spark part {cfloor['seconds']:.1f} s"),
            (f"check {big_n}, 6 checks: viewsync check", f"{check_wall:.1f} s ({check_wall / cfloor_wall:.2f}x)",
             f"Spark part {cv['seconds']:.1f} s ({cv['seconds'] / cfloor['seconds']:.2f}x); "
             f"{checked['summary']['pass']} passed"),
        ]
        if not args.no_cluster:
            from tests.helpers.spark_cluster import standalone

            work = tmp / "cluster"
            work.mkdir()
            with standalone(work, workers=2, cores=1, memory="1g") as master:
                write_repo(repo, uri, tmp, master=master, declared=True,
                           conf={"spark.executor.memory": "768m", "spark.cores.max": "2"})
                cl_wall, cl = cli(repo, "diff", "--select", "hive.bench.v_big")
                _, cl_small = cli(repo, "diff", "--select", "hive.bench.v_small")
            same = stripped(cl) == stripped(vs)
            results.append((f"diff {big_n} on a standalone cluster (2 workers x 1 core)",
                            f"{cl_wall:.1f} s (local[2]: {wall['vs']:.1f} s)",
                            f"Spark part {cl['views'][0]['seconds']:.1f} s; report identical: {same}"))
            results.append((f"driver peak RSS on the cluster, diff {small_n} / {big_n}",
                            f"{cl_small['spark']['driver_peak_rss_mb']} / {cl['spark']['driver_peak_rss_mb']} MB",
                            "the driver runs no tasks there (in local mode it is also the executor)"))
        if args.anchor_python:
            out_dir = tmp / "export"
            run([sys.executable, "-c", EXPORT, uri, big_live, big_declared, str(out_dir)])
            an_wall, an_out = run([args.anchor_python, "-c", ANCHOR, str(out_dir)])
            anchor = json.loads(an_out.strip().splitlines()[-1])
            results.append(("anchor: datadiffer 0.1.0 on DuckDB (the two results as parquet)",
                            f"{anchor['seconds']:.1f} s", f"modified {anchor['modified']:,} of {anchor['matched']:,}; "
                            f"viewsync's Spark part / this = {vd['seconds'] / anchor['seconds']:.2f}x"))
        for r in results:  # as they come too: a failure later keeps what was measured
            print(" | ".join(r), file=sys.stderr)
    load_after = os.getloadavg()
    width = max(len(r[0]) for r in results)
    print(f"\nData review, {args.rows:,} rows x 8 columns, 1 % changed; {os.cpu_count()} cores; load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after\n")
    print(f"| {'run'.ljust(width)} | time | detail |")
    print(f"|{'-' * (width + 2)}|---|---|")
    for name, t, detail in results:
        print(f"| {name.ljust(width)} | {t} | {detail} |")


if __name__ == "__main__":
    main()
