"""The arms ``--arms`` may name: moot's own, listed here, then those installed packages declare under the
entry-point group ``moot.arms``, then those registered from code with :func:`register_arm`.

An entry is an arm factory: ``factory(params)`` builds the arm from its spec's ``key=value`` parameters (strings);
an arm class whose ``__init__`` takes them is one. What the runner and the report need to know of an arm beyond the
:class:`~moot.harness.arms._arm.Arm` protocol, its class declares: the runner reads it from the arm it built, the
report (which has only the arm names of its rows) from the factory by name (:func:`arm_trait`). So an arm added
here, by a plugin or from code needs no edit anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from moot._plugins import Registry
from moot.errors import ConfigError
from moot.harness.arms._arm import ARM_FORMS, Arm
from moot.harness.arms._context import MODEL_ROLES
from moot.harness.arms._sampling import BestOfKTests, SelfConsistency, Single
from moot.harness.arms._team_arms import DebateArm, ReflectionArm, TestReflectionArm
from moot.harness.suites._selectors import parse_spec

__all__ = [
    "ArmFactory",
    "arm_trait",
    "build_arm",
    "known_arms",
    "model_roles",
    "register_arm",
    "unregister_arm",
]

ArmFactory = Callable[[dict[str, str]], Arm]

_ARMS: Registry[ArmFactory] = Registry(
    "arm",
    "moot.arms",
    callable,
    "an arm factory (a callable taking the arm's parameters, such as an arm class)",
    builtins={
        arm.name: arm for arm in (Single, SelfConsistency, BestOfKTests, ReflectionArm, TestReflectionArm, DebateArm)
    },
)


def register_arm(name: str, factory: ArmFactory) -> None:
    """Make ``name[?key=value&...]`` usable in ``--arms``; ``factory(params)`` builds the arm from the spec's
    parameters (strings)."""
    _ARMS.register(name, factory)


def unregister_arm(name: str) -> None:
    """Forget an arm registered from code (a built-in or plugin arm of that name shows again)."""
    _ARMS.unregister(name)


def known_arms(*, plugins: bool = True) -> list[str]:
    """Every arm's name, sorted; ``plugins=False`` leaves installed plugins' out without loading them."""
    return sorted(_ARMS.names() if plugins else _ARMS.local_names())


def build_arm(spec: str) -> Arm:
    parts = parse_spec(spec, what="arm spec", forms=ARM_FORMS)
    if parts.slice is not None:
        raise ConfigError(f"bad arm spec {spec!r}: arms take no slice; forms: {ARM_FORMS}")
    factory = _ARMS.get(parts.name)
    if factory is None:
        raise ConfigError(f"unknown arm {parts.name!r}; known arms: {', '.join(known_arms())}")
    return factory(dict(parts.params))


def arm_trait(family: str, trait: str, default: object) -> object:
    """What the arm family ``family`` (a spec's name, a row's arm name) declares as ``trait`` on its factory, else
    ``default``; also ``default`` for a family no longer known (rows replayed after an arm's plugin was removed).

    The traits: ``first_round_name`` (what its answer after round 1 is called; None for an arm without rounds),
    ``compute_reference`` (its calls size the sampling arms under ``--compute-matched``), ``model_roles``
    (model roles beyond the built-in ones that ``--model ROLE=SPEC`` may set for it) and ``baseline`` (the arm a
    report measures a chosen variant against)."""
    factory = _ARMS.get(family)
    return getattr(factory, trait, default) if factory is not None else default


def model_roles(arm_specs: Sequence[str]) -> tuple[str, ...]:
    """The model roles ``--model ROLE=SPEC`` may name in a comparison of ``arm_specs``: the built-in ones, then any
    the listed arms declare (``model_roles``). A spec that does not parse or names no known arm adds none: building
    it refuses it, with its own message."""
    declared: list[str] = []
    for spec in arm_specs:
        try:
            family = parse_spec(spec, what="arm spec", forms=ARM_FORMS).name
        except ConfigError:
            continue
        declared.extend(_roles(arm_trait(family, "model_roles", ())))
    return tuple(dict.fromkeys([*MODEL_ROLES, *declared]))


def _roles(value: object) -> list[str]:
    if isinstance(value, tuple | list) and all(isinstance(role, str) for role in value):
        return list(value)
    raise ConfigError(f"an arm's model_roles is a tuple of role names, got {value!r}")
