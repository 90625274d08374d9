"""What moot's own measurements support on each kind of answer (``evidence.yaml``), said at the top of a report.

A default chosen on arithmetic can lose on yes/no, and a user comparing arms on their own suite should know, before
any figure, what moot's measurements on items that decided nothing found for that kind of answer and which arm they
support. The figures live in a data file beside this module, one entry per kind, each naming the folder whose rows
carry them, so updating the evidence is editing data, not code.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from pydantic import BaseModel, ConfigDict, Field

from moot.boundary import load_yaml
from moot.harness.suites._items import AnswerKind

__all__ = ["KindEvidence", "evidence_for"]


class KindEvidence(BaseModel):
    """One kind's entry: the arm the evidence supports (None: no arm measured better than single) and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    supported: str | None
    """The arm moot's measurements support on this kind, or None where no arm beat single."""
    measured: str = Field(min_length=1)
    """One paragraph: what was measured, on which items that decided nothing, with exact figures."""
    source: str = Field(min_length=1)
    """The results folders (in the repository) whose rows carry the figures."""


@cache
def _table() -> dict[str, KindEvidence]:
    text = files("moot.harness.reports").joinpath("evidence.yaml").read_text(encoding="utf-8")
    raw = load_yaml(text, "moot's evidence table (evidence.yaml)")
    return {kind: KindEvidence.model_validate(entry) for kind, entry in raw.items()}


def evidence_for(kind: AnswerKind) -> KindEvidence:
    """The evidence entry for ``kind`` (every kind has one: an unmeasured kind says it is unmeasured)."""
    return _table()[kind]
