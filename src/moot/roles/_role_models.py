"""Role -> model: the one rule that says which spec a role runs on.

Scenarios (``moot run``) and the comparison harness (``moot compare``) both
read ``--model`` options with :func:`parse_model_options` and ask
:meth:`RoleModels.spec`; neither layers specs itself. The layers, lowest first:

1. the base spec (``--model SPEC``, else ``local``);
2. the role's own default, from its catalog file (``model: "@0.9"``);
3. the scenario's default for the role (a YAML scenario's ``models:``);
4. the user's ``--model ROLE=SPEC``.

A numbered role (``expert_2``) takes its family's layer (``expert``) before
its own at every level, so ``--model expert=...`` reaches all the experts and
``--model expert_2=...`` one of them.

From Python the same rule applies (:func:`role_models`): one ``ModelSpec`` (or
its string form, or an AutoGen client's component config) is ``--model SPEC``, a
function of the role name (or a mapping of role names) is ``--model ROLE=SPEC``,
and both keep the roles' own layer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from autogen_core import ComponentModel

from moot._renamed import former_keywords
from moot.errors import ConfigError
from moot.models import ModelSpec
from moot.roles._registry import known_roles, role

__all__ = ["ModelsFor", "RoleModels", "parse_model_options", "role_models"]

_ROLE_ASSIGNMENT = re.compile(r"^([a-z][a-z0-9_]*)=(.*)$", re.DOTALL)
_NUMBERED = re.compile(r"^(.+)_\d+$")


@former_keywords(defaults="scenario_defaults")
@dataclass(frozen=True)
class RoleModels:
    """The spec layers of every role; a plain value, so a job shipped to another process resolves the same."""

    base: ModelSpec = field(default_factory=ModelSpec)
    overrides: Mapping[str, ModelSpec] = field(default_factory=dict)
    """The user's ``--model ROLE=SPEC``: win over every default."""
    scenario_defaults: Mapping[str, ModelSpec] = field(default_factory=dict)
    """The scenario's per-role defaults (``Scenario.scenario_defaults``, a YAML scenario's ``models:``)."""
    role_defaults: Mapping[str, ModelSpec] = field(default_factory=dict)
    """The roles' own defaults from their catalog files (``model:``), read once where the ``--model`` options are
    read."""

    def spec(self, role: str) -> ModelSpec:
        """The spec ``role`` runs on: base, then each layer in the order the module docstring gives."""
        names = _lineage(role)
        spec = self.base
        for layer in (self.role_defaults, self.scenario_defaults, self.overrides):
            for name in names:
                spec = spec.resolve(layer.get(name))
        return spec


SpecLike: TypeAlias = ModelSpec | str | Mapping[str, Any] | ComponentModel
"""One model as Python code may give it: a spec, its string form, or an AutoGen client's component config."""
ModelsFor: TypeAlias = SpecLike | RoleModels | Mapping[str, SpecLike] | Callable[[str], SpecLike]
"""What a team preset is built on from Python: one model for every role, the layers, or a model per role (a mapping
of role names, or a function of the role name)."""
_ACCEPTED = (
    "a ModelSpec, a spec string ('scripted:deterministic'), an AutoGen client's component config "
    "({'provider': ..., 'config': ...}), a RoleModels, a mapping of role name to spec, or a function from role name "
    "to spec"
)


def role_models(models: ModelsFor, roles: Sequence[str]) -> RoleModels:
    """The layers of ``roles`` for what Python code gives, by the command line's rule: one model is the base
    (``--model SPEC``), a mapping or function of the role name gives roles their ``--model ROLE=SPEC``; the roles'
    own layers (``model: "@0.9"`` in a role file) apply under both, as on the command line."""
    if isinstance(models, RoleModels):
        return models
    if _is_one_model(models):
        return RoleModels(_checked(models, None), role_defaults=catalog_defaults(roles))
    if isinstance(models, Mapping):
        unknown = sorted(set(models) - set(roles))
        if unknown:
            raise ConfigError(f"models: unknown role {unknown[0]!r}; roles here: {', '.join(roles)}")
        overrides = {name: _checked(spec, name) for name, spec in models.items()}
        return RoleModels(ModelSpec.parse("local"), overrides, role_defaults=catalog_defaults(roles))
    if not callable(models):
        raise TypeError(f"models: give {_ACCEPTED}; not {type(models).__name__}")
    overrides = {name: _checked(models(name), name) for name in roles}
    return RoleModels(ModelSpec.parse("local"), overrides, role_defaults=catalog_defaults(roles))


def _is_one_model(models: object) -> bool:
    """A spec, a spec string or a component config (a mapping naming its ``provider``), not a mapping of roles."""
    if isinstance(models, ModelSpec | str | ComponentModel):
        return True
    return isinstance(models, Mapping) and "provider" in models


def _checked(spec: object, name: str | None) -> ModelSpec:
    """A spec as Python code gave it, one per role (``name``) or for all (None)."""
    if isinstance(spec, ModelSpec):
        return spec
    if isinstance(spec, str | Mapping | ComponentModel):
        return ModelSpec.parse(spec)
    where = f"for role {name!r}" if name is not None else "as the model"
    raise TypeError(f"models: got {type(spec).__name__} {where}; give a ModelSpec, a spec string or a component config")


def _lineage(role: str) -> tuple[str, ...]:
    """``("expert", "expert_2")`` for a numbered role, else ``(role,)``."""
    numbered = _NUMBERED.match(role)
    return (numbered.group(1), role) if numbered else (role,)


def catalog_defaults(roles: Iterable[str]) -> dict[str, ModelSpec]:
    """The default spec layer of each of ``roles`` that is a catalog role and has one (scripts and the harness
    may name agents that are no role)."""
    known = set(known_roles())
    return {name: spec for name in roles if name in known and (spec := role(name).model) is not None}


@former_keywords(options="model_options")
def parse_model_options(
    model_options: Sequence[str],
    roles: Sequence[str],
    default: str = "local",
    scenario_defaults: Mapping[str, ModelSpec] | None = None,
) -> RoleModels:
    """Read repeated ``--model SPEC`` / ``--model ROLE=SPEC`` options into the layers of ``roles``.

    A bare SPEC sets the base for every role (at most once); ``ROLE=SPEC``
    overrides one role, which must be one of ``roles``.
    """
    base: ModelSpec | None = None
    overrides: dict[str, ModelSpec] = {}
    for option in model_options:
        match = _ROLE_ASSIGNMENT.match(option)
        if match is None:
            if base is not None:
                raise ConfigError(f"--model {option!r}: a base model is already set ({base}); use ROLE=SPEC")
            base = ModelSpec.parse(option)
            continue
        name, text = match.groups()
        if name not in roles:
            raise ConfigError(f"--model {option!r}: unknown role {name!r}; roles here: {', '.join(roles)}")
        overrides[name] = ModelSpec.parse(text)
    return RoleModels(
        base or ModelSpec.parse(default), overrides, dict(scenario_defaults or {}), catalog_defaults(roles)
    )
