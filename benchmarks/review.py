"""`viewsync review` vs the separate commands the plan workflow ran before it (issue 42, item 3).

A pull request of the sample: a copy of the repository's sample (views/, sources/ with the data
files sources/data/ gives its managed catalog) in a git repository, applied on `main`, then a
branch that changes `local.sales.completed_orders`' filter (`daily_revenue` reads it). On it,
each a fresh process as CI runs them:

- separate: `plan --spark --base main --format markdown --out plan.json`, `diff --base main
  --format markdown --out diff.md`, `check --format junit --out checks.xml`, `check --format
  markdown --out checks.md`, `test --format junit --out viewsync-tests.xml` (the workflow's steps
  before `review`);
- review: `review --base main --format markdown --out comment.md --junit junit --json review.json`.

Interleaved, --runs times each (3 by default); the table gives medians (min-max), the ratio
of medians, the Spark starts of `review` (its JSON counts them) and the machine's load
(`uptime`) before and after. Target: review <= 0.6x separate. Starts JVMs: run it under the
machine lock (`flock /work/bench.lock python benchmarks/review.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = "main"
SEPARATE = [
    ["plan", "--spark", "--base", BASE, "--format", "markdown", "--out", "plan.json"],
    ["diff", "--base", BASE, "--format", "markdown", "--out", "diff.md"],
    ["check", "--format", "junit", "--out", "checks.xml"],
    ["check", "--format", "markdown", "--out", "checks.md"],
    ["test", "--format", "junit", "--out", "viewsync-tests.xml"],
]
REVIEW = ["review", "--base", BASE, "--format", "markdown", "--out", "comment.md", "--junit", "junit",
          "--json", "review.json"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def viewsync(repo: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    """One `viewsync --no-color ARGS` in a fresh process, as a workflow step runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GIT_AUTHOR_NAME": "bench", "GIT_COMMITTER_NAME": "bench"}
    done = subprocess.run([sys.executable, "-m", "reconciler", "--no-color", "--repo", str(repo), *args], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=900)
    if check and done.returncode != 0:
        raise SystemExit(f"viewsync {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def sample_pr(where: Path) -> Path:
    """The sample, applied on `main`, and a branch changing completed_orders' filter."""
    repo = where / "repo"
    repo.mkdir()
    shutil.copy(ROOT / "viewsync.yaml", repo / "viewsync.yaml")
    shutil.copytree(ROOT / "views", repo / "views")
    shutil.copytree(ROOT / "sources", repo / "sources")
    (repo / ".gitignore").write_text(".viewsync/\n*.md\n*.json\n*.xml\njunit/\n")
    git(repo, "init", "-q", "-b", BASE)
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sample")
    viewsync(repo, "apply", "--auto-approve", check=True)
    git(repo, "checkout", "-q", "-b", "pr")
    path = repo / "views" / "local" / "sales.yaml"
    text = path.read_text()
    path.write_text(text.replace("WHERE status = 'completed'\n      - dialect: trino",
                                 "WHERE status IN ('completed', 'shipped')\n      - dialect: trino", 1))
    git(repo, "commit", "-qam", "completed_orders: shipped orders count too")
    return repo


def separate(repo: Path) -> float:
    started = time.monotonic()
    for args in SEPARATE:
        viewsync(repo, *args)
    return time.monotonic() - started


def review(repo: Path) -> tuple[float, int]:
    started = time.monotonic()
    done = viewsync(repo, *REVIEW)
    elapsed = time.monotonic() - started
    if done.returncode not in (0, 1) or not (repo / "review.json").exists():
        raise SystemExit(f"viewsync review exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    starts = json.loads((repo / "review.json").read_text())["spark"]["starts"]
    return elapsed, int(starts)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.2f} s ({min(xs):.2f}-{max(xs):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="viewsync-bench-review-") as tmp:
        repo = sample_pr(Path(tmp))
        viewsync(repo, *REVIEW)  # warm: the class-data-sharing archive exists before anything is timed
        before = uptime()
        times: dict[str, list[float]] = {"separate": [], "review": []}
        starts: list[int] = []
        for _ in range(args.runs):
            times["separate"].append(separate(repo))
            elapsed, n = review(repo)
            times["review"].append(elapsed)
            starts.append(n)
        after = uptime()
    ratio = statistics.median(times["review"]) / statistics.median(times["separate"])
    print(f"viewsync review vs the workflow's separate commands, {args.runs} interleaved runs each, "
          f"on a PR of the sample (completed_orders changed; daily_revenue reads it)")
    print("| way | median (min-max) | Spark starts |\n|---|---|---|")
    print(f"| separate: plan --spark, diff, check junit, check markdown, test junit | "
          f"{spread(times['separate'])} | {len(SEPARATE)} (one per command) |")
    print(f"| review --base (markdown, junit, json) | {spread(times['review'])} | {', '.join(map(str, starts))} |")
    print(f"ratio of medians: {ratio:.2f}x (target <= 0.6x)")
    print(f"load before: {before}\nload after:  {after}")


if __name__ == "__main__":
    main()
