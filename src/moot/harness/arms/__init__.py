"""Arms: the named configurations compared (single, self-consistency, the team arms, the program vote), their
registry and their prompts.

Public names are exported by :mod:`moot.harness`; the modules here are private to it.
"""
