"""The run store: what a run records, resume in code, migrations, and the bad-input cases."""

from __future__ import annotations

import sqlite3

import pytest
from typer.testing import CliRunner

from moot.cli import app
from moot.conditions import MaxRounds
from moot.errors import ConfigError
from moot.store import RunStatus, RunStore
from moot.store._migrations import MIGRATIONS
from moot.testing import ScriptedModel
from tests.conftest import make_critique, make_debate, make_position, make_rebuttal, make_reflection, make_verdict

TASK = "Write add(a, b)."


def two_rounds(critic_tail: list[object]) -> ScriptedModel:
    return ScriptedModel(
        {"generator": ["draft one", "draft two"], "critic": [make_critique(50, "no hints"), *critic_tail]}
    )


async def test_a_run_records_every_turn_its_checkpoint_and_result():
    model = two_rounds([make_critique(70, "no tests")])
    with model:
        team = make_reflection(model, MaxRounds(2))
        result = await team.run(task=TASK)
    store = RunStore.default()
    record = store.get(team.run_id)
    assert (record.team, record.task, record.status, record.stop_reason) == (
        "reflection",
        TASK,
        "finished",
        "max rounds: 2 of 2 rounds done",
    )
    assert record.result["best"]["draft"] == "draft two" and "messages" not in record.result
    turns = store.turns(team.run_id)
    assert [t.seq for t in turns] == list(range(len(result.messages)))
    assert [t.step_id for t in turns] == [f"{team.run_id}:{i}" for i in range(len(turns))]
    assert [t.kind for t in turns] == ["TextMessage", "draft", "StructuredMessage[Critique]", "RoundCompleted"] * 1 + [
        "draft",
        "StructuredMessage[Critique]",
        "RoundCompleted",
    ]
    assert record.prompt_tokens == sum(u.prompt_tokens for u in result.usage.values())
    seq, state = store.checkpoint(team.run_id)
    assert seq == len(turns) and state["type"] == "ReflectionState" and state["messages"] == []


async def test_a_crashed_run_resumes_in_code_without_repeating_or_skipping_a_turn():
    boom = RuntimeError("the process died mid-critique")
    crashing = two_rounds([boom])
    with pytest.raises(RuntimeError), crashing:
        team = make_reflection(crashing, MaxRounds(2))
        await team.run(task=TASK)
    run_id = team.run_id
    assert RunStore.default().get(run_id).status == "failed"

    rest = ScriptedModel({"generator": [], "critic": [make_critique(70, "no tests")]})
    with rest:
        fresh = make_reflection(rest, MaxRounds(2))
        result = await fresh.resume(run_id)
    assert result.scores == [50, 70]  # round 2's critique was redone, nothing else
    assert len(rest.calls("critic")) == 1 and "draft two" in rest.calls("critic")[0].prompt_text
    record = RunStore.default().get(run_id)
    assert (record.status, record.turns) == ("finished", 7)


async def test_a_crashed_debate_resumes_from_the_store_with_its_rounds_rebuilt_from_the_turns():
    def script(ops_round_2: object) -> dict[str, list[object]]:
        return {
            "architect": [make_position("split"), make_rebuttal("split", "still split")],
            "ops": [make_position("keep"), ops_round_2],
            "business": [make_position("defer"), make_rebuttal("keep", "ops convinced me")],
            "arbiter": [make_verdict("split")],
        }

    straight = ScriptedModel(script(make_rebuttal("split", "architect is right")))
    with straight:
        expected = await make_debate(straight, MaxRounds(2)).run(task=TASK)
    crashing = ScriptedModel(script(RuntimeError("the process died mid-round")))
    with pytest.raises(RuntimeError), crashing:  # dies at ops' second turn: round 1 and architect's round 2 stored
        team = make_debate(crashing, MaxRounds(2))
        await team.run(task=TASK)
    _, state = RunStore.default().checkpoint(team.run_id)
    assert state["type"] == "DebateState" and "rounds" not in state  # the checkpoint holds no positions

    rest = ScriptedModel({
        "architect": [], "ops": [make_rebuttal("split", "architect is right")],
        "business": [make_rebuttal("keep", "ops convinced me")], "arbiter": [make_verdict("split")],
    })  # fmt: skip
    with rest:
        result = await make_debate(rest, MaxRounds(2)).resume(team.run_id)
    outline = [[(n, p.answer) for n, p in r.positions.items()] for r in result.rounds]
    assert outline == [[(n, p.answer) for n, p in r.positions.items()] for r in expected.rounds]
    assert result.usage_per_round[0] == expected.usage_per_round[0]  # round 1's tokens, rebuilt from stored turns
    assert result.metrics == expected.metrics and result.answer == "split"
    assert "keep" in rest.calls("ops")[0].prompt_text  # ops saw its own stored round-1 position


async def test_a_run_can_opt_out_of_recording():
    model = two_rounds([make_critique(70, "x fix")])
    with model:
        team = make_reflection(model, MaxRounds(2))
        team.record = False
        await team.run(task=TASK)
    assert RunStore.default().list() == []


def test_a_status_is_stored_as_its_plain_text_and_read_back_as_the_enum(tmp_path):
    path = tmp_path / "runs.sqlite3"
    store = RunStore(path)
    store.create_run("r1", team="reflection", task=TASK)
    store.finish("r1", RunStatus.PARTIAL, "a fault cut it short", None)
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT status, typeof(status) FROM runs").fetchall() == [("partial", "text")]
    raw.execute("UPDATE runs SET status = 'suspended'")  # as a store written before the enum has it
    raw.commit()
    record = RunStore.reader(path).get("r1")
    assert record.status is RunStatus.SUSPENDED and record.model_dump(mode="json")["status"] == "suspended"


def test_migrations_are_named_applied_once_and_recorded(tmp_path):
    path = tmp_path / "runs.sqlite3"
    RunStore(path).close()
    RunStore(path).close()
    names = [row[0] for row in sqlite3.connect(path).execute("SELECT name FROM migrations")]
    assert names == [name for name, _ in MIGRATIONS]


def test_unknown_run_names_recent_runs(tmp_path):
    with pytest.raises(ConfigError, match=r"^unknown run 'nope'; recent runs: none yet$"):
        RunStore(tmp_path / "runs.sqlite3").get("nope")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["resume", "nope"], "moot: error: unknown run 'nope'; recent runs: none yet"),
        (["resume"], "moot: error: give a RUN_ID or --last (not both); moot runs lists run ids"),
        (["resume", "--last"], "moot: error: no unfinished run to resume; moot runs lists runs"),
    ],
)
def test_resume_bad_input_is_one_line_and_exit_code_2(args, message):
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, result.stderr.strip(), result.stdout) == (2, message, "")


def test_an_unreadable_store_is_refused_before_anything_runs(tmp_path):
    not_a_db = tmp_path / "runs.sqlite3"
    not_a_db.write_text("this is not sqlite")
    result = CliRunner().invoke(app, ["runs", "--store", str(not_a_db)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"moot: error: cannot read run store {not_a_db}: file is not a database")
    assert not_a_db.read_text() == "this is not sqlite"  # nothing half-written


async def test_the_store_holds_key_variable_names_never_keys(monkeypatch, tmp_path):
    from moot.store import RunStore as Store

    monkeypatch.setenv("MY_KEY", "sk-very-secret")
    store = Store(tmp_path / "runs.sqlite3")
    store.create_run("r1", team="t", task="x", models={"critic": "openai:gpt-4o-mini?api_key_env=MY_KEY"})
    raw = (tmp_path / "runs.sqlite3").read_bytes() + (tmp_path / "runs.sqlite3-wal").read_bytes()
    assert b"MY_KEY" in raw and b"sk-very-secret" not in raw
