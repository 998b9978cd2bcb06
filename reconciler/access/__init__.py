"""Access policy: who may change which views.

`model` holds the policy, `load` reads and validates it (JSON Schema, then
semantic checks, every error located), `evaluate` answers "may this principal
do this action" as pure functions, `codeowners` renders the same rules for
GitHub review, `gitauthors` and `guard` are the I/O edges used by plan/apply.
"""

from reconciler.access.model import AccessPolicy, Grant, Privilege

__all__ = ["AccessPolicy", "Grant", "Privilege"]
