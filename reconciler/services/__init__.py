"""Use cases: every command of the CLI is one call to one of them. A service takes a
`Workspace` (most do) and a request, owns the steps and checks of its command, and returns
a value the CLI renders; prompts and printing reach it as callbacks.

`plan` (the plan, YAML changes since a base, access check, security notes, error
locations; a saved plan for `show`), `apply` (dirty check, repair, saved plans, planning,
access re-check, the run), `validate`, `drift`, `history` (`history`, `audit`), `lineage`,
`importer` (`viewsync import`), `codeowners`, `events` (the outbox listed, delivered),
`lock` (`force-unlock`), `jars` (the pinned jars listed, fetched), `preview`, `viewtests`
(`test`), `datareview` (`diff`, `check`, their events), and `spark` (`validate --spark`,
`plan --spark`, `impact`, `import --sources`).

May import every package below it and `workspace`; only `cli/` imports it.
Heavy modules are imported inside the functions, after the catalogs' prefetch has started.
"""
