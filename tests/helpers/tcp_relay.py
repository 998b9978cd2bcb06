"""A TCP relay in front of a real server, whose connections a test can cut all at once (what
a metastore restart, or a load balancer's idle timeout, does to the connections a client keeps)
and whose answers it can slow down (a busy server)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Relay:
    port: int
    accepted: int = 0
    answer_delay: float = 0.0  # seconds before each piece of the server's answers is passed on
    split_answers: bool = False  # pass each piece on in two: its first 4 bytes, then the rest
    _open: list[socket.socket] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cut(self) -> None:
        """Close every connection relayed so far; later ones are relayed as before."""
        with self._lock:
            conns, self._open = self._open, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def _pump(src: socket.socket, dst: socket.socket, relay: Relay | None = None) -> None:
    """src's bytes to dst; `relay` given: these are the server's answers, slowed as it says."""
    try:
        while data := src.recv(65536):
            if relay is not None and relay.answer_delay:
                time.sleep(relay.answer_delay)
            if relay is not None and relay.split_answers and len(data) > 4:
                dst.sendall(data[:4])
                time.sleep(0.05)  # the client reads the first bytes alone
                data = data[4:]
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def tcp_relay(target_port: int) -> Iterator[Relay]:
    listener = socket.create_server(("127.0.0.1", 0))
    relay = Relay(listener.getsockname()[1])
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", target_port))
            with relay._lock:
                relay.accepted += 1
                relay._open += [client, server]
            threading.Thread(target=_pump, args=(client, server), daemon=True).start()
            threading.Thread(target=_pump, args=(server, client, relay), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield relay
    finally:
        stop.set()
        listener.close()
        relay.cut()
