"""CodeDebate on scripted models and the real sandbox: what each expert saw in each round, the moves it made,
and the program the evidence picked."""

from __future__ import annotations

import pytest
from autogen_agentchat.base import Team

from moot.arbiters import UNOBSERVED, Candidate, Evidence, ProgramVote
from moot.conditions import MaxRounds
from moot.display import result_markdown
from moot.errors import ConfigError
from moot.roles import RoleAgent, role
from moot.teams import CodeDebate, CodeDebateResult
from moot.testing import ScriptedModel

EXPERTS = ("alice", "bob", "carol")
STUB = (
    "from typing import List\n\n\n"
    'def total(xs: List[int]) -> int:\n    """Sum.\n    >>> total([1, 2])\n    3\n    """\n'
)
TASK = f"Complete this function.\n\n```python\n{STUB}```"
TESTS = ("assert total([1, 2]) == 3", "assert total([]) == 0")
PROBES = ("total([1, 2])", "total([])")
HIDDEN = "assert total([5, 5, 5]) == 15"

RIGHT = "```python\ndef total(xs):\n    return sum(xs)\n```"
RIGHT_LOOP = "```python\ndef total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n```"
WRONG_EMPTY = "```python\ndef total(xs):\n    return xs[0] + sum(xs[1:])\n```"  # IndexError on []
WRONG_ALL = "```python\ndef total(xs):\n    return -1\n```"  # fails both


def make_team(model: ScriptedModel, rounds: int = 2, **options) -> CodeDebate:
    experts = [RoleAgent(role("generator"), model.spec, name=name) for name in EXPERTS]
    return CodeDebate(
        experts, TESTS, stub=STUB, entry_point="total", probe_calls=PROBES, stop=MaxRounds(rounds), **options
    )


async def run(script: dict, rounds: int = 2) -> tuple[CodeDebateResult, ScriptedModel]:
    model = ScriptedModel(script)
    with model:
        result = await make_team(model, rounds).run(task=TASK)
    assert isinstance(result, CodeDebateResult)
    return result, model


async def test_round_one_is_the_task_alone_as_one_generator_call_sees_it():
    result, model = await run({name: [RIGHT] for name in EXPERTS}, rounds=1)
    for name in EXPERTS:
        (call,) = model.calls(name)
        assert [m.content for m in call.messages] == [role("generator").system_prompt, TASK]
        assert call.json_output is None
    assert [c.id for c in result.candidates] == ["A", "B", "C"]
    assert all(c.evidence.all_pass for c in result.candidates)


async def test_candidates_that_all_pass_stop_at_consensus_and_the_first_is_chosen():
    from moot.conditions import Consensus

    model = ScriptedModel({"alice": [RIGHT], "bob": [RIGHT_LOOP], "carol": [RIGHT]})
    with model:
        team = make_team(model)
        team._stop = Consensus() | MaxRounds(3)
        result = await team.run(task=TASK)
    assert result.stop_reason.startswith("consensus")
    assert len(result.rounds) == 1
    assert result.ruling.candidate == "A"
    assert result.ruling.votes == {"A": 3, "B": 3, "C": 3}  # same outputs on the probe calls
    assert result.answer == "def total(xs):\n    return sum(xs)\n"


async def test_once_a_candidate_passes_every_visible_test_no_later_round_runs():
    # Only alice's program passes both visible tests: a fix could at best tie it on the evidence, so round 2 would
    # cost calls and could change nothing. No second call is scripted: one would fail the test.
    result, model = await run({"alice": [RIGHT], "bob": [WRONG_EMPTY], "carol": [WRONG_ALL]}, rounds=3)
    assert result.stop_reason == "settled: A passes every visible test (round 1)"
    assert len(result.rounds) == 1 and result.ruling.candidate == "A"
    assert [len(model.calls(name)) for name in EXPERTS] == [1, 1, 1]
    assert result.metrics.first_round_vote == "A" and result.metrics.fixes == 0


async def test_when_every_candidate_fails_each_expert_writes_a_new_program_from_the_failures_never_the_code():
    script = {"alice": [WRONG_EMPTY, RIGHT_LOOP], "bob": [WRONG_ALL, WRONG_ALL], "carol": [WRONG_ALL, WRONG_EMPTY]}
    result, model = await run(script)
    fix_prompt = model.calls("alice")[1].messages[-1].content
    failures = [line for line in fix_prompt.splitlines() if line.startswith("- test ")]
    assert failures[0].startswith("- test `total([]) == 0` raised IndexError")  # its own failure first
    assert len(failures) == len(set(failures)) == 3  # A's one failure, then B's two (C fails as B does: shown once)
    assert "xs[0] + sum(xs[1:])" not in fix_prompt and "return -1" not in fix_prompt  # no program, only what failed
    assert model.calls("alice")[1].json_output is None
    fixed = next(c for c in result.candidates if c.id == "A2")
    assert fixed.origin == "fixed" and fixed.based_on == "A" and fixed.evidence.all_pass
    moves = {name: (c.action, c.holds, c.fixed) for name, c in result.rounds[1].choices.items()}
    # bob's fix passes no more than B did: rejected; carol's passes 1 where C passed 0: adopted
    assert moves == {"alice": ("fix", "A2", "A2"), "bob": ("keep", "B", "B2"), "carol": ("fix", "C2", "C2")}
    assert result.ruling.candidate == "A2"
    assert result.metrics.fixes == 3 and result.metrics.fixes_adopted == 2
    assert result.metrics.chosen_round == 2 and result.metrics.first_round_vote == "A"
    assert result.metrics.held_per_round == [["A", "B", "C"], ["A2", "B", "C2"]]
    shown = result_markdown(result)  # a notebook and moot run show the same blocks
    assert shown.startswith("#### Code debate · 2 round(s)")
    assert "| A2 | alice | 2 | fixed from A | passes all 2 visible tests |" in shown
    assert "| alice | wrote A | fix A2 |" in shown and "| bob | wrote B | keep B (B2 rejected) |" in shown
    assert "**chosen:** A2" in shown
    assert shown.split("chosen program", 1)[1].split("```")[1].strip() == result.answer.strip()


async def test_a_fix_that_passes_no_more_tests_is_not_adopted_and_cannot_win_the_ruling():
    # A2 passes as many tests as A (one): not adopted, so out of the ruling, although it comes from the same expert.
    script = {"alice": [WRONG_EMPTY, WRONG_EMPTY], "bob": [WRONG_ALL, WRONG_ALL], "carol": [WRONG_ALL, WRONG_ALL]}
    result, _ = await run(script)
    assert result.ruling.candidate == "A" and "A2" not in result.ruling.votes
    assert result.metrics.fixes_adopted == 0


async def test_the_team_round_trips_through_its_component_config():
    model = ScriptedModel({name: [RIGHT] for name in EXPERTS})
    with model:
        team = make_team(model, rounds=1)
        loaded = Team.load_component(team.dump_component())
        assert isinstance(loaded, CodeDebate)
        assert loaded.tests == list(TESTS) and loaded.probe_calls == list(PROBES) and loaded.stub == STUB
        result = await loaded.run(task=TASK)
    assert result.ruling.candidate == "A"


async def test_save_and_load_state_continue_the_same_debate():
    script = {"alice": [WRONG_EMPTY, RIGHT], "bob": [WRONG_ALL, WRONG_ALL], "carol": [WRONG_ALL, WRONG_ALL]}
    model = ScriptedModel(script)
    with model:
        first = make_team(model, rounds=1)
        await first.run(task=TASK)
        state = await first.save_state()
        second = make_team(model, rounds=2)
        await second.load_state(state)
        assert [c.id for c in second.state.candidates.values()] == ["A", "B", "C"]
        result = await second.run()
    assert len(result.rounds) == 2 and result.ruling.candidate == "A2"


def test_a_debate_needs_two_distinct_experts_and_valid_tests():
    with ScriptedModel({"solo": [], "other": []}) as model:
        agent = RoleAgent(role("generator"), model.spec, name="solo")
        with pytest.raises(ConfigError, match="2 to 26 experts, got 1"):
            CodeDebate([agent], TESTS)
        with pytest.raises(ConfigError, match="test 1 is not valid Python"):
            CodeDebate([agent, RoleAgent(role("generator"), model.spec, name="other")], ["assert ("])


def _candidate(cid: str, passed: int, behaviour: str, round_: int = 1) -> Candidate:
    return Candidate(
        id=cid, author=f"e{cid}", round=round_, code="", evidence=Evidence(passed=passed, total=3, behaviour=behaviour)
    )


def test_the_program_vote_ranks_evidence_then_votes_then_order():
    a, b, c = _candidate("A", 2, "x"), _candidate("B", 3, "y"), _candidate("C", 3, "z")
    assert ProgramVote().rule([a, b, c], {"e1": "A", "e2": "B", "e3": "C"}).candidate == "B"  # first of the best
    assert ProgramVote().rule([a, b, c], {"e1": "C", "e2": "B", "e3": "C"}).candidate == "C"  # more votes
    d = _candidate("D", 3, "y", round_=2)
    ruling = ProgramVote().rule([a, b, c, d], {"e1": "C", "e2": "B", "e3": "D"})
    assert ruling.candidate == "B" and ruling.votes == {"A": 0, "B": 2, "C": 1, "D": 2}  # B and D behave alike
    with pytest.raises(ValueError):
        ProgramVote().rule([], {})


def test_a_models_own_checks_at_import_time_are_not_part_of_its_program():
    from moot.sandbox import assemble_program

    reply = (
        "```python\ndef total(xs):\n    '''Sum.'''\n    return sum(xs)\n\n"
        "def check():\n    assert total([1]) == 2\n\ncheck()\nassert total([]) == 5\nprint(total([1]))\n"
        "if __name__ == '__main__':\n    check()\n```"
    )
    program = assemble_program(STUB, reply, "total")
    namespace: dict = {}
    exec(compile(program, "candidate.py", "exec"), namespace)  # would raise if the model's checks ran
    assert namespace["total"]([1, 2]) == 3 and "def check" in program
    plain = "def total(xs):\n    # keep my comment\n    return sum(xs)\n"
    assert assemble_program("", plain, "total") == "\n\n\n" + plain  # nothing to strip: layout kept


@pytest.mark.parametrize("hidden", [UNOBSERVED, ""])
def test_programs_whose_behaviour_was_not_observed_never_vote_together(hidden):
    """Two different wrong programs that flood the probe's line out (no output) are two behaviours, not one
    group of two: they cannot out-vote a right one that passes as many visible tests."""
    right = _candidate("A", 2, '["3", "0"]')
    flood_1, flood_2 = _candidate("B", 2, hidden), _candidate("C", 2, hidden)
    ruling = ProgramVote().rule([right, flood_1, flood_2], {"e1": "A", "e2": "B", "e3": "C"})
    assert ruling.candidate == "A" and ruling.votes == {"A": 1, "B": 1, "C": 1}
    observed = _candidate("D", 2, '["3", "0"]')  # the control: equal observed outputs still vote together
    assert ProgramVote().rule([flood_1, right, observed], {"e1": "B", "e2": "A", "e3": "D"}).votes["A"] == 2
