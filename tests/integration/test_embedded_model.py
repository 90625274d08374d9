"""The real embedded model (llama.cpp + Qwen2.5-Coder-0.5B), offline, end to end.

These run in CI: they are the proof that the README's first command works.
They assert properties that hold for any decent output of a 0.5B model
(parsed critique, capped tokens, determinism at temperature 0), never exact text.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from autogen_core.models import UserMessage

from moot import ModelSpec, Reflection, RoleAgent, role
from moot.conditions import MaxRounds
from moot.roles import Critique

pytestmark = pytest.mark.embedded
ROOT = Path(__file__).resolve().parents[2]
PROMPT = [UserMessage(content="Name three prime numbers.", source="user")]


async def test_per_call_sampling_settings_reach_llama_cpp():
    capped = ModelSpec.parse("local@0?max_tokens=8&seed=7").client()
    first = await capped.create(PROMPT)
    second = await capped.create(PROMPT)
    assert 0 < first.usage.completion_tokens <= 8  # the cap was applied by llama.cpp
    assert first.content == second.content  # temperature 0 reached it too: greedy, repeatable


async def test_concurrent_calls_on_one_model_are_serialised():
    spec = ModelSpec.parse("local@0?max_tokens=16")
    a, b = spec.client(), spec.client()
    results = await asyncio.gather(a.create(PROMPT), b.create(PROMPT))
    assert results[0].content == results[1].content  # same greedy answer, no interleaved state


async def test_a_short_reflection_produces_a_draft_and_a_parsed_critique():
    spec = ModelSpec.parse("local?max_tokens=384&seed=1")
    team = Reflection(RoleAgent(role("generator"), spec), RoleAgent(role("critic"), spec), stop=MaxRounds(1))
    result = await team.run(task="Write a Python function is_even(n: int) -> bool.")
    assert result.stop_reason in ("max rounds: 1 of 1 rounds done",) or result.partial
    assert result.latest_draft and "def is_even" in result.latest_draft
    if not result.partial:
        critique = result.rounds[0].critiques[0]
        assert isinstance(critique, Critique) and 0 <= critique.score <= 100
    assert result.usage["generator"].completion_tokens > 0
    assert result.usage["critic"].prompt_tokens > 0


def test_moot_run_code_review_on_the_embedded_model():
    """The README's first command, minus the install: a real reflection transcript, offline."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "100"}
    proc = subprocess.run(
        [sys.executable, "-m", "moot", "run", "code_review"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "moot running code_review" in proc.stdout
    assert "stop reason:" in proc.stdout
    assert "def slugify" in proc.stdout
    assert "score " in proc.stdout  # at least one critique was parsed and shown


def test_moot_run_architecture_review_debates_on_the_embedded_model(tmp_path):
    """The README's first command, minus the install: a real debate with a verdict, offline."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "400", "MOOT_STORE": str(tmp_path / "runs.sqlite3")}
    proc = subprocess.run(
        [sys.executable, "-m", "moot", "run", "architecture_review"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "run id:" in out
    for expert in ("architect", "ops", "business"):
        assert f"─ {expert} " in out  # each expert's position panel was printed
    assert "round 1 completed" in out
    assert "positions per round" in out
    assert re.search(r"verdict by (arbiter|majority_vote) \(positions shown as [a-z, ]+\): (split|keep|defer)", out), (
        out[-1500:]
    )
    # A later round (when the experts did not agree at once) answers a claim of another, named expert.
    claims = re.findall(r"│ on ([a-z]+): ", out)
    assert set(claims) <= {"architect", "ops", "business"}, out[-3000:]
    assert bool(claims) == ("round 2 completed" in out), out[-3000:]


async def test_a_rebuttal_round_on_the_embedded_model_is_mechanically_coherent():
    """Two rounds forced: every rebuttal answers a named other expert's claim, arguments are statements, and no
    text the length caps shortened ends in the middle of a sentence when it had a sentence end to cut back to
    (``moot.roles._fit``: one long sentence is left whole, for validation to judge). Fresh embedded replies
    differ between processes, so this checks the guarantee, not one reply."""
    from moot.arbiters import MajorityVote
    from moot.roles import Opening, Position, Rebuttal
    from moot.teams import Debate

    def cap(schema, field: str) -> int:
        return next(m.max_length for m in schema.model_fields[field].metadata if getattr(m, "max_length", None))

    experts = ("architect", "ops")
    spec = ModelSpec.parse("local@0.7?seed=3")
    team = Debate([RoleAgent(role(name), spec) for name in experts], MajorityVote(), stop=MaxRounds(2))
    team.record = False
    task = (
        "Decision: should our 8-engineer team split the billing module out of the monolith now? Billing shares "
        "6 tables with orders and 3 of 5 incidents last quarter started elsewhere and took billing down."
    )
    result = await team.run(task=task)
    assert [r.round for r in result.rounds] == [1, 2], result.stop_reason
    fields = set(Position.model_fields)
    for record in result.rounds:
        for name, position in record.positions.items():
            for argument in position.key_arguments:
                assert len(argument.split()) >= 2 and argument.strip().lower() not in fields, (name, argument)
            schema = Opening if record.round == 1 else Rebuttal
            shown = [(position.reasoning, cap(schema, "reasoning"))]
            shown += [(position.response or "", cap(Rebuttal, "response"))] if record.round > 1 else []
            for text, limit in shown:  # a cut goes back to a sentence end, where the text has one to go back to
                cut_mid_sentence = len(text) >= limit and text.rstrip()[-1] not in ".!?)"
                assert not (cut_mid_sentence and re.search(r"[.!?]\s", text)), (name, text)
    for name, position in result.rounds[1].positions.items():
        assert position.responds_to in set(experts) - {name}, (name, position.claim)


def builtin_schemas() -> list[tuple[str, type, str]]:
    """Every schema moot asks the embedded model for, each with a request a role would send."""
    from pydantic import BaseModel, Field

    from moot.arbiters import Verdict
    from moot.harness.arms._prompts import solver
    from moot.roles import NUMBER, Opening, Plan, Position, Rebuttal, StepResult
    from moot.roles._plan import plan_type, tool_call_type
    from moot.roles._position import with_choices, with_pattern

    class WriteArgs(BaseModel):
        path: str = Field(max_length=100)
        content: str = Field(max_length=2000)

    draft = "def is_even(n):\n    return n % 2 == 1\n"
    debate = "Task:\nShould a 3-person startup adopt microservices now? Answer yes or no.\n\nGive your position."
    return [
        ("critic", Critique, f"Task:\nWrite is_even(n: int) -> bool.\n\nDraft to review:\n{draft}"),
        ("architect", Opening, debate),
        ("architect", Position, debate),  # an expert outside a debate, e.g. in a user's group chat
        ("ops", with_choices(Opening, "answer", ("yes", "no")), debate),
        ("ops", with_pattern(Opening, "answer", NUMBER), "Task:\nWhat is 205 - 838 + 505?\n\nGive your position."),
        (
            "business",
            with_choices(with_pattern(Rebuttal, "answer", NUMBER), "claim", ("ops: 205 - 838 is -633",)),
            "Task:\nWhat is 205 - 838 + 505?\n\nops: -128\n- 205 - 838 is -633",
        ),
        (
            "business",
            with_choices(
                with_choices(Rebuttal, "answer", ("yes", "no")),
                "claim",
                ("ops: one deployable is simpler to run for three people", "architect: boundaries help later"),
            ),
            debate + "\n\nops: no\n- one deployable is simpler to run for three people\narchitect: yes\n"
            "- boundaries help later",
        ),
        ("arbiter", Verdict, debate + "\n\nops: no (0.8)\n- one deployable\narchitect: yes (0.6)\n- boundaries"),
        ("arbiter", with_choices(Verdict, "decision", ("yes", "no")), debate + "\n\nops: no (0.8)\n- one deployable"),
        ("planner", Plan, "Task:\nWrite hello.py that prints hi, then run it.\n\nTools:\n- write_file\n- run_python"),
        ("planner", plan_type(("write_file", "run_python")), "Task:\nWrite hello.py that prints hi, then run it."),
        ("executor", tool_call_type((("write_file", WriteArgs),)), "Step 1: write hello.py printing hi (write_file)."),
        ("executor", StepResult, "Step 1: print hi. You called run_python; its output: hi\n\nDid this step succeed?"),
        ("solver", solver((), NUMBER).output_type, "State the final answer: 205 - 838 + 505 ="),  # numeric suites
    ]


def test_every_builtin_schema_compiles_and_parses_on_the_fast_path():
    """With the default grammar backend (llguidance), every schema compiles whole (no bound dropped) and the real
    model's reply parses."""
    from moot.embedded import model_path, shared_engine
    from moot.models._reply_schema import clamped_schema, grammar_schema
    from moot.roles._agent import parse_structured

    engine = shared_engine(model_path())
    assert engine.settings.grammar == "llguidance"
    for name, output, request in builtin_schemas():
        messages = RoleAgent(role(name), ModelSpec.parse("local")).chat_messages(request, output)
        schema = grammar_schema(output, engine.grammar_compiles)
        assert schema == clamped_schema(output), f"{output.__name__}: the grammar dropped bounds"
        reply = engine.create_chat_completion(
            messages, max_tokens=1024, temperature=0.0, response_format={"type": "json_object", "schema": schema}
        )
        choice = reply["choices"][0]
        assert choice["finish_reason"] == "stop", (output.__name__, choice["message"]["content"][-300:])
        assert isinstance(parse_structured(output, choice["message"]["content"]), output), output.__name__
        assert _one_line_json(choice["message"]["content"]), (output.__name__, choice["message"]["content"])


def test_forced_tokens_are_taken_in_batches_and_the_reply_still_parses():
    """JSON keys and separators the grammar forces are evaluated in batches, not a step each, and what the
    sampler then draws still follows the grammar: every forced token was fed to it."""
    from moot.embedded import model_path, shared_engine
    from moot.models._reply_schema import grammar_schema
    from moot.roles._agent import parse_structured

    engine = shared_engine(model_path())
    assert engine.settings.lookahead
    for name, output, request in builtin_schemas()[:3]:
        messages = RoleAgent(role(name), ModelSpec.parse("local")).chat_messages(request, output)
        schema = grammar_schema(output, engine.grammar_compiles)
        engine.reset_stats()
        reply = engine.create_chat_completion(
            messages, max_tokens=512, temperature=0.7, seed=5, response_format={"type": "json_object", "schema": schema}
        )
        text = reply["choices"][0]["message"]["content"]
        assert isinstance(parse_structured(output, text), output), (output.__name__, text)
        stats = engine.stats
        keys = len(output.model_fields)
        assert stats.forced_tokens >= keys, (output.__name__, stats)  # at least one token of each key
        assert stats.forced_tokens + stats.kept_guesses < stats.completion_tokens


def _one_line_json(text: str) -> bool:
    """Whether the only whitespace outside strings is one space after each ',' and ':' (no token spent on layout)."""
    in_string = escaped = False
    previous = ""
    for char in text:
        if in_string:
            in_string, escaped = (escaped or char != '"'), (not escaped and char == "\\")
        elif char == '"':
            in_string = True
        elif char.isspace() and (char != " " or previous not in (",", ":")):
            return False
        previous = char
    return not in_string


def test_llama_cpp_grammars_are_compiled_before_sampling_so_none_crashes():
    """llama.cpp rejects over-large grammars only when sampling starts, by crashing: check them all first."""
    from pydantic import BaseModel, Field

    from moot.embedded import EngineSettings, model_path, shared_engine
    from moot.models._reply_schema import clamped_schema, grammar_schema

    engine = shared_engine(model_path(), EngineSettings.legacy())
    for _, output, _ in builtin_schemas():
        grammar = grammar_schema(output, engine.grammar_compiles)  # raises if even the simplest version fails
        if "pattern" not in json.dumps(output.model_json_schema()):  # patterns the old grammar may have to drop
            assert grammar == clamped_schema(output), output

    class Rambling(BaseModel):
        essay: str = Field(max_length=5000)
        notes: list[str] = Field(max_length=20)

    simplified = grammar_schema(Rambling, engine.grammar_compiles)  # refused as is: simplified, not a crash
    assert engine.grammar_compiles(simplified)
    assert not engine.grammar_compiles(Rambling.model_json_schema())


def test_a_reply_sent_back_as_the_assistant_turn_is_read_from_its_kept_state():
    """A revision continues the exchange that asked for the draft: every token of the draft's call is reused,
    even where the model decoded text as tokens the tokenizer would merge differently."""
    from moot.embedded import model_path, shared_engine

    engine = shared_engine(model_path())
    asked = [
        {"role": "system", "content": "You write Python. Answer with one code block."},
        {"role": "user", "content": "Write a function that returns the largest of three integers, with a docstring."},
    ]
    first = engine.create_chat_completion(asked, max_tokens=96, temperature=0.7, seed=3)
    draft = first["choices"][0]["message"]["content"]
    engine.create_chat_completion([asked[0], {"role": "user", "content": "Say hi."}], max_tokens=4, temperature=0.0)
    revise = [*asked, {"role": "assistant", "content": draft}, {"role": "user", "content": "Add type hints."}]
    usage = engine.create_chat_completion(revise, max_tokens=4, temperature=0.0)["usage"]
    kept = first["usage"]["prompt_tokens"] + first["usage"]["completion_tokens"]
    assert usage["prompt_tokens_details"]["cached_tokens"] >= kept - 1, (usage, kept)
    assert engine.prompt_tokens(revise)[:kept] == engine.prompt_tokens(asked) + engine.reply_tokens(draft)


def test_restored_prompt_states_give_the_next_token_distribution_of_a_cold_context(monkeypatch):
    """The state caches on (prefixes restored from memory, or system prompts from disk) against each prompt
    evaluated from scratch.

    Two roles alternate over one task, so every call after the first starts
    from a kept state. llama.cpp's sums depend on how a prompt is split into
    batches (the CPU kernels a matrix product takes depend on the batch's
    size), so a restored prefix and a cold one differ by rounding, and two
    greedy replies may part at a near tie (seen in CI: "Args:" against
    "Parameters:"). What must hold is that the model sees the same context.

    How far rounding goes differs between CPUs (0.13 in log-probability on a
    2-core AMD EPYC, more elsewhere), so the bound is measured here, on this
    machine: each prompt is also evaluated from scratch under other batch
    splits (at the points where the restored calls split it, its last token
    alone, chunks of 16), and the largest gap between two such evaluations
    of one prompt is this machine's rounding R. A restored call differs from
    the cold one by two changes of split at most (the prefix's, then the
    rest's), so by 2R at most; a near tie is a top-two gap that rounding of
    that size could reverse. The check can fail: two prompts that differ by
    one line must be told apart by more than the bound.
    """
    import numpy as np

    from moot.embedded import _decode, model_path, shared_engine

    engine = shared_engine(model_path())
    system = {
        "critic": "You are a strict reviewer. Name the bugs of the code you are shown, briefly.",
        "generator": "You write Python. Answer with one code block.",
    }
    task = "Task: write a function that returns the largest of three integers.\n"
    prompts = [
        ("generator", task),
        ("critic", task + "Code:\ndef big(a, b, c):\n    return max(a, b)\n"),
        ("generator", task + "Use no built-in max."),
        ("critic", task + "Code:\ndef big(a, b, c):\n    return sorted([a, b, c])[0]\n"),
        ("generator", task),
    ]
    seen: list[np.ndarray] = []
    splits: list[list[int]] = []  # while set, cold calls also evaluate their prompt from scratch at these cuts
    variants: list[list[np.ndarray]] = []
    evaluate = _decode.evaluate_prompt

    def recording(model, prompt):
        reused = evaluate(model, prompt)
        seen.append(_next_token_logprobs(model))
        if splits:
            cuts = [[cut] for cut in splits[len(seen) - 1]] + [[len(prompt) - 1], list(range(16, len(prompt), 16))]
            variants.append([_from_scratch(model, prompt, c) for c in [*cuts, []]])
        return reused  # the live context holds the whole prompt, evaluated in one batch, as the reply expects

    monkeypatch.setattr(_decode, "evaluate_prompt", recording)

    def ask(role_name: str, text: str) -> tuple[int, int]:
        messages = [{"role": "system", "content": system[role_name]}, {"role": "user", "content": text}]
        usage = engine.create_chat_completion(messages, max_tokens=32, temperature=0.0)["usage"]
        return usage["prompt_tokens_details"]["cached_tokens"], usage["prompt_tokens"]

    engine.forget_states(disk=True)
    warm = [ask(r, t) for r, t in prompts]
    warm_logprobs, seen[:] = list(seen), []
    from_disk = []
    for r, t in prompts:  # a new process each time: only the system prompts' states kept on disk survive
        engine.forget_states()
        from_disk.append(ask(r, t))
    disk_logprobs, seen[:] = list(seen), []
    splits[:] = [[w[0], d[0]] for w, d in zip(warm, from_disk, strict=True)]  # where the restored calls split
    cold = []
    for r, t in prompts:
        engine.forget_states(disk=True)
        cold.append(ask(r, t))
    cold_logprobs = list(seen)
    assert all(cached == 0 for cached, _ in cold)
    for (role_name, _), (cached, _) in zip(prompts, from_disk, strict=True):  # the system prompt and its markup
        content = len(engine.tokenize(system[role_name].encode()))
        assert content < cached <= content + 8, (role_name, cached, content)
    # The second generator and critic calls start from their role's kept state, not the other role's live one.
    assert warm[2][0] > len(engine.tokenize(system["generator"].encode()))
    assert warm[3][0] > len(engine.tokenize((system["critic"] + task).encode()))
    assert warm[4][0] == warm[4][1] - 1  # the same prompt again: all but the token that yields the next logits

    # This machine's rounding: the widest gap between two from-scratch evaluations of one prompt.
    rounding = max(_widest_gap([c, *others]) for c, others in zip(cold_logprobs, variants, strict=True))
    bound = 2 * rounding  # a restored call changes the split twice: its prefix's, then its own rest's
    pairs = [*zip(warm_logprobs, cold_logprobs, strict=True), *zip(disk_logprobs, cold_logprobs, strict=True)]
    for index, (w, c) in enumerate(pairs):
        assert _distance(w, c) <= bound, (index, _distance(w, c), rounding)
        top_two = np.sort(c)[-2:]
        if top_two[1] - top_two[0] > 2 * bound:  # not a near tie: greedy decoding picks the same token
            assert int(np.argmax(w)) == int(np.argmax(c)), index
    # The check can fail: two prompts that differ by one line are told apart by more than the bound.
    apart = _distance(cold_logprobs[0], cold_logprobs[2])
    assert apart > bound, (apart, rounding)


def _next_token_logprobs(model):
    """The distribution of the reply's first token after the live context, as the sampler sees it."""
    import numpy as np
    from llama_cpp import llama_cpp as native

    logits = np.ctypeslib.as_array(native.llama_get_logits_ith(model.llama.ctx, -1), shape=(model.n_vocab(),))
    return logits.astype(np.float64) - np.logaddexp.reduce(logits.astype(np.float64))


def _from_scratch(model, prompt: list[int], cuts: list[int]):
    """``prompt`` evaluated from an empty context in batches split at ``cuts``; leaves it the live context."""
    model.n_tokens = 0  # eval drops every KV cell from here on
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(prompt)}), len(prompt)]
    for start, end in itertools.pairwise(bounds):
        model.eval(prompt[start:end])
    return _next_token_logprobs(model)


def _distance(a, b) -> float:
    """Largest log-probability gap over the tokens either side finds likely."""
    import numpy as np

    likely = np.union1d(np.argsort(a)[-20:], np.argsort(b)[-20:])
    return float(np.max(np.abs(a[likely] - b[likely])))


def _widest_gap(evaluations: list) -> float:
    """The largest distance between two of ``evaluations`` (of one prompt, each split differently)."""
    return max((_distance(a, b) for a, b in itertools.combinations(evaluations, 2)), default=0.0)
