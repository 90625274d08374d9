"""Arms: named configurations run on the same items. The protocol, what an arm returns, and the registry.

An arm is anything with a ``name``, ``settings`` (what identifies its
configuration: part of the resume key and shown in the report), ``check``
(refuse a suite it cannot run on, before any call) and ``solve`` (one item,
using agents from the RowContext so every call is metered and cached).
Optional class attributes tell the runner and the report what they would otherwise need the arm's name for
(``first_round_name``, ``compute_reference``, ``model_roles``, ``baseline``), and an optional ``with_k`` makes it a
sampling arm that ``--k`` and ``--compute-matched`` size (see :class:`Arm`). Register your own with
:func:`moot.harness.register_arm`, or from an installed package under the entry-point group ``moot.arms``
(``_registry.py``); its spec is ``NAME?key=value``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard, TypeVar

from pydantic import BaseModel, Field, ValidationError
from pydantic.fields import FieldInfo

from moot._renamed import former_function, warn_renamed
from moot.errors import ConfigError, MalformedOutputError
from moot.harness.arms._context import RowContext
from moot.harness.suites._items import Item, Suite
from moot.roles import RoleAgent

__all__ = [
    "ARM_FORMS",
    "Arm",
    "Attempt",
    "Reply",
    "agent_reply",
    "arm_settings",
    "ask",
    "by_answers",
    "canonical_spec",
    "key_settings",
    "sized",
    "spell",
]

ARM_FORMS = "NAME[?key=value&...], e.g. single, self-consistency?k=7, debate?experts=3&rounds=2&arbiter=llm"


@dataclass
class Attempt:
    """What an arm produced for one item, and how it got there."""

    answer: str
    rounds: int = 1
    stop_reason: str = ""
    parse_failures: int = 0
    partial: bool = False
    """The arm stopped on a fault and returns its best answer so far."""
    metrics: dict[str, Any] = field(default_factory=dict)
    candidates: list[str] = field(default_factory=list)
    """Answers proposed on the way (samples, debaters' positions): scored for the oracle gap when cheap."""
    first_round: str | None = None
    """The answer the arm held after its first round, found with no extra call (a debate: its first-round
    vote; a reflection: its first draft). Scored beside the final answer: what the later rounds bought."""
    round_answers: list[list[str]] = field(default_factory=list)
    """Every position held in each round (debaters' answers, code debaters' programs): scored to show the
    share of right positions per round."""


class Arm(Protocol):
    """A configuration compared. Besides these members an arm class may declare, read from it by name
    (``arm_trait`` in ``_registry.py``) and so optional:

    * ``first_round_name: str | None``: what its answer after round 1 is called (a debate's ``"first-round vote"``, a
      reflection's ``"first draft"``), for an arm that runs rounds and sets :attr:`Attempt.first_round`; the report
      then shows what the later rounds bought. None (the default): the arm runs no rounds.
    * ``compute_reference: bool``: under ``--compute-matched`` the sampling arms' k is sized to this arm's mean
      model calls per item (the debate); False by default.
    * ``model_roles: tuple[str, ...]``: model roles the arm asks :meth:`RowContext.spec` for beyond the built-in
      ones (``MODEL_ROLES``), so ``--model ROLE=SPEC`` may set them; none by default.
    * ``baseline: bool``: the arm every other arm's lead is measured against when a report warns of a variant chosen
      among several (``single``); False by default.

    And one optional method: ``with_k(k) -> Arm``, this arm drawing ``k`` samples, every other setting kept. An arm
    that has it is a sampling arm: ``--k`` sets its k and ``--compute-matched`` sizes it to the debate's calls.
    """

    name: str

    @property
    def settings(self) -> Mapping[str, Any]: ...

    def check(self, suite: Suite) -> None: ...

    async def solve(self, item: Item, ctx: RowContext) -> Attempt: ...


class SizedArm(Arm, Protocol):
    """A sampling arm (see :class:`Arm`): ``--k`` and ``--compute-matched`` set how many samples it draws."""

    def with_k(self, k: int) -> Arm: ...


def sized(arm: Arm) -> TypeGuard[SizedArm]:
    """Whether ``arm`` is a sampling arm, by what it can do (a ``with_k`` method) rather than by its class."""
    return callable(getattr(arm, "with_k", None))


Settings = TypeVar("Settings", bound=BaseModel)


def arm_settings(model: type[Settings], name: str, params: Mapping[str, str]) -> Settings:
    """Validate an arm's parameters, naming the valid ones on error."""
    try:
        return model.model_validate(dict(params))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "parameters"
        valid = ", ".join(f"{k} (default {_shown(f)})" for k, f in model.model_fields.items()) or "none"
        raise ConfigError(f"arm {name!r}: {where}: {first['msg']}; valid parameters: {valid}") from None


def _shown(field: FieldInfo) -> object:
    """A parameter's default as a user would read it: what :func:`by_answers` says it is, or ``unset`` for one
    that is off unless given."""
    extra = field.json_schema_extra
    if isinstance(extra, dict) and DEFAULT_BY_ANSWERS in extra:
        return extra[DEFAULT_BY_ANSWERS]
    return "unset" if field.default is None else field.default


DEFAULT_BY_ANSWERS = "default_by_answers"


def by_answers(short: str, code: str, **constraints: Any) -> Any:
    """A parameter whose default depends on the suite's answers (left unset, the arm fills it in ``check``):
    short answers and code were tuned apart, and what measured best differs. ``constraints`` bound a given
    value (``ge=1``)."""
    shown = f"{short} for short answers, {code} for code"
    return Field(default=None, json_schema_extra={DEFAULT_BY_ANSWERS: shown}, **constraints)


def key_settings(config: BaseModel, **before: object) -> dict[str, Any]:
    """``config`` as its rows' key, leaving out each parameter (a keyword of ``before``) set to the value every row
    had before that parameter existed, so those rows keep the key they were stored under."""
    settings = config.model_dump()
    for parameter, old in before.items():
        if settings[parameter] == old:
            del settings[parameter]
    return settings


@dataclass(frozen=True)
class Reply:
    text: str
    content: Any
    parse_failures: int = 0
    failed: bool = False


async def agent_reply(agent: RoleAgent, task: str) -> Reply:
    """One agent's reply to ``task`` (one model call, and the agent's own retries of malformed output); output that
    stays malformed after them is a failed Reply. (``ask`` names only asking a person; this was ``ask``.)"""
    try:
        result = await agent.run(task=task)
    except MalformedOutputError as exc:
        return Reply("", None, exc.attempts, failed=True)
    message = result.messages[-1]
    content = getattr(message, "content", None)
    parse_failures = int(message.metadata.get("parse_failures", "0"))
    return Reply(message.to_model_text(), content, parse_failures)


ask = former_function("ask", agent_reply)


def spell(value: object) -> str:
    """A setting as an arm spec writes it, so that building the spec gives the setting back: ``0.7``,
    ``0/0.3/0.3`` (one per expert), ``true``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        short = format(value, "g")
        return short if float(short) == value else repr(value)
    if isinstance(value, tuple | list):
        return "/".join(spell(v) for v in value)
    return str(value)


def canonical_spec(arm: Arm) -> str:
    """The arm's full, canonical spec: its family and every parameter that defines it, defaults spelled out, keys
    sorted (``debate?anchor=held&arbiter=rounds&...``). What a results row stores as its arm's name, so changing a
    default never relabels old rows: building this spec (on the same suite) gives the same settings, the same key.

    An arm names its parameters with ``full_params()`` when its settings leave some out (the value rows had before
    the parameter existed) or hold a value whose meaning depends on the suite; else its ``implied_params`` (those
    left-out values, as spec strings) are added to its settings."""
    full = _declared(arm, "full_params", "full_options", None)
    if callable(full):
        parameters = dict(full())
    else:
        implied = _declared(arm, "implied_params", "former_options", {})
        parameters = {**implied, **{k: spell(v) for k, v in arm.settings.items()}}
    query = "&".join(f"{key}={parameters[key]}" for key in sorted(parameters))
    return f"{arm.name}?{query}" if query else arm.name


def _declared(arm: Arm, name: str, former: str, default: Any) -> Any:
    """What ``arm`` declares as ``name``, or under that attribute's former name ``former`` (warning)."""
    if not hasattr(arm, name) and hasattr(arm, former):
        warn_renamed(f"{type(arm).__name__}.{former}", name, stacklevel=4)
        return getattr(arm, former)
    return getattr(arm, name, default)
