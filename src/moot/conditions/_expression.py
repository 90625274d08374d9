"""Stop expressions: ``consensus | no_progress(1) | max_rounds(3) | token_budget(40000)`` as a condition.

A small recursive-descent parser, never ``eval``: the grammar admits only
the built-in condition names, numeric arguments, ``|`` (either stops),
``&`` (both must hold; binds tighter) and parentheses::

    expression := all ("|" all)*
    all        := atom ("&" atom)*
    atom       := NAME [ "(" [NUMBER ("," NUMBER)*] ")" ] | "(" expression ")"
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass

from autogen_agentchat.base import TerminationCondition
from pydantic import ValidationError

from moot.conditions._budget import TokenBudget, WallClock
from moot.conditions._consensus import Consensus
from moot.conditions._cost import CostBudget
from moot.conditions._progress import NoProgress
from moot.conditions._rounds import MaxRounds, NoImprovement, ScoreThreshold
from moot.conditions._steps import MaxSteps
from moot.errors import ConfigError

__all__ = ["CONDITIONS", "ExpressionError", "parse_stop"]

CONDITIONS: dict[str, Callable[..., TerminationCondition]] = {
    "consensus": Consensus,
    "cost_budget": CostBudget,
    "max_rounds": MaxRounds,
    "max_steps": MaxSteps,
    "no_improvement": NoImprovement,
    "no_progress": NoProgress,
    "score_threshold": ScoreThreshold,
    "token_budget": TokenBudget,
    "wall_clock": WallClock,
}
"""The names a stop expression may use, and the condition each builds."""

_TOKEN = re.compile(r"\s*(?:(?P<number>\d[\d_]*(?:\.\d+)?)|(?P<name>[A-Za-z_]\w*)|(?P<op>[|&(),])|(?P<bad>\S))")


class ExpressionError(ConfigError):
    """A stop expression that does not parse; ``column`` is 1-based."""

    def __init__(self, text: str, column: int, problem: str) -> None:
        super().__init__(f"stop expression {text!r}, column {column}: {problem}")
        self.column = column


@dataclass
class _Token:
    kind: str
    text: str
    column: int


def _tokens(text: str) -> list[_Token]:
    found = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "bad"
        found.append(_Token(kind, match.group(kind), match.start(kind) + 1))
    return [*found, _Token("end", "", len(text.rstrip()) + 1)]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def error(self, problem: str, token: _Token | None = None) -> ExpressionError:
        return ExpressionError(self.text, (token or self.peek()).column, problem)

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self, text: str | None = None) -> _Token | None:
        token = self.peek()
        if text is not None and token.text != text:
            return None
        self.at += 1
        return token

    def expression(self) -> TerminationCondition:
        stop = self.all()
        while self.take("|"):
            stop = stop | self.all()
        return stop

    def all(self) -> TerminationCondition:
        stop = self.atom()
        while self.take("&"):
            stop = stop & self.atom()
        return stop

    def atom(self) -> TerminationCondition:
        token = self.peek()
        if self.take("("):
            inner = self.expression()
            if not self.take(")"):
                raise self.error("expected ')'")
            return inner
        if token.kind != "name":
            found = f"{token.text!r}" if token.kind != "end" else "the end"
            raise self.error(f"expected a condition, found {found}; conditions: {', '.join(CONDITIONS)}")
        if token.text not in CONDITIONS:
            raise self.error(f"unknown condition {token.text!r}; conditions: {', '.join(CONDITIONS)}", token)
        self.take()
        return self.build(token, self.arguments() if self.take("(") else [])

    def arguments(self) -> list[float]:
        values: list[float] = []
        while not self.take(")"):
            if values and not self.take(","):
                raise self.error("expected ',' or ')'")
            token = self.take()
            if token is None or token.kind != "number":
                raise self.error("expected a number", token)
            number = float(token.text.replace("_", ""))
            values.append(int(number) if number.is_integer() and "." not in token.text else number)
        return values

    def build(self, token: _Token, values: list[float]) -> TerminationCondition:
        factory = CONDITIONS[token.text]
        try:
            inspect.signature(factory).bind(*values)
            return factory(*values)
        except TypeError:
            usage = _usage(token.text)
            raise self.error(f"{token.text} takes {usage}", token) from None
        except (ValidationError, ValueError) as exc:
            detail = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise self.error(f"{token.text}: {detail}", token) from None


def _usage(name: str) -> str:
    parameters = [p for p in inspect.signature(CONDITIONS[name]).parameters.values() if p.name != "clock"]
    shown = ", ".join(p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default}" for p in parameters)
    return f"({shown})"


def parse_stop(text: str) -> TerminationCondition:
    """The condition ``text`` describes; an :class:`ExpressionError` names the column and what is valid."""
    parser = _Parser(text)
    stop = parser.expression()
    if parser.peek().kind != "end":
        raise parser.error(f"expected '|', '&' or the end, found {parser.peek().text!r}")
    return stop
