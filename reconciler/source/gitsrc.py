"""Git as the source of declarations: read any ref without checking it out,
know which commit (and whose) a run used, and who the actor is.

`info` (every plan), `dirty_paths` and `actor` (every apply) ask the git command
line directly; GitPython is imported only by what reads trees (`files_at`)."""

from __future__ import annotations

import getpass
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError
from reconciler.core.gitinfo import GitInfo
from reconciler.source.config import VIEWS_DIR

if TYPE_CHECKING:
    import git


def open_repo(root: Path) -> git.Repo | None:
    """The git repository holding `root`, or None outside one (GitPython loads here, on first use)."""
    import git

    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandNotFound):
        return None


def repo_prefix(repo: git.Repo, root: Path) -> str:
    """Path of `root` inside the repository ('' at the top)."""
    top = Path(repo.working_tree_dir or root).resolve()
    rel = root.resolve().relative_to(top).as_posix()
    return "" if rel == "." else rel + "/"


def run_git(root: Path, *args: str) -> tuple[int, str]:
    """(exit code, stdout) of `git -C root ARGS`; 128 when there is no git command."""
    try:
        res = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)
    except OSError:  # no git command: not a git checkout as far as we can tell
        return 128, ""
    return res.returncode, res.stdout


def info(root: Path, ref: str | None = None) -> GitInfo:
    code, _ = run_git(root, "rev-parse", "--git-dir")
    if code != 0:
        return GitInfo()
    if ref is not None and (not ref or ref.startswith("-")):
        raise UserError(f"unknown git ref {ref!r}")
    code, text = run_git(root, "log", "-1", "--format=%H%x00%an%x00%ae", ref or "HEAD", "--")
    parts = text.strip().split("\x00")
    if code != 0 or len(parts) != 3:
        if ref:
            raise UserError(f"unknown git ref {ref!r}") from None
        return GitInfo()
    ref_name: str | None = ref
    if not ref:
        code, branch = run_git(root, "symbolic-ref", "-q", "--short", "HEAD")
        ref_name = branch.strip() if code == 0 and branch.strip() else os.environ.get("GITHUB_REF_NAME") or None
    return GitInfo(commit=parts[0], ref=ref_name, author=f"{parts[1]} <{parts[2]}>")


def tree_at(root: Path, ref: str, outside: str) -> tuple[git.Tree, str]:
    """The tree of `ref` in the repository holding `root`, and `root`'s prefix in it.

    Raises:
        UserError: `outside` (naming what was asked) when `root` is in no repository, or the ref
            is unknown.
    """
    import git

    repo = open_repo(root)
    if repo is None:
        raise UserError(outside)
    try:
        tree = repo.commit(ref).tree
    except (git.BadName, ValueError, git.GitCommandError):
        raise UserError(f"unknown git ref {ref!r}") from None
    return tree, repo_prefix(repo, root)


def files_at(root: Path, ref: str) -> list[tuple[str, bytes]]:
    """(path relative to root, content) of every view file at `ref`, without a checkout."""
    import git

    tree, prefix = tree_at(root, ref, f"--ref {ref}: {root} is not inside a git repository")
    try:
        base = tree / (prefix + VIEWS_DIR)
    except KeyError:
        return []
    out = []
    for item in base.traverse():
        if isinstance(item, git.Blob) and str(item.path).endswith((".yaml", ".yml")):
            out.append((str(item.path)[len(prefix):], bytes(item.data_stream.read())))
    return sorted(out)


def dirty_paths(root: Path) -> list[str]:
    """Uncommitted changes to declarations or config (what apply would act on): staged or not,
    plus untracked view files and access.yaml; paths from the repository's top. One
    `git status` call (GitPython costs more to import than this takes)."""
    code, text = run_git(root, "status", "--porcelain=v1", "-z", "--branch", "--untracked-files=all",
                         "--", VIEWS_DIR, "viewsync.yaml", "access.yaml")
    if code != 0:  # not a git checkout (or no git): nothing to call uncommitted
        return []
    entries = text.split("\0")
    has_head = not (entries and entries[0].startswith("## No commits yet"))
    changed: set[str] = set()
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4 or entry.startswith("## "):
            continue
        staged, unstaged, path = entry[0], entry[1], entry[3:]
        if staged in "RC":  # a rename or copy: its source path follows
            if has_head:
                changed.update((path, entries[i]))
            i += 1
        elif staged == "?":
            if path.rsplit("/", 1)[-1] != "viewsync.yaml":  # an untracked config is not a change to it
                changed.add(path)
        elif (staged != " " and has_head) or unstaged != " ":
            changed.add(path)
    return sorted(changed)


def actor(explicit: str | None, root: Path) -> str:
    if explicit:
        return explicit
    if os.environ.get("GITHUB_ACTOR"):
        return os.environ["GITHUB_ACTOR"]
    code, name = run_git(root, "config", "user.name")  # exit 1 when unset; a broken config is not fatal
    if code == 0 and name.strip():
        return name.strip()
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001
        return "unknown"


def file_at(root: Path, ref: str, rel: str) -> str:
    """The text of one file (path relative to root) at `ref`; raises OSError when absent."""
    import git

    repo = open_repo(root)
    if repo is None:
        raise OSError(f"{root} is not inside a git repository")
    try:
        blob = repo.commit(ref).tree / (repo_prefix(repo, root) + rel)
    except (git.BadName, ValueError, git.GitCommandError, KeyError):
        raise OSError(f"no such file at {ref}") from None
    return bytes(blob.data_stream.read()).decode("utf-8", "replace")
