"""Test models for the harness tests: replies computed from the prompt, every call counted.

``PromptModel`` is a DeterministicModel whose replies come from a function of
(agent, messages), so a test decides which items an arm gets right, and
whose ``calls`` counts every call that reached it (under the cache and the
meters: the "inner client" calls). ``fail_after`` makes it raise from that
call on, like an endpoint that went away mid-comparison.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from moot.arbiters import ExpertAssessment, Verdict
from moot.harness.arms._prompts import ShortAnswer
from moot.roles import Critique, Opening, Rebuttal
from moot.testing import DeterministicModel, ScriptedClient

ReplyFn = Callable[[str, Sequence[Any]], str | BaseModel | dict[str, Any]]


class _Forever(deque):  # a reply queue that never runs dry
    def __init__(self, reply: Callable[[Sequence[Any]], str]) -> None:
        super().__init__()
        self.reply = reply

    def __bool__(self) -> bool:
        return True

    def popleft(self) -> Callable[[Sequence[Any]], str]:
        return self.reply


class PromptModel(DeterministicModel):
    def __init__(self, name: str, reply: ReplyFn, *, fail_after: int | None = None) -> None:
        super().__init__(name)
        self.reply = reply
        self.fail_after = fail_after
        self.calls = 0
        self.agents: list[str] = []

    def client(self, agent: str | None) -> ScriptedClient:
        name = agent or "agent"

        def answer(messages: Sequence[Any]) -> str:
            self.calls += 1
            self.agents.append(name)
            if self.fail_after is not None and self.calls > self.fail_after:
                raise RuntimeError(f"the model went away after {self.fail_after} calls")
            out = self.reply(name, messages)
            if isinstance(out, BaseModel):
                return out.model_dump_json()
            return out if isinstance(out, str) else json.dumps(out)

        return ScriptedClient(_Forever(answer), name)

    @property
    def spec(self) -> str:
        return f"scripted:{self.name}"


# ---------------------------------------------------------------- a short-answer world
def sum_of(text: str) -> int | None:
    """The task of the arithmetic suite: 'What is A + B?'."""
    match = re.search(r"What is (\d+) \+ (\d+)\?", text)
    return int(match.group(1)) + int(match.group(2)) if match else None


def write_sums(path: Path, n: int) -> Path:
    """``n`` sums scored as numbers: a suite of the kind ``number``, whose debate defaults the tests exercise."""
    path.write_text("\n".join(json.dumps({"id": f"q{i}", "input": f"What is {i} + {2 * i}?", "answer": 3 * i,
                                          "scoring": "numeric"}) for i in range(n)) + "\n")  # fmt: skip
    return path


def position(answer: str, agent: str, prompt: str = "") -> Opening | Rebuttal:
    """Round 1 (``prompt`` lists no claims): an Opening. Later: a Rebuttal answering the first claim of another
    expert the prompt lists, quoted as listed."""
    claim = first_claim(prompt, agent)
    if claim is None:
        return Opening(reasoning="worked it out", answer=answer, key_arguments=["checked the sum"], confidence=0.6)
    return Rebuttal(
        claim=claim,
        response="the other sum is off",
        reasoning=f"added the numbers again: the sum = {answer}",
        answer=answer,
        because="a recount",
        key_arguments=["checked the sum"],
        confidence=0.6,
    )


def first_claim(prompt: str, agent: str) -> str | None:
    """The first ``expert: argument`` a rebuttal prompt lists for an expert other than ``agent``."""
    if "Answer one claim of another expert" not in prompt:
        return None
    speaker = None
    for line in prompt.splitlines():
        if heading := re.match(r"(expert_\d+):", line):
            speaker = heading.group(1)
        elif line.startswith("- ") and speaker not in (None, agent):
            return f"{speaker}: {line[2:]}"
    return None


def critique(score: int) -> Critique:
    issues = [] if score >= 85 else ["recheck the arithmetic"]
    return Critique(reasoning="checked", score=score, strengths=["clear"], issues=issues,
                    verdict="accept" if score >= 85 else "revise")  # fmt: skip


def verdict(decision: str) -> Verdict:
    return Verdict(rationale="expert_1 argued best", decision=decision, confidence=0.7,
                   assessments=[ExpertAssessment(expert="expert_1", assessment="sound sum")])  # fmt: skip


def arithmetic(wrong: set[int] = frozenset(), *, stubborn: bool = False) -> ReplyFn:
    """Everyone adds correctly, except on items whose first number is in ``wrong`` (answer off by one).

    ``stubborn``: expert_3 is always off by one, so debates never reach consensus and run every round.
    """

    def reply(agent: str, messages: Sequence[Any]) -> Any:
        text = "\n".join(str(m.content) for m in messages)
        total = sum_of(text)
        first = int(re.search(r"What is (\d+)", text).group(1)) if total is not None else -1
        right = str(total) if first not in wrong else str((total or 0) + 1)
        if agent == "solver":
            return ShortAnswer(reasoning="added the numbers", answer=right)
        if agent == "critic":
            return critique(90)
        if agent.startswith("expert_"):
            answer = str((total or 0) + 1) if stubborn and agent == "expert_3" else right
            return position(answer, agent, text)
        if agent == "arbiter":
            return verdict(right)
        if agent == "judge":  # an honest judge: the graded answer against the reference in its prompt
            graded = re.search(r"Answer to grade:\n(.*)", text)
            reference = re.search(r"Reference answer:\n(.*)", text)
            same = bool(graded and reference and graded.group(1).strip() == reference.group(1).strip())
            return {"reasoning": "compared with the reference", "verdict": "correct" if same else "incorrect"}
        raise AssertionError(f"unexpected agent {agent!r}")

    return reply


def test_prompt_model_counts_calls_and_fails_on_cue():
    import asyncio

    from autogen_core.models import UserMessage

    model = PromptModel("support", lambda agent, messages: "hi", fail_after=1)
    client = model.client("solver")
    first = asyncio.run(client.create([UserMessage(content="x", source="user")]))
    assert first.content == "hi" and model.calls == 1
    try:
        asyncio.run(client.create([UserMessage(content="x", source="user")]))
    except RuntimeError as exc:
        assert "went away" in str(exc)
    else:
        raise AssertionError("fail_after did not fail")


def test_self_consistency_never_groups_samples_whose_behaviour_was_not_observed():
    """Two wrong samples whose probe line was flooded out (behaviour unobserved, empty) must not out-vote a right
    sample that agrees with one other observed sample; nor do they form a group of two."""
    from moot.arbiters import Evidence
    from moot.harness.arms._vote import _by_consensus, _group_sizes

    hidden = Evidence(passed=0, total=2, behaviour="")
    right = Evidence(passed=2, total=2, behaviour='["3", "5"]')
    other = Evidence(passed=1, total=2, behaviour='["3", "4"]')
    samples = [hidden, hidden, other, right]
    assert _group_sizes(samples) == [1, 1, 1, 1]
    assert _by_consensus(samples) == 3  # every group is one: more visible tests passed decides
    assert _by_consensus([hidden, hidden, right, right]) == 2
