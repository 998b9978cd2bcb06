"""Declarations: views/<catalog>/<schema>.yaml files -> {ViewId: ViewSpec}.

Two validation layers, as editors see them: the JSON Schema, then pydantic and
the semantic checks (file path, known catalog, duplicates). Every problem is
reported with file:line:col and the field path; nothing is half-loaded.
The fast path parses with libyaml and only composes nodes (for positions)
when a file has a problem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
import yaml

from reconciler.core import coltypes
from reconciler.core import sql as vsql
from reconciler.core.errors import Problem, ValidationFailed
from reconciler.core.model import ViewId, ViewSpec, digest_of
from reconciler.source import expectations as vexpect
from reconciler.source import generated as vgen
from reconciler.source import names, yamlsrc
from reconciler.source.config import VIEWS_DIR, Config, fast_schema, schema, schema_problems

# (path relative to the repository, text or raw bytes) of each view file
Files = Iterable[tuple[str, str]] | Iterable[tuple[str, bytes]] | Iterable[tuple[str, str | bytes]]


@dataclass
class Declarations:
    views: dict[ViewId, ViewSpec] = field(default_factory=dict)
    origin: dict[ViewId, str] = field(default_factory=dict)  # "file (views[i])"
    files: list[str] = field(default_factory=list)
    schema_owners: dict[tuple[str, str], str] = field(default_factory=dict)  # a view file's top-level owner
    texts: dict[str, str] = field(default_factory=dict)  # file -> text, to locate later problems
    where: dict[ViewId, tuple[str, int]] = field(default_factory=dict)  # file, index in views
    expectations: dict[ViewId, vexpect.Expectations] = field(default_factory=dict)  # key, checks, tests (not the spec)
    generated: dict[ViewId, dict[str, vgen.Generated]] = field(default_factory=dict)  # dialect -> marker (not the spec)
    rep_index: dict[ViewId, dict[str, int]] = field(default_factory=dict)  # dialect -> index in the file's list
    _marks: dict[str, yamlsrc.Marks | None] = field(default_factory=dict, repr=False)  # for locating

    def _marks_of(self, rel: str) -> yamlsrc.Marks | None:
        if rel not in self._marks:
            try:
                self._marks[rel] = yamlsrc.Marks(self.texts[rel])
            except (yamlsrc.YamlSyntaxError, yaml.YAMLError):  # cannot happen for a file that loaded
                self._marks[rel] = None
        return self._marks[rel]

    def _node(self, rel: str) -> Any:
        marks = self._marks_of(rel)
        try:
            return marks.node() if marks is not None else None
        except yamlsrc.YamlSyntaxError:  # cannot happen for a file that loaded; never hide the problem
            return None

    def locate(self, view: ViewId, path: tuple[str | int, ...]) -> tuple[str, int, int]:
        """(file, line, column) of a field of a declared view, e.g. ("tests", 0) for its first test."""
        rel, i = self.where[view]
        marks = self._marks_of(rel)
        full = ("views", i, *path)
        try:
            line, col = marks.locate(full) if marks is not None else (1, 1)
        except yamlsrc.YamlSyntaxError:  # cannot happen for a file that loaded; never hide the problem
            line, col = 1, 1
        return rel, line, col

    def sql_problem(self, view: ViewId, rep: int, offset: int | None, message: str) -> Problem:
        """A problem at character `offset` of the (trimmed) SQL of representation `rep`: the
        file's own line and column of that character (the `sql` field's when unknown)."""
        path: tuple[str | int, ...] = ("representations", rep, "sql")
        found = self.problem(view, path, message)
        rel, i = self.where[view]
        scalar = yamlsrc.node_at(self._node(rel), ("views", i, *path))
        if offset is None or not isinstance(scalar, yaml.ScalarNode):
            return found
        line, col = yamlsrc.scalar_position(scalar, self.texts[rel], offset)
        return Problem(found.file, line, col, found.field, found.message)

    def problem(self, view: ViewId, path: tuple[str | int, ...], message: str) -> Problem:
        """A problem found after loading (a cycle, a non-query SQL), located in its file."""
        rel, line, col = self.locate(view, path)
        full = ("views", self.where[view][1], *path)
        return Problem(rel, line, col, yamlsrc.path_text(full), yamlsrc.clip(message))

    def digest(self, selected: Iterable[ViewId] | None = None) -> str:
        ids = sorted(self.views if selected is None else selected, key=ViewId.key)
        return digest_of({str(v): self.views[v].digest() for v in ids})


def read_tree(root: Path) -> list[tuple[str, bytes]]:
    """(relative path, content) of every view file under root/views. Anything that
    looks like a view file but cannot be read is an error, never silently skipped."""
    base = root / VIEWS_DIR
    if not base.exists() and not base.is_symlink():
        return []
    if not base.is_dir():
        raise ValidationFailed([Problem(VIEWS_DIR, 1, 1, "", f"{VIEWS_DIR} is not a directory")])
    out: list[tuple[str, bytes]] = []
    problems: list[Problem] = []
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(root).as_posix()
        suffix = path.suffix.lower()
        if suffix not in (".yaml", ".yml"):
            if path.is_symlink() and not path.exists():
                problems.append(Problem(rel, 1, 1, "", "broken symbolic link"))
            continue
        if path.suffix not in (".yaml", ".yml"):
            problems.append(Problem(rel, 1, 1, "", f"view files end in .yaml or .yml (lowercase), "
                                    f"not {path.suffix}"))
        elif not path.exists():
            problems.append(Problem(rel, 1, 1, "", "broken symbolic link"))
        elif path.is_file():
            try:
                out.append((rel, path.read_bytes()))
            except OSError as err:
                problems.append(Problem(rel, 1, 1, "", f"cannot read: {err.strerror or err}"))
        elif not path.is_dir():
            problems.append(Problem(rel, 1, 1, "", "not a regular file"))
    if problems:
        raise ValidationFailed(problems)
    return out


def load(files: Files, config: Config) -> Declarations:
    decl = Declarations()
    problems: list[Problem] = []
    for rel, content in files:
        decl.files.append(rel)
        problems.extend(_load_file(rel, content, config, decl))
    if problems:
        raise ValidationFailed(problems)
    return decl


def _expected(rel: str) -> tuple[str, str] | None:
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] != VIEWS_DIR:
        return None
    return parts[1], parts[2].rsplit(".", 1)[0]


def _load_file(rel: str, content: str | bytes, config: Config, decl: Declarations) -> list[Problem]:
    try:
        return _load_text(rel, content, config, decl)
    except yamlsrc.YamlSyntaxError as err:  # the locating parser rejects what the fast one read
        return [Problem(rel, err.line, err.column, err.field, err.message)]


def _load_text(rel: str, content: str | bytes, config: Config, decl: Declarations) -> list[Problem]:
    try:
        text = yamlsrc.decode(content) if isinstance(content, bytes) else content
        data = yamlsrc.load(text)
    except yamlsrc.YamlSyntaxError as err:
        return [Problem(rel, err.line, err.column, err.field, err.message)]
    node: Any = None

    def at(path: tuple[str | int, ...], message: str) -> Problem:
        """A problem located at `path` (nodes are composed only when needed)."""
        nonlocal node
        if node is None:
            node = yamlsrc.compose(text)
        line, col = yamlsrc.locate(node, path)
        return Problem(rel, line, col, yamlsrc.path_text(path), yamlsrc.clip(message))

    if data is None:
        return [Problem(rel, 1, 1, "", "empty file (expected catalog, schema and views)")]
    if not fast_schema("view-file.schema.json").is_valid(data):
        node = yamlsrc.compose(text)
        return schema_problems(schema("view-file.schema.json"), data, node, rel)
    name_problems = [at(path, message) for path, message in names.problems(data)]
    if name_problems:
        return name_problems

    problems: list[Problem] = []
    catalog, schema_name = data["catalog"], data["schema"]
    expected = _expected(rel)
    if expected is None:
        problems.append(Problem(rel, 1, 1, "", f"view files live at {VIEWS_DIR}/<catalog>/<schema>.yaml"))
    else:
        if catalog != expected[0]:
            problems.append(at(("catalog",), f"{catalog!r} does not match the file path (expected {expected[0]!r})"))
        if schema_name != expected[1]:
            problems.append(at(("schema",), f"{schema_name!r} does not match the file path (expected {expected[1]!r})"))
    if catalog not in config.catalogs:
        problems.append(at(("catalog",), f"unknown catalog {catalog!r} (viewsync.yaml defines: "
                                f"{', '.join(sorted(config.catalogs)) or 'none'})"))

    if data.get("owner") is not None:
        decl.schema_owners[(catalog, schema_name)] = data["owner"]
    seen: dict[str, int] = {}
    for i, raw in enumerate(data["views"]):
        name = raw["name"]
        vid = ViewId(catalog, schema_name, name)
        if name in seen:
            problems.append(at(("views", i, "name"), f"duplicate view {name!r} (also views[{seen[name]}])"))
            continue
        seen[name] = i
        if vid in decl.views:
            problems.append(at(("views", i, "name"), f"view {vid} is already declared in {decl.origin[vid]}"))
            continue
        spec_problems = _spec_problems(raw, i, at, config.custom_dialects)
        if spec_problems:
            problems.extend(spec_problems)
            continue
        body = {k: v for k, v in raw.items() if k != "name" and k not in vexpect.FIELDS}
        body["representations"] = vgen.without_markers(body["representations"])
        if body.get("default_namespace") is None:  # the documented default: the view's own schema
            body["default_namespace"] = vid.namespace
        try:
            spec = ViewSpec.model_validate(body)
        except pydantic.ValidationError as err:
            for e in err.errors():
                problems.append(at(("views", i, *e["loc"]), e["msg"]))
            continue
        rev = vexpect.parse(raw)
        rev_problems = [at(("views", i, *path), message)
                        for path, message in vexpect.problems(rev, [c.name for c in spec.columns])]
        if rev_problems:
            problems.extend(rev_problems)
            continue
        decl.views[vid] = spec
        decl.expectations[vid] = rev
        decl.generated[vid] = vgen.parse(raw)
        decl.rep_index[vid] = {str(r["dialect"]): j for j, r in enumerate(raw["representations"])}
        decl.origin[vid] = f"{rel} (views[{i}])"
        decl.where[vid] = (rel, i)
        decl.texts[rel] = text
    return problems


def _spec_problems(
    raw: dict[str, Any], i: int, at: Callable[[tuple[str | int, ...], str], Problem], custom: frozenset[str]
) -> list[Problem]:
    """Semantic checks whose errors need a precise position."""
    problems: list[Problem] = []
    dialects: dict[str, int] = {}
    for j, rep in enumerate(raw["representations"]):
        path = ("views", i, "representations", j, "dialect")
        if rep["dialect"] in dialects:
            problems.append(at(path, f"duplicate dialect {rep['dialect']!r}"))
        elif rep["dialect"] not in custom and not vsql.knows(rep["dialect"]):
            problems.append(at(path, _unknown_dialect(rep["dialect"], custom)))
        dialects[rep["dialect"]] = j
    columns: set[str] = set()
    for j, col in enumerate(raw.get("columns") or []):
        try:
            coltypes.canonical(col["type"])
        except coltypes.ColumnTypeError as err:
            path = ("views", i, "columns", j, "type")
            problems.append(at(path, str(err)))
        if col["name"].lower() in columns:
            path = ("views", i, "columns", j, "name")
            problems.append(at(path, f"duplicate column {col['name']!r}"))
        columns.add(col["name"].lower())
    return problems


def _unknown_dialect(dialect: str, custom: frozenset[str]) -> str:
    """A typo'd dialect would plan a new representation beside the old one: refuse it, and say
    which dialect it resembles and how a dialect of one's own is declared."""
    close = vsql.closest_dialect(dialect, custom)
    hint = f": did you mean {close!r}?" if close else ""
    return (f"unknown dialect {dialect!r}{hint} (a dialect sqlglot does not know is listed under "
            f"custom_dialects in viewsync.yaml)")
