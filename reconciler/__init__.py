"""viewsync: a GitOps reconciler for SQL views."""

__version__ = "0.1.0"
