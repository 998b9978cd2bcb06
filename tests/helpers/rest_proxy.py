"""A recording reverse proxy in front of a real REST catalog (stdlib only, a thread of the test
process): every request is forwarded to the server as it came and recorded (method, path with
query, headers, body), and the answer to `/v1/config` can have endpoints taken out of its
`endpoints` list (or the list left out), as a server that does not offer them would answer. Everything else is the
real server's answer."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# hop-by-hop headers, the length the proxy sets itself, and compression (bodies stay readable)
_NOT_FORWARDED = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "accept-encoding"}


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str  # with its query
    headers: dict[str, str]
    body: bytes

    @property
    def route(self) -> str:
        return urlsplit(self.path).path

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.path).query)

    def form(self) -> dict[str, list[str]]:
        """The body as a form (an OAuth2 token request)."""
        return parse_qs(self.body.decode())


@dataclass
class RestProxy:
    upstream: str  # http://host:port
    port: int = 0
    hidden: set[str] = field(default_factory=set)  # endpoints left out of /v1/config's list
    omit_endpoints: bool = False  # /v1/config without `endpoints`, as a legacy server answers
    # pass the client's Host on (a server that builds URLs from it, such as Nessie's `uri`
    # override, then sends its clients back through the proxy)
    preserve_host: bool = False
    recorded: list[Recorded] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def clear(self) -> None:
        with self._lock:
            self.recorded.clear()

    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self.recorded)

    def _forward(self, method: str, path: str, headers: dict[str, str],
                 body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        target = urlsplit(self.upstream)
        conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
        try:
            forwarded = {k: v for k, v in headers.items() if k.lower() not in _NOT_FORWARDED
                         or (self.preserve_host and k.lower() == "host")}
            conn.request(method, path, body=body or None, headers=forwarded)
            resp = conn.getresponse()
            data = resp.read()
            out_headers = [(k, v) for k, v in resp.getheaders() if k.lower() not in _NOT_FORWARDED]
            status = resp.status
        finally:
            conn.close()
        if method == "GET" and urlsplit(path).path.rstrip("/").endswith("/v1/config") and status == 200:
            data = self._rewrite_config(data)
        return status, out_headers, data

    def _rewrite_config(self, data: bytes) -> bytes:
        if not self.hidden and not self.omit_endpoints:
            return data
        config = json.loads(data)
        config["endpoints"] = [e for e in config.get("endpoints") or [] if e not in self.hidden]
        if self.omit_endpoints:
            del config["endpoints"]
        return json.dumps(config).encode()


@contextmanager
def rest_proxy(upstream: str, hidden: set[str] | None = None, preserve_host: bool = False) -> Iterator[RestProxy]:
    """A proxy to `upstream` on a free local port, until the block ends."""
    proxy = RestProxy(upstream, hidden=set(hidden or ()), preserve_host=preserve_host)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as clients talk to the real server

        def _relay(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items()}
            with proxy._lock:
                proxy.recorded.append(Recorded(self.command, self.path, headers, body))
            status, out_headers, data = proxy._forward(self.command, self.path, headers, body)
            self.send_response(status)
            for key, value in out_headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = _relay  # noqa: N815 (http.server's naming)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    proxy.port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, name="rest-proxy", daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
