"""Termination conditions: each rule on hand-built messages, reuse after a stop, | and &, round trip."""

from __future__ import annotations

import json

import pytest
from autogen_agentchat.base import AndTerminationCondition, TerminatedException, TerminationCondition
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.messages import StopMessage, TextMessage
from autogen_core.models import RequestUsage

from moot.conditions import (
    AtRoundEnd,
    Consensus,
    CostBudget,
    MaxRounds,
    MaxSteps,
    NoImprovement,
    NoProgress,
    ScoreThreshold,
    TokenBudget,
    WallClock,
    default_stop,
    stored_stop,
    unstored_parts,
)
from moot.errors import ConfigError
from moot.messages import RoundCompleted


def done(n, score=None, **fingerprints):
    return RoundCompleted(source="team", round=n, score=score, fingerprints=fingerprints)


def text(prompt=0, completion=0, usage=True):
    used = RequestUsage(prompt_tokens=prompt, completion_tokens=completion) if usage else None
    return TextMessage(content="words", source="agent", models_usage=used)


async def outcomes(condition, batches):
    """Feed each batch in turn; the stop reason per call (None = go on), stopping after the first stop."""
    seen = []
    for batch in batches:
        stop = await condition(batch)
        seen.append(None if stop is None else stop.content)
        if stop is not None:
            break
    return seen


class FakeClock:
    def __init__(self, *times):
        self.times = list(times)

    def __call__(self):
        return self.times.pop(0)


async def test_max_rounds_counts_completed_rounds_only():
    stop = MaxRounds(2)
    assert await stop([text(), done(1)]) is None
    assert await stop([text()]) is None
    message = await stop([done(2)])
    assert isinstance(message, StopMessage)
    assert (message.content, message.source) == ("max rounds: 2 of 2 rounds done", "MaxRounds")
    assert stop.terminated


async def test_condition_raises_when_called_after_firing_until_reset():
    stop = MaxRounds(1)
    assert await stop([done(1)]) is not None
    with pytest.raises(TerminatedException, match="MaxRounds has already stopped the run; call reset"):
        await stop([text()])
    await stop.reset()
    assert not stop.terminated
    assert await stop([text()]) is None


async def test_first_firing_message_of_a_batch_gives_the_reason():
    assert await outcomes(MaxRounds(2), [[done(1), done(2), done(3)]]) == ["max rounds: 2 of 2 rounds done"]


async def test_score_threshold():
    stop = ScoreThreshold(80)
    assert await outcomes(stop, [[done(1)], [done(2, 79.5)], [text()], [done(3, 80)]]) == [
        None,
        None,
        None,
        "quality threshold: score 80 >= 80 in round 3",
    ]


async def test_no_improvement_needs_more_than_min_delta_for_patience_rounds():
    stop = NoImprovement(patience=2, min_delta=5)
    scores = [50, None, 54, 60, 62, 64]
    seen = await outcomes(stop, [[done(i, s)] for i, s in enumerate(scores, start=1)])
    # 54 is not > 50 + 5 (stale 1); 60 beats it (stale 0); 62 and 64 do not beat 60 + 5.
    assert seen == [None] * 5 + ["no improvement: best score 60 not beaten for 2 rounds"]


async def test_no_improvement_reset_forgets_the_best_score():
    stop = NoImprovement(patience=1)
    assert await outcomes(stop, [[done(1, 90)], [done(2, 10)]]) == [
        None,
        "no improvement: best score 90 not beaten for 1 rounds",
    ]
    await stop.reset()
    assert await stop([done(1, 10)]) is None  # a fresh first score, not a failure to beat 90


async def test_no_progress_fires_when_any_fingerprint_repeats():
    stop = NoProgress()
    rounds = [done(1, draft="a", issues="x"), done(2, draft="b", issues="y"), done(3, draft="c", issues="y")]
    assert await outcomes(stop, [[r] for r in rounds]) == [
        None,
        None,
        "no progress: issues unchanged for 1 round(s) (round 3)",
    ]


async def test_no_progress_window_needs_consecutive_repeats():
    stop = NoProgress(window=2)
    drafts = ["a", "a", "b", "b", "b"]
    seen = await outcomes(stop, [[done(i, draft=d)] for i, d in enumerate(drafts, start=1)])
    assert seen == [None, None, None, None, "no progress: draft unchanged for 2 round(s) (round 5)"]


async def test_no_progress_reset_forgets_the_last_fingerprint():
    stop = NoProgress()
    assert await stop([done(1, draft="a")]) is None
    await stop.reset()
    assert await stop([done(2, draft="a")]) is None


async def test_token_budget_sums_prompt_and_completion_of_every_message():
    stop = TokenBudget(100)
    batches = [[text(30, 20)], [text(usage=False), done(1)], [text(40, 9)], [text(1, 0)]]
    assert await outcomes(stop, batches) == [None, None, None, "token budget: 100 of 100 tokens used"]
    assert stop.used == 100
    await stop.reset()
    assert stop.used == 0


async def test_wall_clock_starts_at_first_message():
    stop = WallClock(10, clock=FakeClock(100.0, 105.0, 109.9, 110.0))
    assert await outcomes(stop, [[text()], [text()], [text()], [text()]]) == [
        None,
        None,
        None,
        "wall clock: 10.0s of 10s used",
    ]


async def test_wall_clock_reset_restarts_the_clock():
    stop = WallClock(10, clock=FakeClock(0.0, 11.0, 200.0, 205.0))
    assert await outcomes(stop, [[text()], [text()]]) == [None, "wall clock: 11.0s of 10s used"]
    await stop.reset()
    assert await outcomes(stop, [[text()], [text()]]) == [None, None]


async def test_or_stops_on_either_and_joins_simultaneous_reasons():
    either = ScoreThreshold(90) | MaxRounds(3)
    assert await outcomes(either, [[done(1, 50)], [done(2, 60)], [done(3, 70)]]) == [
        None,
        None,
        "max rounds: 3 of 3 rounds done",
    ]
    both = ScoreThreshold(90) | MaxRounds(1)
    stop = await both([done(1, 95)])
    assert stop is not None
    assert stop.content == "quality threshold: score 95 >= 90 in round 1, max rounds: 1 of 1 rounds done"


async def test_and_stops_only_when_all_have_fired_and_reset_clears_all():
    both = MaxRounds(2) & ScoreThreshold(80)
    assert await both([done(1, 90)]) is None
    stop = await both([done(2, 10)])
    assert stop is not None
    assert stop.content == "quality threshold: score 90 >= 80 in round 1, max rounds: 2 of 2 rounds done"
    assert both.terminated
    await both.reset()
    assert not both.terminated
    assert await both([done(2, 10)]) is None  # MaxRounds alone is not enough after the reset


@pytest.mark.parametrize(
    ("make", "bad", "message"),
    [
        (MaxRounds, 0, "MaxRounds(rounds=0): input should be greater than 0"),
        (MaxRounds, "three", "MaxRounds(rounds='three'): input should be a valid integer"),
        (ScoreThreshold, 101, "ScoreThreshold(threshold=101): input should be less than or equal to 100"),
        (ScoreThreshold, 0.85, "ScoreThreshold(threshold=0.85): scores are on a 0-100 scale; did you mean "
                               "ScoreThreshold(85)?"),
        (NoImprovement, 0, "NoImprovement(patience=0): input should be greater than 0"),
        (NoProgress, 0, "NoProgress(window=0): input should be greater than 0"),
        (TokenBudget, -1, "TokenBudget(max_tokens=-1): input should be greater than 0"),
        (WallClock, 0, "WallClock(seconds=0): input should be greater than 0"),
        # a typed argument is taken strictly: a string, a bool or a fractional count is not quietly coerced
        (MaxRounds, "3", "MaxRounds(rounds='3'): input should be a valid integer"),
        (MaxRounds, True, "MaxRounds(rounds=True): input should be a valid integer"),
        (MaxRounds, 2.5, "MaxRounds(rounds=2.5): input should be a valid integer"),
        (MaxSteps, "4", "MaxSteps(steps='4'): input should be a valid integer"),
        (ScoreThreshold, "85", "ScoreThreshold(threshold='85'): input should be a valid number"),
        (NoImprovement, "2", "NoImprovement(patience='2'): input should be a valid integer"),
        (NoProgress, None, "NoProgress(window=None): input should be a valid integer"),
        (TokenBudget, "40000", "TokenBudget(max_tokens='40000'): input should be a valid integer"),
        (WallClock, "60", "WallClock(seconds='60'): input should be a valid number"),
        (Consensus, "0.5", "Consensus(threshold='0.5'): input should be a valid number"),
        (CostBudget, -1, "CostBudget(usd=-1): input should be greater than 0"),
        (CostBudget, "1", "CostBudget(usd='1'): input should be a valid number"),
        (AtRoundEnd, "max_rounds(3)", "AtRoundEnd(condition='max_rounds(3)'): a termination condition is needed"),
        (lambda bad: WallClock(5, clock=bad), 3, "WallClock(clock=3): a clock is a function"),
    ],
)  # fmt: skip
def test_bad_arguments_are_one_clear_line_at_construction(make, bad, message):
    with pytest.raises(ConfigError) as info:
        make(bad)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("make", "field"), [(ScoreThreshold, "threshold"), (WallClock, "seconds"), (CostBudget, "usd")]
)
def test_a_whole_number_is_taken_where_a_number_is_asked_for(make, field):
    assert make(5).dump_component().config == make(5.0).dump_component().config == {field: 5.0}


def test_a_stop_that_cannot_be_dumped_is_stored_part_by_part_with_the_class_of_each_unstorable_part():
    from autogen_agentchat.conditions import FunctionalTermination

    stop = MaxRounds(2) | (TokenBudget(10) & FunctionalTermination(lambda messages: False))
    assert stored_stop(stop) == {
        "any_of": [
            MaxRounds(2).dump_component().model_dump(mode="json"),
            {"all_of": [
                TokenBudget(10).dump_component().model_dump(mode="json"),
                {"unstored": "autogen_agentchat.conditions._terminations.FunctionalTermination"},
            ]},
        ]
    }  # fmt: skip
    assert unstored_parts(AtRoundEnd(stop)) == ["FunctionalTermination"]
    assert stored_stop(MaxRounds(2)) == MaxRounds(2).dump_component().model_dump(mode="json")
    assert unstored_parts(MaxRounds(2) | TokenBudget(9)) == []


@pytest.mark.parametrize("other", [5, "max", None])
def test_only_conditions_compose(other):
    for combined in (lambda: MaxRounds(3) | other, lambda: MaxRounds(3) & other):
        with pytest.raises(TypeError, match=r"cannot combine MaxRounds with .* both sides must be termination"):
            combined()
    composed = (
        MaxRounds(3) | TokenBudget(9000),
        MaxRounds(3) & TokenBudget(9000),
        (MaxRounds(3) | Consensus()) & NoProgress(2),
    )
    for condition in composed:  # however deep: checked at once, not at the first check of a run
        with pytest.raises(TypeError, match=r"cannot combine a composed condition with .* both sides must be"):
            condition | other
        with pytest.raises(TypeError, match=r"cannot combine a composed condition with .* both sides must be"):
            condition & other


def test_composed_conditions_round_trip_as_checked_composites():
    condition = (MaxRounds(3) | TokenBudget(9000)) & (Consensus() | MaxMessageTermination(9))
    dumped = condition.dump_component()
    assert reload(condition).dump_component() == dumped
    assert (dumped.provider, dumped.label) == ("moot.conditions.AllOf", "AndTerminationCondition")
    assert isinstance(type(condition).load_component(dumped), AndTerminationCondition)
    with pytest.raises(TypeError, match="cannot combine a composed condition"):
        reload(condition) | 5  # a loaded composite is checked too


def reload(condition):
    """dump_component() -> JSON -> TerminationCondition.load_component()."""
    dumped = json.loads(condition.dump_component().model_dump_json())
    return TerminationCondition.load_component(dumped)


SCRIPT = [
    [text(100, 100)],
    [done(1, 40, draft="a", issues="x")],
    [text(100, 100)],
    [done(2, 40, draft="b", issues="y")],
    [text(100, 100)],
    [done(3, 90, draft="b", issues="z")],
    [done(4, 95, draft="c", issues="w")],
]


@pytest.mark.parametrize(
    ("condition", "provider"),
    [
        (MaxRounds(3), "moot.conditions.MaxRounds"),
        (ScoreThreshold(85), "moot.conditions.ScoreThreshold"),
        (NoImprovement(1, min_delta=2.5), "moot.conditions.NoImprovement"),
        (NoProgress(window=1), "moot.conditions.NoProgress"),
        (TokenBudget(450), "moot.conditions.TokenBudget"),
    ],
)
async def test_each_condition_round_trips_and_behaves_the_same(condition, provider):
    assert condition.dump_component().provider == provider
    loaded = reload(condition)
    assert type(loaded) is type(condition)
    assert loaded.dump_component() == condition.dump_component()
    expected = await outcomes(condition, SCRIPT)
    assert expected[-1] is not None  # the script makes every one of them fire
    assert await outcomes(loaded, SCRIPT) == expected


async def test_wall_clock_round_trips_its_seconds():
    loaded = reload(WallClock(2.5, clock=FakeClock()))
    assert isinstance(loaded, WallClock)
    assert loaded.seconds == 2.5
    assert loaded.dump_component().config == {"seconds": 2.5}
    assert await loaded([text()]) is None  # a real clock now: the first message only starts it


@pytest.mark.parametrize(
    ("condition", "config"),
    [
        (Consensus(0.75), {"threshold": 0.75}),
        (CostBudget(0.5), {"usd": 0.5}),
        (MaxSteps(4), {"steps": 4}),
        (NoImprovement(2, min_delta=1.5), {"patience": 2, "min_delta": 1.5}),
    ],
)
def test_every_condition_dumps_its_arguments_and_loads_from_them(condition, config):
    """One rule for all of moot's conditions: the config's fields are the constructor's arguments."""
    assert condition.dump_component().config == config
    assert reload(condition).dump_component() == condition.dump_component()


async def test_composed_condition_round_trips_and_behaves_the_same():
    composed = (ScoreThreshold(92) | NoImprovement(2)) & (MaxRounds(2) | TokenBudget(10_000))
    loaded = reload(composed)
    assert loaded.dump_component() == composed.dump_component()
    expected = await outcomes(composed, SCRIPT)
    assert expected[-1] == "max rounds: 2 of 2 rounds done, quality threshold: score 95 >= 92 in round 4"
    assert await outcomes(loaded, SCRIPT) == expected


async def test_default_stop_round_trips():
    stop = default_stop()
    loaded = reload(stop)
    assert loaded.dump_component() == stop.dump_component()
    assert await outcomes(loaded, SCRIPT) == await outcomes(stop, SCRIPT)


class _Opaque(TerminationCondition):
    """A condition that is not a component: it has no configuration to load its copy from."""

    component_provider_override = "tests.unit.test_conditions._Opaque"

    @property
    def terminated(self) -> bool:
        return False

    async def __call__(self, messages):
        return None

    async def reset(self) -> None:
        return None


def test_autogens_own_join_is_opened_from_its_configuration_or_else_taken_whole():
    from autogen_agentchat.conditions import TextMentionTermination

    from moot.conditions._bounds import at_round_ends, is_bounded, parts_of

    opened = TextMentionTermination("done") | MaxRounds(3)
    assert [type(p).__name__ for p in parts_of(opened)] == ["TextMentionTermination", "MaxRounds"]
    assert is_bounded(opened, frozenset())  # MaxRounds inside AutoGen's | still bounds the run
    closed = _Opaque() | MaxRounds(3)
    assert parts_of(closed) == []
    assert not is_bounded(closed, frozenset())  # taken whole, as one AutoGen condition: a round cap is added
    assert type(at_round_ends(closed)).__name__ == "AtRoundEnd"
