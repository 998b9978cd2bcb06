"""Benchmarks time viewsync as an installed wheel runs it: with its modules byte-compiled.

pip compiles a wheel's modules when it installs them. A checkout run with
PYTHONDONTWRITEBYTECODE set (as on this project's machines) would instead compile
viewsync's own modules again in every command (about 65 ms of each measured command
here), which no installation pays. Site-packages were compiled by pip already.
"""

from __future__ import annotations

import compileall
from pathlib import Path


def compile_viewsync() -> None:
    """Write the __pycache__ of the reconciler package the benchmark imports (git ignores it)."""
    import reconciler

    if not compileall.compile_dir(str(Path(reconciler.__file__).parent), quiet=1):
        raise SystemExit("could not byte-compile the reconciler package")


def compile_trees(trees: list[Path]) -> None:
    """The same for each checkout a benchmark compares (a directory holding reconciler/)."""
    for tree in trees:
        if not compileall.compile_dir(str(tree / "reconciler"), quiet=1):
            raise SystemExit(f"could not byte-compile {tree / 'reconciler'}")
