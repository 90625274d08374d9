"""Arms: the named configurations compared (single, self-consistency, the team arms, the program vote), their
registry, their prompts, and the row context (``RowContext``) an arm solves an item in.

Public names are exported by :mod:`moot.harness`; the modules here are private to it.
"""
