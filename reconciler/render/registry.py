"""The one registry from (report kind, format) to the function that renders it: the command line
renders every report through it, and so can a service that composes several reports into one.
Each renderer is imported when used; a format a kind does not have renders as its text."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

Renderer = Callable[[Any, Any], str]  # (value, the style: any object with `color` and `verbose`)


def _fn(target: str) -> Callable[..., Any]:
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def _json(data: Any, **options: Any) -> str:
    return json.dumps(data, indent=2, **options) + "\n"


def _kind(module: str, style: dict[str, str] | None = None, **names: str) -> dict[str, Renderer]:
    """Formats rendered by `module`'s functions (format -> function name); `style` names the
    global option (color, verbose) a format's function takes after the value."""
    def renderer(name: str, option: str | None) -> Renderer:
        return lambda value, g: _fn(f"{module}:{name}")(value, *([getattr(g, option)] if option else []))
    return {fmt: renderer(name, (style or {}).get(fmt)) for fmt, name in names.items()}


_PREVIEW, _HISTORY, _EVENTS = "reconciler.preview.report", "reconciler.state.history", "reconciler.events.commands"


RENDERERS: dict[str, dict[str, Renderer]] = {
    "plan": _kind("reconciler.render.plan", {"text": "color"}, text="text", markdown="markdown", json="as_json"),
    "apply": {"text": lambda o, g: _fn("reconciler.render.plan:applied")(o.plan, o.run)},
    "drift": {**_kind("reconciler.plan.drift", text="text", markdown="markdown"),
              "json": lambda r, g: _json(r.to_json())},
    "history": {"text": lambda h, g: _fn(f"{_HISTORY}:history_text")(h.view, h.versions, h.native),
                "json": lambda h, g: _json(_fn(f"{_HISTORY}:history_json")(h.view, h.versions, h.native))},
    "audit": {"text": lambda rows, g: _fn(f"{_HISTORY}:audit_text")(rows),
              "json": lambda rows, g: _json(_fn(f"{_HISTORY}:audit_json")(rows), default=str)},
    "lineage": {**_kind(_EVENTS, text="lineage_text", dot="lineage_dot"), "json": lambda r, g: _json(r.to_json())},
    "lineage graph": _kind("reconciler.render.mermaid", text="draw", mermaid="draw"),
    "events": _kind(_EVENTS, text="events_text", json="events_json"),
    "impact": _kind("reconciler.render.impact", text="text", markdown="markdown", json="as_json"),
    "test": _kind("reconciler.viewtests.render", {"text": "verbose"}, text="text", markdown="markdown",
                  json="as_json", junit="junit", summary="summary"),
    "revert": _kind("reconciler.render.revert", text="text"),
    "revert refused": _kind("reconciler.render.revert", text="refused"),
    "generate": {"text": lambda r, g: _fn("reconciler.plan.generation:report_text")(r),
                 "json": lambda r, g: _json(r.to_json())},
    "diff": _kind("reconciler.datareview.render", text="diff_text", markdown="diff_markdown", json="as_json"),
    "check": _kind("reconciler.datareview.render", text="checks_text", markdown="checks_markdown", json="as_json",
                   junit="checks_junit"),
    "review": _kind("reconciler.render.review", text="text", markdown="markdown", json="as_json",
                    summary="summary"),
    "preview up": _kind(_PREVIEW, text="up_text", markdown="up_markdown", json="up_json"),
    "preview down": {**_kind(_PREVIEW, text="down_text"),
                     "json": lambda r, g: _json(_fn(f"{_PREVIEW}:down_json")(r), sort_keys=True)},
    "preview list": {"text": lambda envs, g: _fn(f"{_PREVIEW}:list_text")(envs, _fn("reconciler.state.store:now")()),
                     "json": lambda envs, g: _fn(f"{_PREVIEW}:list_json")(envs, _fn("reconciler.state.store:now")())},
}


def render(kind: str, fmt: str, value: Any, g: Any) -> str:
    """`value`, a report of `kind`, in format `fmt` (text, markdown, json, junit, dot, summary)."""
    formats = RENDERERS[kind]
    return str(formats.get(str(fmt), formats["text"])(value, g))
