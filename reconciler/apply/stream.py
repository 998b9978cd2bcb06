"""Stream a wave of independent actions through catalog writers while the calling
thread writes their records in batches.

The calling thread keeps the records. It begins actions ahead, a batch at a time (their
pending audit rows and pre-events in one transaction), and hands them to the writers.
A writer takes a begun action, makes its calls (a blocking hook's veto, the catalog's)
and hands the result back. The
calling thread ends the results that have come back in one transaction, and reports
them, once the oldest has waited `linger` seconds, a batch is full or no write is under
way: an end transaction is the records' main cost, so fewer, larger ones leave more of
the machine to the catalog.

Invariants the callers rely on:
- an action is written only after `begin` has returned it, that is after its pending
  row is committed, so a crash mid-call leaves a trace;
- every begun action is passed to `end` exactly once: with its write's outcome, or
  `skipped` when the run stopped before a writer took it; actions never begun are
  returned `skipped` and never passed to `end`;
- the first failure stops the run: from then on no writer takes a new action and no
  more are begun; writes already under way finish and are ended;
- with one writer, the catalog calls are made in the wave's order: one at a time, or, for
  actions `send` takes, up to `window` sent on the writer's connection ahead of their
  answers (the catalog carries them out in that order; see "Sent ahead" below);
- a failure of `begin` or `end` (the state store) stops the writers and is raised once
  the writes under way have finished.

More actions are begun when fewer than `max(2 * writers, writers * window + 1, MIN_AHEAD)`
are begun and not yet written, so the writers do not wait for the records; a failure
leaves fewer than three times that many begun actions skipped.

Sent ahead. A writer whose catalog takes requests ahead of their answers (the Hive
Metastore's Thrift connection) does not wait for each answer before sending the next:
`send(step)` sends the step's write and returns what waits for its outcome, and the
writer keeps up to `window` of them in flight, waiting for the oldest only when the window
is full or no begun action is ready. A round trip and the client's own work then no longer
stand between two writes: the catalog always has the next one. `send` returns None for a
step it does not take; the writer first waits for everything it has in flight, then
calls `write`. A failure is known when its answer arrives: the writes sent after it are
under way, so they finish and are ended with their real outcomes, and nothing more is sent.
"""

from __future__ import annotations

import functools
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TypeVar

from reconciler.core.outcome import Outcome

S = TypeVar("S")
Result = tuple[int, Outcome, "str | None"]  # (item, outcome, error)
Written = tuple[Outcome, "str | None"]  # a write's (outcome, error)
SWITCH_S = 0.0005  # the interpreter's thread switch interval while a wave streams
MIN_AHEAD = 8  # begun ahead of a single writer: each batch of records costs one transaction
# Writes in flight at once over all writers, for a catalog that takes them ahead of their answers:
# on one metastore connection, 8 ahead made 1,000 raw creates 8-13% faster than one at a time
# (2 cores, local metastore; a remote one gains a round trip per write besides).
SENT_AHEAD = 8


def sent_ahead(writers: int) -> int:
    """The `window` of each of `writers` writers: SENT_AHEAD in flight over them all, at least one each."""
    return max(1, SENT_AHEAD // max(writers, 1))


def _raising(err: BaseException) -> Callable[[], Written]:
    def outcome() -> Written:
        raise err
    return outcome


def stream(items: list[int], writers: int, stop: threading.Event,
           begin: Callable[[list[int]], list[S]],
           write: Callable[[S], tuple[Outcome, str | None]],
           end: Callable[[list[tuple[S, Outcome, str | None]]], None],
           item_of: Callable[[S], int],
           reported: Callable[[int, Outcome, str | None], object] | None = None,
           skipped: str = "not attempted", linger: float = 0.1,
           send: Callable[[S], Callable[[], Written] | None] | None = None, window: int = 1) -> list[Result]:
    """Run `items` (e.g. plan sequence numbers) as described above; their results in the
    order of `items`. `write` returns (outcome, error) and returns its own failures as
    (FAILED, why); `skipped` is the error `end` gets for a begun action not written;
    `linger`: seconds an outcome may wait for others to be recorded with it; `send` and
    `window`: writes sent ahead of their answers, up to `window` per writer (see above);
    what `send` returns is called once, on the same writer, in the order sent."""
    window = max(window, 1) if send is not None else 1
    # Begin more when fewer than this are begun and not yet written: enough that the writers
    # never wait while the records thread ends a batch and begins the next.
    low = max(2 * writers, writers * window + 1, MIN_AHEAD)
    batch = 2 * low
    todo = deque(items)
    ready: queue.SimpleQueue[S | None] = queue.SimpleQueue()
    done: queue.SimpleQueue[tuple[S, Outcome, str | None]] = queue.SimpleQueue()
    out: dict[int, Result] = {}
    unwritten = 0  # begun and not yet back from a writer
    finished: list[tuple[S, Outcome, str | None]] = []  # back from a writer, not yet ended
    oldest = 0.0  # when the first of `finished` came back

    def finish(step: S, outcome_of: Callable[[], Written]) -> None:
        try:
            outcome, error = outcome_of()
        except BaseException as err:  # write records its own failures: this is a bug, still recorded
            outcome, error = Outcome.FAILED, f"{type(err).__name__}: {err}"
        if outcome == Outcome.FAILED:
            stop.set()  # now, not when the records thread gets to it
        done.put((step, outcome, error))

    def writer() -> None:
        in_flight: deque[tuple[S, Callable[[], Written]]] = deque()  # sent ahead, in the order sent
        while True:
            if len(in_flight) >= window:
                finish(*in_flight.popleft())
                continue
            try:  # with writes in flight, a step only if one is ready; else the oldest answer first
                step = ready.get(block=not in_flight)
            except queue.Empty:
                finish(*in_flight.popleft())
                continue
            if step is None:  # the end: what is in flight is still answered
                while in_flight:
                    finish(*in_flight.popleft())
                return
            if stop.is_set():
                done.put((step, Outcome.SKIPPED, skipped))
                continue
            try:
                receive = send(step) if send is not None else None
            except BaseException as err:  # send returns its own failures: a bug, still recorded
                receive = _raising(err)
            if receive is not None:
                in_flight.append((step, receive))
                continue
            while in_flight:  # one writer's catalog calls stay in the wave's order
                finish(*in_flight.popleft())
            finish(step, functools.partial(write, step))

    threads = [threading.Thread(target=writer, name=f"viewsync-apply-{i}", daemon=True)
               for i in range(max(writers, 1))]
    # A writer whose reply has arrived waits for the GIL while the records thread computes;
    # by default up to 5 ms, longer than a metastore call. Restored below.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_S)
    for t in threads:
        t.start()
    try:
        while todo or unwritten or finished:
            if stop.is_set():
                while todo:
                    item = todo.popleft()
                    out[item] = (item, Outcome.SKIPPED, None)
            elif todo and unwritten < low:
                begun = begin([todo.popleft() for _ in range(min(batch, len(todo)))])
                for step in begun:
                    ready.put(step)
                unwritten += len(begun)
                continue
            if not (unwritten or finished):
                break
            # Collect what comes back; end it in one transaction once the oldest has lingered
            # `linger` seconds, a batch is full or nothing more is under way. Beginning more
            # (above) comes first, so the writers never wait for these records.
            if unwritten:
                try:
                    timeout = max(0.0, oldest + linger - time.monotonic()) if finished else None
                    got = done.get(timeout=timeout)
                    if not finished:
                        oldest = time.monotonic()
                    finished.append(got)
                    unwritten -= 1
                except queue.Empty:
                    pass
            if finished and (not unwritten or len(finished) >= batch
                             or time.monotonic() >= oldest + linger):
                end(finished)
                for step, outcome, error in finished:
                    item = item_of(step)
                    out[item] = (item, outcome, None if outcome == Outcome.SKIPPED else error)
                    if reported is not None:
                        reported(item, outcome, error)
                finished = []
    except BaseException:
        stop.set()
        raise
    finally:
        for _ in threads:
            ready.put(None)
        for t in threads:
            t.join()
        sys.setswitchinterval(switch)
    return [out[item] for item in items]
