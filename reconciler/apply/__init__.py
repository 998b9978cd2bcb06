"""Carrying a plan out: the run under the apply lock (`run`), dependency waves (`waves`),
the records pipeline that streams pending and outcome rows beside the writers (`stream`),
repair of dead runs (`repair`) and declared schema owners (`schema_owners`).

May import `core`, `plan`, `adapters`, `state` and `events`.
"""
