"""One view test as one query of one engine, and every problem the test has before it runs.

The test's view is computed from its own SQL in the engine's dialect (a `Flavor`: Spark's by
default; `trino_sql.FLAVOR` for Trino). Each table it reads is one of the test's
inputs (an inline table of the given rows, typed by the input's columns) or a declared view,
computed from its own SQL in turn, so one test can feed raw tables and check a view several
levels down. All of it is one `WITH` query: the inputs and the computed views are CTEs, and
each view's SQL is kept as written except its table references, which point at the CTEs
(`sales.orders` becomes `__vs_in_0 AS orders`). Nothing is created in any catalog.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler.core import coltypes
from reconciler.core import sql as vsql
from reconciler.core.deps import candidates
from reconciler.core.model import Column, ViewId, ViewSpec
from reconciler.core.sql import spark_ident as q
from reconciler.source.expectations import Given, ViewTest
from reconciler.viewtests import fixtures, values
from reconciler.viewtests.fixtures import FileReader, Issue, Row

DIALECT = "spark"
Key = tuple[str, str, str]  # (catalog, schema, name), lower-cased
# the columns of a table (sources/ files, else the catalog); None when unknown
TableColumns = Callable[[Key], list[Column] | None]


def _k(catalog: str, schema: str, name: str) -> Key:
    return (catalog.lower(), schema.lower(), name.lower())


@dataclass(frozen=True)
class Flavor:
    """How one engine's SQL spells a test's query: the representation it runs (`dialect`),
    identifiers, and an input as an inline table of typed rows."""

    dialect: str
    label: str  # as messages name the engine's SQL: "Spark", "Trino"
    ident: Callable[[str], str]
    # (columns, their types, typed rows: at least one) -> a SELECT returning exactly those columns
    inline: Callable[[list[Column], list[coltypes.Type], list[list[Any]]], str]
    # (columns, their types) -> a SELECT of those columns returning no row
    empty: Callable[[list[Column], list[coltypes.Type]], str]


def _spark_inline(cols: list[Column], types: list[coltypes.Type], typed_rows: list[list[Any]]) -> str:
    # Cells as plain literals, each column cast once to its type. Not one JSON literal per input, as
    # Trino's flavor: Spark's parser would take it as one token (parsing 1,000 tests' queries went
    # from 3.6 s to 1.1 s), but it builds a VALUES list into rows as it parses, while
    # `explode(from_json(...))` is analysed, folded and planned in every test: 30% slower in all.
    body = ",\n  ".join("(" + ", ".join(values.cell(v, t) for v, t in zip(r, types, strict=True)) + ")"
                        for r in typed_rows)
    casts = ", ".join(f"CAST(_c{i} AS {values.spark_type(t)}) AS {q(c.name)}"
                      for i, (c, t) in enumerate(zip(cols, types, strict=True)))
    raw = ", ".join(f"_c{i}" for i in range(len(cols)))
    return f"SELECT /*+ COALESCE(1) */ {casts} FROM VALUES\n  {body}\n  AS t({raw})"


def _spark_empty(cols: list[Column], types: list[coltypes.Type]) -> str:
    nulls = ", ".join(f"{values.literal(None, t)} AS {q(c.name)}" for c, t in zip(cols, types, strict=True))
    return f"SELECT {nulls} WHERE FALSE"


SPARK = Flavor(DIALECT, "Spark", q, _spark_inline, _spark_empty)


@dataclass(frozen=True)
class Universe:
    """What a test may read: the declarations, the configured catalogs, table columns, files."""

    views: Mapping[ViewId, ViewSpec]
    files: Mapping[ViewId, str]  # the view file of each declared view
    catalogs: frozenset[str]
    table_columns: TableColumns
    reader: FileReader
    offline: bool = False  # validate: an input whose columns are unknown is not typed (no error)
    by_key: dict[Key, ViewId] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_key.update({_k(v.catalog, v.schema, v.name): v for v in self.views})


def resolve(parts: tuple[str, ...], vid: ViewId, spec: ViewSpec, catalogs: frozenset[str]) -> Key:
    """The object a name in `vid`'s SQL means: the first of core.deps' candidates, among the
    configured catalogs (a test reads fixture rows, so there is no second place to look)."""
    return candidates(parts, vid, spec, catalogs)[0]


@dataclass
class Prepared:
    """A test ready for Spark (`sql`), or the issues that stop it (`issues` non-empty)."""

    view: ViewId
    test: ViewTest
    sql: str = ""
    columns: list[Column] | None = None  # the view's declared columns (None: Spark's output names them)
    expected: list[Row] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)


@dataclass
class _Input:
    given: Given
    key: Key
    shown: str
    cte: str
    columns: list[Column] | None = None


def _split(name: str) -> tuple[str, ...]:
    return tuple(p.strip("`") for p in name.split("."))


def prepare(u: Universe, vid: ViewId, test: ViewTest, flavor: Flavor = SPARK) -> Prepared:
    out = Prepared(vid, test)
    spec = u.views[vid]
    dialect, q = flavor.dialect, flavor.ident
    if spec.sql_for(dialect) is None:
        out.issues.append(Issue(test.path("name"), f"{vid} has no {flavor.label} SQL (tests run the view's "
                                                   f"`dialect: {dialect}` representation)"))
        return out
    inputs: dict[Key, _Input] = {}
    computed: dict[ViewId, str] = {}  # view -> its CTE
    order: list[ViewId] = []  # computed views, each after the views it reads
    rewritten: dict[ViewId, str] = {}
    used: set[str] = set()

    def given_for(key: Key, w: ViewId) -> Given | None:
        hits = [g for g in test.given if resolve(_split(g.name), w, u.views[w], u.catalogs) == key]
        if len(hits) > 1:
            out.issues.append(Issue(test.path("given", hits[1].name),
                                    f"{hits[0].name!r} and {hits[1].name!r} are the same input"))
        return hits[0] if hits else None

    def visit(w: ViewId, trail: tuple[ViewId, ...]) -> str:
        if w in computed:
            return computed[w]
        wspec = u.views[w]
        text = vsql.query_text(wspec.sql_for(dialect) or "")
        refs = vsql.table_references(text, vsql.sqlglot_dialect(dialect))
        if refs is None:
            out.issues.append(Issue(test.path("name"), f"cannot read the {flavor.label} SQL of {w}"))
            refs = []
        targets: list[str] = []
        for ref in refs:
            key = resolve(ref.parts, w, wspec, u.catalogs)
            shown = ".".join(ref.parts)
            g = given_for(key, w)
            if g is not None:
                used.add(g.name)
                if key not in inputs:
                    inputs[key] = _Input(g, key, shown, f"__vs_in_{len(inputs)}")
                targets.append(inputs[key].cte)
                continue
            dep = u.by_key.get(key)
            if dep is not None and dep != w and dep not in trail and u.views[dep].sql_for(dialect) is not None:
                targets.append(visit(dep, (*trail, w)))
                continue
            why = f"a declared view without {flavor.label} SQL" if dep is not None else "not a declared view"
            out.issues.append(Issue(test.path("given") if test.given else test.path("name"),
                                    f"input {shown} (read by {w.name}) is not given and is {why}: "
                                    f"add its rows under given"))
            targets.append(q(ref.parts[-1]))
        pieces, last = [], 0
        for ref, target in zip(refs, targets, strict=True):
            pieces.append(text[last:ref.start])
            pieces.append(target if ref.aliased else f"{target} AS {q(ref.parts[-1])}")
            last = ref.end + 1
        pieces.append(text[last:])
        rewritten[w] = "".join(pieces)
        computed[w] = f"__vs_v_{len(computed)}"
        order.append(w)
        return computed[w]

    visit(vid, ())
    for g in test.given:
        if g.name not in used:
            out.issues.append(Issue(test.path("given", g.name),
                                    f"unknown input {g.name!r}: neither {vid.name} nor a view it reads reads it"))
    ctes: list[str] = []
    for inp in inputs.values():
        ctes.append(f"{inp.cte} AS ({_inline_table(u, vid, test, inp, out, flavor)})")
    for w in order:
        cols = list(u.views[w].columns)
        names = "(" + ", ".join(q(c.name) for c in cols) + ")" if cols else ""
        ctes.append(f"{computed[w]}{names} AS (\n{rewritten[w]}\n)")
    out.columns = list(spec.columns) or None
    out.sql = "WITH " + ",\n".join(ctes) + f"\nSELECT * FROM {computed[vid]}"
    if test.expect.rows is not None:
        out.expected = [Row(dict(r), test.path("expect", "rows", i)) for i, r in enumerate(test.expect.rows)]
        if out.columns is not None:
            typed(out.expected, out.columns, out.issues)
    return out


def _columns_of(u: Universe, inp: _Input) -> list[Column] | None:
    dep = u.by_key.get(inp.key)
    if dep is not None:
        return list(u.views[dep].columns) or None
    return u.table_columns(inp.key)


def _inline_table(u: Universe, vid: ViewId, test: ViewTest, inp: _Input, out: Prepared, flavor: Flavor) -> str:
    path = test.path("given", inp.given.name)
    rows, issues = fixtures.read(inp.given, path, u.files[vid], u.reader)
    out.issues.extend(issues)
    cols = _columns_of(u, inp)
    if cols is None:
        if not u.offline:
            catalog, schema, name = inp.key
            out.issues.append(Issue(path, f"the columns of {inp.shown} are unknown: list the table in "
                                          f"sources/{catalog}/{schema}.yaml (viewsync import --sources writes it)"))
        return "SELECT 1"
    typed_rows = typed(rows, cols, out.issues)
    types = [coltypes.parse(c.type) for c in cols]
    return flavor.inline(cols, types, typed_rows) if typed_rows else flavor.empty(cols, types)


def typed(rows: list[Row], cols: list[Column], issues: list[Issue]) -> list[list[Any]]:
    """Each row's values in column order, typed; a column a row omits is NULL. Unknown
    columns and values that do not fit their type become issues."""
    by_name = {c.name.lower(): i for i, c in enumerate(cols)}
    types = [coltypes.parse(c.type) for c in cols]
    shown = ", ".join(c.name for c in cols)
    out: list[list[Any]] = []
    for row in rows:
        vals: list[Any] = [None] * len(cols)
        for name, value in row.values.items():
            i = by_name.get(str(name).lower())
            if i is None:
                issues.append(row.issue(str(name), f"unknown column {name!r} (columns: {shown})"))
                continue
            try:
                vals[i] = values.coerce(value, types[i])
            except ValueError as err:
                issues.append(row.issue(str(name), f"{cols[i].name}: {err}"))
        out.append(vals)
    return out
