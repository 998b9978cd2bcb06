"""viewsync.yaml: catalogs, state store and policy, with ${ENV_VAR} expansion.

Values taken from the environment are the config's secrets (`Config.secrets`),
masked everywhere text leaves the program; they are never echoed in errors.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

from reconciler.core.errors import Problem, UserError, ValidationFailed
from reconciler.source import engine_settings, spark_settings, yamlsrc

CONFIG_NAME = "viewsync.yaml"
VIEWS_DIR = "views"  # beside the config: views/<catalog>/<schema>.yaml
DEFAULT_STATE = "sqlite:///.viewsync/state.db"
# ${NAME} or ${NAME:-default}; any other "${" is an error, never taken literally.
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# The schemas' one copy in a source checkout: top-level schemas/, two levels above this module.
SOURCE_SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


@cache
def schema_document(name: str) -> Any:
    """A JSON Schema. The one copy lives in the repository's top-level `schemas/` (editors'
    `$schema` comments point there); the wheel ships it inside the package as
    `reconciler/schemas/` (setup.py), so an installed wheel finds it wherever it is installed,
    and a source checkout or editable install reads it beside the package."""
    packaged = resources.files("reconciler").joinpath("schemas", name)
    if packaged.is_file():
        return json.loads(packaged.read_text(encoding="utf-8"))
    return json.loads(SOURCE_SCHEMAS.joinpath(name).read_text(encoding="utf-8"))


@cache
def schema(name: str) -> Any:
    """The explaining validator (python-jsonschema), loaded only when input is invalid."""
    import jsonschema

    doc = schema_document(name)
    return jsonschema.validators.validator_for(doc)(doc)


@cache
def fast_schema(name: str) -> Any:
    """A compiled validator for the fast path (is it valid?); `schema` explains failures."""
    return jsonschema_rs.validator_for(schema_document(name))


@dataclass(frozen=True)
class Policy:
    prune: bool = False
    max_drop_fraction: float = 0.25
    adopt: bool = False


@dataclass(frozen=True)
class PreviewSettings:
    """`preview:` in viewsync.yaml (reconciler.preview): where copies go and how long they live."""

    schema_pattern: str = "{schema}__{env}"
    catalog: str | None = None  # copies in this catalog instead of each view's own
    ttl: str = "7d"


@dataclass(frozen=True)
class CatalogConfig:
    name: str
    type: str
    options: dict[str, Any]  # expanded: may hold secrets, never print


@dataclass(frozen=True)
class Config:
    path: Path
    project: str
    state_url: str
    catalogs: dict[str, CatalogConfig]
    policy: Policy = field(default_factory=Policy)
    warnings: list[str] = field(default_factory=list)  # located, e.g. deprecated option names
    spark: spark_settings.SparkSettings = field(default_factory=spark_settings.SparkSettings)
    events: dict[str, dict[str, Any]] = field(default_factory=dict)  # sink name -> options (expanded: secrets)
    secrets: frozenset[str] = frozenset()  # values taken from the environment: redact them
    preview: PreviewSettings = field(default_factory=PreviewSettings)
    custom_dialects: frozenset[str] = frozenset()  # dialects sqlglot does not know that views may use
    engines: engine_settings.EngineSettings = field(default_factory=engine_settings.EngineSettings)


def schema_problems(validator: Any, data: Any, node: Any, file: str) -> list[Problem]:
    """JSON Schema errors as located problems (file:line:col + field path)."""
    problems: list[Problem] = []
    for err in validator.iter_errors(data):
        for leaf in _leaves(err):
            path: tuple[str | int, ...] = tuple(leaf.absolute_path)
            message = leaf.message
            key_of_last = False
            if leaf.validator == "additionalProperties":
                unknown = re.findall(r"'([^']+)' (?:was|were) unexpected", message)
                names = unknown or re.findall(r"'([^']+)'", message.split("(")[-1])
                if names:
                    path = path + (names[0],)
                    key_of_last = True
                    message = f"unknown key {names[0]!r}"
            elif isinstance(leaf.schema, dict) and "errorMessage" in leaf.schema:  # the schema explains itself
                message = leaf.schema["errorMessage"].replace("{value}", repr(leaf.instance))
            elif leaf.validator == "required":
                message = leaf.message.replace("is a required property", "is required")
            elif leaf.validator == "pattern" and path and path[-1] in ("name", "catalog"):
                message = f"invalid name {leaf.instance!r} (no dots, slashes, control characters " \
                          "or surrounding spaces)"
            line, col = yamlsrc.locate(node, path, key_of_last=key_of_last)
            problems.append(Problem(file, line, col, yamlsrc.path_text(path), yamlsrc.clip(message)))
    if not problems:  # the fast check rejected what this one accepts: invalid, and say so
        problems.append(Problem(file, 1, 1, "", "rejected by the JSON Schema check, which cannot say where "
                                "(the two schema engines disagree on this input; please report it)"))
    return problems


def _leaves(err: Any) -> list[Any]:
    # if/then and anyOf wrap the useful error in `context`; report the most specific one.
    import jsonschema

    if err.context:
        best = jsonschema.exceptions.best_match(err.context)
        return _leaves(best) if best is not None else [err]
    return [err]


def _expand(value: Any, path: tuple[str | int, ...], missing: list[tuple[tuple[str | int, ...], str]],
            found: set[str]) -> Any:
    """Expand ${VAR} / ${VAR:-default} in every string; problems go to `missing`
    as (path, message), values taken from the environment to `found`. An unset or
    empty variable without a default is an error: an empty state URL would
    silently move locks and audit to a local file."""
    if isinstance(value, str):
        if "${" not in value:
            return value
        starts = {m.start() for m in _ENV.finditer(value)}
        if any(i not in starts for i in _dollar_braces(value)):
            missing.append((path, "malformed ${...}: write ${NAME} or ${NAME:-default}"))
            return value

        def sub(m: re.Match[str]) -> str:
            var, default = m.group(1), m.group(2)
            got = os.environ.get(var)
            if got:
                found.add(got)
                return got
            if default is not None:
                return default
            missing.append((path, f"environment variable {var} is {'empty' if got == '' else 'not set'} "
                                  f"(give a default with ${{{var}:-value}})"))
            return ""

        return _ENV.sub(sub, value)
    if isinstance(value, dict):
        return {k: _expand(v, path + (k,), missing, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, path + (i,), missing, found) for i, v in enumerate(value)]
    return value


def _dollar_braces(text: str) -> list[int]:
    return [m.start() for m in re.finditer(r"\$\{", text)]


def find_root(start: Path) -> Path | None:
    """The nearest directory, `start` or one of its parents, that holds viewsync.yaml (as git
    finds .git): a command run in `views/` works on its repository."""
    for directory in (start, *start.parents):
        if (directory / CONFIG_NAME).is_file():
            return directory
    return None


def load_config(root: Path, config_file: Path | None = None) -> Config:
    path = config_file if config_file is not None else root / CONFIG_NAME
    try:
        display = str(path.relative_to(root)) if path.is_absolute() else str(path)
    except ValueError:
        display = str(path)
    if not path.exists():
        where = f"config file {path} not found" if config_file is not None else f"no {CONFIG_NAME} in {root}"
        raise UserError(f"{where} (pass --repo DIR or --config FILE)")
    try:
        text = yamlsrc.decode(path.read_bytes())
        data = yamlsrc.load(text)
        node = yamlsrc.compose(text)
    except yamlsrc.YamlSyntaxError as err:
        raise ValidationFailed([Problem(display, err.line, err.column, err.field, err.message)]) from None
    except OSError as err:
        raise ValidationFailed([Problem(display, 1, 1, "", f"cannot read: {err.strerror or err}")]) from None
    if not fast_schema("config.schema.json").is_valid(data):
        raise ValidationFailed(schema_problems(schema("config.schema.json"), data, node, display))
    missing: list[tuple[tuple[str | int, ...], str]] = []
    found: set[str] = set()
    expanded = _expand(data, (), missing, found)
    if missing:
        raise ValidationFailed([
            Problem(display, *yamlsrc.locate(node, p), yamlsrc.path_text(p), message)
            for p, message in missing])
    pol = expanded.get("policy") or {}
    catalogs = {
        name: CatalogConfig(name, opts["type"], dict(opts)) for name, opts in expanded["catalogs"].items()
    }
    state_url = expanded.get("state") or DEFAULT_STATE
    engines = engine_settings.parse(expanded.get("engines"), path.parent)
    return Config(
        path=path,
        project=expanded["project"],
        state_url=resolve_sqlite_url(state_url, path.parent),
        catalogs={n: _resolve_catalog(c, path.parent) for n, c in catalogs.items()},
        policy=Policy(
            prune=bool(pol.get("prune", False)),
            max_drop_fraction=float(pol.get("max_drop_fraction", 0.25)),
            adopt=bool(pol.get("adopt", False)),
        ),
        warnings=_deprecations(data, node, display),
        spark=spark_settings.parse(expanded.get("spark")),
        events={name: dict(opts) for name, opts in (expanded.get("events") or {}).items()},
        secrets=frozenset(found) | engines.secrets(),
        preview=PreviewSettings(**(expanded.get("preview") or {})),
        custom_dialects=frozenset(expanded.get("custom_dialects") or ()),
        engines=engines,
    )


def _deprecations(data: dict[str, Any], node: Any, display: str) -> list[str]:
    """A located warning per deprecated catalog option (still accepted)."""
    from reconciler.adapters.options import deprecated_options

    out: list[str] = []
    for name, opts in data["catalogs"].items():
        for old, new in deprecated_options(schema_document("config.schema.json"), str(opts["type"])).items():
            if old in opts:
                path: tuple[str | int, ...] = ("catalogs", name, old)
                line, col = yamlsrc.locate(node, path, key_of_last=True)
                out.append(f"{display}:{line}:{col}: {yamlsrc.path_text(path)}: deprecated, use {new!r} instead")
    return out


def resolve_sqlite_url(url: str, root: Path) -> str:
    """Relative SQLite paths are relative to the repository, not the working directory."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and not url.startswith(prefix + "/") and url != "sqlite:///:memory:":
        rel = url[len(prefix):]
        return prefix + str((root / rel).resolve())
    return url


def _resolve_catalog(cat: CatalogConfig, root: Path) -> CatalogConfig:
    url = cat.options.get("url")
    if isinstance(url, str):
        return CatalogConfig(cat.name, cat.type, {**cat.options, "url": resolve_sqlite_url(url, root)})
    return cat
