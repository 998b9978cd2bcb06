"""Git as the source of declarations: read any ref without checking it out,
know which commit (and whose) a run used, and who the actor is."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import git

from reconciler.declarations import VIEWS_DIR
from reconciler.errors import UserError
from reconciler.gitinfo import GitInfo


def _repo(root: Path) -> git.Repo | None:
    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandNotFound):
        return None


def _prefix(repo: git.Repo, root: Path) -> str:
    """Path of `root` inside the repository ('' at the top)."""
    top = Path(repo.working_tree_dir or root).resolve()
    rel = root.resolve().relative_to(top).as_posix()
    return "" if rel == "." else rel + "/"


def info(root: Path, ref: str | None = None) -> GitInfo:
    repo = _repo(root)
    if repo is None:
        return GitInfo()
    try:
        commit = repo.commit(ref or "HEAD")
    except (git.BadName, ValueError, git.GitCommandError):
        if ref:
            raise UserError(f"unknown git ref {ref!r}") from None
        return GitInfo()
    ref_name: str | None = ref
    if not ref:
        try:
            ref_name = repo.active_branch.name
        except TypeError:  # detached HEAD
            ref_name = os.environ.get("GITHUB_REF_NAME") or None
    author = f"{commit.author.name} <{commit.author.email}>" if commit.author else None
    return GitInfo(commit=commit.hexsha, ref=ref_name, author=author)


def files_at(root: Path, ref: str) -> list[tuple[str, bytes]]:
    """(path relative to root, content) of every view file at `ref`, without a checkout."""
    repo = _repo(root)
    if repo is None:
        raise UserError(f"--ref {ref}: {root} is not inside a git repository")
    try:
        tree = repo.commit(ref).tree
    except (git.BadName, ValueError, git.GitCommandError):
        raise UserError(f"unknown git ref {ref!r}") from None
    prefix = _prefix(repo, root)
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
    """Uncommitted changes to declarations or config (what apply would act on)."""
    repo = _repo(root)
    if repo is None:
        return []
    prefix = _prefix(repo, root)
    paths: list[str | os.PathLike[str]] = [prefix + VIEWS_DIR, prefix + "viewsync.yaml", prefix + "access.yaml"]
    changed = {str(d.a_path) for d in repo.index.diff(None, paths=paths)}
    if repo.head.is_valid():
        changed |= {str(d.a_path) for d in repo.index.diff("HEAD", paths=paths)}
    changed |= {p for p in repo.untracked_files
                if p.startswith(prefix + VIEWS_DIR + "/") or p == prefix + "access.yaml"}
    return sorted(changed)


def actor(explicit: str | None, root: Path) -> str:
    if explicit:
        return explicit
    if os.environ.get("GITHUB_ACTOR"):
        return os.environ["GITHUB_ACTOR"]
    repo = _repo(root)
    if repo is not None:
        try:
            name = repo.config_reader().get_value("user", "name", default="")
            if name:
                return str(name)
        except Exception:  # noqa: BLE001 - a broken git config must not stop a run
            pass
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001
        return "unknown"
