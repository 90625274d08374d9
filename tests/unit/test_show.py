"""Run inspection: `moot runs --json`, `moot show` (text, --json, --prompts, --plot) on scripted runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moot.cli import app
from moot.conditions import Consensus, MaxRounds, ScoreThreshold
from moot.display import SHOW_SCHEMA, run_view
from moot.store import RunStore
from moot.testing import ScriptedModel
from moot.tracing import default_trace_dir
from tests.conftest import make_critique, make_debate, make_position, make_rebuttal, make_reflection, make_verdict

ROOT = Path(__file__).resolve().parents[2]
TASK = "Write add(a, b)."


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "140"})
    return result.exit_code, result.stdout, result.stderr


async def reflection_run() -> tuple[str, ScriptedModel, object]:
    model = ScriptedModel(
        {
            "generator": ["def add(a, b): ...", "def add(a: int, b: int) -> int: ..."],
            "critic": [make_critique(55, "no type hints"), make_critique(91)],
        }
    )
    with model:
        team = make_reflection(model, ScoreThreshold(85) | MaxRounds(4))
        result = await team.run(task=TASK)
    return team.run_id, model, result


async def debate_run() -> tuple[str, object]:
    model = ScriptedModel(
        {
            "architect": [make_position("split"), make_rebuttal("keep")],
            "ops": [make_position("keep"), make_rebuttal("keep")],
            "business": [make_position("keep"), make_rebuttal("keep")],
            "arbiter": [make_verdict("keep")],
        }
    )
    with model:
        team = make_debate(model, Consensus() | MaxRounds(3))
        result = await team.run(task="Split billing out of the monolith?")
    return team.run_id, result


# ------------------------------------------------------------------ moot runs
async def test_runs_json_lists_runs_with_rounds_and_tokens():
    reflection_id, _, result = await reflection_run()
    debate_id, _ = await debate_run()
    code, out, _ = invoke("runs", "--json")
    assert code == 0
    listed = json.loads(out)
    assert [r["id"] for r in listed] == [debate_id, reflection_id]
    first = listed[1]
    assert {k: first[k] for k in ("team", "status", "stop_reason", "rounds", "turns")} == {
        "team": "reflection",
        "status": "finished",
        "stop_reason": "quality threshold: score 91 >= 85 in round 2",
        "rounds": 2,
        "turns": 7,
    }
    used = sum(u.prompt_tokens + u.completion_tokens for u in result.usage.values())
    assert first["total_tokens"] == first["prompt_tokens"] + first["completion_tokens"] == used
    assert "result" not in first  # moot show --json has it

    code, out, _ = invoke("runs")
    assert code == 0 and "rounds" in out and reflection_id[:8] in out


# ------------------------------------------------------------------ moot show
async def test_show_prints_transcript_rounds_stop_reason_and_tokens_per_round():
    run_id, _, result = await reflection_run()
    code, out, err = invoke("show", run_id)
    assert (code, err) == (0, "")
    for expected in (
        f"run {run_id}",
        "team: reflection",
        "╭─ task",
        "╭─ generator",
        "╭─ critic",
        "score 55  verdict revise",
        "- no type hints",
        "round 1 completed, score 55",
        "stop reason: quality threshold: score 91 >= 85 in round 2",
        "tokens per round",
    ):
        assert expected in out, expected
    rounds = out[out.index("rounds") :]
    assert "critic: revise (55)" in rounds and "critic: accept (91)" in rounds
    generator = result.rounds[0].usage["generator"]
    assert f"1 │ generator │ {generator.prompt_tokens:>6} │ {generator.completion_tokens:>10} │" in out


async def test_show_json_has_a_stable_schema_with_tokens_per_agent_per_round():
    run_id, _, result = await reflection_run()
    code, out, _ = invoke("show", run_id, "--json")
    assert code == 0
    shown = json.loads(out)
    assert list(shown) == ["schema", "run", "turns", "rounds", "closing_tokens", "verdict"]
    assert shown["schema"] == SHOW_SCHEMA
    assert shown["run"]["id"] == run_id and shown["run"]["status"] == "finished"
    assert [(t["kind"], t["source"], t["round"]) for t in shown["turns"]] == [
        ("task", "user", None),
        ("draft", "generator", 1),
        ("critique", "critic", 1),
        ("round", "reflection", 1),
        ("draft", "generator", 2),
        ("critique", "critic", 2),
        ("round", "reflection", 2),
    ]
    assert [(r["round"], r["complete"], r["score"], r["verdicts"]) for r in shown["rounds"]] == [
        (1, True, 55, {"critic": "revise"}),
        (2, True, 91, {"critic": "accept"}),
    ]
    for shown_round, kept in zip(shown["rounds"], result.rounds, strict=True):
        first_fields = ("prompt_tokens", "completion_tokens", "total_tokens")  # the schema only ever grows
        assert {agent: {k: t[k] for k in first_fields} for agent, t in shown_round["tokens"].items()} == {
            agent: {
                "prompt_tokens": u.prompt_tokens,
                "completion_tokens": u.completion_tokens,
                "total_tokens": u.prompt_tokens + u.completion_tokens,
            }
            for agent, u in kept.usage.items()
        }
        for tokens in shown_round["tokens"].values():  # each agent's count is the run's one Meter
            assert tokens["calls"] == 1 and tokens["billed_calls"] == 1 and tokens["cost_usd"] == 0.0
    assert shown["turns"][2]["data"]["issues"] == ["no type hints"]
    assert "payload" not in shown["turns"][0]


async def test_show_a_debate_gives_answers_agreement_and_the_verdict():
    run_id, result = await debate_run()
    view = run_view(RunStore.default(), run_id)
    assert [(r.round, r.answers, round(r.agreement, 2)) for r in view.rounds] == [
        (1, {"architect": "split", "ops": "keep", "business": "keep"}, 0.67),
        (2, {"architect": "keep", "ops": "keep", "business": "keep"}, 1.0),
    ]
    assert view.verdict["decision"] == "keep" and view.verdict["by"] == "arbiter"
    arbiter = result.usage["arbiter"]
    assert view.closing_tokens["arbiter"].total_tokens == arbiter.prompt_tokens + arbiter.completion_tokens
    code, out, _ = invoke("show", run_id)
    assert code == 0
    assert "architect: split, ops: keep, business: keep" in out
    assert "verdict by arbiter: keep" in out and "stop reason: consensus" in out
    assert "verdict │ arbiter" in out  # the ruling's tokens, after the rounds


async def test_a_crashed_run_shows_its_open_round_and_error():
    model = ScriptedModel({"generator": ["draft one"], "critic": [RuntimeError("the critic's host went away")]})
    with pytest.raises(RuntimeError), model:
        team = make_reflection(model, MaxRounds(2))
        await team.run(task=TASK)
    view = run_view(RunStore.default(), team.run_id)
    assert [(r.round, r.complete, r.score) for r in view.rounds] == [(1, False, None)]
    code, out, _ = invoke("show", team.run_id)
    assert code == 0
    assert "1 (open)" in out and "status: failed" in out and "the critic's host went away" in out


# --------------------------------------------------------------- --prompts
async def test_prompts_show_what_each_model_call_saw_grouped_under_its_turn():
    run_id, model, _ = await reflection_run()
    code, out, _ = invoke("show", run_id, "--prompts", "--json")
    assert code == 0
    shown = json.loads(out)
    assert shown["schema"] == "moot.prompts/1" and shown["run_id"] == run_id
    assert [(t["step_id"], t["agent"], t["round"], len(t["calls"])) for t in shown["turns"]] == [
        (f"{run_id}:1", "generator", 1, 1),
        (f"{run_id}:2", "critic", 1, 1),
        (f"{run_id}:4", "generator", 2, 1),
        (f"{run_id}:5", "critic", 2, 1),
    ]
    seen = model.calls("critic")[1]
    call = shown["turns"][3]["calls"][0]
    assert call["messages"] == [m.model_dump(mode="json") for m in seen.messages]  # exactly what the model saw
    assert json.loads(call["output"])["score"] == 91
    assert (call["prompt_tokens"], call["completion_tokens"]) > (0, 0)

    code, out, _ = invoke("show", run_id, "--prompts")
    assert code == 0
    assert "turn 5 · round 2 · critic · 1 call(s)" in out
    assert "You are a strict, fair reviewer" in out and "Draft to review:" in out
    assert "╭─ reply" in out


async def test_prompts_of_a_run_without_a_trace_is_one_line_exit_2():
    run_id, _, _ = await reflection_run()
    (default_trace_dir() / f"{run_id}.jsonl").unlink()
    code, out, err = invoke("show", run_id, "--prompts")
    assert (code, out) == (2, "")
    assert err.startswith(f"moot: error: no trace for run {run_id} (looked in ")
    assert err.count("\n") == 1


def test_a_run_with_store_writes_its_trace_next_to_that_store(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("MOOT_TRACES", raising=False)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"generator": ["def f(): ..."], "critic": [make_critique(90).model_dump()]}))
    store = tmp_path / "elsewhere" / "runs.sqlite3"
    store.parent.mkdir()  # (moot run refuses a store whose folder does not exist)
    code, _, _ = invoke("run", "code_review", "-m", f"scripted:{script}", "--store", str(store))
    assert code == 0
    (run,) = json.loads(invoke("runs", "--json", "--store", str(store))[1])
    assert (store.parent / "traces" / f"{run['id']}.jsonl").exists()
    code, out, _ = invoke("show", run["id"], "--prompts", "--store", str(store))
    assert code == 0 and "turn 2 · round 1 · critic" in out


# ------------------------------------------------------------------ --plot
async def test_plot_saves_a_png_for_reflection_and_debate(tmp_path, monkeypatch):
    reflection_id, _, _ = await reflection_run()
    debate_id, _ = await debate_run()
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke("show", reflection_id, "--plot")
    assert code == 0 and f"to {reflection_id}.png" in out
    code, _, _ = invoke("show", debate_id, "--plot", str(tmp_path / "charts" / "debate.png"))
    assert code == 0
    for png in (tmp_path / f"{reflection_id}.png", tmp_path / "charts" / "debate.png"):
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


async def test_the_plot_shows_score_or_agreement_per_round():
    from moot.display.plots import plot_run, series_from_view

    reflection_id, _, _ = await reflection_run()
    debate_id, _ = await debate_run()
    scores = series_from_view(run_view(RunStore.default(), reflection_id))
    agreement = series_from_view(run_view(RunStore.default(), debate_id))
    assert (scores.rounds, scores.score, scores.has_agreement) == ([1, 2], [55, 91], False)
    assert [round(a, 2) for a in agreement.agreement] == [0.67, 1.0] and not agreement.has_score
    assert list(agreement.closing_tokens) == ["arbiter"]
    titles = [ax.get_title(loc="left") for ax in plot_run(run_view(RunStore.default(), debate_id)).axes]
    assert titles == ["agreement per round", "tokens per round, per agent"]


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "nope"], "moot: error: unknown run 'nope'; recent runs: none yet"),
        (["show", "nope", "--prompts"], "moot: error: unknown run 'nope'; recent runs: none yet"),
        (
            ["show", "nope", "x.png"],
            "moot: error: unexpected argument 'x.png': a PATH is only taken by --plot (moot show RUN_ID --plot PATH)",
        ),
    ],
)
def test_show_bad_input_is_one_line_and_exit_code_2(args, message):
    code, out, err = invoke(*args)
    assert (code, err.strip(), out) == (2, message, "")
