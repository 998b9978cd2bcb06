"""No-op plan at scale on the embedded default (managed SQLite catalog).

Generates N views over M schemas in a fresh repository, applies them, then
times a no-op plan in a fresh process and prints wall time, catalog calls and
peak RSS. Also runs a smaller scale in the same run so the figures can be read
as ratios (calls must grow with schemas, not views).

    python benchmarks/plan_scale.py                  # 10,000 views / 100 schemas, plus 1,000 / 10
    python benchmarks/plan_scale.py --views 2000 --schemas 20 --no-compare

Target: a no-op plan of 10,000 views in 100 schemas within 1.5 s and 300 MB, as a whole
`viewsync plan` process (best of three; the in-process figures show where it goes). The target is
in seconds, so the run also prints how fast the machine's cores were (benchmarks/machine.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from installed import compile_viewsync
from machine import describe

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from pathlib import Path
from reconciler.plan.planner import PlanOptions
from reconciler.workspace import Workspace
t_import = time.perf_counter()
ws = Workspace.open(Path(sys.argv[1]), parallelism=int(sys.argv[2]))
decl = ws.declarations()
t_decl = time.perf_counter()
plan, _ = ws.plan(PlanOptions(project=ws.config.project), decl)
t_end = time.perf_counter()
assert not plan.actions and not plan.errors, (len(plan.actions), plan.errors[:3])
print(json.dumps({"wall_s": t_end - t0, "plan_s": t_end - t_import, "load_decl_s": t_decl - t_import,
                  "fetch_and_diff_s": t_end - t_decl, "import_s": t_import - t0,
                  "calls": ws.catalog_calls(), "unchanged": plan.unchanged,
                  "cpu_s": sum(resource.getrusage(resource.RUSAGE_SELF)[:2]),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def make_repo(root: Path, views: int, schemas: int) -> None:
    (root / "viewsync.yaml").write_text(
        "version: 1\nproject: bench\nstate: sqlite:///.viewsync/state.db\n"
        "catalogs:\n  local: {type: managed, url: 'sqlite:///.viewsync/catalog.db'}\n")
    per = views // schemas
    for s in range(schemas):
        schema = f"schema_{s:03d}"
        docs = []
        for v in range(per):
            docs.append({
                "name": f"view_{v:05d}",
                "comment": f"view {v} of {schema}",
                "columns": [{"name": "id", "type": "bigint", "comment": "key"}, {"name": "amount",
                                                                                 "type": "decimal(18,2)"},
                            {"name": "tags", "type": "array<string>"}],
                "representations": [
                    {"dialect": "spark", "sql": f"SELECT id, amount, tags FROM src.t_{v} WHERE amount > {v}"},
                    {"dialect": "trino", "sql": f"SELECT id, amount, tags FROM src.t_{v} WHERE amount > {v}"}],
                "properties": {"tier": "gold", "index": str(v)},
            })
        path = root / "views" / "local" / f"{schema}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump({"catalog": "local", "schema": schema, "views": docs}, sort_keys=False))


def apply_all(root: Path) -> float:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "reconciler.cli", "--repo", str(root), "apply", "--auto-approve",
                          "--allow-dirty"], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"apply failed:\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    return time.perf_counter() - t0


def noop_plan(root: Path, parallelism: int) -> dict[str, float]:
    res = subprocess.run([sys.executable, "-c", CHILD, str(root), str(parallelism)], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"plan failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout)  # type: ignore[no-any-return]


def cli_plan(root: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of one whole `viewsync plan` process."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([sys.executable, "-m", "reconciler.cli", "--repo", str(root), "plan",
                                 "--detailed-exitcode"], stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            log.seek(0)
            raise SystemExit(f"CLI plan exit {proc.returncode}:\n{log.read()[-2000:].decode()}")
    return seconds, usage.ru_maxrss / 1024


def run(views: int, schemas: int, parallelism: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="viewsync-bench-") as tmp:
        root = Path(tmp)
        make_repo(root, views, schemas)
        apply_s = apply_all(root)
        best: dict[str, float] | None = None
        for _ in range(3):  # best of three: the first run also warms the OS file cache
            got = noop_plan(root, parallelism)
            if best is None or got["wall_s"] < best["wall_s"]:
                best = got
        assert best is not None
        # The target is for the whole process: interpreter start, CLI, plan and its output.
        best["cli_plan_s"], best["cli_rss_mb"] = min(cli_plan(root) for _ in range(3))
        best["apply_s"] = apply_s
        best["views"], best["schemas"] = views, schemas
        return best


def show(r: dict[str, float]) -> None:
    print(f"{int(r['views']):>6} views / {int(r['schemas']):>3} schemas: no-op plan {r['wall_s']:.2f} s "
          f"(imports {r['import_s']:.2f}, declarations {r['load_decl_s']:.2f}, fetch+diff "
          f"{r['fetch_and_diff_s']:.2f}), whole CLI `plan` {r['cli_plan_s']:.2f} s and {r['cli_rss_mb']:.0f} MB, "
          f"catalog calls {int(r['calls'])}, peak RSS {r['peak_rss_mb']:.0f} MB, process CPU {r['cpu_s']:.2f} s "
          f"(initial apply {r['apply_s']:.1f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--views", type=int, default=10_000)
    ap.add_argument("--schemas", type=int, default=100)
    ap.add_argument("--parallelism", type=int, default=8)
    ap.add_argument("--no-compare", action="store_true", help="skip the 1/10-scale comparison run")
    args = ap.parse_args()
    compile_viewsync()
    print(f"at start: {describe()}")
    big = run(args.views, args.schemas, args.parallelism)
    show(big)
    if not args.no_compare:
        small = run(args.views // 10, max(1, args.schemas // 10), args.parallelism)
        show(small)
        print(f"ratios (large/small): views x{big['views'] / small['views']:.0f}, schemas "
              f"x{big['schemas'] / small['schemas']:.0f}, catalog calls x{big['calls'] / small['calls']:.1f}, "
              f"no-op plan time x{big['wall_s'] / small['wall_s']:.1f}, peak RSS x"
              f"{big['peak_rss_mb'] / small['peak_rss_mb']:.1f}")
    # The target is for the whole process (the CLI `plan`, best of three). On a shared machine the
    # wall time includes waiting for a core: the CPU time does not depend on the load (printed above).
    ok = big["cli_plan_s"] <= 1.5 and big["cli_rss_mb"] <= 300
    # The target is in seconds: the reference workload tells how fast the cores were.
    print(f"at end: {describe()}")
    verdict = ("met" if ok else "NOT met") if (args.views, args.schemas) == (10_000, 100) else "not measured"
    print(f"target (whole CLI `plan` <= 1.5 s and <= 300 MB at 10,000 views / 100 schemas): {verdict}")


if __name__ == "__main__":
    main()
