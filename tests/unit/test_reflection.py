"""Reflection runs on a scripted model: stopping, best-so-far, malformed critiques, bounded prompts, usage."""

from __future__ import annotations

import json

import pytest

from moot import Critique, Reflection
from moot.conditions import MaxRounds, NoProgress, ScoreThreshold
from moot.testing import ScriptedModel, count_words

TASK = "Write a function add(a, b) that returns the sum."


async def test_stops_on_score_threshold(critique, reflection):
    model = ScriptedModel({"generator": ["draft one", "draft two"], "critic": [critique(60, "no hints"), critique(90)]})
    with model:
        result = await reflection(model, ScoreThreshold(85) | MaxRounds(5)).run(task=TASK)
    assert result.stop_reason == "quality threshold: score 90 >= 85 in round 2"
    assert result.scores == [60, 90]
    assert (result.best.round, result.answer, result.partial) == (2, "draft two", False)
    assert [c.json_output for c in model.calls("critic")] == [Critique, Critique]


@pytest.mark.parametrize(("scores", "best_round"), [((70, 50), 1), ((50, 70), 2), ((70, 70), 1)])
async def test_best_so_far_is_the_highest_scoring_earliest_draft(critique, reflection, scores, best_round):
    critiques = [critique(s, "still wrong") for s in scores]
    model = ScriptedModel({"generator": ["draft one", "draft two"], "critic": critiques})
    with model:
        result = await reflection(model, MaxRounds(2)).run(task=TASK)
    assert result.stop_reason == "max rounds: 2 of 2 rounds done"
    assert result.scores == list(scores)
    assert result.best.round == best_round
    assert result.answer == ["draft one", "draft two"][best_round - 1]
    assert result.latest_draft == "draft two"


async def test_malformed_critique_is_fed_back_with_the_error_and_the_run_continues(critique, reflection):
    out_of_range = json.dumps({**critique(80, "x issue").model_dump(), "score": 150})
    critic = ["this is not json", out_of_range, critique(60, "no hints"), critique(70, "no tests")]
    model = ScriptedModel({"generator": ["draft one", "draft two"], "critic": critic})
    with model:
        result = await reflection(model, MaxRounds(2)).run(task=TASK)
    calls = model.calls("critic")
    first_retry, second_retry = calls[1].messages, calls[2].messages
    assert first_retry[-2].content == "this is not json"  # the rejected reply, then the error
    assert first_retry[-1].content.startswith("Your reply was not valid: ")
    assert "JSON" in first_retry[-1].content
    assert second_retry[-2].content == out_of_range
    assert "score: Input should be less than or equal to 100" in second_retry[-1].content
    assert len(calls[3].messages) == 2  # the next round starts from a clean prompt
    assert (result.scores, result.parse_failures, result.partial) == ([60, 70], 2, False)


async def test_malformed_critique_beyond_retries_ends_the_run_keeping_best_so_far(critique, reflection):
    critic = [critique(70, "no hints"), "nope", '{"score": 1}']
    model = ScriptedModel({"generator": ["draft one", "draft two"], "critic": critic})
    with model:
        result = await reflection(model, MaxRounds(3), critic_retries=1).run(task=TASK)
    assert result.partial is True
    assert result.stop_reason.startswith("error: critic gave malformed output 2 times; last error: ")
    assert "reasoning: Field required" in result.stop_reason
    assert result.scores == [70, None]
    assert (result.best.round, result.answer, result.latest_draft) == (1, "draft one", "draft two")


async def test_run_after_a_malformed_stop_redoes_only_the_failed_critique(critique, reflection):
    model = ScriptedModel(
        {
            "generator": ["draft one", "draft two"],
            "critic": [critique(70, "no hints"), "nope", "nope", critique(90)],
        }
    )
    with model:
        team = reflection(model, MaxRounds(2), critic_retries=1)
        assert (await team.run(task=TASK)).partial
        result = await team.run()
    assert len(model.calls("generator")) == 2
    assert "draft two" in model.calls("critic")[-1].prompt_text
    assert (result.scores, result.partial, result.stop_reason) == (
        [70, 90],
        False,
        "max rounds: 2 of 2 rounds done",
    )


async def test_prompts_stay_bounded_as_rounds_grow(critique, reflection):
    drafts = [f"{name} body text here" for name in ("ALPHA", "BRAVO", "CHARLIE", "DELTA")]
    critiques = [critique(40 + n, f"issue{n} fix this") for n in range(1, 5)]
    model = ScriptedModel({"generator": drafts, "critic": critiques})
    with model:
        await reflection(model, MaxRounds(4)).run(task=TASK)
    gen, critic = model.calls("generator"), model.calls("critic")
    # The critic sees this turn alone; a revision continues the exchange that asked for the draft, with only
    # the latest draft as the generator's own reply.
    assert all(len(call.messages) == 2 for call in [gen[0], *critic])
    assert all([type(m).__name__ for m in call.messages[1:]] == ["UserMessage", "AssistantMessage", "UserMessage"]
               for call in gen[1:])  # fmt: skip
    round4 = gen[3].prompt_text
    assert "CHARLIE" in round4 and "issue3" in round4
    for old in ("ALPHA", "BRAVO", "issue1", "issue2"):
        assert old not in round4
        assert old not in critic[3].prompt_text
    # Equal-length drafts and issues: revision prompts are the same size in every round.
    assert count_words(gen[3].prompt_text) == count_words(gen[2].prompt_text) == count_words(gen[1].prompt_text)
    assert count_words(critic[3].prompt_text) == count_words(critic[2].prompt_text)


async def test_a_fresh_revision_is_shown_the_critiques_and_never_a_draft(critique, reflection):
    drafts = ["ALPHA body", "BRAVO body", "CHARLIE body"]
    critiques = [critique(40, "issue1 fix this", "shared issue"), critique(40, "issue2 fix this", "shared issue"),
                 critique(90)]  # fmt: skip
    model = ScriptedModel({"generator": drafts, "critic": critiques})
    with model:
        result = await reflection(model, ScoreThreshold(85) | MaxRounds(5), revision="fresh").run(task=TASK)
    assert (result.answer, result.scores) == ("CHARLIE body", [40, 40, 90])
    gen = model.calls("generator")
    # Each revision is one request (no draft as the generator's reply), with the task and every critique so far,
    # the latest draft's first and each point once.
    assert all(len(call.messages) == 2 for call in gen)
    round3 = gen[2].prompt_text
    assert TASK in round3 and "ALPHA" not in round3 and "BRAVO" not in round3
    points = [line[2:] for line in round3.splitlines() if line.startswith("- ")]
    assert points == ["issue2 fix this", "shared issue", "issue1 fix this"]


async def test_a_fresh_reflection_keeps_its_revision_through_its_config(critique, reflection):
    model = ScriptedModel({"generator": ["ALPHA body", "BRAVO body"], "critic": [critique(40, "issue1"), critique(90)]})
    with model:
        team = reflection(model, MaxRounds(2), revision="fresh")
        loaded = Reflection.load_component(team.dump_component())
        result = await loaded.run(task=TASK)
    assert isinstance(loaded, Reflection) and loaded.revision == "fresh"
    assert result.answer == "BRAVO body" and "ALPHA" not in model.calls("generator")[1].prompt_text


async def test_usage_per_agent_is_the_sum_of_scripted_word_counts(critique, reflection):
    good, final = critique(60, "fix the bug"), critique(90)
    critic = ["not json at all", good, final]
    model = ScriptedModel({"generator": ["one two three", "four five"], "critic": critic})
    with model:
        result = await reflection(model, MaxRounds(2)).run(task=TASK)
    gen_calls, critic_calls = model.calls("generator"), model.calls("critic")
    assert len(critic_calls) == 3  # the retry is paid for too
    assert result.usage["generator"].completion_tokens == 5
    assert result.usage["generator"].prompt_tokens == sum(count_words(c.prompt_text) for c in gen_calls)
    replies = ["not json at all", good.model_dump_json(), final.model_dump_json()]
    assert result.usage["critic"].completion_tokens == sum(count_words(r) for r in replies)
    assert result.usage["critic"].prompt_tokens == sum(count_words(c.prompt_text) for c in critic_calls)
    first_round = result.rounds[0].usage["critic"]
    assert first_round.prompt_tokens == sum(count_words(c.prompt_text) for c in critic_calls[:2])


async def test_no_progress_stops_when_the_generator_repeats_its_draft(critique, reflection):
    critic = [critique(50, "first issue"), critique(55, "second issue")]
    model = ScriptedModel({"generator": ["Same   answer", "same answer"], "critic": critic})
    with model:
        result = await reflection(model, NoProgress() | MaxRounds(5)).run(task=TASK)
    assert result.stop_reason == "no progress: draft unchanged for 1 round(s) (round 2)"
    assert len(result.rounds) == 2


async def test_a_stop_on_the_last_critique_still_records_its_round(critique, reflection):
    """The critique and the RoundCompleted it completes are one batch: no stop can split them."""
    from moot.conditions import WallClock
    from moot.messages import RoundCompleted

    ticks = iter([0.0, 10.0])  # the draft starts the clock; the critique arrives past the limit
    model = ScriptedModel({"generator": ["draft one"], "critic": [critique(40, "no hints")]})
    with model:
        team = reflection(model, WallClock(5, clock=lambda: next(ticks)) | MaxRounds(3))
        result = await team.run(task=TASK)
    rounds = [m for m in result.messages if isinstance(m, RoundCompleted)]
    assert result.stop_reason == "wall clock: 10.0s of 5s used"
    assert [(r.round, r.score) for r in rounds] == [(1, 40)]


def test_a_structured_reply_with_code_fences_inside_its_strings_parses_whole():
    from moot.roles._agent import extract_json

    reply = json.dumps({"reasoning": "use this:\n```python\ndef f(): {return 1}\n```", "score": 1})
    assert json.loads(extract_json(reply)) == json.loads(reply)
    assert json.loads(extract_json(f"Here:\n```json\n{reply}\n```")) == json.loads(reply)
