"""Cost of the project-owned spec digest (canonical form v1) against pydantic's
serialised form, which releases before it hashed (the same bytes).

Digests are computed for every declared and every live view of a plan, so at
10,000 views this is on the no-op plan's critical path.

    python benchmarks/spec_digest.py              # 10,000 specs, 8 columns, 2 dialects, 5 rounds
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time

from reconciler.core.model import ViewSpec, canonical_bytes


def make_specs(n: int, columns: int) -> list[ViewSpec]:
    return [ViewSpec.model_validate({
        "comment": f"view {i}",
        "columns": [{"name": f"c{j}", "type": "decimal(18,2)" if j % 2 else "bigint"} for j in range(columns)],
        "representations": [{"dialect": "trino", "sql": f"SELECT * FROM t{i}"},
                            {"dialect": "spark", "sql": f"SELECT * FROM t{i} WHERE x = 'é'"}],
        "default_namespace": ["analytics"], "properties": {"tier": "gold", "domain": "sales"},
    }) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--specs", type=int, default=10_000)
    ap.add_argument("--columns", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    specs = make_specs(args.specs, args.columns)
    assert all(canonical_bytes(s) == s.__pydantic_serializer__.to_json(s) for s in specs)
    ours, theirs = [], []
    for _ in range(args.rounds):  # interleaved, so machine load hits both alike
        t = time.perf_counter()
        for s in specs:
            hashlib.sha256(canonical_bytes(s)).hexdigest()
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        for s in specs:
            hashlib.sha256(s.__pydantic_serializer__.to_json(s)).hexdigest()
        theirs.append(time.perf_counter() - t)
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"{args.specs} specs: canonical form v1 {a * 1e6 / args.specs:.1f} us/spec, "
          f"pydantic serialiser {b * 1e6 / args.specs:.1f} us/spec, ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
