"""What a critique, a position and a verdict say, described once for every place that shows them.

Each answer type has one function here, registered on its type, that turns it into a
:class:`Description`: a headline of labelled fields and the lines under it, each with a tone.
The rich console (``_console.py``), the plain text of ``moot show`` (``_run_view.py``) and the
notebook transcript (``_result_blocks.py``) only lay a description out, so a field added or
reworded here shows the same way in all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import Any, Literal

from pydantic import ValidationError

from moot.roles import Critique, Position, Verdict

__all__ = ["Description", "Field", "Line", "Tone", "describe", "describe_data"]

Tone = Literal["plain", "dim", "good", "warn", "accent", "info", "strong"]
"""How a part stands out: the console maps tones to colours; plain text ignores them."""


@dataclass(frozen=True)
class Field:
    """One labelled value of the headline, e.g. ``score 55``."""

    label: str
    value: str
    tone: Tone = "plain"


@dataclass(frozen=True)
class Line:
    """One line under the headline (reasoning, a strength, an issue, a dissent ...)."""

    text: str
    tone: Tone = "plain"


@dataclass(frozen=True)
class Description:
    """A result as a headline of fields and the lines below it; ``tone`` colours its frame."""

    kind: str
    head: tuple[Field, ...]
    lines: tuple[Line, ...]
    tone: Tone = "plain"

    def headline(self) -> str:
        return ", ".join(f"{f.label} {f.value}" for f in self.head)

    def text(self) -> str:
        """Every part, one per line: the plain-text form (``moot show``)."""
        return "\n".join([self.headline(), *(line.text for line in self.lines)])

    def summary(self) -> str:
        """Every part on one line (a transcript row): the headline, a colon, then the lines."""
        rest = " ".join(" ".join(line.text.split()) for line in self.lines)
        return f"{self.headline()}: {rest}" if rest else self.headline()


@singledispatch
def describe(content: object) -> Description | None:
    """The description of a critique, position or verdict (each registered below); None for anything else."""
    return None


_MODELS: dict[str, type[Critique] | type[Position] | type[Verdict]] = {
    "critique": Critique,
    "position": Position,
    "verdict": Verdict,
}


def describe_data(kind: str, data: dict[str, Any]) -> Description | None:
    """The same from stored JSON (``kind`` as ``moot show`` names turns); None when it is not such a result."""
    model = _MODELS.get(kind)
    if model is None:
        return None
    try:
        return describe(model.model_validate(data))
    except ValidationError:
        return None


@describe.register(Critique)
def _critique(critique: Critique) -> Description:
    tone: Tone = "good" if critique.verdict == "accept" else "warn"
    head = (Field("score", str(critique.score), tone), Field("verdict", critique.verdict, tone))
    lines = [Line(critique.reasoning, "dim")]
    lines += [Line(f"+ {s}", "good") for s in critique.strengths]
    lines += [Line(f"- {i}", "warn") for i in critique.issues]
    return Description("critique", head, tuple(lines), tone)


@describe.register(Position)
def _position(position: Position) -> Description:
    head = (Field("answer", position.answer, "accent"), Field("confidence", f"{position.confidence:.2f}", "dim"))
    lines = []
    if position.claim:
        lines += [Line(f"on {position.claim}", "warn"), Line(f"  {position.response}", "warn")]
    if position.reasoning:
        lines.append(Line(position.reasoning, "dim"))
    if position.because:
        lines.append(Line(f"because: {position.because}", "dim"))
    lines += [Line(f"+ {a}", "good") for a in position.key_arguments]
    return Description("position", head, tuple(lines), "info")


@describe.register(Verdict)
def _verdict(verdict: Verdict) -> Description:
    head = (Field("decision", verdict.decision, "strong"), Field("confidence", f"{verdict.confidence:.2f}", "dim"))
    lines = [Line(verdict.rationale)]
    if verdict.decided_by:
        lines.append(Line(f"decided by {verdict.decided_by}'s argument", "strong"))
    lines += [Line(f"{a.expert}: {a.assessment}", "dim") for a in verdict.assessments]
    lines += [Line(f"dissent: {d}", "warn") for d in verdict.dissent]
    return Description("verdict", head, tuple(lines), "good")
