"""Every text, Markdown and JSON rendering of a plan (`plan`).

May import `core`, `plan`, `events` (lineage of a change) and `verify` (its report).
"""
