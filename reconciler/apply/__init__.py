"""Carrying a plan out: the run under the apply lock (`run`), dependency waves (`waves`),
the records pipeline that streams pending and outcome rows beside the writers (`stream`),
repair of dead runs (`repair`), declared schema owners (`schema_owners`) and what an apply
needs of the repository (`target`: a protocol `Workspace` satisfies).

May import `core`, `source`, `plan`, `adapters`, `state` and `events`; never `workspace`.
"""
