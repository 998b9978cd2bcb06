"""Misbehaving servers on free local ports: closed, accepts-and-hangs, trickles
bytes, garbage, HTTP 500, HTTP redirect loop, wrongly typed JSON (MODES); and
`slowbody`, HTTP headers at once and then the body one byte a second, and
`hugeerror`, an HTTP 500 whose error message is 1 MB."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

from tests.servers import free_port

MODES = ("closed", "hang", "trickle", "garbage", "http500", "redirect", "badjson")


def _serve(conn: socket.socket, mode: str, port: int, stop: threading.Event) -> None:
    with conn:
        try:
            if mode == "hang":
                stop.wait()
            elif mode == "trickle":
                while not stop.is_set():  # one byte a second, forever
                    conn.sendall(b"x")
                    stop.wait(1)
            elif mode == "garbage":
                conn.sendall(b"\x00\xff garbage \x17\x03\x03" * 64)
                stop.wait()
            else:
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    conn.recv(65536)
                if mode == "slowbody":  # a good start, then the body one byte a second
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
                    while not stop.is_set():
                        conn.sendall(b" ")
                        stop.wait(1)
                    return
                if mode in ("http500", "hugeerror"):
                    message = "boom" if mode == "http500" else "boom " * 200_000
                    body = b'{"error": {"message": "%s", "type": "Internal", "code": 500}}' % message.encode()
                    head = b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                elif mode == "redirect":
                    body = b""
                    head = f"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{port}/v1/config\r\n".encode()
                else:  # badjson: the right status, the wrong shapes
                    body = b'{"defaults": 5, "overrides": [1, 2], "namespaces": "nope", "identifiers": 7}'
                    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                conn.sendall(head + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        except OSError:
            pass


@contextlib.contextmanager
def misbehaving(mode: str) -> Iterator[int]:
    """A port where a server behaves as `mode` says; 'closed' is a port nobody listens on."""
    if mode == "closed":
        yield free_port()
        return
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.settimeout(0.2)
    port = int(sock.getsockname()[1])
    stop = threading.Event()

    def accept_loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=_serve, args=(conn, mode, port, stop), daemon=True).start()

    thread = threading.Thread(target=accept_loop, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        stop.set()
        thread.join(2)
        sock.close()
        time.sleep(0)
