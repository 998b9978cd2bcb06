"""Spark verification at scale, reported as a table.

Generates N declared views over 20 source tables (about a third read another
view) on the embedded managed catalog with sources/ files, then measures, each
in a fresh Python process with a fresh Spark worker (so Spark start-up counts):

- full:        `validate --spark` of every view (Spark start + analysis of all);
- incremental: `plan --spark` after applying everything and changing K views
               (verifies the changed views and their dependents);
- the JVM's peak resident memory in each.

    python benchmarks/spark_verify.py                    # 1,000 views, 50 changed, 3 runs
    python benchmarks/spark_verify.py --views 200 --runs 1

Targets (issue 44, 2-core machine): full ≤ 12 s, incremental ≤ 5 s, JVM ≤ 600 MB (issue 10's
were 35 s, 10 s and 1 GB). `--against-jvm-options=-XX:+UseSerialGC` measures each run again right
after it with other `spark.jvm_options`: a before-and-after of the JVM's settings in one run.
The first run on a machine also writes the class-data-sharing archive
(~/.cache/viewsync); run once before measuring, as CI caches do.
"""

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

import yaml

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from reconciler.plan.planner import PlanOptions
from reconciler.services import spark as spark_service
from reconciler.verify import planning, session
from reconciler.workspace import Workspace
root, mode = Path(sys.argv[1]), sys.argv[2]
ws = Workspace.open(root)
decl = ws.declarations()
if mode == "full":
    result = planning.validate(root, ws.config, decl)
    checked, errors = sum(1 for r in result.results.values() if r.status in ("ok", "warning")), len(result.errors())
    actions = None
else:
    plan = spark_service.plan(ws, PlanOptions(project=ws.config.project), decl, None, None, False)
    ver = plan.verification or {}
    checked = sum(1 for r in ver.get("views", []) if r["status"] in ("ok", "warning"))
    errors, actions = len(plan.errors), len(plan.actions)
wall = time.perf_counter() - t0
worker = session.worker(planning.settings_of(ws.config))  # the one this process started
print(json.dumps({"wall_s": wall, "spark_start_s": worker.start_seconds, "checked": checked,
                  "errors": errors, "actions": actions, "jvm_peak_rss_mb": worker.peak_rss_mb()}))
session.PROCESS.close()
"""

TABLE_COLUMNS = [("id", "bigint"), ("k", "int"), ("amount", "decimal(18,2)"), ("name", "string"),
                 ("ts", "timestamp"), ("flag", "boolean")]


def view_doc(i: int, tables: int, changed: bool) -> dict[str, object]:
    """View i: every third (after the first) reads an earlier view, the others a table."""
    extra = " AND id > 0" if changed else ""
    if i % 3 == 0 and i > 0:
        src = i - 1 - (i % 7) if i - 1 - (i % 7) >= 0 else i - 1
        src -= 1 if src % 3 == 0 and src > 0 else 0  # read a view that itself reads a table
        sql = f"SELECT id, amount2 + 1 AS amount2, name FROM marts_{src // 100:02d}.v_{src:04d} WHERE id > 1{extra}"
    else:
        sql = (f"SELECT id, CAST(amount * 2 AS decimal(20,2)) AS amount2, upper(name) AS name "
               f"FROM src.t_{i % tables:02d} WHERE flag{extra}")
    return {"name": f"v_{i:04d}",
            "columns": [{"name": "id", "type": "bigint"},
                        {"name": "amount2", "type": "decimal(20,2)" if not (i % 3 == 0 and i > 0)
                         else "decimal(21,2)"},
                        {"name": "name", "type": "string"}],
            "representations": [{"dialect": "spark", "sql": sql}]}


def make_repo(root: Path, views: int, tables: int, changed: set[int], jvm_options: list[str] | None = None) -> None:
    (root / "viewsync.yaml").write_text(
        "version: 1\nproject: bench\nstate: sqlite:///.viewsync/state.db\n"
        "catalogs:\n  local: {type: managed, url: 'sqlite:///.viewsync/catalog.db'}\n"
        + (f"spark:\n  jvm_options: {json.dumps(jvm_options)}\n" if jvm_options else ""))
    (root / "sources" / "local").mkdir(parents=True, exist_ok=True)
    (root / "sources" / "local" / "src.yaml").write_text(yaml.safe_dump({
        "catalog": "local", "schema": "src",
        "tables": [{"name": f"t_{t:02d}", "columns": [{"name": n, "type": ty} for n, ty in TABLE_COLUMNS]}
                   for t in range(tables)]}, sort_keys=False))
    (root / "views" / "local").mkdir(parents=True, exist_ok=True)
    for s in range((views + 99) // 100):
        docs = [view_doc(i, tables, i in changed) for i in range(s * 100, min(views, (s + 1) * 100))]
        (root / "views" / "local" / f"marts_{s:02d}.yaml").write_text(yaml.safe_dump(
            {"catalog": "local", "schema": f"marts_{s:02d}", "views": docs}, sort_keys=False))


def child(root: Path, mode: str) -> dict[str, float]:
    load = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, "-c", CHILD, str(root), mode], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if proc.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["load"] = load
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--views", type=int, default=1000)
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--changed", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--against-jvm-options", metavar="OPTIONS",
                    help="also measure each run, right after it, with these spark.jvm_options (e.g. "
                         "'-XX:+UseSerialGC', the collector before issue 44)")
    args = ap.parse_args()
    against = args.against_jvm_options.split() if args.against_jvm_options else []
    with tempfile.TemporaryDirectory(prefix="viewsync-spark-bench-") as tmp:
        root = Path(tmp)
        make_repo(root, args.views, args.tables, set())
        subprocess.run([sys.executable, "-m", "reconciler.cli", "--repo", str(root), "apply", "--auto-approve",
                        "--allow-dirty"], check=True, capture_output=True, timeout=900)
        step = max(1, args.views // max(1, args.changed))
        changed = set(range(1, args.views, step)[:args.changed])
        full, incr, full_b, incr_b = [], [], [], []
        # each run, then its counterpart with --against-jvm-options (interleaved)
        variants = [(None, full, incr)] + ([(against, full_b, incr_b)] if against else [])
        for _ in range(args.runs):
            for opts, f_runs, _ in variants:
                make_repo(root, args.views, args.tables, set(), opts)
                f_runs.append(child(root, "full"))
            for opts, _, i_runs in variants:
                make_repo(root, args.views, args.tables, changed, opts)
                i_runs.append(child(root, "incremental"))
        print(f"viewsync Spark verification: {args.views} views over {args.tables} tables "
              f"({sum(1 for i in range(args.views) if i % 3 == 0 and i > 0)} read another view), "
              f"{len(changed)} changed; {args.runs} run(s); {os.cpu_count()} CPU(s); "
              f"load average {os.getloadavg()[0]:.1f} at the end")
        print()
        print("| measurement | median | min | max | target |")
        print("|---|---:|---:|---:|---:|")
        for opts, f_runs, i_runs in variants:
            label = f"with {' '.join(opts)}: " if opts else ""
            rows = [(f"{label}full validate --spark, wall incl. Spark start (s)", [r["wall_s"] for r in f_runs],
                     "≤ 12"),
                    ("  of which Spark start (s)", [r["spark_start_s"] for r in f_runs], ""),
                    (f"{label}incremental plan --spark, {len(changed)} changed, wall (s)",
                     [r["wall_s"] for r in i_runs], "≤ 5"),
                    ("  of which Spark start (s)", [r["spark_start_s"] for r in i_runs], ""),
                    (f"{label}JVM peak RSS, full (MB)", [r["jvm_peak_rss_mb"] or 0 for r in f_runs], "≤ 600"),
                    (f"{label}JVM peak RSS, incremental (MB)", [r["jvm_peak_rss_mb"] or 0 for r in i_runs], "≤ 600")]
            for name, values, target in rows:
                print(f"| {name} | {statistics.median(values):.1f} | {min(values):.1f} | {max(values):.1f} "
                      f"| {target} |")
        print()
        print("load (1 min) at each run's start: full " + ", ".join(f"{r['load']:.2f}" for r in full)
              + "; incremental " + ", ".join(f"{r['load']:.2f}" for r in incr))
        print()
        print(f"views verified: full {full[-1]['checked']:.0f} (errors {full[-1]['errors']:.0f}), incremental "
              f"{incr[-1]['checked']:.0f} with {incr[-1]['actions']} action(s) (errors {incr[-1]['errors']:.0f})")


if __name__ == "__main__":
    started = time.monotonic()
    main()
    print(f"benchmark took {time.monotonic() - started:.0f} s")
