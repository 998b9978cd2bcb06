"""Read the access policy: `access:` in viewsync.yaml or access.yaml beside it.

JSON Schema first (schemas/access.schema.json, also for editors), then the
checks a schema cannot express; every problem is reported as file:line:col.
No policy at all is not an error: it means everyone may do everything.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from reconciler.access.model import CHECKED_ON, DEPTH, AccessPolicy, Grant, Group, Level, Pattern, Privilege
from reconciler.core.errors import Problem, ValidationFailed
from reconciler.core.model import digest_of
from reconciler.source import yamlsrc
from reconciler.source.config import schema_document, schema_problems

ACCESS_FILE = "access.yaml"
SCHEMA_FILE = "access.schema.json"
SECTION = "access"
_LEVELS: tuple[Level, ...] = ("catalog", "schema", "view")


@cache
def _validator(in_config: bool) -> Any:
    """Validates access.yaml itself, or a whole viewsync.yaml's `access:` (so error paths read access.*)."""
    import jsonschema

    doc = schema_document(SCHEMA_FILE)
    if in_config:
        doc = {"$defs": doc["$defs"], "type": "object", "properties": {SECTION: {"$ref": "#/$defs/policy"}}}
    return jsonschema.validators.validator_for(doc)(doc)


def load(root: Path, config_path: Path) -> AccessPolicy | None:
    """The policy of the working tree (files next to `config_path`)."""
    access_path = config_path.parent / ACCESS_FILE
    return from_texts(
        _display(config_path, root), config_path.read_text(encoding="utf-8") if config_path.exists() else None,
        _display(access_path, root), access_path.read_text(encoding="utf-8") if access_path.exists() else None)


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def from_texts(config_file: str, config_text: str | None, access_file: str,
               access_text: str | None) -> AccessPolicy | None:
    """The policy held by these file contents (None: no policy)."""
    if config_text is not None:
        try:
            data = yamlsrc.load(config_text)
        except yamlsrc.YamlSyntaxError as err:
            raise ValidationFailed([Problem(config_file, err.line, err.column, err.field, err.message)]) from None
        if isinstance(data, dict) and data.get(SECTION) is not None:
            if access_text is not None:
                raise ValidationFailed([Problem(access_file, 1, 1, "", f"the access policy is also in "
                                                f"{config_file} ({SECTION}:); keep it in one place")])
            return _parse(config_file, config_text, data, (SECTION,))
    if access_text is None:
        return None
    try:
        data = yamlsrc.load(access_text)
    except yamlsrc.YamlSyntaxError as err:
        raise ValidationFailed([Problem(access_file, err.line, err.column, err.field, err.message)]) from None
    if data is None:
        raise ValidationFailed([Problem(access_file, 1, 1, "", "empty file (expected owners, groups, grants)")])
    return _parse(access_file, access_text, data, ())


def _parse(file: str, text: str, data: Any, at: tuple[str, ...]) -> AccessPolicy:
    validator = _validator(bool(at))
    node = None
    errors = list(validator.iter_errors(data))
    if errors:
        node = yamlsrc.compose(text)
        raise ValidationFailed(schema_problems(validator, data, node, file))
    section: dict[str, Any] = data[at[0]] if at else data

    problems: list[Problem] = []

    def problem(path: tuple[str | int, ...], message: str) -> None:
        nonlocal node
        if node is None:
            node = yamlsrc.compose(text)
        line, col = yamlsrc.locate(node, at + path)
        problems.append(Problem(file, line, col, yamlsrc.path_text(at + path), message))

    groups = {name: Group(name, tuple(g["members"]), g.get("codeowners"))
              for name, g in (section.get("groups") or {}).items()}
    grants: list[Grant] = []
    for i, raw in enumerate(section.get("grants") or []):
        levels = [lv for lv in _LEVELS if lv in raw]
        if len(levels) != 1:
            problem(("grants", i), "name exactly one of catalog, schema or view (what the grant is on)"
                    if not levels else f"grants one object: use only one of {', '.join(levels)}")
            continue
        level = levels[0]
        text_pattern = str(raw[level])
        dots = text_pattern.count(".")
        if (level == "catalog" and dots) or (level == "schema" and not dots) or (level == "view" and dots < 2):
            shape = {"catalog": "catalog", "schema": "catalog.schema", "view": "catalog.schema.view"}[level]
            problem(("grants", i, level), f"expected a {shape} pattern, got {text_pattern!r}")
            continue
        privileges = frozenset(Privilege(p) for p in raw["privileges"])
        for j, priv in enumerate(raw["privileges"]):
            checked = CHECKED_ON.get(Privilege(priv))
            if checked is not None and DEPTH[checked] < DEPTH[level]:
                problem(("grants", i, "privileges", j), f"{priv} is checked on a {checked}, so a grant on a "
                        f"{level} never gives it; grant it with `{checked}:`")
        grants.append(Grant(tuple(raw["to"]), privileges, Pattern.parse(level, text_pattern)))
    if problems:
        raise ValidationFailed(problems)
    return AccessPolicy(owners=tuple(section.get("owners") or ()), groups=groups, grants=tuple(grants),
                        source=file, digest=digest_of(section))
