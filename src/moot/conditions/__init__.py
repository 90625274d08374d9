"""Layered termination conditions: each is an AutoGen TerminationCondition, composable with | and &."""

from autogen_agentchat.base import TerminationCondition

from moot.conditions._base import AllOf, AnyOf, MootCondition
from moot.conditions._bounds import RoundCap, bounded_stop, dead_conditions, reported
from moot.conditions._budget import TokenBudget, WallClock
from moot.conditions._consensus import Consensus
from moot.conditions._cost import CostBudget
from moot.conditions._expression import CONDITIONS, ExpressionError, parse_stop
from moot.conditions._progress import NoProgress
from moot.conditions._round_end import AtRoundEnd
from moot.conditions._rounds import MaxRounds, NoImprovement, ScoreThreshold
from moot.conditions._steps import MaxSteps
from moot.conditions._stored import UnstoredStopWarning, as_stop, stored_stop, unstored_parts

__all__ = [
    "CONDITIONS",
    "AllOf",
    "AnyOf",
    "AtRoundEnd",
    "Consensus",
    "CostBudget",
    "ExpressionError",
    "MaxRounds",
    "MaxSteps",
    "MootCondition",
    "NoImprovement",
    "NoProgress",
    "RoundCap",
    "ScoreThreshold",
    "TokenBudget",
    "UnstoredStopWarning",
    "WallClock",
    "as_stop",
    "bounded_stop",
    "dead_conditions",
    "default_stop",
    "parse_stop",
    "reported",
    "stored_stop",
    "unstored_parts",
]

DEFAULT_TOKEN_BUDGET = 40_000


def default_stop() -> TerminationCondition:
    """The reflection default: good enough, or stuck, or four rounds, or out of tokens."""
    return ScoreThreshold(85) | NoImprovement(2) | MaxRounds(4) | TokenBudget(DEFAULT_TOKEN_BUDGET)
