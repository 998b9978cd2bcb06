"""How fast this machine's cores are today, so absolute figures can be read across runs.

The targets in seconds (a no-op plan of 10,000 views within 1.5 s) depend on the core
they run on, and a shared VM's core is not the same speed from day to day: the same
commit has measured twice as slow on one day as on another here. plan_scale.py prints
the time of one fixed single-core workload at the start and end of its run, the same
kind of work a plan does (JSON, hashing, dicts and strings in pure Python): when it
doubles, every absolute figure of that run is expected to double with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time


def _workload() -> int:
    doc = {"columns": [{"name": f"c{i}", "type": "decimal(18,2)", "comment": None} for i in range(20)],
           "properties": {f"k{i}": str(i) for i in range(20)}, "sql": "SELECT id FROM t WHERE x > 1"}
    total = 0
    for i in range(2_000):
        text = json.dumps(doc, sort_keys=True)
        back = json.loads(text)
        total += len(hashlib.sha256(text.encode()).hexdigest()) + len(back["columns"])
        total += sum(len(k) for k in {f"{c['name']}_{i}": c for c in back["columns"]})
    return total


def reference_seconds(runs: int = 5) -> float:
    """Median wall seconds of the fixed workload (0.09-0.17 s on this project's machine)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        _workload()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def describe() -> str:
    return (f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, reference workload "
            f"{reference_seconds():.3f} s (benchmarks/machine.py; one core, lower is faster)")


if __name__ == "__main__":
    print(describe())
