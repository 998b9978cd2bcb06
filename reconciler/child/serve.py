"""The child's side of a child process (our side: process.py). Standard library only: another
interpreter (a foreign PySpark's, the Flink venv's) runs this file by its path.

    python serve.py ENGINE HANDLERS...     (or python -m reconciler.child.serve ENGINE HANDLERS...)

ENGINE and HANDLERS are modules, by dotted name or by file path. ENGINE has
`start(conf, channel) -> child` (the engine's session, handed to every handler module; `channel`
has `write(obj)` for progress lines and `to_wire(value)`, the protocol's value encoding),
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

import base64
import datetime as dt
import decimal
import importlib
import importlib.util
import json
import math
import os
import shutil
import sys
import threading
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]
Write = Callable[[dict[str, Any]], None]


def to_wire(value: Any) -> Any:
    """An engine's value as JSON (reconciler.viewtests.values.coerce reads it back): decimals as
    text, NaN and infinities as text, timestamps "YYYY-MM-DD HH:MM:SS[.ffffff]", binary
    {"$binary": base64}, a row (`asDict`: PySpark, `as_dict`: PyFlink) a struct by field name,
    a map [[k, v], ...], an array a list."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return ("Infinity" if value > 0 else "-Infinity") if math.isinf(value) else value
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return {"$binary": base64.b64encode(bytes(value)).decode("ascii")}
    fields = getattr(value, "asDict", None) or getattr(value, "as_dict", None)
    if fields is not None:  # a row: a struct
        return {k: to_wire(v) for k, v in fields(recursive=False).items()}
    if isinstance(value, dict):
        return [[to_wire(k), to_wire(v)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [to_wire(v) for v in value]
    return str(value)


class Channel:
    """What an engine's session gets of the protocol: `write` (a line to our side: progress) and
    `to_wire` (a value as JSON)."""

    def __init__(self, write: Write) -> None:
        self.write = write
        self.to_wire = to_wire


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
        child = engine.start(conf, Channel(write))
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
