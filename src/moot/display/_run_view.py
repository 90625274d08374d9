"""Run inspection: a stored run as rounds, scores, verdicts and tokens (what ``moot show`` shows).

``run_view`` derives everything from the run store's turns (messages carry
``moot_kind`` / ``round`` metadata and token usage; ``RoundCompleted`` events
close rounds), so it works for finished, partial and crashed runs alike.
``moot show`` prints it (``_show.py``); its ``--json`` output is these models
dumped (schema ``SHOW_SCHEMA``). The run's model calls come from its trace
(``_model_calls.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from moot.display._describe import describe_data
from moot.messages import ROUND, round_numbers
from moot.models import Meter, metered
from moot.store import RunRecord, RunStore, TurnRecord

__all__ = ["SHOW_SCHEMA", "RoundView", "RunView", "TurnView", "completed_rounds", "run_view"]

SHOW_SCHEMA = "moot.show/1"
"""Version of ``moot show --json``; fields are only ever added under the same version."""


class TurnView(BaseModel):
    """One stored message, with the round it belongs to (None: the task, or a turn after the rounds)."""

    seq: int
    step_id: str
    round: int | None
    source: str
    kind: str
    """task, draft, critique, position, verdict, round, or the message type for anything else."""
    text: str
    data: dict[str, Any] | None = None
    """The structured content (critique, position, verdict, round event); None for plain text."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    created_at: str
    payload: dict[str, Any] = Field(default_factory=dict, exclude=True)
    """The stored message as AutoGen dumped it (for re-rendering); not part of the JSON."""

    @property
    def meter(self) -> Meter:
        """This turn's calls, tokens and cost, counted from the stored message as the team counted them."""
        return metered(self.payload.get("models_usage"), self.payload.get("metadata") or {})


class RoundView(BaseModel):
    """What one round produced: its score or agreement, each agent's verdict or answer, tokens per agent."""

    round: int
    complete: bool = False
    """A RoundCompleted event closed it; a stop or crash can leave the last round open."""
    score: float | None = None
    agreement: float | None = None
    scores: dict[str, float] = {}
    verdicts: dict[str, str] = {}
    answers: dict[str, str] = {}
    tokens: dict[str, Meter] = {}


class RunView(BaseModel):
    """``moot show``: the run record, every turn, the rounds and the tokens after them (an arbiter's ruling)."""

    schema_: str = Field(default=SHOW_SCHEMA, serialization_alias="schema")
    run: RunRecord
    turns: list[TurnView]
    rounds: list[RoundView]
    closing_tokens: dict[str, Meter] = {}
    """Tokens spent after the rounds, per agent (a debate's arbiter)."""
    verdict: dict[str, Any] | None = None
    """A debate's ruling: the Verdict fields plus ``by``, who ruled."""

    def dump(self) -> dict[str, Any]:
        """The ``moot show --json`` document."""
        return self.model_dump(mode="json", by_alias=True)


# ----------------------------------------------------------------- run view
def run_view(store: RunStore, run_id: str) -> RunView:
    """The run as rounds and turns; ConfigError (naming recent runs) for an unknown id."""
    record = store.get(run_id)
    turns = _turn_views(store.turns(run_id))
    rounds: dict[int, RoundView] = {}
    closing: dict[str, Meter] = {}
    verdict = None
    for turn in turns:
        if turn.kind == "verdict" and turn.data is not None:
            verdict = {**turn.data, "by": turn.source}
        if turn.round is None:
            if turn.prompt_tokens or turn.completion_tokens:
                closing[turn.source] = closing.get(turn.source, Meter()) + turn.meter
            continue
        _absorb(rounds.setdefault(turn.round, RoundView(round=turn.round)), turn)
    return RunView(
        run=record,
        turns=turns,
        rounds=[rounds[n] for n in sorted(rounds)],
        closing_tokens=closing,
        verdict=verdict,
    )


def completed_rounds(store: RunStore, run_id: str) -> int:
    """How many rounds of the run a RoundCompleted event closed."""
    return sum(t.kind == "RoundCompleted" for t in store.turns(run_id))


def _turn_views(records: Sequence[TurnRecord]) -> list[TurnView]:
    kinds = [_kind(t, t.payload.get("metadata") or {}) for t in records]
    numbers = round_numbers(_named_round(kind, t.payload) for kind, t in zip(kinds, records, strict=True))
    return [
        TurnView(
            seq=t.seq,
            step_id=t.step_id,
            round=number,
            source=t.source,
            kind=kind,
            text=_text(kind, t.payload),
            data=_data(kind, t.payload),
            prompt_tokens=t.prompt_tokens,
            completion_tokens=t.completion_tokens,
            created_at=t.created_at,
            payload=t.payload,
        )
        for t, kind, number in zip(records, kinds, numbers, strict=True)
    ]


def _named_round(kind: str, payload: dict[str, Any]) -> tuple[str, int | None]:
    """A stored turn as ``round_numbers`` reads it: its kind and the round it names, if any."""
    if kind == ROUND:
        return kind, int(payload["round"])
    metadata = payload.get("metadata") or {}
    return kind, int(metadata["round"]) if "round" in metadata else None


def _kind(turn: TurnRecord, metadata: dict[str, Any]) -> str:
    kind = metadata.get("moot_kind")
    kind = kind or {"RoundCompleted": "round", "StructuredMessage[Critique]": "critique"}.get(turn.kind)
    if kind is None and turn.seq == 0 and turn.source == "user":
        kind = "task"
    return str(kind or turn.kind)


def _data(kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    if kind == "round":
        keys = ("round", "score", "agreement")
        return {k: payload.get(k) for k in keys}
    content = payload.get("content")
    return content if isinstance(content, dict) else None


def _text(kind: str, payload: dict[str, Any]) -> str:
    content = payload.get("content")
    if isinstance(content, str):
        return content
    if kind == "round":
        extra = f", score {payload['score']:g}" if payload.get("score") is not None else ""
        extra += f", agreement {payload['agreement']:.2f}" if payload.get("agreement") is not None else ""
        return f"round {payload.get('round')} completed{extra}"
    if isinstance(content, dict):
        return _structured_text(kind, content)
    return str(content)


def _structured_text(kind: str, content: dict[str, Any]) -> str:
    described = describe_data(kind, content)
    if described is not None:
        return described.text()
    return ", ".join(f"{k}: {v}" for k, v in content.items())


def _absorb(view: RoundView, turn: TurnView) -> None:
    data = turn.data or {}
    if turn.kind == "round":
        view.complete, view.score, view.agreement = True, data.get("score"), data.get("agreement")
    elif turn.kind == "critique" and "score" in data:
        view.scores[turn.source] = float(data["score"])
        view.verdicts[turn.source] = str(data.get("verdict"))
    elif turn.kind == "position" and "answer" in data:
        view.answers[turn.source] = str(data["answer"])
    if turn.prompt_tokens or turn.completion_tokens:
        view.tokens[turn.source] = view.tokens.get(turn.source, Meter()) + turn.meter
    if not view.complete and view.scores:
        view.score = min(view.scores.values())
