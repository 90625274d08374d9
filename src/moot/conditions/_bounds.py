"""Can a stop condition fire for a team, and is it bound to? Checked when a team is built.

A condition that waits for something a team never reports (a critique score
from a debate) would let a run go on forever, or sit in a ``|`` as a branch
that never fires: it is refused at construction, wherever it stands.
A condition that can fire but need not (a quality threshold the work never
reaches) gets a hard round cap beside it, named in the stop reason when it
is what ends the run. AutoGen's own conditions are taken as able to fire;
its message, token and time limits as bounds. They are checked at round
ends only (see :class:`AtRoundEnd`), so a round they end is whole.
"""

from __future__ import annotations

from collections.abc import Callable

from autogen_agentchat.base import AndTerminationCondition, OrTerminationCondition, TerminationCondition
from autogen_agentchat.conditions import MaxMessageTermination, TimeoutTermination, TokenUsageTermination
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage

from moot.conditions._base import AllOf, AnyOf, MootCondition
from moot.conditions._round_end import AtRoundEnd
from moot.conditions._rounds import MaxRounds
from moot.conditions._stored import dumped_stop
from moot.errors import ConfigError

__all__ = [
    "HARD_ROUND_CAP",
    "RoundCap",
    "at_round_ends",
    "bounded_stop",
    "can_fire",
    "dead_conditions",
    "is_bounded",
    "parts_of",
    "reported",
]

HARD_ROUND_CAP = 100
_AUTOGEN_BOUNDS = (MaxMessageTermination, TimeoutTermination, TokenUsageTermination)


class RoundCap(MaxRounds):
    """The hard round cap moot adds beside a stop that has no bound of its own."""

    component_provider_override = "moot.conditions.RoundCap"

    def check(self, message: BaseAgentEvent | BaseChatMessage) -> str | None:
        reason = super().check(message)
        if reason is None:
            return None
        return f"hard cap: {self.rounds} rounds done (the stop given has no bound; add MaxRounds or TokenBudget)"


def _holds(
    condition: TerminationCondition,
    ours: Callable[[MootCondition], bool],
    theirs: Callable[[TerminationCondition], bool],
) -> bool:
    """A property of a composed condition: any branch of ``|``, every branch of ``&``, else of the condition."""
    if isinstance(condition, AtRoundEnd):
        condition = condition.condition
    parts = parts_of(condition)
    if parts and isinstance(condition, OrTerminationCondition):
        return any(_holds(part, ours, theirs) for part in parts)
    if parts and isinstance(condition, AndTerminationCondition):
        return all(_holds(part, ours, theirs) for part in parts)
    return ours(condition) if isinstance(condition, MootCondition) else theirs(condition)


def parts_of(condition: TerminationCondition) -> list[TerminationCondition]:
    """The conditions a ``|`` or ``&`` joins; none for a single condition, or for a join moot cannot open.

    moot's own joins (:class:`AnyOf`, :class:`AllOf`, what ``|`` and ``&`` of a moot condition make) keep
    their parts in public. AutoGen's own (``TextMentionTermination("x") | MaxRounds(3)``) keep them private
    with no accessor, but their public configuration holds them: the parts are loaded from it, as fresh as a
    condition is before its first run, which is when a team is built. A join with a part that has no
    configuration (a condition that is not a component) stays closed: it is taken as one AutoGen condition.
    """
    if isinstance(condition, AnyOf | AllOf):
        return list(condition.parts)
    if not isinstance(condition, OrTerminationCondition | AndTerminationCondition):
        return []
    dumped = dumped_stop(condition)
    if dumped is None or not isinstance(dumped.config.get("conditions"), list):
        return []
    return [TerminationCondition.load_component(part) for part in dumped.config["conditions"]]


def can_fire(condition: TerminationCondition, signals: frozenset[str]) -> bool:
    """Whether ``condition`` can ever fire for a team whose rounds report ``signals`` (e.g. ``score``)."""
    return _holds(condition, lambda c: c.needs is None or c.needs in signals, lambda _: True)


def dead_conditions(condition: TerminationCondition, signals: frozenset[str]) -> list[MootCondition]:
    """Every part of ``condition`` that can never fire for a team whose rounds report ``signals``, in any
    branch of ``|`` or ``&`` (one dead branch of ``a | b`` is a mistake even while ``a`` can fire)."""
    if isinstance(condition, AtRoundEnd):
        condition = condition.condition
    if isinstance(condition, MootCondition):
        return [] if condition.needs is None or condition.needs in signals else [condition]
    return [dead for part in parts_of(condition) for dead in dead_conditions(part, signals)]


def reported(signals: frozenset[str]) -> str:
    """What a team's rounds report, for an error: ``agreement``, or that they report no round value."""
    return ", ".join(sorted(signals)) or "no round value (neither scores, agreement nor steps)"


def is_bounded(condition: TerminationCondition, signals: frozenset[str]) -> bool:
    """Whether ``condition`` is sure to fire sooner or later for such a team (a round, step, token or time limit)."""
    return _holds(condition, lambda c: c.bounds and can_fire(c, signals), lambda c: isinstance(c, _AUTOGEN_BOUNDS))


def at_round_ends(condition: TerminationCondition) -> TerminationCondition:
    """``condition`` with each of AutoGen's own conditions in it wrapped in :class:`AtRoundEnd`."""
    if isinstance(condition, MootCondition | AtRoundEnd):
        return condition
    parts = parts_of(condition)  # (an AutoGen join is opened from its config: once is enough)
    if parts:
        return type(condition)(*(at_round_ends(part) for part in parts))  # moot's checked AnyOf/AllOf stay checked
    return AtRoundEnd(condition)


def bounded_stop(condition: TerminationCondition, team: str, signals: frozenset[str]) -> TerminationCondition:
    """``condition`` as a team runs it: refused if it cannot fire, given a hard cap if it has no bound, with
    AutoGen's own conditions checked at round ends."""
    dead = dead_conditions(condition, signals)
    if dead:
        names = ", ".join(f"{type(d).__name__} (waits for {d.needs})" for d in dead)
        raise ConfigError(
            f"stop condition {names} can never fire for a {team}, whose rounds report {reported(signals)}; "
            "remove it, or stop on what the team reports or on a limit, e.g. MaxRounds(5) | TokenBudget(40000)"
        )
    condition = at_round_ends(condition)
    return condition if is_bounded(condition, signals) else condition | RoundCap(HARD_ROUND_CAP)
