"""`viewsync review` (issue 42, item 3): the whole pull-request comment from one run."""
