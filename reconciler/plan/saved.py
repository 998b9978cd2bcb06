"""Saved plans (`plan --out`): reading one back, refusing one that was edited since.
(Whether it still matches the repository is the apply service's check.)"""

from __future__ import annotations

import json
from pathlib import Path

from reconciler.core.errors import UserError
from reconciler.plan.planner import Plan


def load(path: Path) -> Plan:
    """A saved plan as it was made; raises UserError when the file is missing, is not a
    plan, or was edited since (its digest covers the actions, declarations, schema owners
    and the access section)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        plan = Plan.from_json(data)
    except FileNotFoundError:
        raise UserError(f"{path}: no such plan file") from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise UserError(f"{path}: not a viewsync plan ({e})") from None
    if data.get("digest") != plan.digest():
        raise UserError(f"stale plan: {path} was changed after it was made (its digest does not match what it "
                        "holds); nothing was applied. Run `viewsync plan --out` again")
    return plan
