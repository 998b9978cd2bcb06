"""Apply's streamed waves (reconciler.apply.stream): the records thread begins actions in
batches ahead of the writers and ends their results in batches. What apply relies on:
no catalog write before its pending row is committed, every begun action ended exactly
once, the first failure stops the run, a records failure stops the writers and is
raised, and the records really are written in batches."""

from __future__ import annotations

import threading
import time

import pytest

from reconciler.apply.stream import stream

SKIPPED = "not attempted: an earlier action failed"


class Run:
    """Fake begin/write/end that check the invariants as they go."""

    def __init__(self, fail_at: int | None = None, write_s: float = 0.0, end_fails_at: int | None = None) -> None:
        self.fail_at, self.write_s, self.end_fails_at = fail_at, write_s, end_fails_at
        self.lock = threading.Lock()
        self.committed: set[int] = set()
        self.begins: list[list[int]] = []
        self.writes: list[int] = []
        self.ends: list[list[tuple[int, str, str | None]]] = []
        self.violations: list[str] = []

    def begin(self, items: list[int]) -> list[int]:
        with self.lock:
            self.begins.append(list(items))
            self.committed.update(items)
        return list(items)

    def write(self, item: int) -> tuple[str, str | None]:
        with self.lock:
            if item not in self.committed:
                self.violations.append(f"{item} written before its pending row")
            self.writes.append(item)
        time.sleep(self.write_s)
        return ("failed", "injected") if item == self.fail_at else ("applied", None)

    def end(self, results: list[tuple[int, str, str | None]]) -> None:
        if self.end_fails_at is not None and len(self.ends) + 1 == self.end_fails_at:
            raise RuntimeError("state store down")
        self.ends.append(list(results))

    def ended(self) -> dict[int, list[tuple[str, str | None]]]:
        out: dict[int, list[tuple[str, str | None]]] = {}
        for batch in self.ends:
            for item, outcome, error in batch:
                out.setdefault(item, []).append((outcome, error))
        return out

    def go(self, n: int, writers: int, reported: list[tuple[int, str]] | None = None,
           linger: float = 0.02) -> list[tuple[int, str, str | None]]:
        def report(item: int, outcome: str, error: str | None) -> None:
            if reported is not None:
                reported.append((item, outcome))
        return stream(list(range(n)), writers, threading.Event(), self.begin, self.write, self.end,
                      lambda step: step, report, SKIPPED, linger=linger)


@pytest.mark.parametrize("writers", [1, 4])
def test_every_action_is_written_after_its_pending_row_and_ended_exactly_once(writers: int) -> None:
    run, reported = Run(write_s=0.001), []
    results = run.go(40, writers, reported)
    assert results == [(i, "applied", None) for i in range(40)]  # in the wave's order
    assert not run.violations
    assert sorted(run.writes) == list(range(40))
    assert run.ended() == {i: [("applied", None)] for i in range(40)}
    assert sorted(i for batch in run.begins for i in batch) == list(range(40))  # each begun once
    assert sorted(reported) == [(i, "applied") for i in range(40)]  # reported once each, after its end


def test_one_writer_writes_in_the_waves_order() -> None:
    run = Run()
    run.go(25, 1)
    assert run.writes == list(range(25))


def test_with_one_writer_the_first_failure_stops_the_rest() -> None:
    run = Run(fail_at=5)
    results = run.go(30, 1)
    assert run.writes == [0, 1, 2, 3, 4, 5]
    assert results[:6] == [(i, "applied", None) for i in range(5)] + [(5, "failed", "injected")]
    assert all(outcome == "skipped" and error is None for _, outcome, error in results[6:])
    ended = run.ended()
    begun = {i for batch in run.begins for i in batch}
    for i in range(6, 30):  # begun ahead: ended skipped with the reason; never begun: never ended
        assert ended.get(i) == ([("skipped", SKIPPED)] if i in begun else None)
    assert len(begun) < 30 and len(begun - set(range(6))) < 3 * 4  # begun ahead is bounded (stream docstring)


def test_with_several_writers_no_write_starts_after_the_failure_is_known() -> None:
    run = Run(fail_at=10, write_s=0.002)
    results = run.go(200, 4)
    by_item = {i: (outcome, error) for i, outcome, error in results}
    assert by_item[10] == ("failed", "injected")
    ended = run.ended()
    begun = {i for batch in run.begins for i in batch}
    for i, (outcome, _) in by_item.items():
        assert (i in run.writes) == (outcome in ("applied", "failed")), i
        if i in begun:
            assert len(ended[i]) == 1 and ended[i][0][0] == outcome
        else:
            assert outcome == "skipped" and i not in ended
    # A write started after the failure returned would be beyond what the 4 writers had begun.
    assert max(run.writes) < 10 + 3 * 8
    assert len(begun) < 200


def test_a_records_failure_stops_the_writers_and_is_raised() -> None:
    run = Run(write_s=0.001, end_fails_at=2)
    with pytest.raises(RuntimeError, match="state store down"):
        run.go(200, 4)
    assert not [t for t in threading.enumerate() if t.name.startswith("viewsync-apply")]
    assert len(run.writes) < 200  # stopped, not run to the end
    assert not run.violations


@pytest.mark.parametrize("writers", [1, 4])
def test_outcomes_are_recorded_in_batches(writers: int) -> None:
    # One writer too: its outcomes come back one at a time, and beginning more ahead must
    # not cut their batch short (each end is a state-store transaction).
    run = Run(write_s=0.002)
    run.go(200, writers, linger=0.05)
    assert len(run.ends) <= 200 // 8, [len(b) for b in run.ends]
    assert len(run.begins) <= 200 // 8
    assert sorted(item for batch in run.ends for item, _, _ in batch) == list(range(200))


def test_an_outcome_waits_at_most_about_linger_to_be_recorded() -> None:
    reported_at: dict[int, float] = {}
    written_at: dict[int, float] = {}
    run = Run(write_s=0.01)
    write = run.write

    def timed_write(item: int) -> tuple[str, str | None]:
        result = write(item)
        written_at[item] = time.monotonic()
        return result

    run.write = timed_write  # type: ignore[method-assign]
    stream(list(range(40)), 1, threading.Event(), run.begin, run.write, run.end, lambda step: step,
           lambda item, outcome, error: reported_at.setdefault(item, time.monotonic()), SKIPPED, linger=0.05)
    waits = [reported_at[i] - written_at[i] for i in range(40)]
    assert max(waits) < 0.05 + 0.04, waits  # linger, plus one write's worth of scheduling slack
