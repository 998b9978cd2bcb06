"""A real HTTP receiver for webhook tests, run as its own process:

    python receiver.py PORT LOG [STATUS]

Appends one JSON line per POST (headers and body) to LOG, flushed before it
answers, and answers STATUS (default 200)."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def main() -> None:
    port, log = int(sys.argv[1]), sys.argv[2]
    status = int(sys.argv[3]) if len(sys.argv) > 3 else 200

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"path": self.path, "headers": dict(self.headers),
                                     "body": body.decode()}) + "\n")
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    HTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
