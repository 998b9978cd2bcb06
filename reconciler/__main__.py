"""`python -m reconciler`: the same command line as `viewsync`."""

from reconciler.cli import run

run()
