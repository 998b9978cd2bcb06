"""Generated hostile input (Hypothesis): every command on >= 500 malformed view
files, plus malformed configs and random mutations of valid files.

Malformed: exit 1, one located line (file:line:col), no "unexpected" error, no
crash, nothing written. Mutated (maybe still valid): either rejected the same
way, or valid with exactly the views an independent YAML parser sees, so no
declared view is ever silently lost. The fixed corpus is test_hostile_input.py."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.core.coltypes import MAX_DEPTH
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

COMMANDS = (["validate"], ["plan"], ["apply", "--auto-approve", "--allow-dirty"], ["drift"])
CONFIG = "version: 1\nproject: fuzz\ncatalogs:\n  local: {type: managed, url: 'sqlite:///.viewsync/c.db'}\n"
FILE = "views/local/s.yaml"
LOCATED = re.compile(r"^  (views/local/s\.yaml|viewsync\.yaml):\d+:\d+: ", re.M)
SETTINGS = settings(max_examples=500, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Characters no name may hold, and raw bytes no file may hold.
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u200e", "\u202e", "\u2060", "\ufeff", "\u00ad", "\u2028", "\x00",
             "\x07", "\x1b", "\x7f", "\x85", "\x9f", ".", "/"]
RAW_CONTROL = ["\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f", "\x80", "\x9f", "\ufffe"]
SQL = ["SELECT 1 AS x", "SELECT a, b FROM t WHERE a > 1", "WITH q AS (SELECT 1 AS x) SELECT * FROM q",
       "VALUES (1), (2)", "SELECT * FROM base"]

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=12)


@st.composite
def view_files(draw: st.DrawFn) -> dict[str, object]:
    """A valid view file, as data."""
    view_names = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    return {"catalog": "local", "schema": "s", "views": [
        {"name": n, "representations": [{"dialect": "spark", "sql": draw(st.sampled_from(SQL))}]}
        for n in view_names]}


def dump(doc: object) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10_000)


def _paths(doc: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every value position in a document (for placing a hostile value)."""
    out: list[tuple[object, ...]] = [path] if path else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*path, i))
    return out


def _set(doc: object, path: tuple[object, ...], value: object) -> None:
    for part in path[:-1]:
        doc = doc[part]  # type: ignore[index]
    doc[path[-1]] = value  # type: ignore[index]


@st.composite
def malformed(draw: st.DrawFn) -> str | bytes:
    """A view file that is certainly invalid, one way or several."""
    doc = draw(view_files())
    kind = draw(st.sampled_from(["bad-name", "raw-control", "deep", "alias-bomb", "two-docs", "non-string-key",
                                 "non-finite", "not-utf8", "wrong-type", "unknown-key", "sql-blank",
                                 "nested-type"]))
    if kind == "bad-name":
        views = doc["views"]
        assert isinstance(views, list)
        i = draw(st.integers(0, len(views) - 1))
        name = views[i]["name"]
        pos = draw(st.integers(0, len(name)))
        views[i]["name"] = name[:pos] + draw(st.sampled_from(INVISIBLE)) + name[pos:]
        return dump(doc)
    text = dump(doc)
    if kind == "raw-control":
        pos = draw(st.integers(0, len(text)))
        return text[:pos] + draw(st.sampled_from(RAW_CONTROL)) + text[pos:]
    if kind == "deep":
        depth = draw(st.integers(33, 40_000))
        flow = draw(st.booleans())
        nested = "[" * depth + "1" + "]" * depth if flow else "\n" + "- " * depth + "1"
        return text + f"extra: {nested}\n"
    if kind == "alias-bomb":
        width = draw(st.integers(6, 12))
        bomb = "bomb0: &b0 [" + ",".join(["x"] * width) + "]\n"
        for level in range(1, draw(st.integers(5, 9))):
            bomb += f"bomb{level}: &b{level} [" + ",".join([f"*b{level - 1}"] * width) + "]\n"
        return text + bomb
    if kind == "two-docs":
        return text + "---\n" + dump(draw(view_files()))
    if kind == "non-string-key":
        key = draw(st.sampled_from(["1", "2.5", "true", "null", "[a, b]", "{a: 1}"]))
        return text + (f"? {key}\n: x\n" if key.startswith(("[", "{")) else f"{key}: x\n")
    if kind == "non-finite":
        value = draw(st.sampled_from([".nan", ".inf", "-.inf", ".NaN", ".Inf"]))
        path = draw(st.sampled_from(_paths(doc)))
        _set(doc, path, "@@HOSTILE@@")
        return dump(doc).replace("'@@HOSTILE@@'", value).replace("\"@@HOSTILE@@\"", value)
    if kind == "not-utf8":
        data = text.encode()
        pos = draw(st.integers(0, len(data)))
        bad = draw(st.sampled_from([b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf"]))
        return data[:pos] + bad + data[pos:]
    if kind == "wrong-type":
        path = draw(st.sampled_from(_paths(doc)))
        value = draw(st.sampled_from([5, 2.5, True, [], {}, [1], {"a": 1}]))
        if path[-1] in ("views",) and value == []:
            value = 5
        _set(doc, path, value)
        return dump(doc)
    if kind == "unknown-key":
        views = doc["views"]
        assert isinstance(views, list)
        target = draw(st.sampled_from([doc, *views]))
        assert isinstance(target, dict)
        target[draw(names) + "_unknown"] = draw(st.sampled_from(["x", 1, None, [1]]))
        return dump(doc)
    if kind == "sql-blank":
        views = doc["views"]
        assert isinstance(views, list)
        views[0]["representations"][0]["sql"] = draw(st.sampled_from([" ", "\u3000", "\ufeff", "\u00a0", "\n\t"]))
        return dump(doc)
    # nested-type: a column type nested beyond the limit
    depth = draw(st.integers(MAX_DEPTH + 1, MAX_DEPTH + 2000))
    views = doc["views"]
    assert isinstance(views, list)
    views[0]["columns"] = [{"name": "c", "type": "array<" * depth + "int" + ">" * depth}]
    return dump(doc)


def _repo(base: Path, content: str | bytes, config: str | bytes = CONFIG) -> Path:
    repo = Path(tempfile.mkdtemp(dir=base))
    (repo / "views/local").mkdir(parents=True)
    cfg = repo / "viewsync.yaml"
    cfg.write_bytes(config if isinstance(config, bytes) else config.encode("utf-8", "surrogatepass"))
    path = repo / FILE
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    return repo


def _files(repo: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(repo)): p.read_bytes() if p.is_file() else None for p in sorted(repo.rglob("*"))}


def _assert_rejected(repo: Path, commands: tuple[list[str], ...] = COMMANDS) -> None:
    before = _files(repo)
    for command in commands:
        res = run_cli(repo, *command)
        assert res.code == 1, (command, res.text[:3000])
        assert "Error: unexpected" not in res.text and "Traceback" not in res.text, res.text[:3000]
        assert LOCATED.search(res.err), (command, res.err[:3000])  # file:line:col
        assert all(len(line) <= 400 for line in res.text.splitlines())
    assert _files(repo) == before  # nothing written


def test_every_command_rejects_500_malformed_view_files(tmp_path: Path) -> None:
    seen: dict[str, int] = {}

    @SETTINGS
    @given(malformed())
    def run(content: str | bytes) -> None:
        repo = _repo(tmp_path, content)
        _assert_rejected(repo)
        seen["n"] = seen.get("n", 0) + 1

    run()
    assert seen["n"] >= 500


@st.composite
def malformed_configs(draw: st.DrawFn) -> str | bytes:
    kind = draw(st.sampled_from(["env", "raw-control", "deep", "non-finite", "wrong-type", "unknown-key",
                                 "two-docs", "not-utf8"]))
    if kind == "env":
        value = draw(st.sampled_from(["${VS_FUZZ_UNSET}", "${VS_FUZZ_EMPTY}", "${", "${VS_FUZZ", "${1A}",
                                      "x${VS_FUZZ_UNSET:-a}${", "${A:-${B}}", "${}"]))
        return CONFIG + f"state: '{value}'\n"
    if kind == "raw-control":
        pos = draw(st.integers(0, len(CONFIG)))
        return CONFIG[:pos] + draw(st.sampled_from(RAW_CONTROL)) + CONFIG[pos:]
    if kind == "deep":
        depth = draw(st.integers(33, 40_000))
        return CONFIG + "policy: " + "[" * depth + "]" * depth + "\n"
    if kind == "non-finite":
        return CONFIG + f"policy: {{max_drop_fraction: {draw(st.sampled_from(['.nan', '.inf', '-.inf']))}}}\n"
    if kind == "wrong-type":
        key = draw(st.sampled_from(["version", "project", "state", "catalogs", "policy"]))
        invalid = {"version": [5, "x y", [], {}, True, None, 2.5], "project": [5, "x y", [], {}, True, None],
                   "state": [5, "", [], {}, True, 2.5], "catalogs": [5, "x y", [], {}, True, None],
                   "policy": [5, "x y", [], True, 2.5, {"prune": 1}, {"max_drop_fraction": 2}]}
        value = json.dumps(draw(st.sampled_from(invalid[key])))
        lines = [ln for ln in CONFIG.splitlines() if not ln.startswith(key + ":")]
        body = "\n".join(lines) + "\n"
        if key == "catalogs":
            body = body.replace("  local: {type: managed, url: 'sqlite:///.viewsync/c.db'}\n", "")
        return body + f"{key}: {value}\n"
    if kind == "unknown-key":
        return CONFIG + f"{draw(names)}_x: 1\n"
    if kind == "two-docs":
        return CONFIG + "---\n" + CONFIG
    data = CONFIG.encode()
    pos = draw(st.integers(0, len(data)))
    return data[:pos] + b"\xff" + data[pos:]


def test_every_command_rejects_malformed_configs(tmp_path: Path) -> None:
    import os

    os.environ.pop("VS_FUZZ_UNSET", None)
    os.environ["VS_FUZZ_EMPTY"] = ""

    @settings(SETTINGS, max_examples=150)
    @given(malformed_configs())
    def run(config: str | bytes) -> None:
        good = dump({"catalog": "local", "schema": "s", "views": [
            {"name": "v", "representations": [{"dialect": "spark", "sql": "SELECT 1"}]}]})
        _assert_rejected(_repo(tmp_path, good, config))

    try:
        run()
    finally:
        del os.environ["VS_FUZZ_EMPTY"]


FRAGMENTS = ["\0", "\x07", "\ufeff", "\u200b", "[", "{", "]", "}", "&a ", "*a", "---\n", "? ", ": ", "\t", "- ",
             "!!binary ", "%YAML 1.1\n", '"', "'", "\\", "\n  ", "\n", "1: x\n", "<<: *a\n", "#", "|", ">", ",",
             "\r", "\u2028", "\x85", "é", "\U0001f600", ".nan", "~"]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = dump(draw(view_files()))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:pos] + draw(st.sampled_from(FRAGMENTS)) + text[pos:]
        else:
            text = text[:pos] + text[pos + draw(st.integers(1, 8)):]
    return text


def _independent_view_count(text: str) -> int | None:
    """Views PyYAML (pure Python, YAML 1.1) sees, or None when it cannot tell."""
    try:
        doc = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 - SafeLoader
    except Exception:  # noqa: BLE001 - any failure: no independent count
        return None
    if isinstance(doc, dict) and isinstance(doc.get("views"), list):
        return len(doc["views"])
    return None


@settings(SETTINGS, max_examples=300)
@given(mutated())
def test_mutated_files_are_rejected_or_keep_every_view(content: str) -> None:
    with tempfile.TemporaryDirectory() as base:
        repo = _repo(Path(base), content)
        before = _files(repo)
        res = run_cli(repo, "validate")
        assert "Error: unexpected" not in res.text and "Traceback" not in res.text, res.text[:3000]
        if res.code == 0:
            m = re.search(r"Valid: (\d+) view", res.out)
            assert m is not None, res.out
            expected = _independent_view_count(content)
            if expected is not None:
                assert int(m.group(1)) == expected, (content, res.out)  # no view silently lost
        else:
            assert res.code == 1 and LOCATED.search(res.err), res.err[:3000]
        assert _files(repo) == before
