"""User suites from JSONL or YAML files, scored by exact match, regex, numeric tolerance, an LLM judge or tests.

JSONL: one item per line. YAML: a list of items, or a mapping with file-wide
defaults and ``items:``. An item's own fields win over the spec's parameters
(``qa.jsonl?scoring=numeric&tolerance=0.01``), which win over the file's
defaults. Fields::

    id, input (or question / prompt), answer (or target), scoring, pattern,
    tolerance, rel_tolerance, rubric, tests, visible_tests, entry_point, stub,
    choices (a closed answer set such as [Yes, No]: every arm's answer is
    constrained to it, and an exact-scored answer is compared as a choice)

A file or spec written before ``choices`` was so called still loads, its ``options`` taken as ``choices`` with a
DeprecationWarning; a suite's key keeps spelling the parameter ``options=`` (rows are stored under it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from moot._renamed import former_key
from moot.boundary import DataBounds, load_json, load_yaml
from moot.errors import ConfigError
from moot.harness.suites._choices import closed_set_instruction
from moot.harness.suites._examples import docstring_examples
from moot.harness.suites._humaneval import CODE_TASK_TEMPLATE
from moot.harness.suites._items import CodeTask, Item, Scorer, Suite
from moot.harness.suites._scorers import ChoiceMatch, CodeTests, ExactMatch, LLMJudge, NumericMatch, RegexMatch
from moot.harness.suites._selectors import FORMER_CHOICES, SpecParts, key_query, renamed_choices
from moot.roles import NUMBER
from moot.sandbox import validate_tests

__all__ = ["FILE_SUFFIXES", "MAX_ITEM_BYTES", "SCORING_KINDS", "file_suite", "suite_file"]

FILE_SUFFIXES = (".jsonl", ".yaml", ".yml")
SCORING_KINDS = ("exact", "regex", "numeric", "judge", "tests")
Scoring = Literal["exact", "regex", "numeric", "judge", "tests"]
_DEFAULT_KEYS = ("scoring", "tolerance", "rel_tolerance", "rubric", "choices")
"""What ``choices`` was called, in files, specs and the suite keys rows are stored under."""
MAX_ITEM_BYTES = 1_000_000
"""The largest item a suite file may hold: one JSONL line, or one YAML item written as JSON (1 MB; a whole
HumanEval problem with its tests is under 10 kB). Larger input is refused before it is loaded."""
MAX_FILE_BYTES = 64_000_000
"""The largest YAML suite file read (64 MB); a JSONL file is read a line at a time, each line bounded."""
ITEM_BOUNDS = DataBounds(max_bytes=MAX_ITEM_BYTES, max_depth=16)
"""One JSONL line: an item is a mapping of strings, numbers and lists of strings, a few levels deep at most."""
FILE_BOUNDS = DataBounds(max_bytes=MAX_FILE_BYTES, max_depth=16, max_nodes=2_000_000)
"""A YAML file: its size, nesting and values (aliases counted as expanded) bounded before anything is built."""


class FileItem(BaseModel):
    """One item as written in a suite file (validated, so a typo names the valid fields)."""

    model_config = ConfigDict(extra="forbid")

    id: str | int | None = None
    input: str | None = None
    question: str | None = None
    prompt: str | None = None
    answer: str | int | float | None = None
    target: str | int | float | None = None
    scoring: Scoring | None = None
    pattern: str | None = None
    tolerance: float | None = Field(default=None, ge=0)
    rel_tolerance: float | None = Field(default=None, ge=0)
    rubric: str | None = None
    tests: list[str] | None = None
    visible_tests: list[str] | None = None
    entry_point: str | None = None
    stub: str | None = None
    choices: list[str] | None = Field(default=None, min_length=2)
    """A closed answer set, e.g. [Yes, No]: answers are constrained to it and scored by the choice named."""

    @field_validator("choices", mode="before")
    @classmethod
    def _split_choices(cls, value: Any) -> Any:
        """``choices=Yes,No`` in a suite spec arrives as one string."""
        return [o.strip() for o in value.split(",") if o.strip()] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _has_a_task(self) -> FileItem:
        if not (self.text or self.stub):
            raise ValueError("an item needs 'input' (or 'question' / 'prompt'), or a code 'stub'")
        if (
            self.choices
            and self.expected is not None
            and not ChoiceMatch(self.expected, tuple(self.choices)).named(self.expected)
        ):
            raise ValueError(f"answer {self.expected!r} is not one of the choices {', '.join(self.choices)}")
        return self

    @property
    def text(self) -> str | None:
        return self.input or self.question or self.prompt

    @property
    def expected(self) -> str | None:
        value = self.answer if self.answer is not None else self.target
        return None if value is None else str(value)


class _Yaml12Loader(yaml.SafeLoader):
    """YAML with YAML 1.2's booleans: only true/false. Under 1.1 rules ``choices: [Yes, No]`` or
    ``answer: no`` would silently become booleans, and a yes/no suite could never be scored."""


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def suite_file(name: str) -> Path:
    """The suite file ``name`` names, or a one-line ConfigError saying what it is instead (missing, a directory,
    not a regular file) and what is valid, before anything reads it or writes for it."""
    path = Path(name).expanduser()
    valid = f"give a suite file ({' or '.join('PATH' + s for s in FILE_SUFFIXES)})"
    if path.is_dir():
        listed = sorted(p.name for p in path.iterdir() if p.suffix in FILE_SUFFIXES and p.is_file())[:3]
        inside = f", e.g. {path / listed[0]}" if listed else ""
        raise ConfigError(f"suite {name!r} is a directory; {valid}{inside}")
    if not path.exists():
        raise ConfigError(f"suite file {name!r} does not exist; {valid} or a named suite")
    if not path.is_file():
        raise ConfigError(f"suite {name!r} is not a regular file; {valid}")
    if path.suffix not in FILE_SUFFIXES:
        raise ConfigError(f"suite file {name!r} has no suite suffix; {valid}")
    return path


def _read(path: Path) -> tuple[list[Any], dict[str, Any]]:
    """The raw items and the file-wide defaults."""
    if path.suffix == ".jsonl":
        return _read_jsonl(path), {}
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConfigError(f"{path} holds {path.stat().st_size:,} bytes; at most {MAX_FILE_BYTES:,} are read")
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read suite file {path}: {exc.strerror or exc}") from None
    data = load_yaml(raw, str(path), FILE_BOUNDS, loader=_Yaml12Loader)
    listed = data.get("items") if isinstance(data, dict) else data
    for number, raw in enumerate(listed if isinstance(listed, list) else [], 1):
        _check_size(path, f"item {number}", len(json.dumps(raw, default=str).encode()))
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        unknown = set(data) - {"items", "description", FORMER_CHOICES, *_DEFAULT_KEYS}
        if unknown:
            raise ConfigError(
                f"{path}: unknown top-level keys {sorted(unknown)}; valid keys: items, description, "
                f"{', '.join(_DEFAULT_KEYS)}"
            )
        return data["items"], {k: v for k, v in data.items() if k != "items"}
    if isinstance(data, list):
        return data, {}
    raise ConfigError(f"{path} must hold a list of items, or a mapping with 'items:' (and file-wide defaults)")


def _read_jsonl(path: Path) -> list[Any]:
    """One item per line; a line is read only up to the size limit, so a huge one is refused, never loaded."""
    rows = []
    try:
        with path.open("rb") as lines:
            for number, raw in enumerate(iter(lambda: lines.readline(MAX_ITEM_BYTES + 1), b""), 1):
                _check_size(path, f"line {number}", len(raw.rstrip(b"\r\n")))
                if raw.strip():
                    rows.append(_json_line(path, number, raw))
    except OSError as exc:
        raise ConfigError(f"cannot read suite file {path}: {exc.strerror or exc}") from None
    return rows


def _json_line(path: Path, number: int, raw: bytes) -> Any:
    return load_json(raw, f"{path} line {number}", ITEM_BOUNDS)


def _check_size(path: Path, where: str, size: int) -> None:
    if size > MAX_ITEM_BYTES:
        raise ConfigError(
            f"{path} {where} is over the size limit of one item ({MAX_ITEM_BYTES:,} bytes); "
            "split it, or keep large data out of the suite file"
        )


def _scorer(item: FileItem, where: str) -> Scorer:
    kind = item.scoring or ("tests" if item.tests else "exact")
    expected = item.expected
    if kind == "tests":
        if not item.tests:
            raise ConfigError(f"{where}: scoring 'tests' needs a non-empty 'tests' list")
        return CodeTests(tuple(_compiled(item.tests, where, "tests")))
    if item.choices and kind == "exact" and expected is not None:
        return ChoiceMatch(expected, tuple(item.choices))
    if kind == "judge":
        return LLMJudge(reference=expected, rubric=item.rubric)
    if kind == "regex":
        if not (item.pattern or expected):
            raise ConfigError(f"{where}: scoring 'regex' needs 'pattern' (or the pattern in 'answer')")
        return RegexMatch(item.pattern or str(expected))
    if expected is None:
        raise ConfigError(f"{where}: scoring {kind!r} needs the expected 'answer'")
    if kind == "numeric":
        try:
            value = float(expected.replace(",", ""))
        except ValueError:
            raise ConfigError(f"{where}: scoring 'numeric' needs a numeric answer, got {expected!r}") from None
        return NumericMatch(
            value, abs_tol=item.tolerance if item.tolerance is not None else 1e-6, rel_tol=item.rel_tolerance or 0.0
        )
    return ExactMatch(expected)


def _compiled(tests: list[str], where: str, field: str) -> list[str]:
    """``tests`` if each one is valid Python: checked when the suite loads, so a test that cannot compile is refused
    before any results file or cache exists, not at its first row."""
    try:
        return validate_tests(tests)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {field}: {exc}") from None


def _code_task(item: FileItem, where: str) -> CodeTask | None:
    if not item.tests:
        return None
    if not item.entry_point:
        raise ConfigError(f"{where}: a code item (with 'tests') needs 'entry_point', the function to test")
    stub = item.stub or ""
    examples = docstring_examples(stub, item.entry_point)
    visible = tuple(_compiled(item.visible_tests, where, "visible_tests") if item.visible_tests else ())
    visible = visible or tuple(e.test for e in examples) or (f"assert callable({item.entry_point})",)
    return CodeTask(item.entry_point, stub, visible, tuple(e.call for e in examples))


def _item(raw: Any, index: int, defaults: dict[str, Any], path: Path) -> Item:
    where = f"{path} item {index + 1}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a mapping of fields, got {type(raw).__name__}")
    try:
        parsed = FileItem.model_validate({**defaults, **former_key(raw, FORMER_CHOICES, "choices", where=where)})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "item"
        valid = ", ".join(k for k in FileItem.model_fields)
        raise ConfigError(f"{where}: {field}: {first['msg']}; valid fields: {valid}") from None
    code = _code_task(parsed, where)
    task = parsed.text or CODE_TASK_TEMPLATE.format(stub=parsed.stub)
    choices = tuple(parsed.choices or ())
    if choices and code is None:  # every arm sees the same closed set in the task itself
        task = f"{task}\n\n{closed_set_instruction(choices)}"
    scorer = _scorer(parsed, where)
    return Item(
        id=str(parsed.id if parsed.id is not None else index + 1),
        task=task,
        scorer=scorer,
        reference=parsed.expected,
        code=code,
        choices=choices,
        answer_pattern=NUMBER if isinstance(scorer, NumericMatch) and code is None else None,
    )


def _spec_defaults(parts: SpecParts, label: str) -> dict[str, Any]:
    defaults: dict[str, Any] = {}
    renamed = renamed_choices(parts.params, label)
    parts.params.clear()
    parts.params.update(renamed)
    for key in _DEFAULT_KEYS:
        value = parts.take(key)
        if value is not None:
            defaults[key] = value
    if parts.params:
        raise ConfigError(
            f"suite {label!r}: unknown parameter(s) {', '.join(sorted(parts.params))}; "
            f"valid parameters for a file: {', '.join(_DEFAULT_KEYS)} (scoring: {', '.join(SCORING_KINDS)})"
        )
    if "scoring" in defaults and defaults["scoring"] not in SCORING_KINDS:
        raise ConfigError(
            f"suite {label!r}: unknown scoring {defaults['scoring']!r}; valid: {', '.join(SCORING_KINDS)}"
        )
    return defaults


def _portable(path: Path) -> str:
    """The file as the suite key names it: relative to the working directory when it lies under it, so a results
    folder committed beside its suite file (``docs/compare/suites/yes-no.jsonl``) finds its rows in any clone, at
    any path; an absolute path otherwise. (A key that changes only costs a recompute from the call cache.)"""
    resolved = path.resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(resolved)


def file_suite(path: Path, parts: SpecParts, label: str) -> Suite:
    overrides = _spec_defaults(parts, label)
    rows, defaults = _read(path)
    defaults = former_key(defaults, FORMER_CHOICES, "choices", where=str(path))
    description = str(defaults.pop("description", "") or "")
    items = [_item(raw, i, {**defaults, **overrides}, path) for i, raw in enumerate(rows)]
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{path}: item ids must be unique; repeated: {sorted({i for i in ids if ids.count(i) > 1})}")
    chosen = items[parts.slice] if parts.slice is not None else items
    if not chosen:
        raise ConfigError(f"suite {label!r} selects no items ({len(items)} in the file)")
    coded = {i.code is not None for i in chosen}
    if len(coded) > 1:
        raise ConfigError(f"{path}: mixes code items (with 'tests') and short-answer items; use one kind per file")
    query = key_query(overrides)
    return Suite(
        key=f"file:{_portable(path)}{'?' + query if query else ''}",
        label=label,
        items=tuple(chosen),
        answer_format="code" if coded == {True} else "short",
        description=description or f"{path.name} ({len(chosen)} items)",
    )
