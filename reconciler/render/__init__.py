"""The registry of every report's renderers by kind and format (`registry`); every text,
Markdown and JSON rendering of a plan and of what an apply says when done (`plan`), and of
`viewsync impact`'s report, the value `services.spark.impact` returns (`impact`).

May import `core`, `plan`, `events` (lineage of a change), `verify` (its report), `viewtests`
(the tests' lines in a plan) and `apply` (a run's result).
"""
