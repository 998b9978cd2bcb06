"""What Git says about who changed what: the commit authors of a pull request
per file, the policy as it was at a ref, and the acting identity."""

from __future__ import annotations

import os
from pathlib import Path

from reconciler.access.evaluate import Identity
from reconciler.core.errors import UserError
from reconciler.source.gitsrc import open_repo, repo_prefix, run_git, tree_at


def prefix(root: Path) -> str:
    """The viewsync root inside its git repository ('' at the top, else 'dir/')."""
    repo = open_repo(root)
    return "" if repo is None or repo.working_tree_dir is None else repo_prefix(repo, root)


def git_top(root: Path) -> Path:
    repo = open_repo(root)
    return Path(repo.working_tree_dir) if repo is not None and repo.working_tree_dir else root


def authors_by_file(root: Path, base: str, head: str | None, paths: list[str]) -> dict[str, list[Identity]]:
    """For each of `paths` (relative to root) changed in base..head, the authors of the commits
    that changed it (merge commits carry no changes of their own)."""
    import git

    repo = open_repo(root)
    if repo is None:
        raise UserError(f"--base {base}: {root} is not inside a git repository")
    pre = prefix(root)
    try:
        log = repo.git.log(f"{base}..{head or 'HEAD'}", "--no-merges", "--format=%x00%H %ae", "--name-only",
                           "--", *[pre + p for p in paths])
    except git.GitCommandError:
        raise UserError(f"cannot list the commits between {base!r} and {head or 'HEAD'!r}") from None
    out: dict[str, list[Identity]] = {}
    for entry in log.split("\x00"):
        lines = [ln for ln in entry.splitlines() if ln.strip()]
        if not lines:
            continue
        sha, _, email = lines[0].partition(" ")
        who = Identity.of(f"commit author {email} ({sha[:7]})", email)
        for path in lines[1:]:
            if path.startswith(pre):
                rel = path[len(pre):]
                if who not in out.setdefault(rel, []):
                    out[rel].append(who)
    return out


def text_at(root: Path, ref: str, rel: str) -> str | None:
    """A file's text at a ref (None if it did not exist there)."""
    tree, root_prefix = tree_at(root, ref, f"{root} is not inside a git repository")
    try:
        blob = tree / (root_prefix + rel)
    except KeyError:
        return None
    data: bytes = blob.data_stream.read()
    return data.decode("utf-8")


def actor(explicit: str | None, root: Path, ref: str | None = None) -> Identity:
    """Who the policy is checked for: --actor, else $GITHUB_ACTOR, else the commit's author."""
    if explicit:
        return Identity.of(f"actor {explicit}", explicit)
    if os.environ.get("GITHUB_ACTOR"):
        login = os.environ["GITHUB_ACTOR"]
        return Identity.of(f"actor {login}", login)
    if not (ref or "").startswith("-"):  # every plan asks: the git command, not GitPython
        code, text = run_git(root, "log", "-1", "--format=%H%x00%ae", ref or "HEAD", "--")
        sha, _, email = text.strip().partition("\x00")
        if code == 0 and email:
            return Identity.of(f"actor {email} (author of {sha[:7]})", email)
    return Identity.of("actor (unknown)")
