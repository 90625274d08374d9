"""The arms built on moot's teams: ``reflection`` (LLM critic), ``reflection-tests`` (TestCritic), ``debate``.

* reflection: generator + LLM critic until the critic's score reaches the
  threshold, stops improving, or the rounds run out; the answer is the
  best-scoring draft (by the critic's own score: that is the arm).
* reflection-tests: the critic runs the draft against the item's *visible*
  tests (docstring examples), never the scoring tests; only on suites with tests.
  Each revision is a new program written from the failing tests, shown no draft
  (``revision=continue`` revises the draft instead).
* debate: experts (each on its own seed, at a sampling temperature) answer
  independently, rebut for up to ``rounds`` rounds or until they agree, and an
  arbiter rules. Parameters left unset take what measured best for the suite's
  answers (:meth:`DebateSettings.for_answers`): on short answers the single
  answer is held as expert 1 and the others' answers are hidden in rebuttals.
  Short answers: by default a vote over every round's positions,
  ties to the first-round vote (RoundsVote: no position or verbosity bias, and
  the independent first answers keep their weight); ``arbiter=vote`` for the
  last round's majority, ``arbiter=llm`` for an LLM. Code: a CodeDebate, where
  each expert writes a program, every program runs on the visible tests,
  while none passes them all each expert writes a new program shown what
  failed, not the code (adopted only when it passes more), and the program
  vote picks the program. (Debating the *approach* in prose and implementing
  the ruling scored 60% against single's 90% on humaneval[:20]; it was removed.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from moot._renamed import former_keywords
from moot.arbiters import Arbiter, MajorityVote, RoundsVote
from moot.conditions import Consensus, MaxRounds, NoImprovement, ScoreThreshold
from moot.errors import ConfigError
from moot.harness.arms._arm import Attempt, arm_settings, by_answers, key_settings, spell
from moot.harness.arms._context import MAX_EXPERTS, RowContext
from moot.harness.arms._prompts import SHORT_DEBATER, ShortAnswer, anchor_position, solver
from moot.harness.arms._sampling import answer_from_draft, single_call
from moot.harness.suites._choices import choices_to_rotate
from moot.harness.suites._items import CLOSED_KINDS, AnswerFormat, AnswerKind, CodeTask, Item, Suite
from moot.roles import ARBITER, CRITIC, GENERATOR, Position, Role, RoleAgent, TestCritic
from moot.sandbox import SandboxLimits
from moot.teams import CodeDebate, CodeDebateResult, Debate, DebateResult, Reflection, ReflectionResult, Revision

__all__ = ["DebateArm", "ReflectionArm", "TestReflectionArm"]


class ReflectionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(default=3, ge=1, le=10)
    threshold: float = Field(default=85, ge=0, le=100)
    """Stop once the critic scores a draft at least this high."""

    @field_validator("threshold")
    @classmethod
    def _whole(cls, value: float) -> float:
        """A whole threshold as the default is kept (``85``, not ``85.0``): ``threshold=85`` is the default arm,
        one key, one canonical spec."""
        return int(value) if float(value).is_integer() else value


def _reflection_attempt(result: ReflectionResult, code: bool) -> Attempt:
    answer = result.answer or ""

    def final(draft: str) -> str:
        return draft if code else answer_from_draft(draft)

    return Attempt(
        final(answer),
        first_round=final(result.rounds[0].draft) if result.rounds else None,
        round_answers=[[final(r.draft)] for r in result.rounds],
        rounds=len(result.rounds),
        stop_reason=result.stop_reason or "",
        parse_failures=result.parse_failures,
        partial=result.partial,
        metrics={"scores": result.scores, "best_round": result.best.round if result.best else None},
    )


class ReflectionArm:
    """Generator + LLM critic (see module docstring)."""

    name = "reflection"
    first_round_name = "first draft"

    @former_keywords(options="params")
    def __init__(self, params: Mapping[str, str] | None = None) -> None:
        self.config = arm_settings(ReflectionSettings, self.name, params or {})

    @property
    def settings(self) -> Mapping[str, Any]:
        return self.config.model_dump()

    def check(self, suite: Suite) -> None:
        """Runs on any suite."""

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        code = item.code is not None
        generator = ctx.agent(GENERATOR if code else solver(item.choices, item.answer_pattern), model_role="generator")
        critic = ctx.agent(CRITIC, model_role="critic")
        stop = ScoreThreshold(self.config.threshold) | NoImprovement(2) | MaxRounds(self.config.rounds)
        team = ctx.prepare(Reflection(generator, critic, stop=stop))
        result = await team.run(task=item.task)
        ctx.note_run(team)
        assert isinstance(result, ReflectionResult)
        return _reflection_attempt(result, code)


class TestReflectionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(default=3, ge=1, le=10)
    revision: Revision = "fresh"
    """``fresh``: a new program from the failing visible tests, shown no draft; ``continue``: revise the draft
    shown its failing tests (see :class:`moot.teams.Reflection`). On the tuning slice humaneval[100:130] the
    0.5B model's continued revisions changed no outcome (34 revisions, none passed more visible tests) and
    fresh ones took it from 8/30 to 10/30 (2 items better, none worse)."""


class TestReflectionArm:
    """Generator + TestCritic on the visible tests; stops when they all pass."""

    __test__ = False
    name = "reflection-tests"
    first_round_name = "first draft"
    implied_params = {"revision": "continue"}
    """What rows whose settings leave ``revision`` out did (:func:`canonical_spec` spells it)."""

    @former_keywords(options="params")
    def __init__(self, params: Mapping[str, str] | None = None) -> None:
        self.config = arm_settings(TestReflectionSettings, self.name, params or {})

    @property
    def settings(self) -> Mapping[str, Any]:
        """The configuration (the rows' key). ``revision=continue`` is what every row did before the parameter
        existed, so it is left out: those rows keep their key."""
        return key_settings(self.config, revision="continue")

    def check(self, suite: Suite) -> None:
        if not suite.has_visible_tests:
            raise ConfigError(
                f"arm 'reflection-tests' needs a suite whose items have tests (humaneval, or a file whose items "
                f"have 'tests'); {suite.label!r} has none: use 'reflection' (LLM critic) there instead"
            )

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        assert item.code is not None
        generator = ctx.agent(GENERATOR, model_role="generator")
        critic = TestCritic(
            item.code.visible_tests,
            limits=SandboxLimits(wall_seconds=20),
            runner=ctx.sandbox,
            entry_points=[item.code.entry_point],
        )
        stop = ScoreThreshold(100) | NoImprovement(2) | MaxRounds(self.config.rounds)
        team = ctx.prepare(Reflection(generator, critic, stop=stop, revision=self.config.revision))
        result = await team.run(task=item.task)
        ctx.note_run(team)
        assert isinstance(result, ReflectionResult)
        attempt = _reflection_attempt(result, code=True)
        attempt.metrics["visible_tests"] = len(item.code.visible_tests)
        return attempt


Anchor = Literal["none", "single", "held"]
Opening = Literal["expert", "solver"]
ChoiceOrder = Literal["asked", "rotated"]
PeerAnswers = Literal["shown", "hidden"]
Temperatures = float | tuple[float, ...]


class DebateSettings(BaseModel):
    """A debate arm's parameters as given. A parameter left unset takes its default for the suite's answers
    (:meth:`for_answers`): short answers and code were tuned apart (docs/compare/tuning/README.md), and what
    measured best differs."""

    model_config = ConfigDict(extra="forbid")

    experts: int = Field(default=3, ge=2, le=MAX_EXPERTS)
    rounds: int | None = by_answers("3 on numbers (1 on any other short answer)", "2", ge=1, le=10)
    """At most this many rounds (fewer when the experts agree). Short answers: the third round lets a change
    adopted in the second outvote round 1 (chain_sum's three tuning slices: 109 of 300 against two rounds' 108,
    one item, no evidence either way; docs/compare/tuning/README.md); on a closed answer set the
    rounds after the first changed 1 verdict of 60, for the worse. Code: a later round runs only while no program
    passes every visible test."""
    arbiter: Literal["auto", "rounds", "vote", "llm"] = "auto"
    """Short answers: ``rounds`` (auto) a vote over every round's positions, ties to the first-round vote;
    ``vote`` a majority of the last round; ``llm`` an LLM arbiter. Code: the program vote (auto, vote)."""
    temperature: Temperatures | None = by_answers("0.3 (the anchor 0)", "0.7")
    """The experts' sampling temperature, used unless their spec sets one: one for all, or one per expert
    (``temperature=0/0.7/0.7``: a greedy expert beside two sampled ones; ``/`` because ``--arms`` splits
    on commas)."""

    anchor: Anchor | None = by_answers("held", "none")
    """Short answers: ``single`` gives expert 1 the single arm's answer as its opening (the same greedy solver
    call, a cache hit when ``single`` runs too), so the first-round vote starts from the answer one call
    returns and the sampled experts must out-vote it; ``held`` also keeps that answer unchanged in every
    later round (expert 1 is asked nothing more); ``none``: every expert opens on its own."""

    opening: Opening | None = by_answers("expert on numbers, solver on any other short answer", "expert")
    """Short answers: how a sampled expert opens. ``expert``: the panel's expert prompt and position (reasoning,
    answer, key arguments, confidence); ``solver``: the very call the ``single`` arm makes, sampled at the
    expert's temperature and seed, its reasoning's last statements taken as key arguments (as the anchor's). Round
    1 is then the single call beside samples of it, differing from it only by sampling."""

    choice_order: ChoiceOrder | None = by_answers("rotated on a closed answer set, asked otherwise", "asked")
    """Closed answer sets: ``rotated`` shows sampled expert i the choices moved i - 1 places (where the question lists
    them, ``A) … B) …``, in place; else lettered after it) and reads its answer back as the same choice, so a lean on
    one label or word splits the vote instead of deciding it (see :mod:`moot.harness.suites._choices`); ``asked``
    shows every expert the question as written. Rotated openings are the sampled solver calls (``opening=solver``)
    and are only voted on (``rounds=1``): a rebuttal would read arguments made under another lettering."""

    peer_answers: PeerAnswers | None = by_answers("hidden", "shown")
    """Short answers: ``hidden`` shows each expert the others' arguments in later rounds with their answers
    masked, so a rebuttal has to reach its answer from the reasoning rather than restate a peer's."""

    rebuttal_temperature: Temperatures | Literal["opened"] | None = by_answers("0.7", "opened")
    """Short answers: the temperature the experts rebut at, one for all or one per expert, or ``opened`` (each at
    its opening temperature). A rebuttal drawn hotter than its opening makes a recomputation that lands on a
    peer's answer rarer by chance, so the agreement that adopts a change says more. Equal to the openings'
    temperatures, it is the same as ``opened`` (and keys the rows so)."""

    @field_validator("temperature", "rebuttal_temperature", mode="before")
    @classmethod
    def _per_expert(cls, value: Any) -> Any:
        if isinstance(value, str) and "/" in value:
            return tuple(part.strip() for part in value.split("/"))
        return value

    @field_validator("temperature", "rebuttal_temperature")
    @classmethod
    def _in_range(cls, value: Temperatures | str | None) -> Temperatures | str | None:
        if not isinstance(value, str) and any(not 0.0 <= t <= 2.0 for t in _each(value)):
            raise ValueError("each temperature must be between 0 and 2")
        return value

    @model_validator(mode="after")
    def _one_per_expert(self) -> Self:
        for field in ("temperature", "rebuttal_temperature"):
            value = getattr(self, field)
            if isinstance(value, tuple) and len(value) != self.experts:
                raise ValueError(f"{field}: give one temperature, or one per expert ({self.experts}) separated by '/'")
        return self

    def for_answers(self, kind: AnswerKind) -> DebatePlan:
        """What the arm runs on a suite of ``kind`` answers: every unset parameter at its default there.

        Short answers (measured on chain_sum, docs/compare.md): the single answer held as expert 1, two experts
        opening at 0.3 and rebutting at 0.7, arguments shown with their answers hidden, three rounds; on a closed
        answer set one round, the two opening with samples of the single call shown the choices rotated
        (:data:`_KIND_DEFAULTS`). Code: three experts at 0.7, programs and test results shown, two rounds
        (HumanEval)."""
        answer_format: AnswerFormat = "code" if kind == "code" else "short"
        short = answer_format == "short"
        anchor = self.anchor or ("held" if short else "none")
        temperature = self.temperature
        if temperature is None:
            temperature = _default_temperature(answer_format, anchored=anchor != "none", experts=self.experts)
        given = self.rebuttal_temperature
        rebuttal = None if given == "opened" else given
        if given is None and short:
            rebuttal = 0.7
        if rebuttal is not None and all(_nth(rebuttal, i) == _nth(temperature, i) for i in range(self.experts)):
            rebuttal = None
        defaults = _KIND_DEFAULTS[kind]
        opening = self.opening or defaults.opening
        rounds = self.rounds or defaults.rounds
        rotatable = opening == "solver" and rounds == 1  # what rotated choices need: a default never asks more
        return DebatePlan(
            experts=self.experts,
            rounds=rounds,
            arbiter=self.arbiter,
            temperature=temperature,
            anchor=anchor,
            opening=opening,
            peer_answers=self.peer_answers or ("hidden" if short else "shown"),
            rebuttal_temperature=rebuttal,
            choice_order=self.choice_order or (defaults.choice_order if rotatable else "asked"),
        )


class DebatePlan(BaseModel):
    """A debate arm's settings with every default filled in for one suite's answers (its rows' key)."""

    model_config = ConfigDict(frozen=True)

    experts: int
    rounds: int
    arbiter: Literal["auto", "rounds", "vote", "llm"]
    temperature: Temperatures
    anchor: Anchor
    opening: Opening
    peer_answers: PeerAnswers
    rebuttal_temperature: Temperatures | None
    """None: each expert rebuts at its opening temperature."""
    choice_order: ChoiceOrder

    def expert_temperature(self, index: int) -> float:
        """Expert ``index``'s (0-based) temperature."""
        return _nth(self.temperature, index)

    def rebuttal_temperature_of(self, index: int) -> float | None:
        """Expert ``index``'s (0-based) rebuttal temperature; None: it rebuts as it opened."""
        return None if self.rebuttal_temperature is None else _nth(self.rebuttal_temperature, index)


def _default_temperature(answer_format: AnswerFormat, *, anchored: bool, experts: int) -> Temperatures:
    """Code: 0.7, diverse programs for the visible tests to choose from. Short answers: 0.3, where round 1's
    vote measured best; an anchored expert 1 is the greedy single call, so it is written as 0."""
    if answer_format == "code":
        return 0.7
    return (0.0,) + (0.3,) * (experts - 1) if anchored else 0.3


def _each(value: Temperatures | None) -> tuple[float, ...]:
    return () if value is None else value if isinstance(value, tuple) else (value,)


def _nth(value: Temperatures, index: int) -> float:
    return value[index] if isinstance(value, tuple) else value


@dataclass(frozen=True)
class KindDefaults:
    """What a debate arm runs on one kind of answer when its parameters are left unset."""

    opening: Opening
    rounds: int
    choice_order: ChoiceOrder = "asked"


_KIND_DEFAULTS: dict[AnswerKind, KindDefaults] = {
    "code": KindDefaults("expert", rounds=2),
    "number": KindDefaults("expert", rounds=3),
    "text": KindDefaults("solver", rounds=1),
    "choices": KindDefaults("solver", rounds=1, choice_order="rotated"),
    "multiple_choice": KindDefaults("solver", rounds=1, choice_order="rotated"),
}
"""Each kind's defaults, chosen on tuning slices of that kind and then tested on items written after the choice
(docs/compare/tuning/README.md says which items decided what). Numbers: chain_sum. Other short answers (text) vote
once on single's answer and two samples of it: a yes/no suite that declares no choices is text, and there the
numbers' defaults lost to single (yes/no tuning slice without choices: 10 / 30 against single's 13, the vote 14).
Closed answer sets vote once: on 60 yes/no tuning items the later rounds changed one verdict, for the
worse, at twice the tokens. There the 0.5B model leans on one label ("A" on 27 of 40 fresh multiple-choice
questions) or one word ("No"), and samples of one prompt share the lean, so the two sampled experts are shown the
choices rotated (lettered after the question when it lists none): a lean then names different answers for the two
and the single answer stands, and only one answer reached in both orders overrules it (multiple-choice tuning 3 / 0;
fresh: yes/no 5 / 2, multiple choice 1 / 1)."""

_AUTO_ARBITER: dict[AnswerFormat, str] = {"short": "rounds", "code": "vote"}
"""What ``arbiter=auto`` rules with on each kind of answer: the vote over every round (RoundsVote), and the program
vote (every arbiter a code debate accepts is the program vote)."""


class DebateArm:
    """Experts debate, an arbiter rules (see module docstring)."""

    name = "debate"
    first_round_name = "first-round vote"
    compute_reference = True
    """The arm ``--compute-matched`` sizes the sampling arms' k to."""
    implied_params = {
        "anchor": "none",
        "opening": "expert",
        "peer_answers": "shown",
        "rebuttal_temperature": "opened",
        "choice_order": "asked",
    }
    """What every row did before these parameters existed (left out of its settings; spelled by ``full_params``)."""

    @former_keywords(options="params")
    def __init__(self, params: Mapping[str, str] | None = None) -> None:
        self.given = arm_settings(DebateSettings, self.name, params or {})
        self.answer_format: AnswerFormat = "short"
        self.answer_kind: AnswerKind = "text"
        self.config = self.given.for_answers("text")
        """What the arm runs: ``check`` fills the defaults again for the suite's answers."""

    @property
    def settings(self) -> Mapping[str, Any]:
        """The configuration (the rows' key); per-expert temperatures as they are written (``0/0.7/0.7``).
        ``anchor=none``, ``peer_answers=shown`` and rebutting as opened are what every row did before the
        parameters existed, so they are left out. An arbiter that rules as ``auto`` does on the suite's answers
        (``rounds`` on short answers; any on code: the program vote) keys as ``auto``: the same debate, one key."""
        settings = key_settings(
            self.config,
            anchor="none",
            opening="expert",
            peer_answers="shown",
            rebuttal_temperature=None,
            choice_order="asked",
        )
        for field in ("temperature", "rebuttal_temperature"):
            value = getattr(self.config, field)
            if isinstance(value, tuple):
                settings[field] = "/".join(f"{t:g}" for t in value)
        if self.answer_format == "code" or settings["arbiter"] == _AUTO_ARBITER[self.answer_format]:
            settings["arbiter"] = "auto"
        return settings

    def full_params(self) -> dict[str, str]:
        """Every parameter, spelled so that building ``debate?`` with them on the same kind of suite runs this debate
        (:func:`canonical_spec`): the parameters left out of the key at the value rows had before they existed, and
        ``auto`` named as the arbiter it is on the suite's answers."""
        parameters = {**self.implied_params, **{k: spell(v) for k, v in self.settings.items()}}
        if parameters["arbiter"] == "auto":
            parameters["arbiter"] = _AUTO_ARBITER[self.answer_format]
        if self.answer_kind not in CLOSED_KINDS:
            del parameters["choice_order"]  # only a closed answer set has an order to choose: elsewhere it is `asked`
        return parameters

    def check(self, suite: Suite) -> None:
        """Fill the unset parameters for the suite's answers, and refuse those its answers cannot use."""
        self.config = self.given.for_answers(suite.answer_kind)
        self.answer_format = suite.answer_format
        self.answer_kind = suite.answer_kind
        if suite.answer_format != "code":
            self._check_choice_order(suite)
            return
        if self.config.peer_answers != "shown":
            raise ConfigError(
                "arm 'debate': peer_answers=hidden is for short answers; a code debate's experts see each "
                "other's programs and test results; valid peer_answers values for code: shown"
            )
        if self.config.rebuttal_temperature is not None:
            raise ConfigError(
                "arm 'debate': rebuttal_temperature is for short answers; a code debate's later programs are "
                "drawn as its first ones and adopted on the visible tests; valid for code: leave it out"
            )
        if self.config.opening != "expert":
            raise ConfigError(
                "arm 'debate': opening=solver is for short answers; a code debate's experts open with programs "
                "drawn as the generator draws them; valid opening values for code: expert"
            )
        if self.config.anchor != "none":
            raise ConfigError(
                f"arm 'debate': anchor={self.config.anchor} is for short answers; a code debate's first programs "
                "are chosen by the visible tests (compare best-of-k-tests); valid anchor values for code: none"
            )
        if self.config.choice_order != "asked":
            raise ConfigError(
                "arm 'debate': choice_order=rotated is for closed answer sets; a code item has no choices to move; "
                "valid choice_order values for code: asked"
            )
        if self.config.arbiter == "llm":
            raise ConfigError(
                "arm 'debate': code debates are ruled by the program vote (tests passed, then experts holding "
                "the same behaviour), not by an LLM; valid arbiter values for code: auto, rounds, vote"
            )

    def _check_choice_order(self, suite: Suite) -> None:
        """Rotated choices need a closed answer set, openings the arm draws, and no rebuttal (see the parameter)."""
        if self.config.choice_order == "asked":
            return
        if suite.answer_kind not in CLOSED_KINDS:
            raise ConfigError(
                f"arm 'debate': choice_order=rotated needs a closed answer set (items with choices) and "
                f"{suite.label!r} has none; valid choice_order values there: asked"
            )
        if self.config.opening != "solver" or self.config.rounds != 1:
            raise ConfigError(
                f"arm 'debate': choice_order=rotated rotates the openings sampled from the single call and votes "
                f"on them, so it needs opening=solver and rounds=1 (given opening={self.config.opening}, "
                f"rounds={self.config.rounds}); valid otherwise: choice_order=asked"
            )

    def sample_draws(self, base: int) -> list[tuple[int, float]]:
        """The (seed, temperature) of each first answer drawn as a sample of the single call (expert i on base +
        i - 1): every expert's program on code, the sampled experts' openings with ``opening=solver``. A position
        asked with the panel's prompt is no sample, and an anchor is single's own greedy call."""
        if self.answer_format != "code" and self.config.opening != "solver":
            return []
        anchored = self.answer_format != "code" and self.config.anchor != "none"
        return [
            (base + i - 1, self.config.expert_temperature(i - 1)) for i in self._numbers() if not (anchored and i == 1)
        ]

    def _experts(self, ctx: RowContext, role: Role) -> list[RoleAgent]:
        """Each expert on its own seed: expert i samples exactly as self-consistency's sample i - 1 does."""
        return [self._expert(ctx, role, i, self.config.expert_temperature(i - 1)) for i in self._numbers()]

    def _rebutting(self, ctx: RowContext, role: Role) -> list[RoleAgent]:
        """With ``rebuttal_temperature``, each expert's rebutting agent: its own seed, the rebuttal temperature."""
        return [
            self._expert(ctx, role, i, t)
            for i in self._numbers()
            if (t := self.config.rebuttal_temperature_of(i - 1)) is not None
        ]

    def _numbers(self) -> range:
        return range(1, self.config.experts + 1)

    @staticmethod
    def _expert(ctx: RowContext, role: Role, i: int, temperature: float) -> RoleAgent:
        spec = ctx.sampled(f"expert_{i}", i - 1, temperature)
        return ctx.agent(role, model_role=f"expert_{i}", name=f"expert_{i}", spec=spec)

    async def solve(self, item: Item, ctx: RowContext) -> Attempt:
        if item.code is not None:
            return await self._solve_code(item, item.code, ctx)
        experts = self._experts(ctx, SHORT_DEBATER)
        arbiter = self._arbiter(ctx)
        stop = Consensus() | MaxRounds(self.config.rounds)
        openings = await self._openings(item, ctx, [e.name for e in experts])
        held = [experts[0].name] if self.config.anchor == "held" and experts[0].name in openings else []
        team = ctx.prepare(
            Debate(
                experts,
                arbiter,
                stop=stop,
                choices=item.choices,
                answer_pattern=item.answer_pattern,
                seed=ctx.seed,
                openings=openings,
                held=held,
                peer_answers=self.config.peer_answers,
                rebutting=self._rebutting(ctx, SHORT_DEBATER),
            )
        )
        result = await team.run(task=item.task)
        ctx.note_run(team)
        assert isinstance(result, DebateResult)
        metrics: dict[str, Any] = result.metrics.model_dump() if result.metrics else {}
        metrics["verdict_by"] = result.verdict_by
        return Attempt(
            result.answer or "",
            rounds=len(result.rounds),
            stop_reason=result.stop_reason or "",
            parse_failures=result.metrics.parse_failures if result.metrics else 0,
            partial=result.partial or result.verdict is None,
            metrics=metrics,
            candidates=[p.answer for r in result.rounds for p in r.positions.values()],
            first_round=result.metrics.first_round_vote if result.metrics else None,
            round_answers=[[p.answer for p in r.positions.values()] for r in result.rounds],
        )

    async def _openings(self, item: Item, ctx: RowContext, names: list[str]) -> dict[str, Position]:
        """The openings given rather than asked of the panel: with ``anchor=single`` or ``held`` expert 1's is
        single's own call; with ``opening=solver`` every other expert's is a sample of that call at the
        expert's temperature and seed. An expert whose call stays malformed opens, and debates, on its own."""
        anchored = self.config.anchor != "none"
        calls: dict[str, Any] = {}
        shifts: dict[str, int] = {}
        if anchored:
            calls[names[0]] = single_call(item, ctx)
        choices = choices_to_rotate(item.task, item.choices) if self.config.choice_order == "rotated" else None
        if self.config.opening == "solver":
            for i, name in enumerate(names, start=1):
                if name not in calls:
                    spec = ctx.sampled(f"expert_{i}", i - 1, self.config.expert_temperature(i - 1))
                    shifts[name] = (i - 1) if choices else 0
                    asked = item
                    if choices:
                        asked = replace(item, task=choices.rotated(shifts[name]), choices=choices.labels)
                    calls[name] = single_call(asked, ctx, spec)
        replies = await asyncio.gather(*calls.values())
        openings: dict[str, Position] = {}
        for name, (reply, _) in zip(calls, replies, strict=True):
            if reply.failed or not isinstance(reply.content, ShortAnswer):
                continue
            position = anchor_position(reply.content)
            if choices and shifts.get(name):
                position = position.model_copy(update={"answer": choices.read_back(position.answer, shifts[name])})
            openings[name] = position
        return openings

    def _arbiter(self, ctx: RowContext) -> RoleAgent | Arbiter:
        if self.config.arbiter == "llm":
            return ctx.agent(ARBITER, model_role="arbiter")
        return MajorityVote() if self.config.arbiter == "vote" else RoundsVote()

    async def _solve_code(self, item: Item, code: CodeTask, ctx: RowContext) -> Attempt:
        """Candidates, visible-test evidence, keep/adopt/fix rounds, the program vote (see CodeDebate)."""
        team = CodeDebate(
            self._experts(ctx, GENERATOR),
            code.visible_tests,
            stub=code.stub,
            entry_point=code.entry_point,
            probe_calls=code.probe_calls,
            stop=Consensus() | MaxRounds(self.config.rounds),
            runner=ctx.sandbox,
        )
        result = await ctx.prepare(team).run(task=item.task)
        ctx.note_run(team)
        assert isinstance(result, CodeDebateResult)
        metrics: dict[str, Any] = result.metrics.model_dump() if result.metrics else {}
        metrics["chosen"] = result.ruling.candidate if result.ruling else None
        code_of = {c.id: _fenced(c.code) for c in result.candidates}
        first = result.metrics.first_round_vote if result.metrics else None
        return Attempt(
            _fenced(result.answer) if result.answer is not None else "",
            rounds=len(result.rounds),
            stop_reason=result.stop_reason or "",
            parse_failures=result.metrics.parse_failures if result.metrics else 0,
            partial=result.partial,
            metrics=metrics,
            candidates=[_fenced(c.code) for c in result.candidates],
            first_round=code_of.get(first) if first else None,
            round_answers=[[code_of[c] for c in held] for held in metrics.get("held_per_round", [])],
        )


def _fenced(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```"
