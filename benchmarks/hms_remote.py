"""`viewsync apply` of N creates on a Hive Metastore a network away: checkouts compared run for
run, interleaved, through a relay that delivers every piece of data half a round trip after it was
sent, in each direction (latency, as a metastore in another rack or zone adds; not a slower server).

A local metastore answers a create in ~2.5 ms and a round trip on the loopback costs ~0.05 ms; a
metastore elsewhere adds its round trip to every call a client waits for. Apply sends its creates
ahead of their answers on the metastore's connection (README, "Apply"), so only the first waits
for it. The relay is Python in this process: at --rtt-ms 0 it costs both sides alike.

    python benchmarks/hms_remote.py --rtt-ms 1 --rounds 3 /path/to/other/checkout .

Each checkout is a directory holding `reconciler/` and `schemas/` (e.g. `git archive <commit>
reconciler schemas` unpacked); its modules are byte-compiled first, as an installation has them.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from hms_vs_thrift import DB, fresh_repo, warm_metastore
from installed import compile_trees


def _carry(src: socket.socket, dst: socket.socket, delay: float) -> None:
    """src's bytes to dst, each piece `delay` seconds after it arrived, in order."""
    due: list[tuple[float, int, bytes]] = []
    ready = threading.Condition()
    ended = False

    def deliver() -> None:
        while True:
            with ready:
                while not due and not ended:
                    ready.wait()
                if not due:
                    break
                wait = due[0][0] - time.monotonic()
                if wait > 0:
                    ready.wait(wait)
                    continue
                _, _, data = heapq.heappop(due)
            try:
                dst.sendall(data)
            except OSError:
                break
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    threading.Thread(target=deliver, daemon=True).start()
    count = 0
    try:
        while data := src.recv(65536):
            count += 1
            with ready:
                heapq.heappush(due, (time.monotonic() + delay, count, data))
                ready.notify()
    except OSError:
        pass
    with ready:
        ended = True
        ready.notify()


def latency_relay(target: int, rtt: float) -> int:
    """A port relaying to `target` with `rtt` seconds of round trip; serves until the process ends."""
    listener = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        while True:
            client, _ = listener.accept()
            server = socket.create_connection(("127.0.0.1", target))
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=_carry, args=(client, server, rtt / 2), daemon=True).start()
            threading.Thread(target=_carry, args=(server, client, rtt / 2), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    port: int = listener.getsockname()[1]
    return port


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", type=Path, help="checkouts to compare (directories holding reconciler/)")
    ap.add_argument("--n", type=int, default=1_000)
    ap.add_argument("--rtt-ms", type=float, default=1.0, help="round trip added by the relay, milliseconds")
    ap.add_argument("--parallelism", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    trees = [t.resolve() for t in args.trees]
    compile_trees(trees)
    walls: dict[Path, list[float]] = {t: [] for t in trees}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="viewsync-hms-remote-") as tmp:
        work = Path(tmp)
        with warm_metastore(work) as (port, c):
            relayed = latency_relay(port, args.rtt_ms / 1000)
            for r in range(args.rounds):
                for tree in trees if r % 2 == 0 else trees[::-1]:  # interleaved, alternating order
                    root = fresh_repo(work, relayed, c, args.n)
                    t0 = time.perf_counter()
                    done = subprocess.run([sys.executable, "-m", "reconciler", "--repo", str(root), "--parallelism",
                                           str(args.parallelism), "apply", "--auto-approve", "--allow-dirty"],
                                          capture_output=True, text=True, cwd=tree,
                                          env={**os.environ, "PYTHONPATH": str(tree)})
                    wall = time.perf_counter() - t0
                    created = len(c.get_all_tables(DB))
                    if done.returncode != 0 or created != args.n:
                        raise SystemExit(f"{tree}: apply created {created} of {args.n}\n"
                                         f"{done.stdout[-1500:]}{done.stderr[-2000:]}")
                    walls[tree].append(wall)
                    print(f"round {r} {tree}: {args.n} creates in {wall:.2f} s; load {os.getloadavg()[0]:.2f}",
                          flush=True)
    print(f"\napply of {args.n} creates, --parallelism {args.parallelism}, {args.rtt_ms:g} ms round trip added, "
          f"{args.rounds} rounds interleaved; process wall (start-up included); load {load0:.2f} at start, "
          f"{os.getloadavg()[0]:.2f} at end ({os.cpu_count()} cores)")
    for tree in trees:
        w = walls[tree]
        print(f"{tree}: median {statistics.median(w):.2f} s ({min(w):.2f}-{max(w):.2f})")


if __name__ == "__main__":
    main()
