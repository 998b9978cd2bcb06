"""Group commit: transactions that several threads ask for at the same moment are
written as one.

Where apply's parallel writers record their own actions (when blocking hooks may veto
each action; otherwise reconciler.apply.stream batches the records on one thread), each
writer records two transactions per view (the pending audit row before the catalog
call, the outcome after it). Committed one by one they queue on the store (SQLite takes
one writer at a time) and each pays for its own commit.
Here the thread that gets to write first (the leader) takes every transaction asked
for so far and runs them in one database transaction; the others find theirs done.
A caller still returns only once its own work is committed, so "the pending row is
written before the catalog is touched" holds as before.

If the shared transaction fails, each member runs again alone, so one member's
failure (a version number another writer took) is that member's error only, and the
others commit as they would have. Works must therefore be safe to run again after a
rollback: they only write through the connection they are given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Generic, TypeVar

from sqlalchemy.engine import Connection

T = TypeVar("T")


class _Work(Generic[T]):
    __slots__ = ("fn", "done", "value", "error")

    def __init__(self, fn: Callable[[Connection], T]) -> None:
        self.fn = fn
        self.done = False
        self.value: T | None = None
        self.error: BaseException | None = None

    def finish(self, value: T | None = None, error: BaseException | None = None) -> None:
        self.value, self.error, self.done = value, error, True

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # done: what fn returned


class GroupCommit:
    def __init__(self, begin: Callable[[], AbstractContextManager[Connection]]) -> None:
        self._begin = begin
        self._queue: list[_Work[Any]] = []
        self._queued = threading.Lock()  # guards the queue
        self._writing = threading.Lock()  # held by the leader while its group is written

    def run(self, fn: Callable[[Connection], T]) -> T:
        """fn(connection) in a committed transaction, perhaps shared with other threads'."""
        work = _Work(fn)
        with self._queued:
            self._queue.append(work)
        with self._writing:
            if not work.done:  # nobody took it: this thread leads the next group
                with self._queued:
                    group, self._queue = self._queue, []
                self._write(group)
        return work.outcome()

    def _write(self, group: list[_Work[Any]]) -> None:
        try:
            try:
                with self._begin() as conn:
                    values = [w.fn(conn) for w in group]
            except Exception as exc:
                if len(group) == 1:
                    group[0].finish(error=exc)
                else:  # who failed? each alone, as it would have run without the others
                    for w in group:
                        self._write([w])
                return
            for w, value in zip(group, values, strict=True):
                w.finish(value)
        except BaseException as exc:  # interrupted: no member may wait for a result never coming
            for w in group:
                if not w.done:
                    w.finish(error=exc)
            raise
