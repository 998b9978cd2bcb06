"""Hostile-input scaling: output redaction and dependency ordering must be linear.

Prints wall times at two sizes and their ratio (10x the input should take ~10x,
not ~100x). Run: python benchmarks/hostile_scale.py
"""

from __future__ import annotations

import time

from reconciler.core import deps, secrets


def _time(fn, *args) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    known = frozenset({"Hunter2-Secret", "db.internal.example"})
    small, big = 100_000, 1_000_000
    for label, unit in (("letters", "a"), ("colons", "a:"), ("schemes", "x://u:")):
        t1 = _time(secrets.redact, (unit * small)[:small], known)
        t2 = _time(secrets.redact, (unit * big)[:big], known)
        print(f"redact {label:8s} {small:>9,} chars {t1:.4f}s  {big:>9,} chars {t2:.4f}s  ratio {t2 / t1:.1f}")

    def chain(n: int) -> None:
        order, cycle = deps.topological([n - 1], lambda v: [v - 1] if v else [], key=lambda v: v)
        assert cycle is None and len(order) == n

    t1, t2 = _time(chain, 10_000), _time(chain, 100_000)
    print(f"order chain 10,000 views {t1:.4f}s  100,000 views {t2:.4f}s  ratio {t2 / t1:.1f}")


if __name__ == "__main__":
    main()
