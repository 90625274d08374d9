"""Which arm was chosen among variants run on the same items, and what that choice costs the figures.

An arm picked as the best of several variants of its family (``debate``, ``debate?rounds=2``, ...) on the items a
report shows is measured on the items that chose it: its accuracy is optimistic and its p-value against the
baseline is one of several tries. The report reads every arm configuration in the results folder (not only the
ones this comparison named), counts each reported arm's family there, corrects its p-value for the choice (Holm
over the family's variants, each tested against the baseline on the items both finished), and names the command
that confirms the arm on items that decided nothing. Scores are exact here (score = 1), as the report leads with.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from moot.errors import ConfigError
from moot.harness.arms._registry import arm_trait
from moot.harness.jobs._results import UNSTATED, ResultRow, ResultStore
from moot.harness.jobs._runner import Comparison, tuned_items
from moot.harness.reports._stats import bonferroni, compare_paired, exact_match, holm
from moot.harness.suites._selectors import parse_spec
from moot.harness.suites._suites import SUITE_FORMS, load_suite

__all__ = ["FolderFacts", "Selection", "Variant", "family", "folder_facts", "fresh_suite", "selections"]


def _is_baseline(label: str) -> bool:
    """Whether the arm every other arm's lead is measured against is ``label``'s family (its ``baseline`` trait:
    ``single``)."""
    return bool(arm_trait(family(label), "baseline", False))


def family(label: str) -> str:
    """An arm label's family: its name before the first ``?`` (``debate?rounds=2`` -> ``debate``)."""
    return label.split("?", 1)[0].strip()


class Variant(BaseModel):
    """One arm configuration of a family with rows on the report's items."""

    label: str
    n: int
    accuracy: float
    """Exact-match accuracy on its own finished items."""
    p_value: float = math.nan
    """Against the baseline, paired on the items both finished (McNemar exact); NaN without a baseline."""
    p_holm: float = math.nan
    """That p-value Holm-adjusted over the family's variants."""


class Selection(BaseModel):
    """A reported arm whose family has several variants run on the report's items."""

    arm: str
    family: str
    items: int
    """The report's items."""
    variants: list[Variant]
    rank: int
    """The reported arm's place by exact accuracy among the variants (1: the best; ties share the better place)."""
    baseline: str | None = None
    p_value: float = math.nan
    """The reported arm against the baseline, before the correction."""
    p_holm: float = math.nan
    p_bonferroni: float = math.nan
    confirm: str | None = None
    """The command that runs the arm (and the baseline) on items this folder never ran; None when none exist."""
    fresh: str = ""
    """Where fresh items come from, or why there are none."""
    held_out_items: int | None = None
    """When the folder records what it was tuned on (``--tuned-on``) and items are left: how many decided nothing."""
    held_out_accuracy: float | None = None
    """The arm's exact accuracy on those items alone."""
    held_out_baseline: float | None = None
    """The baseline's exact accuracy on them (None without a baseline)."""


class FolderFacts(BaseModel):
    """What a report reads from its results folder beyond its own rows."""

    purpose: str = UNSTATED
    selections: list[Selection] = []
    tuned_on: list[str] = []
    """The suite specs the folder records as having decided a choice made elsewhere (``--tuned-on``)."""
    decided: list[str] = []
    """The comparison's items some of them select."""
    idle: list[str] = []
    """Those of them that select none of the comparison's items (they decided nothing here)."""


def _variant_scores(rows: Sequence[ResultRow], names: Mapping[str, str]) -> dict[str, tuple[str, dict[str, float]]]:
    """Per arm configuration: its label (the comparison's own for its arms, else the stored one; a label two
    configurations share gets the other's key appended) and its exact scores by item."""
    found: dict[str, tuple[str, dict[str, float]]] = {}
    for row in rows:
        if row.status != "done" or row.score is None:
            continue
        label, scores = found.setdefault(row.arm_key, (names.get(row.arm_key, row.arm), {}))
        scores[row.item] = exact_match(row.score)
    seen: dict[str, int] = {}
    for label, _ in found.values():
        seen[label] = seen.get(label, 0) + 1
    return {
        key: (label if seen[label] == 1 or key in names else f"{label} [{key[:8]}]", scores)
        for key, (label, scores) in found.items()
    }


def _p(a: dict[str, float], b: dict[str, float]) -> float:
    shared = [item for item in a if item in b]
    if not shared:
        return math.nan
    return compare_paired([a[i] for i in shared], [b[i] for i in shared], binary=True).test.p_value


def _selection(
    arm: str, key: str, scored: dict[str, tuple[str, dict[str, float]]], baseline: tuple[str, str] | None, items: int
) -> Selection | None:
    """The selection behind ``arm`` (its config ``key``), or None when its family ran only it on these items."""
    mine = family(arm)
    keys = [k for k, (label, _) in scored.items() if family(label) == mine]
    if len(keys) < 2 or key not in keys:
        return None
    base = scored[baseline[1]][1] if baseline is not None and baseline[1] in scored else None
    variants = [
        Variant(label=scored[k][0], n=len(scored[k][1]), accuracy=sum(scored[k][1].values()) / len(scored[k][1]),
                p_value=_p(scored[k][1], base) if base is not None else math.nan)
        for k in keys
    ]  # fmt: skip
    for variant, adjusted in zip(variants, holm([v.p_value for v in variants]), strict=True):
        variant.p_holm = adjusted
    chosen = variants[keys.index(key)]
    tried = sum(not math.isnan(v.p_value) for v in variants)
    return Selection(
        arm=arm, family=mine, items=items, variants=sorted(variants, key=lambda v: -v.accuracy),
        rank=1 + sum(v.accuracy > chosen.accuracy for v in variants),
        baseline=baseline[0] if base is not None else None, p_value=chosen.p_value, p_holm=chosen.p_holm,
        p_bonferroni=bonferroni(chosen.p_value, tried) if tried else math.nan,
    )  # fmt: skip


def selections(
    comparison: Comparison, rows: Sequence[ResultRow], used: tuple[set[str], set[str]] = (set(), set())
) -> list[Selection]:
    """Per arm family of ``comparison`` with several variants in ``rows`` (all the folder's rows on the comparison's
    items): the selection behind the best-ranked variant the comparison shows (the one a reader would take as its
    result), with the command that confirms it on fresh items (``used``: see :func:`fresh_suite`)."""
    names = {compared.key: compared.label for compared in comparison.arms if compared.key}
    scored = _variant_scores(rows, names)
    baseline = next(((c.label, c.key) for c in comparison.arms if _is_baseline(c.label) and c.key), None)
    found: dict[str, Selection] = {}
    for compared in comparison.arms:
        own_base = baseline if baseline is not None and baseline[0] != compared.label else None
        chosen = _selection(compared.label, compared.key, scored, own_base, len(comparison.suite.items))
        if chosen is None or (chosen.family in found and found[chosen.family].rank <= chosen.rank):
            continue  # one warning per family: for the variant of it the comparison shows that ranks best
        arms = [compared.label] + ([own_base[0]] if own_base is not None else [])
        spec, chosen.fresh = fresh_suite(comparison.request.suite, (used[0], used[1] | {r.item for r in rows}))
        chosen.confirm = None if spec is None else confirm_command(comparison, spec, arms)
        found[chosen.family] = chosen
    return list(found.values())


def folder_facts(comparison: Comparison) -> FolderFacts:
    """The folder's purpose and the selections behind the comparison's arms (nothing when it has no results file,
    as for a comparison built by hand)."""
    path = comparison.results_path
    if not path.is_file():
        return FolderFacts()
    store = ResultStore(path, read_only=True)
    try:
        suite = comparison.suite.key
        purpose = store.purpose()
        tuned_on = store.tuned_on()
        rows = store.rows(suite, store.arm_keys(suite), [item.id for item in comparison.suite.items])
        used = (store.suite_keys(), store.items(suite))
    finally:
        store.close()
    decided, idle = tuned_items(tuned_on, comparison.suite, f"results file {path}: meta key tuned_on")
    return FolderFacts(
        purpose=purpose, selections=selections(comparison, rows, used), tuned_on=tuned_on, decided=decided, idle=idle
    )


_SEED = re.compile(r"(?<=[?&])seed=[^&]*")


def fresh_suite(spec: str, used: tuple[set[str], set[str]]) -> tuple[str | None, str]:
    """A suite spec of items the folder never ran (``used``: its suite keys and its item ids), with a note saying
    where they come from; None and the reason when the source has none left.

    A reasoning-gym task draws new items from another seed (the first one the folder has no row of); a sliced
    suite takes the items after its slice (or before it), less any the folder already ran.
    """
    keys, items = used
    parts = parse_spec(spec, what="suite spec", forms=SUITE_FORMS)
    if parts.name.startswith("reasoning-gym:"):
        seed = int(parts.params.get("seed", "1")) + 1
        task = parts.name.partition(":")[2].strip()
        while any(re.match(rf"reasoning-gym:{re.escape(task)}\?seed={seed}(&|$)", key) for key in keys):
            seed += 1
        joined = f"{spec}{'&' if '?' in spec else '?'}seed={seed}"
        fresh = _SEED.sub(f"seed={seed}", spec) if _SEED.search(spec) else joined
        return fresh, f"seed {seed} draws items this folder never ran"
    return _fresh_slice(spec, parts.slice, items)


def _fresh_slice(spec: str, cut: slice | None, used: set[str]) -> tuple[str | None, str]:
    whole_spec = re.sub(r"\[[^\]]*\]", "", spec, count=1)
    try:
        whole = [item.id for item in load_suite(whole_spec).items]
    except ConfigError as exc:
        return None, f"no fresh items found: the whole suite could not be read ({exc})"
    start, stop, _ = (cut or slice(None)).indices(len(whole))
    for low, high in ((stop, len(whole)), (0, start)):
        fresh = [i for i in whole[low:high] if i not in used]
        if fresh:
            ran = sum(i in used for i in whole[low:high])
            told = f"; {ran} of them already have rows in this folder: check that no decision used them" if ran else ""
            return _sliced(whole_spec, low, high), f"items {low} to {high - 1} of {len(whole)}{told}"
    return None, (
        f"no fresh items: this folder ran all {len(whole)} items of {whole_spec}; only items that decided nothing "
        "(outside every tuning slice) or another suite of the same answer kind can confirm it"
    )


def _sliced(spec: str, low: int, high: int) -> str:
    """``spec`` cut to items ``low:high``: the slice goes after the name and before any parameters (``NAME[SLICE]?k=v``,
    as the suite grammar reads it; after the parameters it would be read as part of the last one)."""
    name, mark, query = spec.partition("?")
    return f"{name}[{low}:{high}]{mark}{query}"


def confirm_command(comparison: Comparison, spec: str, arms: Sequence[str]) -> str:
    """The same compare command with the chosen arm (and the baseline) only, on ``spec``, into a folder of its own."""
    request = comparison.request
    words = ["moot", "compare", spec, "--arms", ",".join(arms)]
    for model in request.models:
        words += ["--model", model]
    words += ["--out", f"{request.out}-fresh", "--purpose", "evaluation"]
    return shlex.join(words)
