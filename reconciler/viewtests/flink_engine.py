"""Flink as an engine of view tests: PyFlink in batch mode, in a child process run by the
interpreter of its own venv (`engines: flink: python:`), answering the `tests` operation
(reconciler/flink/serve.py). Fixture rows are inline `VALUES` relations, each cell cast to its
column's Flink type (reconciler.flink.relations); nothing is registered in any catalog.
"""

from __future__ import annotations

from typing import Any

from reconciler.core import coltypes
from reconciler.core.coltypes import Prim, Type
from reconciler.core.engine import Engine
from reconciler.core.errors import UserError
from reconciler.flink import relations
from reconciler.flink.client import FlinkChild
from reconciler.source.config import Config
from reconciler.source.declarations import Declarations
from reconciler.viewtests.build import Flavor, Prepared
from reconciler.viewtests.engines import TestEngine
from reconciler.viewtests.runner import POS, TAG, Profile

FLAVOR = Flavor("flink", "Flink", relations.ident, relations.inline, relations.empty)


def _branch(i: int, sql: str) -> str:
    # A batch UNION ALL keeps no row order: position 0 for all (an `ordered` test runs alone).
    return f"SELECT {i} AS {TAG}, 0 AS {POS}, * FROM (\n{sql}\n) AS `__vs_branch`"


def type_of(field: dict[str, Any]) -> Type:
    try:
        return coltypes.from_flink(str(field.get("type", "")))
    except coltypes.ColumnTypeError:
        return Prim("string")  # a type fixtures cannot hold (interval, time...): compared as text


def error(e: dict[str, Any], p: Prepared, decl: Declarations) -> str:
    message = (str(e.get("message", "")).splitlines() or [""])[0].strip()
    return f"Flink: [{e.get('class')}] {message}"


PROFILE = Profile("flink", _branch, type_of, error, ordered_in_union=False)


def _open(config: Config) -> Engine:
    settings = config.engines.flink
    if settings is None:
        raise UserError("no Flink is configured: add engines.flink (python: the interpreter that has PyFlink) "
                        "to viewsync.yaml")
    return FlinkChild(settings.python, settings.conf)


TEST_ENGINE = TestEngine("flink", FLAVOR, PROFILE, _open)
