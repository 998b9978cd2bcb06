"""An access policy over the sample (team A owns local.sales, team B local.analytics) and the
git steps its tests take as its people: one copy for the CLI and the service tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

POLICY = """\
# yaml-language-server: $schema=schemas/access.schema.json
owners: [platform@example.com]
groups:
  team-a: {members: [alice@example.com, alice-gh], codeowners: "@acme/team-a"}
  team-b: {members: [bob@example.com, bob-gh]}
grants:
  - {to: [team-a], privileges: [OWNER], schema: local.sales}
  - {to: [team-b], privileges: [OWNER], schema: local.analytics}
  - {to: [team-b], privileges: [USE_SCHEMA, SELECT_VIEW], schema: local.sales}
"""
PEOPLE = {"platform": "platform@example.com", "alice": "alice@example.com", "bob": "bob@example.com"}


def git(repo: Path, *args: str, who: str = "platform") -> str:
    """Run git in `repo` as `who` (a key of PEOPLE); its output."""
    email = PEOPLE[who]
    cmd = ["git", "-c", f"user.name={who}", "-c", f"user.email={email}", *args]
    return subprocess.run(cmd, cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def edit(repo: Path, rel: str, view: str, comment: str) -> None:
    """Set one view's comment in a view file."""
    path = repo / rel
    doc = yaml.safe_load(path.read_text())
    next(v for v in doc["views"] if v["name"] == view)["comment"] = comment
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def commit_all(repo: Path, message: str, who: str) -> None:
    git(repo, "add", "-A", who=who)
    git(repo, "commit", "-qm", message, who=who)
