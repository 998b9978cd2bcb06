"""Apply's streamed waves (reconciler.apply.stream): the records thread begins actions in
batches ahead of the writers and ends their results in batches. What apply relies on:
no catalog write before its pending row is committed, every begun action ended exactly
once, the first failure stops the run, a records failure stops the writers and is
raised, and the records really are written in batches."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

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


class SentAhead(Run):
    """Run whose writes are sent ahead of their answers (stream's `send`), logging the order:
    ("sent", i) when sent, ("answered", i) when its answer is taken, ("write", i) for `write`."""

    def __init__(self, window: int, fail_at: int | None = None, one_at_a_time: frozenset[int] = frozenset()) -> None:
        super().__init__(fail_at=fail_at)
        self.window, self.one_at_a_time = window, one_at_a_time
        self.log: list[tuple[str, int]] = []
        self.peak = 0  # the most sent ahead and not yet answered at once

    def in_flight(self) -> int:
        return sum(1 if kind == "sent" else -1 if kind == "answered" else 0 for kind, _ in self.log)

    def send(self, item: int) -> Callable[[], tuple[str, str | None]] | None:
        if item in self.one_at_a_time:
            return None
        with self.lock:
            if item not in self.committed:
                self.violations.append(f"{item} sent before its pending row")
            self.log.append(("sent", item))
            self.peak = max(self.peak, self.in_flight())

        def answer() -> tuple[str, str | None]:
            with self.lock:
                self.log.append(("answered", item))
            return ("failed", "injected") if item == self.fail_at else ("applied", None)
        return answer

    def write(self, item: int) -> tuple[str, str | None]:
        with self.lock:
            if self.in_flight():
                self.violations.append(f"{item} written with {self.in_flight()} sent ahead unanswered")
            self.log.append(("write", item))
        return super().write(item)

    def go_sent(self, n: int) -> list[tuple[int, str, str | None]]:
        return stream(list(range(n)), 1, threading.Event(), self.begin, self.write, self.end, lambda step: step,
                      None, SKIPPED, linger=0.02, send=self.send, window=self.window)


def test_one_writer_keeps_up_to_its_window_sent_ahead_and_takes_the_answers_in_order() -> None:
    run = SentAhead(window=4)
    results = run.go_sent(40)
    assert results == [(i, "applied", None) for i in range(40)]
    assert not run.violations
    assert run.peak == 4  # never more than the window, and the window is used
    assert [i for kind, i in run.log if kind == "sent"] == list(range(40))
    assert [i for kind, i in run.log if kind == "answered"] == list(range(40))
    assert run.ended() == {i: [("applied", None)] for i in range(40)}


def test_a_step_send_does_not_take_is_written_once_every_answer_in_flight_is_in() -> None:
    run = SentAhead(window=4, one_at_a_time=frozenset({7, 8, 20}))
    results = run.go_sent(30)
    assert results == [(i, "applied", None) for i in range(30)]
    assert not run.violations  # `write` never ran with writes sent ahead unanswered
    assert [i for kind, i in run.log if kind != "answered"] == list(range(30))  # still the wave's order


def test_a_failure_sent_ahead_stops_sending_and_what_was_in_flight_is_ended_with_its_outcome() -> None:
    run = SentAhead(window=4, fail_at=5)
    results = run.go_sent(40)
    sent = [i for kind, i in run.log if kind == "sent"]
    # known when its answer came: by then at most window - 1 more were sent, and nothing after
    failure_known = run.log.index(("answered", 5))
    assert all(kind != "sent" for kind, _ in run.log[failure_known:])
    assert 5 < max(sent) <= 5 + 3
    by_item = {i: (outcome, error) for i, outcome, error in results}
    assert by_item[5] == ("failed", "injected")
    for i in range(40):
        assert by_item[i][0] == ("skipped" if i > max(sent) else "failed" if i == 5 else "applied"), i
    ended = run.ended()
    for i in sent:  # each ended once, with its real outcome
        assert ended[i] == [by_item[i]]
    assert not run.violations
