"""Where the client's CPU goes in `viewsync apply` of N creates on a real Hive Metastore.

Starts a metastore as benchmarks/hms_vs_thrift.py does, then runs the apply in a child
process under cProfile, every thread profiled (the records thread and the writers), and
prints the child's CPU per created view (rusage: imports included) and the top entries.

    python benchmarks/hms_profile.py --n 1000 --parallelism 1 --top 30
"""

from __future__ import annotations

import argparse
import json
import pstats
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from hms_vs_thrift import DB, fresh_repo, warm_metastore
from installed import compile_viewsync

# Every thread's run() under its own profiler, merged with the main thread's at the end.
CHILD = r"""
import cProfile, json, pstats, sys, threading, time
out = sys.argv.pop(1)
# wall: time waited on the metastore counts; cpu: each thread's own CPU only (time.thread_time)
clock = time.thread_time if sys.argv.pop(1) == "cpu" else time.perf_counter
profiles = []
_run = threading.Thread.run
def run(self):
    p = cProfile.Profile(clock)
    profiles.append(p)
    p.runcall(_run, self)
threading.Thread.run = run
main = cProfile.Profile(clock)
t0 = time.perf_counter()
main.enable()
from reconciler.cli import app
try:
    app(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as e:
    code = e.code or 0
main.disable()
stats = pstats.Stats(main)
for p in profiles:
    stats.add(p)
stats.dump_stats(out)
print(json.dumps({"s": time.perf_counter() - t0, "code": code}), file=sys.stderr)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000)
    ap.add_argument("--parallelism", type=int, default=1)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--out", type=Path, help="keep the profile here (pstats format)")
    ap.add_argument("--callees", nargs="*", default=[], help="also print what these functions call (regexes)")
    ap.add_argument("--cpu", action="store_true",
                    help="time each function by its thread's CPU (time.thread_time), so waits on the metastore "
                         "and on other threads drop out")
    ap.add_argument("--noop-plan", action="store_true",
                    help="after the apply, profile `viewsync plan` with nothing to do instead (issue 44, item 4)")
    args = ap.parse_args()
    compile_viewsync()
    with tempfile.TemporaryDirectory(prefix="viewsync-hms-profile-") as tmp:
        work = Path(tmp)
        with warm_metastore(work) as (port, c):
            root = fresh_repo(work, port, c, args.n)
            out = work / "apply.prof"
            apply = ["--repo", str(root), "--parallelism", str(args.parallelism), "apply", "--auto-approve",
                     "--allow-dirty"]
            if args.noop_plan:  # unprofiled apply, then the plan that finds nothing to do
                subprocess.run([sys.executable, "-m", "reconciler.cli", *apply], check=True, capture_output=True)
            command = ["--repo", str(root), "plan", "--detailed-exitcode"] if args.noop_plan else apply
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            res = subprocess.run([sys.executable, "-c", CHILD, str(out), "cpu" if args.cpu else "wall",
                                  *command], capture_output=True, text=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if res.returncode != 0:
                raise SystemExit(res.stdout[-2000:] + res.stderr[-3000:])
            got = json.loads(res.stderr.strip().splitlines()[-1])
            if got["code"] != 0:  # --detailed-exitcode: 2 would mean the plan found changes
                raise SystemExit(f"exit code {got['code']}:\n" + res.stdout[-2000:])
            views = len(c.get_all_tables(DB))
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            # the plan runs at the default parallelism; --parallelism is the apply's
            what = "no-op plan of" if args.noop_plan else f"apply (--parallelism {args.parallelism}) of"
            print(f"{what} {args.n} views, profiled: {got['s']:.2f} s; "
                  f"{views} in the metastore; child CPU {cpu:.2f} s = {cpu / max(views, 1) * 1000:.2f} ms per view "
                  f"(profiling overhead included)")
            stats = pstats.Stats(str(out))
            stats.sort_stats("tottime").print_stats(args.top)
            stats.sort_stats("cumulative").print_stats(args.top)
            for pattern in args.callees:
                stats.print_callees(pattern)
            if args.out:
                stats.dump_stats(str(args.out))


if __name__ == "__main__":
    main()
