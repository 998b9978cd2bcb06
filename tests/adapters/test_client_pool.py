"""ClientPool: the connections an adapter shares between its threads. A command opens as
many as it makes calls at once, a client is never used by two calls at once, and a broken
one is never handed out again."""

from __future__ import annotations

import threading
from itertools import count

from reconciler.adapters.base import ClientPool


class Client:
    def __init__(self, n: int) -> None:
        self.n, self.closed, self.busy = n, False, False


def _pool() -> tuple[ClientPool[Client], list[Client]]:
    made: list[Client] = []
    numbers = count()

    def open_client() -> Client:
        made.append(Client(next(numbers)))
        return made[-1]

    def close_client(c: Client) -> None:
        c.closed = True

    return ClientPool(open_client, close_client), made


def test_calls_one_after_another_share_one_client_whatever_thread_makes_them() -> None:
    pool, made = _pool()
    seen: list[int] = []

    def call() -> None:
        with pool.lease() as c:
            seen.append(c.n)

    for _ in range(3):
        t = threading.Thread(target=call)
        t.start()
        t.join()
    call()
    assert seen == [0, 0, 0, 0] and pool.opened == 1


def test_calls_at_once_each_hold_their_own_client() -> None:
    pool, made = _pool()
    together = threading.Barrier(4)
    clashes: list[int] = []

    def call() -> None:
        with pool.lease() as c:
            if c.busy:
                clashes.append(c.n)
            c.busy = True
            together.wait(timeout=10)  # all four hold a client at once
            c.busy = False

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert pool.opened == 4 and not clashes
    with pool.lease() as c:  # afterwards they wait, idle, for the next calls
        assert c in made
    assert pool.opened == 4


def test_a_call_inside_another_uses_the_outer_calls_client() -> None:
    pool, _ = _pool()
    with pool.lease() as outer, pool.lease() as inner:
        assert inner is outer
    assert pool.opened == 1


def test_a_discarded_client_is_closed_and_never_handed_out_again() -> None:
    pool, made = _pool()
    with pool.lease():
        pool.discard()
    assert made[0].closed
    with pool.lease() as c:
        assert c is made[1] and not c.closed


def test_fresh_opens_a_new_client_though_one_is_idle() -> None:
    pool, made = _pool()
    with pool.lease():
        pass
    with pool.lease(fresh=True) as c:
        assert c is made[1]
    assert pool.opened == 2


def test_close_all_closes_idle_and_leased_clients_and_none_comes_back() -> None:
    pool, made = _pool()
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with pool.lease():
            holding.set()
            release.wait(timeout=10)

    t = threading.Thread(target=hold)
    t.start()
    assert holding.wait(timeout=10)
    with pool.lease():  # a second client, idle afterwards
        pass
    pool.close_all()
    release.set()
    t.join()
    assert len(made) == 2 and all(c.closed for c in made)
    with pool.lease() as c:  # the leased one was not given back when its call ended
        assert c is made[2]
