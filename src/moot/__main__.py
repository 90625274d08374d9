"""``python -m moot``: the same as the ``moot`` command."""

from moot.cli import main

main()
