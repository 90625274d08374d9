"""The embedded model's engine, new settings against the old ones, side by side in one run.

Four measurements (targets from the engine's design):

* decoding: completion tok/s under the JSON grammar vs free, on the same
  prompts and reply lengths (the prompt is evaluated beforehand, so only
  decoding is timed), for llguidance (the default) and llama.cpp's grammar;
* cache share: prompt tokens served from kept KV states over a full
  ``architecture_review`` debate (3 experts, 2 rounds) and a 3-round
  ``code_review``, counted inside the engine;
* end to end: wall time of ``moot run`` on both scenarios (stopped by
  rounds only, so every variant makes the same calls) with the new settings,
  with ``EngineSettings.legacy()`` (llama.cpp's grammar, no state cache, one
  token per step) and with the release before them (``BASELINE_REF``, whose
  prompts the new layout changed), each in a fresh process, interleaved;
* memory: peak RSS of those processes with the state cache on and off.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from moot import ModelSpec, RoleAgent, role
from moot._exit_codes import FINISHED, PARTIAL
from moot.arbiters import Verdict
from moot.embedded import EngineSettings, model_path, shared_engine, states_dir
from moot.embedded._state_cache import common_prefix
from moot.models._reply_schema import grammar_schema
from moot.roles import Critique, Position
from moot.roles._position import with_options
from moot.scenario import load_scenario
from moot.teams import Debate, Reflection

ROOT = Path(__file__).resolve().parents[1]
BASELINE_REF = "9c77297"
"""The last release before this engine: llama.cpp's grammar, no kept states, one persona-first prompt per expert."""
VARIANTS = {
    "new": EngineSettings(),
    "new, cold disk": EngineSettings(),
    "legacy": EngineSettings.legacy(),
    "new, no state cache": EngineSettings(state_cache_bytes=0, disk_state_bytes=0),
    "new, no lookahead": EngineSettings(lookahead=False),
}
"""``new`` runs as a user's second run does (system-prompt states on disk from earlier runs); ``new, cold
disk`` as the first run on a machine (the disk states deleted just before); ``new, no lookahead`` decodes
one token per step, to show what forced batches and guesses save on this machine."""
# Runs the command given after the output path and writes the peak RSS of that child alone: a child
# forked from the benchmark's own large process would report the parent's pages as its peak.
PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code)\n"
)
FULL_ROUNDS = {"architecture_review": 2, "code_review": 3}
SEEDS = (1, 2, 3)
"""One end-to-end repetition per seed, every variant on the same seeds."""
DRAFT = "def slugify(title):\n    return title.lower().replace(' ', '-')\n"
DECODING_PROMPTS = [
    ("critic", Critique, f"Task:\nWrite slugify(title: str) -> str.\n\nDraft to review:\n{DRAFT}"),
    (
        "architect",
        with_options(Position, "answer", ("split", "keep", "defer")),
        "Task:\nShould we split the billing module out of our monolith? Answer split, keep or defer.\n\n"
        "Give your position. This is the first round: answer independently.",
    ),
    (
        "arbiter",
        with_options(Verdict, "decision", ("yes", "no")),
        "Task:\nShould a 3-person startup adopt microservices now?\n\nThe experts' final positions:\n\n"
        "ops: no (confidence 0.8)\n- one deployable is easier to run\n\n"
        "architect: yes (confidence 0.6)\n- clear boundaries early\n\nRule on the task: yes or no.",
    ),
]


# ------------------------------------------------------------------ decoding
def decoding(repetitions: int = 3) -> dict[str, Any]:
    """Constrained vs free completion tok/s on the same prompts, for each grammar backend."""
    result: dict[str, Any] = {}
    for grammar in ("llguidance", "llama"):
        # Lookahead off on both sides: it speeds free text and JSON differently, and this measures the grammar.
        engine = shared_engine(model_path(), replace(EngineSettings.from_env(), grammar=grammar, lookahead=False))
        rows = []
        for name, output, request in DECODING_PROMPTS:
            messages = RoleAgent(role(name), ModelSpec.parse("local")).chat_messages(request, output)
            schema = grammar_schema(output, engine.grammar_compiles)
            rows.append(_decode_pair(engine, messages, schema, repetitions) | {"prompt": name})
        constrained = sum(r["constrained_tokens"] for r in rows) / sum(r["constrained_s"] for r in rows)
        free = sum(r["free_tokens"] for r in rows) / sum(r["free_s"] for r in rows)
        result[grammar] = {
            "rows": rows,
            "constrained_tok_s": constrained,
            "free_tok_s": free,
            "ratio": constrained / free,
        }
    return result


def _decode_pair(engine: Any, messages: list[dict[str, str]], schema: dict[str, Any], repetitions: int) -> dict:
    """Median decode times of one constrained reply and a free reply capped at the same length."""
    engine.create_chat_completion(messages, max_tokens=1, temperature=0.0)  # the prompt is evaluated once, here
    constrained_s, free_s = [], []
    for _ in range(repetitions):
        start = time.perf_counter()
        reply = engine.create_chat_completion(
            messages, max_tokens=768, temperature=0.0, response_format={"type": "json_object", "schema": schema}
        )
        constrained_s.append(time.perf_counter() - start)
        tokens = reply["usage"]["completion_tokens"]
        start = time.perf_counter()
        free = engine.create_chat_completion(messages, max_tokens=tokens, temperature=0.0)
        free_s.append(time.perf_counter() - start)
    json.loads(reply["choices"][0]["message"]["content"], strict=False)  # it parses
    return {
        "constrained_tokens": tokens,
        "constrained_s": statistics.median(constrained_s),
        "free_tokens": free["usage"]["completion_tokens"],
        "free_s": statistics.median(free_s),
    }


# --------------------------------------------------------------- cache share
async def cache_share() -> dict[str, Any]:
    """Share of prompt tokens served from kept states over each scenario run to its full rounds.

    Each scenario runs twice in a fresh context: with no state on disk (a machine's first run) and with
    the system-prompt states the first run left there (every later run, whatever its task).
    """
    engine = shared_engine(model_path(), EngineSettings.from_env())
    result = {}
    for name in FULL_ROUNDS:
        on_disk: list[list[int]] = []  # empty: the cold run clears the disk; it fills this for the warm run
        for start in ("cold disk", "warm disk"):
            result[f"{name}, {start}"] = await _cache_share_run(engine, name, on_disk)
    return result


async def _cache_share_run(engine: Any, name: str, on_disk: list[list[int]]) -> dict[str, Any]:
    """One run's cache counters, beside the share any cache could have served (``on_disk``: the system
    prompts kept on disk by earlier runs; empty means the disk is cleared first; this run's are added)."""
    team = full_rounds_team(name)
    team.record = False
    engine.reset_stats()
    engine.forget_states(disk=not on_disk)
    calls = _recorded_calls(engine)
    try:
        await team.run(task=load_scenario(name).task)
    finally:
        del engine.create_chat_completion  # the class's method again
    stats = engine.stats
    attainable = attainable_cached(engine, calls, on_disk)
    return {
        "calls": stats.calls,
        "prompt_tokens": stats.prompt_tokens,
        "cached_prompt_tokens": stats.cached_prompt_tokens,
        "share": stats.cached_share,
        "attainable_share": attainable / stats.prompt_tokens if stats.prompt_tokens else 0.0,
        "forced_tokens": stats.forced_tokens,
        "guessed_tokens": stats.guessed_tokens,
        "kept_guesses": stats.kept_guesses,
        "restores": stats.restores,
        "disk_restores": stats.disk_restores,
        "restore_s": stats.seconds_restoring,
        "save_s": stats.seconds_saving,
        "state_cache_mib": engine.state_cache_bytes / 2**20,
        "per_call": list(stats.per_call),
    }


def _recorded_calls(engine: Any) -> list[tuple[list[dict[str, Any]], str]]:
    """Record each call's messages and reply on ``engine`` (an instance attribute shadowing the method)."""
    calls: list[tuple[list[dict[str, Any]], str]] = []
    method = type(engine).create_chat_completion

    def recording(messages: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
        reply = method(engine, messages, **options)
        calls.append((messages, reply["choices"][0]["message"]["content"]))
        return reply

    engine.create_chat_completion = recording
    return calls


def attainable_cached(engine: Any, calls: list[tuple[list[dict[str, Any]], str]], on_disk: list[list[int]]) -> int:
    """Prompt tokens a cache keeping every earlier call's state (prompt plus reply) forever could have served.

    This bounds what any state cache can do with the prompts as laid out: the rest of each prompt is text no
    earlier call evaluated (a persona, another expert's reply, the arbiter's instructions), so only a different
    prompt layout could serve more. Replies count as the tokens they were decoded as, which is how the engine
    sends them back. The disk's system-prompt states count as kept.
    """
    kept: list[np.ndarray] = [np.asarray(t, dtype=np.int32) for t in on_disk]
    served = 0
    for messages, reply in calls:
        prompt = np.asarray(engine.prompt_tokens(messages), dtype=np.int32)
        best = max((common_prefix(state, prompt) for state in kept), default=0)
        served += min(best, len(prompt) - 1)  # the last prompt token is always evaluated, for its logits
        system = engine.system_prompt_length(messages, prompt.tolist())
        if system:
            on_disk.append(prompt[:system].tolist())
            kept.append(prompt[:system])
        kept.append(np.concatenate([prompt, np.asarray(engine.reply_tokens(reply), dtype=np.int32)]))
    return served


# -------------------------------------------------------- end to end, memory
SCENARIO_SCRIPT = '''"""{name}, full rounds only (written by bench/engine.py; any moot release runs it)."""
from moot.conditions import MaxRounds
from moot.scenario import Scenario, load_scenario
from moot.teams import Debate, Reflection

_base = load_scenario({name!r})


def _build(models):
    team = _base.build(models)
    if isinstance(team, Debate):
        return Debate(team.experts, team.arbiter, stop=MaxRounds({rounds}), options=team.options)
    return Reflection(team.generator, team.critics, stop=MaxRounds({rounds}))


SCENARIO = Scenario(name={name!r}, description=_base.description, task=_base.task, roles=_base.roles, build=_build)
'''


def full_rounds_script(directory: Path, name: str) -> Path:
    script = directory / f"full_{name}.py"
    script.write_text(SCENARIO_SCRIPT.format(name=name, rounds=FULL_ROUNDS[name]))
    return script


def full_rounds_team(name: str) -> Debate | Reflection:
    """The scenario's team with its own roles and models, stopped by its full number of rounds only."""
    with tempfile.TemporaryDirectory() as scratch:
        scenario = load_scenario(str(full_rounds_script(Path(scratch), name)))
    return scenario.build(scenario.models([]))


@contextlib.contextmanager
def release_checkout(ref: str, scratch: Path) -> Iterator[Path | None]:
    """A worktree of an earlier release, to run its `moot run` beside this one (None without git history)."""
    target = scratch / "release"
    git = ["git", "-C", str(ROOT), "worktree"]
    made = subprocess.run([*git, "add", "--detach", str(target), ref], capture_output=True)
    try:
        yield target if made.returncode == 0 else None
    finally:
        if made.returncode == 0:
            subprocess.run([*git, "remove", "--force", str(target)], capture_output=True)


def end_to_end(seeds: tuple[int, ...] = SEEDS) -> dict[str, Any]:
    """`moot run` wall time and peak RSS per scenario and variant, fresh processes, interleaved.

    Roles sample (temperature 0.2), and the variants draw different replies (lookahead verifies guesses in
    batches, whose logits differ from one-token steps by rounding; llama.cpp's grammar is another sampler),
    so one seed compares one draw of reply lengths. Each repetition runs every variant with its own seed.
    """
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {n: {} for n in FULL_ROUNDS}
    release_error = ""
    with tempfile.TemporaryDirectory() as scratch, release_checkout(BASELINE_REF, Path(scratch)) as release:
        for seed in seeds:
            for name in FULL_ROUNDS:
                script = full_rounds_script(Path(scratch), name)
                for variant, settings in VARIANTS.items():
                    if variant == "new, no state cache" and name != "architecture_review":
                        continue
                    if variant == "new, cold disk":
                        shutil.rmtree(states_dir(model_path()), ignore_errors=True)
                    sample = _moot_run(script, settings.to_env(), Path(scratch), seed)
                    runs[name].setdefault(variant, []).append(sample)
                if release is not None:
                    try:
                        sample = _moot_run(script, {}, Path(scratch), seed, checkout=release)
                    except RuntimeError as exc:  # e.g. a release without a fix this machine needs
                        release_error, release = str(exc), None
                    else:
                        runs[name].setdefault(f"release {BASELINE_REF}", []).append(sample)
    summary: dict[str, Any] = {name: {v: _summarise(s) for v, s in by.items()} for name, by in runs.items()}
    if release_error:
        summary["release_error"] = release_error
    return summary


def _moot_run(
    script: Path, env: dict[str, str], scratch: Path, seed: int, checkout: Path | None = None
) -> dict[str, Any]:
    """One `moot run` with every role on ``local?seed=N``, in a fresh process (of ``checkout``'s moot if given):
    wall s, peak RSS, calls from its trace."""
    store = Path(tempfile.mkdtemp(dir=scratch))
    settings = {k: v for k, v in os.environ.items() if not k.startswith("MOOT_LOCAL_")}
    full_env = {**settings, **env, "MOOT_STORE": str(store / "runs.sqlite3"), "MOOT_TRACES": str(store / "traces")}
    if checkout is not None:
        full_env["PYTHONPATH"] = str(checkout / "src")
    with (store / "out.txt").open("w") as out_file, (store / "err.txt").open("w") as err_file:
        start = time.perf_counter()
        moot_run = [sys.executable, "-m", "moot", "run", str(script), "--model", f"local?seed={seed}"]
        command = [sys.executable, "-c", PEAK_RSS, str(store / "rss"), *moot_run]
        code = subprocess.call(command, env=full_env, stdout=out_file, stderr=err_file, cwd=checkout or ROOT)
        wall = time.perf_counter() - start
    out, err = (store / "out.txt").read_text(), (store / "err.txt").read_text()
    if code not in (FINISHED, PARTIAL):  # partial: a reply that never parsed, a fallback ruling; reported
        raise RuntimeError(f"moot run {script.name} failed (exit {code}): {err[-800:]}")
    events = [
        json.loads(line) for trace in (store / "traces").glob("*.jsonl") for line in trace.read_text().splitlines()
    ]
    calls = [e for e in events if e.get("kind") == "model_call"]
    turns = [e for e in events if e.get("kind") == "turn"]
    return {
        "wall_s": wall,
        "peak_rss_mib": int((store / "rss").read_text()) / 1024,
        "model_calls": len(calls),
        "turns": len(turns),
        "completion_tokens": sum(e.get("completion_tokens") or 0 for e in calls),
        "stop": next((line for line in out.splitlines() if line.startswith("stop reason:")), ""),
        "partial": code == PARTIAL,
    }


def _summarise(samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "wall_s": statistics.mean(s["wall_s"] for s in samples),
        "wall_s_all": [s["wall_s"] for s in samples],
        "peak_rss_mib": max(s["peak_rss_mib"] for s in samples),
        "model_calls": [s["model_calls"] for s in samples],
        "turns": [s["turns"] for s in samples],
        "completion_tokens": [s["completion_tokens"] for s in samples],
        "wall_s_per_token": sum(s["wall_s"] for s in samples) / max(1, sum(s["completion_tokens"] for s in samples)),
        "stop": " / ".join(dict.fromkeys(s["stop"] + (" (partial)" if s["partial"] else "") for s in samples)),
    }


def paired_ratios(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """Wall time ``new`` / ``old`` over the seeds where both runs made the same turns (replies that parsed).

    A run that ends partial (a reply that never parsed) stops early and does less work, so its seed is left
    out rather than counted as a fast run. Both ratios sum over the kept seeds: wall time, and wall time per
    completion token (the settings draw different replies, of different lengths).
    """
    kept = [i for i, (a, b) in enumerate(zip(new["turns"], old["turns"], strict=True)) if a == b]

    def total(side: dict[str, Any], key: str) -> float:
        return sum(side[key][i] for i in kept)

    if not kept:
        return {"seeds_compared": [], "wall": None, "per_token": None}
    return {
        "seeds_compared": kept,
        "wall": total(new, "wall_s_all") / total(old, "wall_s_all"),
        "per_token": (total(new, "wall_s_all") / total(new, "completion_tokens"))
        / (total(old, "wall_s_all") / total(old, "completion_tokens")),
    }


def ratios(data: dict[str, Any]) -> dict[str, Any]:
    """The end-to-end ratios and the memory figure, from the end-to-end runs in ``data``."""
    e2e = {k: v for k, v in data["end_to_end"].items() if k != "release_error"}
    baseline = f"release {BASELINE_REF}"
    debate = e2e["architecture_review"]
    return {
        "wall_ratio": {n: paired_ratios(e2e[n]["new"], e2e[n]["legacy"]) for n in e2e},
        "wall_ratio_to_release": {n: paired_ratios(e2e[n]["new"], e2e[n][baseline]) for n in e2e if baseline in e2e[n]},
        "rss_cache_on_minus_off_mib": debate["new"]["peak_rss_mib"] - debate["new, no state cache"]["peak_rss_mib"],
    }


async def measure() -> dict[str, Any]:
    data: dict[str, Any] = {"decoding": decoding(), "cache_share": await cache_share(), "end_to_end": end_to_end()}
    data["seeds"] = list(SEEDS)
    return data | ratios(data)
