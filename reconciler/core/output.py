"""How a command writes its result (`--format`), and the other options whose value is a choice."""

from __future__ import annotations

from enum import StrEnum


class OutputFormat(StrEnum):
    TEXT = "text"  # for people, in a terminal (Terraform-like)
    MARKDOWN = "markdown"  # for a pull-request comment
    JSON = "json"  # for tools


class EventsFormat(StrEnum):
    """`viewsync events`: a listing, no pull-request comment."""

    TEXT = "text"
    JSON = "json"


class LineageFormat(StrEnum):
    """`viewsync lineage`: adds Graphviz and Mermaid (the view, what it reads and who reads it)."""

    TEXT = "text"
    JSON = "json"
    DOT = "dot"
    MERMAID = "mermaid"


class TestFormat(StrEnum):
    """`viewsync test`: a plan's formats, and JUnit XML for CI systems."""

    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"
    JUNIT = "junit"


class Definition(StrEnum):
    """`viewsync check --definition`: which SQL the checks evaluate."""

    DECLARED = "declared"  # the pending SQL, before apply
    LIVE = "live"  # what is deployed
