"""What a batch of n tokens costs against one decode step on this machine: the table lookahead guesses by.

    python -m bench.batch_costs          # prints the table and the MOOT_LOCAL_BATCH_COSTS value that pins it

The engine decides its n-gram guesses by a fixed table (``EngineSettings.batch_costs``), so that a greedy reply
depends on its prompt alone and not on the machine's load (``moot/embedded/_lookahead.py``). The built-in
table (``DEFAULT_BATCH_COSTS``) was measured with this script on the machine kind moot is built on; on another
CPU, run it and set ``MOOT_LOCAL_BATCH_COSTS`` to what it prints. Each size is timed after the same 600-token
prompt, its KV cells dropped between repetitions; the figure is the median over the repetitions.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from bench._common import machine, write_json
from moot.embedded import model_path
from moot.embedded._llama_cpp import load
from moot.embedded._settings import DEFAULT_BATCH_COSTS, format_batch_costs, physical_cores

SIZES = (1, 2, 3, 4, 5, 7, 9, 13)
PROMPT = "def slugify(title):\n    return title.lower().replace(' ', '-')\n" * 30


def measure(repetitions: int = 15) -> dict[str, Any]:
    """Median seconds per batch size (every position's logits, as a guess's check computes them) and ratios."""
    model = load(model_path(), n_ctx=4096, threads=physical_cores())
    prompt = model.tokenize(PROMPT.encode())[:600]
    model.clear_kv()
    model.n_tokens = 0
    model.eval(prompt)
    start, batch = model.n_tokens, prompt[100 : 100 + max(SIZES)]
    seconds: dict[int, list[float]] = {size: [] for size in SIZES}
    for _ in range(repetitions):
        for size in SIZES:  # interleaved, so a change of load touches every size alike
            model.drop_kv_from(start)
            model.n_tokens = start
            began = time.perf_counter()
            model.decode(batch[:size], logits_all=size > 1)
            seconds[size].append(time.perf_counter() - began)
    medians = {size: statistics.median(times) for size, times in seconds.items()}
    ratios = {size: round(medians[size] / medians[1], 1) for size in SIZES if size > 1}
    table = tuple(sorted(ratios.items()))
    return {
        "machine": machine(),
        "repetitions": repetitions,
        "median_ms": {size: round(value * 1000, 2) for size, value in medians.items()},
        "ratios": ratios,
        "env": format_batch_costs(table),
        "built_in": format_batch_costs(DEFAULT_BATCH_COSTS),
    }


def main() -> None:
    data = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
    for size, ms in data["median_ms"].items():
        print(f"{size:>3} tokens  {ms:7.2f} ms  x{data['ratios'].get(size, 1.0):.1f}")
    print(f"MOOT_LOCAL_BATCH_COSTS={data['env']}  (built in: {data['built_in']})")
    write_json("batch_costs", data)


if __name__ == "__main__":
    main()
