"""Client CPU of `viewsync apply` creating N views on a real Hive Metastore, without a profiler:
checkouts compared run for run, interleaved, on one metastore; each apply's process wall time
beside it.

Each run applies N creates from a fresh repository (new state store, emptied database) in a
child process and reads the child's CPU (rusage: user + system, interpreter start and imports
included). `--fixed` also applies one view per round, so the report splits the CPU per view
into the command's fixed cost and the cost of each further view.

    python benchmarks/hms_cpu.py --n 1000 --rounds 4 --fixed /path/to/other/checkout .

Each checkout is a directory holding `reconciler/` and `schemas/` (e.g. `git archive main`
unpacked); its modules are byte-compiled first, as an installation has them.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hms_vs_thrift import DB, fresh_repo, warm_metastore
from installed import compile_trees


def apply_cpu(tree: Path, work: Path, port: int, c: Any, n: int,
              parallelism: int) -> tuple[float, float, int, float]:
    """(user, system) CPU seconds of one apply of `n` creates run from `tree`, the views created,
    and the process's wall time (interpreter start-up included)."""
    root = fresh_repo(work, port, c, n)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "reconciler", "--repo", str(root), "--parallelism", str(parallelism),
                           "apply", "--auto-approve", "--allow-dirty"], capture_output=True, text=True, cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    created = len(c.get_all_tables(DB))
    if done.returncode != 0 or created != n:
        raise SystemExit(f"{tree}: apply created {created} of {n}\n{done.stdout[-1500:]}{done.stderr[-2000:]}")
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, created, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", type=Path, help="checkouts to compare (directories holding reconciler/)")
    ap.add_argument("--n", type=int, default=1_000)
    ap.add_argument("--parallelism", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fixed", action="store_true", help="also apply 1 view per round: the fixed cost")
    args = ap.parse_args()
    trees = [t.resolve() for t in args.trees]
    compile_trees(trees)
    per_view: dict[Path, list[float]] = {t: [] for t in trees}
    fixed: dict[Path, list[float]] = {t: [] for t in trees}
    walls: dict[Path, list[float]] = {t: [] for t in trees}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="viewsync-hms-cpu-") as tmp:
        work = Path(tmp)
        with warm_metastore(work) as (port, c):
            for r in range(args.rounds):
                for tree in trees if r % 2 == 0 else trees[::-1]:  # interleaved, alternating order
                    user, system, created, wall = apply_cpu(tree, work, port, c, args.n, args.parallelism)
                    per_view[tree].append((user + system) / created * 1000)
                    walls[tree].append(wall)
                    line = (f"round {r} {tree}: {args.n} creates, CPU {user + system:.3f} s (user {user:.3f}) "
                            f"= {per_view[tree][-1]:.3f} ms per view, wall {wall:.3f} s")
                    if args.fixed:
                        u1, s1, _, _ = apply_cpu(tree, work, port, c, 1, args.parallelism)
                        fixed[tree].append(u1 + s1)
                        line += f"; 1 create {u1 + s1:.3f} s"
                    print(f"{line}; load {os.getloadavg()[0]:.2f}", flush=True)
    print(f"\nclient CPU per created view, {args.n} creates, --parallelism {args.parallelism}, {args.rounds} rounds "
          f"interleaved; load {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end ({os.cpu_count()} cores)")
    for tree in trees:
        v = per_view[tree]
        w = walls[tree]
        line = (f"{tree}: median {statistics.median(v):.3f} ms (min {min(v):.3f}, max {max(v):.3f}); "
                f"wall {statistics.median(w):.3f} s ({min(w):.3f}-{max(w):.3f})")
        if fixed[tree]:
            f = statistics.median(fixed[tree])
            line += (f"; fixed (1 create) {f:.3f} s, each further view "
                     f"{(statistics.median(v) * args.n / 1000 - f) / (args.n - 1) * 1000:.3f} ms")
        print(line)


if __name__ == "__main__":
    main()
