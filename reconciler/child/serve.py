"""The child's side of a child process (our side: process.py). Standard library only: another
interpreter (a foreign PySpark's, the Flink venv's) runs this file by its path.

    python serve.py ENGINE HANDLERS...     (or python -m reconciler.child.serve ENGINE HANDLERS...)

ENGINE and HANDLERS are modules, by dotted name or by file path. ENGINE has
`start(conf, write) -> child` (the engine's session, handed to every handler module),
`hello(child) -> dict` (what the hello adds to {"ready": true}) and `stop(child, request)`; it
may have `handlers(child)` too. Each HANDLERS module has `handlers(child) -> {op: fn}` (fn: request ->
answer).

Protocol: the conf as the first line on stdin, then one request per line, `{"op": ..., ...}`;
one answer per line on the protocol fd (the process's stdout; anything else writing there, a
JVM or py4j, goes to stderr). The first answer is the hello, {"ready": true, ...} or
{"ready": false, "error"}; while a request runs, progress lines {"progress": {...}} may come
before its answer. A handler returns the engine's refusal as {"error": {...}}; anything it
raises becomes {"fatal": "..."}. {"op": "stop", "remove"?: dir, ...} ends the loop: the engine
stops (it reads the rest of the stop request), then `remove` is removed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import sys
import threading
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]
Write = Callable[[dict[str, Any]], None]


def load(ref: str) -> Any:
    """A module by dotted name, or by file path (run by path: not importable by name)."""
    if not ref.endswith(".py"):
        return importlib.import_module(ref)
    spec = importlib.util.spec_from_file_location(f"viewsync_handlers_{abs(hash(ref))}", ref)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(engine_ref: str, refs: list[str]) -> None:
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    lock = threading.Lock()

    def write(obj: dict[str, Any]) -> None:
        with lock:
            proto.write(json.dumps(obj, default=str) + "\n")

    conf = json.loads(sys.stdin.readline() or "{}")
    try:
        engine = load(engine_ref)
        child = engine.start(conf, write)
        table: dict[str, Handler] = dict(engine.handlers(child)) if hasattr(engine, "handlers") else {}
        for ref in refs:
            table.update(load(ref).handlers(child))
        hello = {"ready": True, **engine.hello(child)}
    except Exception as exc:  # noqa: BLE001 - any start failure is one line for the client
        write({"ready": False, "error": f"{type(exc).__name__}: {exc}"[:2000]})
        return
    write(hello)
    stop: dict[str, Any] = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        op = request.get("op")
        if op == "stop":
            stop = request
            break
        handler = table.get(str(op))
        try:
            answer = handler(request) if handler is not None else {"fatal": f"unknown op {op!r}"}
        except Exception as exc:  # noqa: BLE001 - the client turns this into one error line
            answer = {"fatal": f"{type(exc).__name__}: {exc}"[:2000]}
        write(answer)
    engine.stop(child, stop)
    if stop.get("remove"):
        shutil.rmtree(stop["remove"], ignore_errors=True)


if __name__ == "__main__":
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)  # run by path: this package's modules are not top-level modules
    if len(sys.argv) < 2:
        sys.exit("usage: serve.py ENGINE [HANDLERS...]")
    main(sys.argv[1], sys.argv[2:])
