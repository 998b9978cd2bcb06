"""`python -m reconciler.cli`: the same command line as `viewsync`."""
from reconciler.cli import run

run()
