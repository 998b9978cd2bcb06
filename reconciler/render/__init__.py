"""The registry of every report's renderers by kind and format (`registry`); every text,
Markdown and JSON rendering of a plan and of what an apply says when done (`plan`), and of
`viewsync impact`'s report, the value `services.spark.impact` returns (`impact`); the lineage
graph of a plan or of one view (`lineage_graph`, a value) and its Mermaid text (`mermaid`).

May import `core`, `plan`, `events` (lineage of a change), `verify` (its report), `viewtests`
(the tests' lines in a plan) and `apply` (a run's result).
"""
