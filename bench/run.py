"""Run the benchmarks, print their tables, write results/*.json and RESULTS.md.

    python -m bench.run                      # all of them (the embedded ones take minutes)
    python -m bench.run overhead context     # only these

Benchmarks are not timed tests: they report ratios measured side by side in
one run, with several repetitions, median and spread.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bench import concurrency, context, embedded, engine, fanout, overhead
from bench._common import RESULTS_DIR, machine, write_json

BENCHMARKS = {
    "overhead": lambda: overhead.measure(repetitions=7),
    "context": context.measure,
    "embedded": embedded.measure,
    "engine": engine.measure,
    "concurrency": concurrency.measure,
    "fanout": fanout.measure,
}
RESULTS_MD = Path(__file__).resolve().parent / "RESULTS.md"


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Benchmark results",
        "",
        "Each section: the command that produced it and the machine it ran on.",
        "Reproduce all of them with `python -m bench.run` (the embedded and concurrency benchmarks need",
        "`pip install -e '.[local,bench]'` and take minutes; fanout needs the `[ray]` extra).",
        "",
    ]
    for name, data in results.items():
        info = data["machine"]
        lines += [
            f"## {name}",
            "",
            f"Command: `{data.get('command', 'python -m bench.run ' + name)}` on {info['cpu']}, "
            f"{info['cores']} cores, Python {info['python']}; load (1 min) at start "
            f"{info['load_1min_at_start']:.2f}; commit {info['commit']}.",
            "",
            *SECTIONS[name](data),
            "",
        ]
    return "\n".join(lines)


def overhead_md(d: dict[str, Any]) -> list[str]:
    rows = ["| variant | ms per agent turn (median) | IQR | min–max | ratio to bare AutoGen |", "|---|---|---|---|---|"]
    for name, s in d["per_turn"].items():
        rows.append(
            f"| {name} | {s['median']:.3f} | {s['iqr']:.3f} | {s['min']:.3f}–{s['max']:.3f} | "
            f"{d['ratio_to_bare_autogen'][name]:.2f} |"
        )
    return [
        f"{d['turns_per_run']} agent turns per run, {next(iter(d['per_turn'].values()))['n']} interleaved "
        "repetitions, zero-latency deterministic model. Target: moot <= 1.1x bare AutoGen per turn.",
        "",
        *rows,
    ]


def context_md(d: dict[str, Any]) -> list[str]:
    rows = [
        "| rounds | moot this round | naive this round | moot total | naive total | moot / naive |",
        "|---|---|---|---|---|---|",
    ]
    for r, c in d["cumulative"].items():
        i = int(r) - 1
        rows.append(
            f"| {r} | {d['moot_per_round'][i]} | {d['naive_per_round'][i]} | {c['moot']} | {c['naive']} | "
            f"{c['ratio']:.3f} |"
        )
    return [
        f"{d['unit']}. Target: flat per round; at 5 rounds moot <= 1/3 of naive: {'met' if d['met'] else 'not met'}.",
        "",
        *rows,
    ]


def embedded_md(d: dict[str, Any]) -> list[str]:
    rows = ["| loop | wall s | in model s | outside model | calls | completion tok/s |", "|---|---|---|---|---|---|"]
    for name, s in d["loops"].items():
        rows.append(
            f"| {name} | {s['wall_s']:.1f} | {s['model_s']:.1f} | {100 * s['outside_model_share']:.2f}% | "
            f"{s['model_calls']} | {s['completion_tokens_per_s']:.1f} |"
        )
    cache = d["prompt_cache"]
    return [
        "Target: under 2% of wall time outside the model call.",
        "",
        *rows,
        "",
        f"Prompt-cache reuse (median of {cache['repetitions']}): prompt processing {cache['prefix_reused_s']:.2f}s "
        f"with the shared prefix reused vs {cache['prefix_changed_s']:.2f}s when the prefix changes: "
        f"{100 * cache['saved_share']:.0f}% saved.",
    ]


def engine_md(d: dict[str, Any]) -> list[str]:
    lines = [
        "Targets: constrained/free tok/s >= 0.9; cache share >= 80%; wall time new/old <= 0.5x with the same",
        "calls; peak RSS with the state cache on minus off <= 512 MiB.",
        "",
    ]
    lines += [
        "**Decoding** (prompt evaluated beforehand, lookahead off on both sides; medians of 3; tokens per reply "
        "constrained / free):",
        "",
    ]
    lines += ["| grammar backend | prompt | tokens | constrained tok/s | free tok/s |", "|---|---|---|---|---|"]
    for grammar, g in d["decoding"].items():
        for r in g["rows"]:
            lines.append(
                f"| {grammar} | {r['prompt']} | {r['constrained_tokens']} / {r['free_tokens']} | "
                f"{r['constrained_tokens'] / r['constrained_s']:.1f} | {r['free_tokens'] / r['free_s']:.1f} |"
            )
    for grammar, g in d["decoding"].items():
        lines.append(
            f"| **{grammar}, all** | | | {g['constrained_tok_s']:.1f} | "
            f"{g['free_tok_s']:.1f} (ratio **{g['ratio']:.2f}**) |"
        )
    lines += [
        "",
        "**Prompt-state cache** (counted inside the engine, default settings; each run starts with nothing in "
        "memory, with no state on disk (cold disk: a machine's first run) or with the system-prompt states an "
        "earlier run left there (warm disk: every later run, whatever its task)):",
        "",
    ]
    lines += [
        "| run | calls | prompt tokens | from cache | share | attainable | restores (from disk) | restore + save s "
        "| states held | forced tokens | guessed tokens kept |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in d["cache_share"].items():
        lines.append(
            f"| {name} | {c['calls']} | {c['prompt_tokens']} | {c['cached_prompt_tokens']} | "
            f"**{100 * c['share']:.0f}%** | {100 * c['attainable_share']:.0f}% | "
            f"{c['restores']} ({c.get('disk_restores', 0)}) | {c['restore_s'] + c['save_s']:.2f} | "
            f"{c['state_cache_mib']:.0f} MiB | {c.get('forced_tokens', '')} | {c['kept_guesses']} of "
            f"{c['guessed_tokens']} |"
        )
    lines += [
        "",
        "*Attainable*: the share a cache keeping the state of every earlier call (prompt and reply) forever "
        "could serve, with the prompts as laid out; the rest is text no earlier call evaluated (personas, other "
        "experts' replies, the arbiter's instructions). *Forced tokens*: tokens the grammar forced, taken in batches "
        "without a step each. *Guessed tokens kept*: tokens guessed from the prompt that the sampler confirmed, "
        "each a decode step saved; guesses are made only where this machine's measured batch costs make them pay.",
    ]
    lines += [
        "",
        "**End to end** (`moot run --model local?seed=N`, fresh process each, run to full rounds, one run per "
        f"seed N = {', '.join(map(str, d.get('seeds', [])))} for every variant; roles sample at temperature 0.2, "
        "so each seed is another draw of the replies; mean wall s over the seeds):",
        "",
    ]
    lines += [
        "| scenario | settings | wall s (each run) | model calls | completion tokens | ms per completion token "
        "| peak RSS MiB | stop |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, by in d["end_to_end"].items():
        if name == "release_error":
            continue
        for variant, v in by.items():
            runs = ", ".join(f"{w:.0f}" for w in v["wall_s_all"])
            lines.append(
                f"| {name} | {variant} | {v['wall_s']:.1f} ({runs}) | {v['model_calls']} | {v['completion_tokens']} | "
                f"{1000 * v['wall_s_per_token']:.0f} | {v['peak_rss_mib']:.0f} | "
                f"{v['stop'].removeprefix('stop reason: ')} |"
            )
    seeds = d.get("seeds", [])
    legacy = "; ".join(_paired(n, r, seeds) for n, r in d["wall_ratio"].items())
    release = "; ".join(_paired(n, r, seeds) for n, r in d.get("wall_ratio_to_release", {}).items())
    lines += [
        "",
        f"Wall time new / legacy settings, summed over the seeds where both runs made the same turns (a run that "
        f"ends partial stops early): {legacy}. New / the release before the engine: "
        f"{release or 'not run (' + d['end_to_end'].get('release_error', 'no git history')[:160] + ')'}. "
        f"Peak RSS, state cache on minus off (debate): **{d['rss_cache_on_minus_off_mib']:+.0f} MiB**.",
    ]
    return lines


def _paired(name: str, ratio: dict[str, Any], seeds: list[int]) -> str:
    """One scenario's paired ratios (see bench.engine.paired_ratios), naming the seeds they cover."""
    if ratio["wall"] is None:
        return f"{name}: no seed where both runs made the same turns"
    used = ", ".join(str(seeds[i]) for i in ratio["seeds_compared"])
    return f"{name} **{ratio['wall']:.2f}x**, per completion token **{ratio['per_token']:.2f}x** (seeds {used})"


def concurrency_md(d: dict[str, Any]) -> list[str]:
    return [
        f"{d['scenarios']} one-round reflections against `python -m llama_cpp.server` on 127.0.0.1: "
        f"sequential {d['sequential_s']:.1f}s, concurrent {d['concurrent_s']:.1f}s, throughput ratio "
        f"{d['throughput_ratio']:.2f}x."
    ]


def fanout_md(d: dict[str, Any]) -> list[str]:
    rows = [
        "| executor | jobs/s overall | jobs/s after the first row | first row after (s) |",
        "|---|---|---|---|",
    ]

    def per_job(name: str) -> float:
        return 1000 * d["concurrency"] / d["executors"][name]["steady_jobs_per_s"]["median"]

    for name, s in d["executors"].items():
        overall, steady, first = s["jobs_per_s"], s["steady_jobs_per_s"], s["first_row_s"]
        rows.append(
            f"| {name} | {overall['median']:.1f} ({overall['min']:.1f}–{overall['max']:.1f}) | "
            f"{steady['median']:.1f} ({steady['min']:.1f}–{steady['max']:.1f}) | {first['median']:.2f} |"
        )
    return [
        f"`moot compare` of {d['jobs']} jobs (arm single, zero-latency deterministic model, --concurrency "
        f"{d['concurrency']}, Ray tasks at 0.5 CPU, a fresh results file and cache each time), "
        f"{d['repetitions']} interleaved repetitions per executor; medians (min–max). Ray on this machine, "
        f"started once ({d['ray_start_s']:.1f}s, not counted).",
        "",
        *rows,
        "",
        f"Ray / local throughput: {d['ray_to_local']:.2f}x overall, {d['ray_to_local_steady']:.2f}x after the "
        f"first row: the fan-out's own cost when the model costs nothing. Each of the {d['concurrency']} slots "
        f"spends {per_job('ray'):.0f} ms per job on Ray against {per_job('local'):.0f} ms locally, beside "
        "model calls that take seconds per job.",
    ]


SECTIONS = {
    "overhead": overhead_md,
    "context": context_md,
    "embedded": embedded_md,
    "engine": engine_md,
    "concurrency": concurrency_md,
    "fanout": fanout_md,
}


async def main(names: list[str]) -> None:
    """Run the named benchmarks (all by default), then rewrite RESULTS.md from every stored result."""
    report_only = names == ["--report"]
    unknown = sorted(set(names) - set(BENCHMARKS)) if not report_only else []
    if unknown:
        raise SystemExit(f"unknown benchmark(s) {', '.join(unknown)}; valid: {', '.join(BENCHMARKS)} or --report")
    for name in [] if report_only else (names or list(BENCHMARKS)):
        print(f"running {name} ...", flush=True)
        info = machine()
        data = await BENCHMARKS[name]()
        write_json(name, {"machine": info, "command": f"python -m bench.run {name}", **data})
        print("\n".join(SECTIONS[name](data)), flush=True)
    RESULTS_MD.write_text(markdown(stored()) + "\n")
    print(f"wrote {RESULTS_MD}")


def stored() -> dict[str, dict[str, Any]]:
    """Every benchmark's latest stored result, in the usual order."""
    found = {}
    for name in BENCHMARKS:
        path = RESULTS_DIR / f"{name}.json"
        if path.exists():
            found[name] = json.loads(path.read_text())
    return found


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
