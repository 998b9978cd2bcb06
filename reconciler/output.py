"""How a command writes its result (`--format`)."""

from __future__ import annotations

from enum import StrEnum


class OutputFormat(StrEnum):
    TEXT = "text"  # for people, in a terminal (Terraform-like)
    MARKDOWN = "markdown"  # for a pull-request comment
    JSON = "json"  # for tools
