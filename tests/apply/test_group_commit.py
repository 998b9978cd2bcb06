"""Group commit (reconciler.state.group_commit) on the real SQLite and PostgreSQL state
stores: transactions asked for while another is written share one commit, each caller
returns only once its own work is committed, and one member's failure is its own."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from reconciler.core.model import ViewId
from reconciler.db.engines import create_engine
from reconciler.state.group_commit import GroupCommit
from reconciler.state.store import GitInfo, StateStore, audit

meta = sa.MetaData()
rows = sa.Table("gc_rows", meta, sa.Column("k", sa.Integer, primary_key=True))


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    url = f"sqlite:///{tmp_path / 'gc.db'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    eng = create_engine(url)
    meta.create_all(eng)
    yield eng
    eng.dispose()


def _counting(engine: Engine) -> tuple[GroupCommit, list[int]]:
    """A GroupCommit over `engine` and the number of transactions it committed."""
    commits = [0]

    @contextlib.contextmanager
    def begin() -> Iterator[Connection]:
        with engine.begin() as conn:
            yield conn
        commits[0] += 1

    return GroupCommit(begin), commits


def _keys(engine: Engine) -> list[int]:
    with engine.connect() as conn:  # another connection: sees only what is committed
        return sorted(conn.execute(sa.select(rows.c.k)).scalars())


def _insert(k: int) -> Callable[[Connection], int]:
    def work(conn: Connection) -> int:
        conn.execute(rows.insert().values(k=k))
        return k
    return work


def _while_leader_writes(group: GroupCommit, others: list[Callable[[Connection], int]]) -> list[int | Exception]:
    """Run `others` on threads while a first transaction is being written, so they all
    queue behind it; what each call returned (or raised)."""
    release = threading.Event()

    def first(conn: Connection) -> int:
        conn.execute(rows.insert().values(k=0))
        release.wait(10)
        return 0

    got: list[int | Exception] = [0] * len(others)

    def call(i: int) -> None:
        try:
            got[i] = group.run(others[i])
        except Exception as exc:
            got[i] = exc

    leader = threading.Thread(target=group.run, args=(first,))
    leader.start()
    while not group._writing.locked():
        time.sleep(0.001)
    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(others))]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(group._queue) < len(others) and time.monotonic() < deadline:  # all queued behind the leader
        time.sleep(0.01)
    release.set()
    for t in [leader, *threads]:
        t.join(10)
    return got


def test_transactions_asked_for_together_share_one_commit(engine: Engine) -> None:
    group, commits = _counting(engine)
    got = _while_leader_writes(group, [_insert(k) for k in range(1, 7)])
    assert got == [1, 2, 3, 4, 5, 6]
    assert _keys(engine) == [0, 1, 2, 3, 4, 5, 6]
    assert commits[0] == 2  # the leader's own, then the six queued behind it in one


def test_a_caller_returns_only_once_its_work_is_committed(engine: Engine) -> None:
    group, _ = _counting(engine)
    seen: dict[int, list[int]] = {}

    def call(k: int) -> None:
        group.run(_insert(k))
        seen[k] = _keys(engine)  # read on another connection right after returning

    threads = [threading.Thread(target=call, args=(k,)) for k in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert _keys(engine) == list(range(1, 9))
    assert all(k in seen[k] for k in range(1, 9))


def test_one_members_failure_is_its_own(engine: Engine) -> None:
    group, commits = _counting(engine)
    with engine.begin() as conn:
        conn.execute(rows.insert().values(k=3))  # so inserting 3 again breaks the primary key
    got = _while_leader_writes(group, [_insert(1), _insert(3), _insert(5)])
    assert got[0] == 1 and got[2] == 5
    assert isinstance(got[1], sa.exc.IntegrityError)
    assert _keys(engine) == [0, 1, 3, 5]
    assert commits[0] == 3  # the leader's; then, the shared one failing, 1 and 5 each alone


def test_parallel_audit_rows_are_each_committed_once(tmp_path: Path) -> None:
    """The state store's per-action records go through the group: eight threads writing
    pending rows at once get eight distinct ids, each row stored once."""
    state = StateStore(f"sqlite:///{tmp_path / 'state.db'}")
    ids: list[int] = []
    lock = threading.Lock()

    def start(seq: int) -> None:
        audit_id = state.audit_start("run", seq, "me", "create", ViewId("c", "s", f"v{seq}"), None, {"a": seq},
                                     None, f"sha256:{seq}", [], GitInfo())
        with lock:
            ids.append(audit_id)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    with state.engine.connect() as conn:
        stored = conn.execute(sa.select(audit.c.id, audit.c.seq).order_by(audit.c.seq)).all()
    assert sorted(ids) == sorted(r.id for r in stored) and len(set(ids)) == 8
    assert [r.seq for r in stored] == list(range(8))
    state.close()
