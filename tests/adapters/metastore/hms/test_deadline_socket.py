"""The metastore's socket sets its timeout again only when it is off the call's deadline by
more than DEADLINE_SLACK_S (settimeout releases the GIL: twice per call was a cost of every
apply). The deadline still holds: a trickling or silent server is cut off by each call's own
deadline, a short one after a long one included, and a call after a slow one has its whole
deadline. Real sockets on localhost, no metastore."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from thrift.transport import TTransport

from reconciler.adapters.deadline import deadline
from reconciler.adapters.metastore.hms import DEADLINE_SLACK_S, _DeadlineSocket


@contextmanager
def _pair(serve: Callable[[socket.socket], None]) -> Iterator[_DeadlineSocket]:
    """A _DeadlineSocket connected to a server thread running `serve` on its end."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def run() -> None:
        conn, _ = listener.accept()
        with conn, contextlib.suppress(OSError):  # the client may close first
            serve(conn)
            stop.wait(10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    sock = _DeadlineSocket("127.0.0.1", port)
    sock.setHandle(socket.create_connection(("127.0.0.1", port), timeout=30))
    try:
        yield sock
    finally:
        stop.set()
        sock.close()
        listener.close()
        thread.join(5)


def _timed_out_within(sock: _DeadlineSocket, seconds: float, size: int) -> float:
    """Read `size` bytes under a deadline of `seconds`; it must time out: how long it took."""
    t0 = time.monotonic()
    with pytest.raises(TTransport.TTransportException) as err, deadline(seconds, renew=True):
        got = b""
        while len(got) < size:
            got += sock.read(size - len(got))
    assert err.value.type == TTransport.TTransportException.TIMED_OUT
    return time.monotonic() - t0


def test_a_trickling_server_is_cut_off_by_the_deadline() -> None:
    def trickle(conn: socket.socket) -> None:
        for _ in range(200):
            conn.sendall(b"x")
            time.sleep(0.02)

    with _pair(trickle) as sock:
        took = _timed_out_within(sock, 0.4, 10_000)
    assert 0.35 <= took <= 0.4 + DEADLINE_SLACK_S + 0.15, took


def test_a_short_deadline_after_a_long_one_holds() -> None:
    """The first call leaves a long timeout on the socket: the next call's short deadline is
    still kept (the timeout is set again, being more than the slack too long)."""
    def answer_once(conn: socket.socket) -> None:
        conn.sendall(b"hello")  # then silence

    with _pair(answer_once) as sock:
        with deadline(20, renew=True):
            assert sock.read(5) == b"hello"
        took = _timed_out_within(sock, 0.3, 1)
    assert took <= 0.3 + DEADLINE_SLACK_S + 0.15, took


def test_a_long_deadline_after_a_call_that_ended_near_its_own_holds() -> None:
    """A call whose last read starts near its deadline shortens the socket's timeout to what
    was left; the next call still gets its whole deadline (the timeout is set again, being
    more than the slack too short)."""
    def answer(conn: socket.socket) -> None:
        conn.sendall(b"ab")
        time.sleep(1.3)
        conn.sendall(b"c")

    with _pair(answer) as sock:
        with deadline(1.0, renew=True):
            assert sock.read(1) == b"a"
            time.sleep(0.8)
            assert sock.read(1) == b"b"  # 0.2 s left: the timeout is set to that
        with deadline(5, renew=True):
            assert sock.read(1) == b"c"  # ~0.5 s later


def test_calls_with_the_same_timeout_keep_the_socket_timeout() -> None:
    """Successive calls each renewing the same deadline leave the socket's timeout as the first
    set it (no settimeout per read and write), and it never exceeds the time left by more than
    the slack."""
    def echo(conn: socket.socket) -> None:
        for _ in range(20):
            data = conn.recv(4)
            if not data:
                return
            conn.sendall(data)

    with _pair(echo) as sock:
        timeouts = []
        for _ in range(20):
            with deadline(5, renew=True):
                sock.write(b"ping")
                assert sock.read(4) == b"ping"
                timeouts.append(sock.handle.gettimeout())
        assert len(set(timeouts)) == 1, timeouts
        assert timeouts[0] <= 5 + DEADLINE_SLACK_S
