"""Shared builders for team tests: critiques and a generator/critic Reflection on a scripted model."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable

import pytest
from autogen_agentchat.base import TerminationCondition

from moot import Critique, Reflection, RoleAgent, role
from moot.arbiters import Arbiter, ExpertAssessment, Verdict
from moot.roles import Opening
from moot.store import RunStore, TeamHooks
from moot.teams import Debate, Revision
from moot.testing import ScriptedModel
from tests.leftovers import LeftoverWatch


def make_critique(score: int, *issues: str) -> Critique:
    """A valid critique: 'accept' when no issues are given, else 'revise' with those issues."""
    return Critique(
        reasoning=f"checked against the task; score {score}",
        score=score,
        strengths=["readable"],
        issues=list(issues),
        verdict="revise" if issues else "accept",
    )


def make_reflection(
    model: ScriptedModel, stop: TerminationCondition, *, critic_retries: int = 2, revision: Revision = "continue"
) -> Reflection:
    """Agents named 'generator' and 'critic', built from the model's spec (call inside ``with model:``)."""
    return Reflection(
        RoleAgent(role("generator"), model.spec),
        RoleAgent(role("critic"), model.spec, max_parse_retries=critic_retries),
        stop=stop,
        revision=revision,
    )


@pytest.fixture
def critique() -> Callable[..., Critique]:
    return make_critique


@pytest.fixture
def reflection() -> Callable[..., Reflection]:
    return make_reflection


# ---------------------------------------------------------------- debate builders
EXPERTS = ("architect", "ops", "business")


def make_position(answer: str, *arguments: str, confidence: float = 0.7) -> Opening:
    """A valid round-1 reply (an Opening; a debate stores it as a Position)."""
    return Opening(
        reasoning=f"weighing {answer} from my angle",
        answer=answer,
        key_arguments=list(arguments) or [f"argument for {answer}"],
        confidence=confidence,
    )


def make_rebuttal(
    answer: str, *arguments: str, claim: str | None = None, confidence: float = 0.7, reasoning: str | None = None
):
    """A valid round-2+ position; ``claim`` is the other expert's claim it answers (by default the first one
    the rebutting expert was offered: a callable reply reads it from the request). The default ``reasoning``
    arrives at ``answer``, so a changed answer is adopted exactly when the claim answered argued for it."""
    from moot.roles import Rebuttal

    def rebuttal(said: str) -> Rebuttal:
        return Rebuttal(
            claim=said,
            response="the others overlook the migration",
            reasoning=reasoning or f"weighing the claims against the task again, I hold {answer}",
            answer=answer,
            because="no argument outweighed mine",
            key_arguments=list(arguments) or [f"argument for {answer}"],
            confidence=confidence,
        )

    if claim is not None:
        return rebuttal(claim)

    def reply(messages, output=None):
        schema = output.model_json_schema()["properties"].get("claim", {}) if output is not None else {}
        return rebuttal(schema.get("const") or (schema.get("enum") or ["someone: a claim"])[0]).model_dump_json()

    return reply


def make_verdict(decision: str, confidence: float = 0.8, decided_by: str | None = "ops") -> Verdict:
    return Verdict(
        rationale=f"ops argued best for {decision}, and no other expert answered that argument",
        decided_by=decided_by,
        assessments=[ExpertAssessment(expert="ops", assessment="strongest case")],
        decision=decision,
        confidence=confidence,
    )


def make_debate(
    model: ScriptedModel,
    stop: TerminationCondition,
    *,
    experts: tuple[str, ...] = EXPERTS,
    arbiter: Arbiter | None = None,
    choices: tuple[str, ...] = (),
    answer_pattern: str | None = None,
    seed: int = 0,
    retries: int = 2,
) -> Debate:
    """Built-in expert roles on the model's spec; an LLM arbiter named 'arbiter' unless ``arbiter`` is given."""
    return Debate(
        [RoleAgent(role(name), model.spec, max_parse_retries=retries) for name in experts],
        arbiter or RoleAgent(role("arbiter"), model.spec, max_parse_retries=retries),
        stop=stop,
        choices=choices,
        answer_pattern=answer_pattern,
        seed=seed,
    )


@pytest.fixture
def without_local_extra(monkeypatch):
    """The import system as on a machine without the ``[local]`` extra, whether or not it is installed here
    (CI installs it): ``import llama_cpp`` raises ModuleNotFoundError while the test runs."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)


@pytest.fixture(autouse=True)
def _isolated_run_store(tmp_path_factory, monkeypatch):
    """Every test records its runs into its own throwaway store, never the user's, and closes it after."""
    monkeypatch.setenv("MOOT_STORE", str(tmp_path_factory.mktemp("store") / "runs.sqlite3"))
    yield
    RunStore.close_shared()


@pytest.fixture(autouse=True)
def sandbox_leftovers(tmp_path_factory, monkeypatch):
    """After every test: no sandbox process, work directory or IPC object is left (see ``tests/leftovers.py``).

    Sandbox roots go to a directory of this test's own, so what is found there is this test's.
    """
    tmp_path_factory.getbasetemp()  # pytest's own base, fixed before the temporary directory moves
    watch = LeftoverWatch.start()
    monkeypatch.setattr(tempfile, "tempdir", watch.scratch)
    yield watch
    found = watch.leftovers()
    watch.clean()
    assert not found, f"the sandbox left {len(found)} things behind: {found}"


class CheckpointRecorder(TeamHooks):
    """Team hooks that keep every checkpoint a run writes (one per turn batch), to inspect their size."""

    def __init__(self) -> None:
        self.states: list[dict] = []

    async def on_batch(self, run_id, seq, messages, state) -> None:
        self.states.append(state)
