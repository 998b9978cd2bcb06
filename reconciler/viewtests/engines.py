"""The engines view tests run on, one module each: a `TestEngine` says which representation it
runs (its `build.Flavor`), how the shared runner reads its answers (`runner.Profile`), and how
to reach it (`open`: a `core.engine.Engine` answering the `tests` operation). Spark is built in
(the verifier's scratch child); Trino is `trino_sql` + `trino_engine`; Flink is `flink_engine`.
A new engine is one new module with a `TEST_ENGINE` and one line in `MODULES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from reconciler.core.engine import Engine
from reconciler.core.errors import UserError
from reconciler.core.model import ViewId
from reconciler.source.config import Config
from reconciler.source.declarations import Declarations
from reconciler.source.expectations import ViewTest
from reconciler.viewtests import build, runner
from reconciler.viewtests.build import Flavor, Universe
from reconciler.viewtests.result import TestRun

# every engine a plan's matrix shows, in its columns' order -> the module that defines it
MODULES = {"spark": "reconciler.viewtests.engines", "trino": "reconciler.viewtests.trino_engine",
           "flink": "reconciler.viewtests.flink_engine"}
KNOWN = tuple(MODULES)


@dataclass(frozen=True)
class TestEngine:
    name: str
    flavor: Flavor
    profile: runner.Profile
    open: Callable[[Config], Engine]  # reach (or start) it; raises UserError when it cannot

    @property
    def dialect(self) -> str:
        return self.flavor.dialect


def _open_spark(config: Config) -> Engine:
    from reconciler.verify import planning, session

    return session.worker(planning.settings_of(config))


TEST_ENGINE = TestEngine("spark", build.SPARK, runner.SPARK, _open_spark)


def load(name: str) -> TestEngine:
    """The engine named `name`; UserError for one viewsync cannot run tests on."""
    module = MODULES.get(name)
    if not module:
        raise UserError(f"view tests cannot run on {name!r} here (engines: "
                        f"{', '.join(n for n, m in MODULES.items() if m)})")
    got: TestEngine = importlib.import_module(module).TEST_ENGINE
    return got


def chosen(config: Config, asked: str | None) -> list[str]:
    """The engines `--engine` names: one, `all` (every configured one), or by default all
    configured. UserError for an engine not configured."""
    configured = config.engines.configured()
    if asked is None or asked == "all":
        return configured
    if asked not in configured:
        hint = " (configure it under engines: in viewsync.yaml)" if asked in MODULES else ""
        raise UserError(f"engine {asked!r} is not configured{hint}; configured: {', '.join(configured)}")
    return [asked]


def run_on(name: str, config: Config, u: Universe, decl: Declarations,
           tests: list[tuple[ViewId, ViewTest]],
           ready: Mapping[tuple[str, ViewId, int], build.Prepared] | None = None) -> TestRun:
    """The tests whose view has a representation in the engine's dialect, run on it (the others
    are not its to run: `proof.matrix` says "no representation"). `ready`: tests already prepared
    in `u` with this engine's flavor, by (dialect, view, test's index)."""
    engine_def = load(name)
    mine = [(v, t) for v, t in tests if decl.views[v].sql_for(engine_def.dialect) is not None]
    if not mine:
        return TestRun()
    known = ready or {}
    dialect = engine_def.dialect
    if all((dialect, v, t.index) in known for v, t in mine):
        prepared = [known[(dialect, v, t.index)] for v, t in mine]
    else:
        prepared = runner.prepare_all(u, mine, engine_def.flavor)
    engine = engine_def.open(config)
    try:
        got = runner.run(prepared, engine.call, decl, engine_def.profile)
    finally:
        if name != "spark":  # the scratch Spark child is shared by the whole process
            engine.close()
    got.start_seconds[name] = engine.start_seconds
    return got
