"""`events:` in viewsync.yaml (already checked by the config JSON Schema) as sinks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reconciler.events.openlineage import catalog_namespace
from reconciler.events.sinks import CommandSink, OpenLineageSink, Sink, WebhookSink, command_argv
from reconciler.source.config import Config


def build_sinks(config: Config, root: Path) -> list[Sink]:
    namespaces = {name: catalog_namespace(name, cat.type, cat.options) for name, cat in config.catalogs.items()}
    sinks: list[Sink] = []
    for name, opts in sorted(config.events.items()):
        common: dict[str, Any] = {"name": name, "types": list(opts.get("types") or []),
                                  "views": list(opts.get("views") or []), "retries": int(opts.get("retries", 3))}
        kind = opts["type"]
        if kind == "webhook":
            secret = opts.get("secret")
            sinks.append(WebhookSink(**common, url=str(opts["url"]), secret=secret,
                                     timeout=float(opts.get("timeout", 5)), headers=dict(opts.get("headers") or {})))
        elif kind == "command":
            sinks.append(CommandSink(**common, command=command_argv(opts["command"]),
                                     block=bool(opts.get("blocking", False)),
                                     timeout=float(opts.get("timeout", 30)), cwd=root))
        elif kind == "openlineage":
            sinks.append(OpenLineageSink(**common, transport=dict(opts["transport"]), namespaces=namespaces,
                                         job_namespace=str(opts.get("namespace") or config.project)))
    return sinks


def sink_secrets(config: Config) -> frozenset[str]:
    """Signing keys are masked even when written literally in viewsync.yaml."""
    return frozenset(str(o["secret"]) for o in config.events.values() if o.get("type") == "webhook" and o.get("secret"))


def catalog_kinds(config: Config) -> dict[str, str]:
    return {name: cat.type for name, cat in config.catalogs.items()}
