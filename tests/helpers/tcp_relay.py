"""A TCP relay in front of a real server, whose connections a test can cut all at once: what
a metastore restart, or a load balancer's idle timeout, does to the connections a client keeps."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Relay:
    port: int
    accepted: int = 0
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


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
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
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield relay
    finally:
        stop.set()
        listener.close()
        relay.cut()
