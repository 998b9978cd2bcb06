"""The child-process layer every engine runs on (reconciler/child), with a stdlib engine module
run by path by another interpreter, as a foreign PySpark's or the Flink venv's runs it: the
hello, answers in order with progress before them, the engine's refusal as its own error, a
handler's failure as one line, a child that dies named with its log's last line, a start that
fails, and the work directory removed at stop."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from reconciler.child.process import ChildProcess, Names, command
from reconciler.core.errors import UserError

ENGINE = '''
import os, sys
def start(conf, channel):
    if conf.get("fail"):
        raise RuntimeError("no engine here")
    return {"channel": channel, "greeting": conf["greeting"]}
def hello(child):
    return {"pid": os.getpid(), "engine": "echo"}
def handlers(child):
    def echo(request):
        child["channel"].write({"progress": {"step": 1}})
        return {"said": child["greeting"] + " " + request["text"], "wire": child["channel"].to_wire(request["text"])}
    def refuse(request):
        return {"error": {"class": "NOPE", "message": "refused " + request["text"]}}
    def crash(request):
        raise ValueError("bad input")
    def die(request):
        sys.stderr.write("the engine broke down\\n"); sys.stderr.flush(); os._exit(3)
    return {"echo": echo, "refuse": refuse, "crash": crash, "die": die}
def stop(child, request):
    pass
'''
NAMES = Names(child="the echo child", failed="echo failed", start_failed="echo could not start")


class Refused(UserError):
    pass


class Gone(UserError):
    pass


class EchoChild(ChildProcess):
    unavailable = Gone

    def refused(self, error: dict[str, Any]) -> UserError:
        return Refused(f"{error['class']}: {error['message']}")


def _start(tmp_path: Path, conf: dict[str, Any]) -> EchoChild:
    engine = tmp_path / "echo_engine.py"
    engine.write_text(ENGINE)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return EchoChild(command(sys.executable, str(engine), by_path=True), conf, {}, work, NAMES)


def test_requests_are_answered_in_order_with_progress_and_errors_mapped(tmp_path: Path) -> None:
    child = _start(tmp_path, {"greeting": "hello"})
    try:
        assert child.hello["engine"] == "echo" and child.jvm_pid == child.hello["pid"] and child.start_seconds > 0
        seen: list[dict[str, Any]] = []
        assert child.call({"op": "echo", "text": "world"}, seen.append) == {"said": "hello world", "wire": "world"}
        assert seen == [{"step": 1}]
        with pytest.raises(Refused, match="NOPE: refused it"):
            child.call({"op": "refuse", "text": "it"})
        with pytest.raises(UserError, match="echo failed: ValueError: bad input"):
            child.call({"op": "crash"})
        with pytest.raises(UserError, match="echo failed: unknown op 'nothing'"):
            child.call({"op": "nothing"})
        assert child.peak_rss_mb() is not None
        with pytest.raises(Gone, match="the echo child stopped unexpectedly: the engine broke down"):
            child.call({"op": "die"})
        assert not child.alive()
    finally:
        child.close()
    assert not (tmp_path / "work").exists()


def test_a_start_that_fails_says_why_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(Gone, match="echo could not start: RuntimeError: no engine here"):
        _start(tmp_path, {"fail": True})
    assert not (tmp_path / "work").exists()


def test_an_interpreter_that_cannot_run_is_named(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(Gone, match="no-python' cannot run"):
        EchoChild(command(str(tmp_path / "no-python"), "x.py", by_path=True), {}, {}, work, NAMES)
