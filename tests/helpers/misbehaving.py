"""Misbehaving servers on free local ports: closed, accepts-and-hangs, trickles
bytes, garbage, HTTP 500, HTTP redirect loop, wrongly typed JSON (MODES); and
`slowbody`, HTTP headers at once and then the body one byte a second, and
`hugeerror`, an HTTP 500 whose error message is 1 MB; `json`, HTTP 200 with a
given body; THRIFT_REPLIES, a well-formed Thrift reply header to the call made
followed by bytes that are no answer to it (what another Thrift service would send)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

from tests.helpers.servers import free_port

MODES = ("closed", "hang", "trickle", "garbage", "http500", "redirect", "badjson")
# The bytes after the reply header: a field of type 85, a string of length -1, a list of 2^31-1.
THRIFT_TAILS = {"thrift-badtype": b"\x55\x00\x01\x00", "thrift-negative": b"\x0b\x00\x00\xff\xff\xff\xff",
                "thrift-huge": b"\x0f\x00\x00\x0c\x7f\xff\xff\xff"}
THRIFT_REPLIES = tuple(THRIFT_TAILS)


def _thrift_reply(conn: socket.socket, tail: bytes) -> None:
    conn.settimeout(5)
    call = conn.recv(65536)  # strict binary protocol: version, name length, name, seqid, args
    size = int.from_bytes(call[4:8], "big")
    name_and_seqid = call[8:12 + size]
    conn.sendall(b"\x80\x01\x00\x02" + call[4:8] + name_and_seqid + tail)


def _serve(conn: socket.socket, mode: str, port: int, stop: threading.Event, body: bytes = b"") -> None:
    with conn:
        try:
            if mode in THRIFT_TAILS:
                _thrift_reply(conn, THRIFT_TAILS[mode])
                stop.wait()
            elif mode == "hang":
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
                else:  # badjson: the right status, the wrong shapes (json: the shapes given)
                    if mode == "badjson":
                        body = b'{"defaults": 5, "overrides": [1, 2], "namespaces": "nope", "identifiers": 7}'
                    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                conn.sendall(head + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        except OSError:
            pass


@contextlib.contextmanager
def misbehaving(mode: str, body: bytes = b"") -> Iterator[int]:
    """A port where a server behaves as `mode` says; 'closed' is a port nobody listens on;
    'json' answers every request with HTTP 200 and `body`."""
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
            threading.Thread(target=_serve, args=(conn, mode, port, stop, body), daemon=True).start()

    thread = threading.Thread(target=accept_loop, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        stop.set()
        thread.join(2)
        sock.close()
        time.sleep(0)
