"""`viewsync test` and the tests `validate` and `plan --spark` run: the use cases of view
tests (reconciler.viewtests), which take the Workspace that package must not know about."""

from __future__ import annotations

import dataclasses
import errno
import fnmatch
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.core.errors import Problem, UserError, ViewsyncError
from reconciler.core.model import Column, ViewId
from reconciler.core.secrets import redact
from reconciler.source.declarations import Declarations
from reconciler.source.expectations import EMPTY, ViewTest
from reconciler.verify import planning
from reconciler.verify import sources as vsources
from reconciler.viewtests import runner
from reconciler.viewtests.build import Key, Prepared, Universe
from reconciler.viewtests.fixtures import MAX_FIXTURE_BYTES, FileReader
from reconciler.viewtests.result import TestRun
from reconciler.workspace import Workspace


@dataclass(frozen=True)
class TestRequest:
    select: str | None = None  # glob on catalog.schema.view, or on catalog.schema.view.test
    ref: str | None = None  # the declarations at this git ref (None: the working tree)
    engine: str | None = None  # spark, trino, ... or all (None: every configured engine)


def selected(decl: Declarations, pattern: str | None = None,
             views: Iterable[ViewId] | None = None) -> list[tuple[ViewId, ViewTest]]:
    """The tests of the chosen views, in file order."""
    wanted = None if views is None else set(views)
    out = []
    for vid in sorted(decl.views, key=lambda v: (decl.where[v][0], decl.where[v][1])):
        if wanted is not None and vid not in wanted:
            continue
        for t in decl.expectations.get(vid, EMPTY).tests:
            if pattern is None or fnmatch.fnmatchcase(str(vid), pattern) \
                    or fnmatch.fnmatchcase(f"{vid}.{t.name}", pattern):
                out.append((vid, t))
    return out


def _reader(root: Path, ref: str | None) -> FileReader:
    if ref:
        from reconciler.source import gitsrc

        return lambda rel: gitsrc.file_at(root, ref, rel)
    return lambda rel: read_fixture_file(root, rel)


def read_fixture_file(root: Path, rel: str) -> str:
    """A fixture file's text, only when it is a regular file inside the repository once every
    link is followed, and at most MAX_FIXTURE_BYTES. Raises OSError whose strerror says why not
    (a link leading outside, a device, a FIFO: none is opened, so nothing hangs or floods)."""
    base = os.path.realpath(root)
    real = os.path.realpath(os.path.join(base, rel))
    if os.path.commonpath([base, real]) != base:
        raise OSError(errno.EACCES, "it leads outside the repository (through a symbolic link)")
    info = os.stat(real)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    if info.st_size > MAX_FIXTURE_BYTES:
        raise OSError(errno.EFBIG, f"larger than the {MAX_FIXTURE_BYTES // 1024 // 1024} MB a fixture file may hold")
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped since the check
            raise OSError(errno.EINVAL, "not a regular file")
        data = f.read(MAX_FIXTURE_BYTES + 1)
    if len(data) > MAX_FIXTURE_BYTES:
        raise OSError(errno.EFBIG, f"larger than the {MAX_FIXTURE_BYTES // 1024 // 1024} MB a fixture file may hold")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise OSError(errno.EILSEQ, f"not UTF-8 (line {line}, byte {exc.start})") from None


def universe(ws: Workspace, decl: Declarations, ref: str | None, offline: bool) -> Universe:
    """What tests read: declarations, sources/ files and, unless offline, the catalogs' table
    columns (metadata only; a catalog that cannot say leaves the table unknown)."""
    sources = vsources.read(ws.root)
    fetch = planning.table_schemas_from(ws.adapter)
    asked: dict[Key, list[Column] | None] = {}

    def columns(key: Key) -> list[Column] | None:
        got = sources.get(*key)
        if got is not None or offline:
            return got
        if key not in asked:
            catalog = next((c for c in ws.config.catalogs if c.lower() == key[0]), None)
            asked[key] = None
            if catalog is not None:
                try:
                    found = fetch(catalog, [(key[1], key[2])])
                except (ViewsyncError, OSError):
                    found = {}
                asked[key] = next(iter(found.values()), None)
        return asked[key]

    return Universe(decl.views, {v: decl.where[v][0] for v in decl.views}, frozenset(ws.config.catalogs),
                    columns, _reader(ws.root, ref), offline)


def problems(ws: Workspace, decl: Declarations, ref: str | None = None) -> list[Problem]:
    """Offline (for `validate`): every test's problems that need no Spark — unknown inputs,
    unknown columns, values that do not fit their column type, malformed CSV, unreadable files."""
    return _checked(ws, decl, ref)[0]


Ready = dict[tuple[str, ViewId, int], Prepared]  # (dialect, view, test's index) -> the test prepared


def _checked(ws: Workspace, decl: Declarations, ref: str | None,
             engines: list[str] | None = None) -> tuple[list[Problem], Ready | None]:
    """`problems`, and the prepared tests when they are what a run would prepare: no input's
    columns were missing offline (the run asks the catalogs for those). None otherwise.
    `engines`: the engines the run uses (None: every configured one), whose SQL is prepared."""
    from reconciler.viewtests import engines as test_engines

    u = universe(ws, decl, ref, offline=True)
    unknown: list[Key] = []
    offline_columns = u.table_columns

    def columns(key: Key) -> list[Column] | None:
        got = offline_columns(key)
        if got is None:
            unknown.append(key)
        return got

    u = dataclasses.replace(u, table_columns=columns, by_key={})
    out: list[Problem] = []
    prepared: Ready = {}
    # Each test is checked in the first dialect its view has, of the engines this run uses and then
    # the other configured ones (the first's when it has none: the fixtures' problems are the same
    # in every dialect); a run on one engine then prepares its tests once, not twice.
    configured = test_engines.chosen(ws.config, None)
    first = [e for e in engines or () if e in configured]
    flavors = [test_engines.load(e).flavor for e in [*first, *(e for e in configured if e not in first)]]
    by_flavor: dict[str, list[tuple[ViewId, ViewTest]]] = {}
    for vid, t in selected(decl):
        f = next((f for f in flavors if decl.views[vid].sql_for(f.dialect) is not None), flavors[0])
        by_flavor.setdefault(f.dialect, []).append((vid, t))
    for f in flavors:
        for p in runner.prepare_all(u, by_flavor.get(f.dialect, []), f):
            out.extend(runner.problem(decl, p.view, issue) for issue in p.issues)
            prepared[(f.dialect, p.view, p.test.index)] = p
    return out, (None if unknown else prepared)


def run(ws: Workspace, decl: Declarations, tests: list[tuple[ViewId, ViewTest]], ref: str | None,
        engines: list[str] | None = None, ready: Ready | None = None) -> TestRun:
    """Execute `tests` on each engine, each on the view's representation in its dialect (Spark:
    the scratch Spark session, one JVM for all; Trino: the configured server, read-only).

    Args:
        ws: the repository, opened.
        decl: the declarations the tests belong to.
        tests: the tests to run.
        ref: the git ref the declarations were read at (fixture files are read there too).
        engines: the engines (None: Spark only).
        ready: tests already prepared as this run would prepare them (`_checked`), used as they are.

    Returns:
        One result per test and engine; a test's own problem (bad fixture, engine error) is its result.

    Raises:
        SparkUnavailable: no PySpark or no Java.
        UserError: an engine failed as a whole, or cannot be reached.
    """
    from reconciler.viewtests import engines as test_engines

    run_result = TestRun()
    if not tests:
        return run_result
    # Prepared while Spark may still be starting (prestart): only the execution waits for it.
    u = universe(ws, decl, ref, offline=False)
    for name in engines or ["spark"]:
        try:
            got = test_engines.run_on(name, ws.config, u, decl, tests, ready)
        except UserError:
            raise
        except ViewsyncError as err:
            raise UserError(redact(str(err), ws.config.secrets)) from None
        run_result.results += got.results
        run_result.start_seconds.update(got.start_seconds)
        run_result.seconds += got.seconds  # running the tests, without the engines' starts
    run_result.spark_start_seconds = run_result.start_seconds.get("spark")
    return run_result


def test(ws: Workspace, request: TestRequest, warn: Callable[[str], None] = lambda _: None) -> TestRun:
    """`viewsync test`: the selected tests, offline problems first (nothing runs if any).

    Args:
        ws: the repository, opened.
        request: which tests, and the git ref of the declarations.
        warn: warning lines (event deliveries left pending).

    Returns:
        The run (every selected test's result).

    Raises:
        ValidationFailed: a declaration or a test has a problem found without Spark.
        UserError: no test matches `select`, an engine is not configured or has nothing to run,
            or an engine failed as a whole.
        SparkUnavailable: no PySpark or no Java.
    """
    from reconciler.core.errors import ValidationFailed
    from reconciler.verify import session
    from reconciler.viewtests import engines as test_engines

    engines = test_engines.chosen(ws.config, request.engine)
    if "spark" in engines:
        session.prestart(planning.settings_of(ws.config))  # the JVM starts while the files load
    decl = ws.declarations_at(request.ref)
    found, ready = _checked(ws, decl, request.ref, engines)
    if found:
        raise ValidationFailed(found)
    tests = selected(decl, request.select)
    if request.select and not tests:
        raise UserError(f"no test matches {request.select!r}")
    if request.engine not in (None, "all"):
        dialect = test_engines.load(engines[0]).dialect
        if tests and not any(decl.views[v].sql_for(dialect) is not None for v, _ in tests):
            raise UserError(f"no selected view has a `dialect: {dialect}` representation to test on {engines[0]}")
    # The tests checked offline are run as they are when the run would prepare them alike: preparing
    # 1,000 tests takes seconds, and the second time Spark would wait for it.
    result = run(ws, decl, tests, request.ref, engines, ready)
    if ws.config.events and result.results:
        announce(ws, result, request.ref, warn)
    return result


def tests_event_data(run_result: TestRun, git: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `tests.finished` event's data (schemas/tests.schema.json, `$defs/tests_finished`): the
    summary, the counts per engine, and each view's tests with their engine and outcome."""
    views = []
    for vid, results in run_result.by_view().items():
        views.append({"view": vid.to_json(), "passed": sum(r.status == "passed" for r in results),
                      "failed": sum(r.status == "failed" for r in results),
                      "error": sum(r.status == "error" for r in results),
                      "tests": [{"name": r.name, "engine": r.engine, "status": str(r.status), "message": r.message,
                                 "location": {"file": r.file, "line": r.line}} for r in results]})
    engines = {name: TestRun([r for r in run_result.results if r.engine == name]).counts()
               for name in run_result.engines()}
    return {"summary": run_result.counts(), "engines": engines, "seconds": round(run_result.seconds, 3), "git": git,
            "views": views}


def announce(ws: Workspace, run_result: TestRun, ref: str | None, warn: Callable[[str], None]) -> None:
    """A `tests.finished` event through the outbox (the state store), then delivered like an
    apply's: at least once; what a sink does not take now waits for `viewsync events deliver`."""
    import uuid

    from reconciler.events import model
    from reconciler.events.commands import open_emitter
    from reconciler.source import gitsrc

    emitter = open_emitter(ws.config, ws.root, ws.state().engine, log=warn)
    git = gitsrc.info(ws.root, ref).to_json()
    run_id = str(uuid.uuid4())
    emitter.emit(emitter.event(run_id, 0, model.TESTS_FINISHED, "tests", tests_event_data(run_result, git)))
    report = emitter.drain(rounds=1)
    if report.pending:
        warn(f"Warning: {report.pending} event deliveries pending; `viewsync events deliver` retries them")
