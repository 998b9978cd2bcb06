"""A no-op `viewsync plan` on a real Hive Metastore, checkouts compared run for run against the
raw bulk read (issue 44, item 4: the plan <= 0.8x the raw read).

Applies N views once (from the first checkout), then each round times the raw bulk read
(get_table_meta, then get_table_objects_by_name of 100 names at a time, one connection, as
benchmarks/hms_vs_thrift.py does) and `viewsync plan --detailed-exitcode` from every checkout,
in alternating order. After the rounds, as many more time the same reads split over --raw-threads
connections opened beforehand: the metastore's own parallel speed, which no client's reads beat.
Then the same parallel reads once more beside a process that keeps a core as busy as the plans
kept theirs on average (their CPU over their wall): on a machine the client shares with the
metastore, what the plan's own work (decoding views, loading declarations) leaves the metastore.
A plan's time is the command's own (imports and the interpreter's exit included, its start-up
excluded), as hms_vs_thrift.py counts it; every plan must find nothing to do.

    python benchmarks/hms_noop_plan.py --n 1000 --rounds 11 /path/to/other/checkout .

Each checkout is a directory holding `reconciler/` and `schemas/` (e.g. `git archive <commit>
reconciler schemas` unpacked); its modules are byte-compiled first, as an installation has them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from hms_vs_thrift import DB, children_cpu, client, fresh_repo, run_child, warm_metastore
from installed import compile_trees


def raw_bulk_read(c: Any, db: str) -> float:
    """Seconds to list the database and read all its tables, 100 per call, on one connection."""
    t0 = time.perf_counter()
    names = sorted(m.tableName for m in c.get_table_meta(db, "*", []))
    for i in range(0, len(names), 100):
        c.get_table_objects_by_name(db, names[i:i + 100])
    return time.perf_counter() - t0


def raw_parallel_read(clients: list[Any], db: str) -> float:
    """The raw bulk read with its chunks dealt round-robin to one thread per client."""
    t0 = time.perf_counter()
    names = sorted(m.tableName for m in clients[0].get_table_meta(db, "*", []))
    chunks = [names[i:i + 100] for i in range(0, len(names), 100)]

    def read(k: int) -> None:
        for chunk in chunks[k::len(clients)]:
            clients[k].get_table_objects_by_name(db, chunk)

    threads = [threading.Thread(target=read, args=(k,)) for k in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def busy(share: float, stop: Event) -> None:
    """Keep `share` of one core busy (in 10 ms periods) until `stop` is set."""
    while not stop.is_set():
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 0.01 * share:
            pass
        time.sleep(0.01 * (1 - share))


def beside_busy(share: float, read: Callable[[], float]) -> float:
    """`read()`'s seconds while another process keeps `share` of a core busy."""
    stop = multiprocessing.Event()
    burner = multiprocessing.Process(target=busy, args=(share, stop), daemon=True)
    burner.start()
    time.sleep(0.05)
    try:
        return read()
    finally:
        stop.set()
        burner.join()


def noop_plan(tree: Path, root: Path) -> float:
    """The command's seconds of a plan run from `tree`; it must find nothing to do."""
    seconds, done = run_child(["--repo", str(root), "plan", "--detailed-exitcode"], cwd=tree,
                              env={**os.environ, "PYTHONPATH": str(tree)})
    if done.returncode != 0:  # --detailed-exitcode: 2 is a plan with changes
        raise SystemExit(f"{tree}: the plan is not a no-op ({done.returncode})\n"
                         f"{done.stdout[-1500:]}{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", type=Path, help="checkouts to compare (directories holding reconciler/)")
    ap.add_argument("--n", type=int, default=1_000)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--raw-threads", type=int, default=os.cpu_count() or 2,
                    help="connections the parallel raw read uses (default: the machine's cores)")
    args = ap.parse_args()
    trees = [t.resolve() for t in args.trees]
    compile_trees(trees)
    raw: list[float] = []
    parallel: list[float] = []
    contended: list[float] = []
    ours: dict[Path, list[float]] = {t: [] for t in trees}
    # each plan's CPU over its wall, all checkouts' together; a little high, as the CPU includes
    # the interpreter's start-up, which the wall leaves out
    shares: list[float] = []
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="viewsync-hms-noop-") as tmp:
        work = Path(tmp)
        with warm_metastore(work) as (port, c):
            root = fresh_repo(work, port, c, args.n)
            subprocess.run([sys.executable, "-m", "reconciler", "--repo", str(root), "apply", "--auto-approve",
                            "--allow-dirty"], check=True, capture_output=True, cwd=trees[0],
                           env={**os.environ, "PYTHONPATH": str(trees[0])})
            for r in range(args.rounds):
                raw.append(raw_bulk_read(c, DB))
                for tree in trees if r % 2 == 0 else trees[::-1]:  # interleaved, alternating order
                    cpu0 = children_cpu()
                    ours[tree].append(noop_plan(tree, root))
                    shares.append((children_cpu() - cpu0) / ours[tree][-1])
                print(f"round {r}: raw {raw[-1]:.3f} s, " + ", ".join(f"{t.name} {ours[t][-1]:.3f} s" for t in trees)
                      + f"; load {os.getloadavg()[0]:.2f}", flush=True)
            # After the rounds, not in them: with these reads in each round, the plans of one run
            # measured ~10% slower.
            readers = [client(port) for _ in range(args.raw_threads)]
            share = min(1.0, statistics.median(shares))
            for _ in range(args.rounds):
                parallel.append(raw_parallel_read(readers, DB))
            for _ in range(args.rounds):
                contended.append(beside_busy(share, lambda: raw_parallel_read(readers, DB)))
            for reader in readers:
                reader.close()
    base = statistics.median(raw)
    print(f"\nno-op plan of {args.n:,} views, {args.rounds} rounds interleaved; load {load0:.2f} at start, "
          f"{os.getloadavg()[0]:.2f} at end ({os.cpu_count()} cores)\n")
    print("| run | median s (min-max) | / raw bulk read |")
    print("|---|---|---|")
    print(f"| raw bulk read | {base:.3f} ({min(raw):.3f}-{max(raw):.3f}) | 1.00 |")
    print(f"| raw bulk read on {args.raw_threads} threads (the metastore's parallel speed) | "
          f"{statistics.median(parallel):.3f} ({min(parallel):.3f}-{max(parallel):.3f}) | "
          f"{statistics.median(parallel) / base:.2f} |")
    print(f"| the same beside {share:.2f} of a core kept busy (the plans' median CPU over wall) | "
          f"{statistics.median(contended):.3f} ({min(contended):.3f}-{max(contended):.3f}) | "
          f"{statistics.median(contended) / base:.2f} |")
    for tree in trees:
        v = ours[tree]
        print(f"| {tree} | {statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f}) | "
              f"{statistics.median(v) / base:.2f} |")


if __name__ == "__main__":
    main()
