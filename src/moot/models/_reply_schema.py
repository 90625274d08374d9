"""The JSON schema a structured reply is constrained to, wherever decoding is constrained.

One owner for both: the embedded engine turns it into a grammar (:func:`grammar_schema`, which falls back to a
simpler schema when llama.cpp's own grammar refuses the full one), and a served OpenAI-compatible model gets it
as ``response_format`` (:func:`served_schema`: the server compiles it, so there is nothing to try first). Either
way the reply is still validated against the output type itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

__all__ = ["GRAMMAR_MAX_LENGTH", "NUMBER_DECIMALS", "NUMBER_LIMIT", "clamped_schema", "grammar_schema", "served_schema"]

GRAMMAR_MAX_LENGTH = 800
NUMBER_DECIMALS = 4
"""Decimals a number may have in a grammar (a confidence of 0.8125 fits)."""
NUMBER_LIMIT = 10**15
"""The range a number without one gets in a grammar, so its integer digits are bounded too."""
_log = logging.getLogger(__name__)


def grammar_schema(output: type[BaseModel], compiles: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The JSON schema the engine turns into a grammar: the tightest version of it that compiles.

    With llguidance (the default) the first candidate, bounds clamped, compiles
    for every built-in schema: its lexer checks lengths without unrolling them.
    llama.cpp's own grammar (``MOOT_LOCAL_GRAMMAR=llama``) unrolls ``maxLength``
    into one nested rule per character and refuses a grammar whose repetitions
    grow too large, and a refused grammar crashes the process later (segfault)
    instead of raising. So each candidate is compiled first: bounds clamped (numbers bounded too),
    then bounds (lengths and patterns) inside arrays dropped, then all string bounds dropped.
    """
    schema = output.model_json_schema()
    # Every candidate is clamped: a simpler grammar still bounds its numbers and keeps the field order.
    candidates = (
        clamped_schema(output),
        _clamped(_without_bounds(schema, arrays_only=True)),
        _clamped(_without_bounds(schema)),
    )
    for number, candidate in enumerate(candidates):
        if compiles(candidate):
            if number:
                _log.warning(
                    "the grammar for %s drops %s string bounds (the full schema does not compile); "
                    "replies are still validated against them",
                    output.__name__,
                    "its list items'" if number == 1 else "all its",
                )
            return candidate
    raise ValueError(f"no grammar can be built for {output.__name__}; simplify its schema")


def clamped_schema(output: type[BaseModel]) -> dict[str, Any]:
    """``output``'s JSON schema with every bound a constrained decoder needs (see :func:`_clamped`): the
    tightest candidate of :func:`grammar_schema`, and the schema a served model is sent."""
    return _clamped(output.model_json_schema())


def served_schema(output: type[BaseModel]) -> dict[str, Any]:
    """The schema a served model is sent (``response_format``): :func:`clamped_schema` without regex patterns.

    A server compiles the schema itself, so there is no trying candidates first as the embedded engine does,
    and the llama.cpp family (llama.cpp's server, llama-cpp-python's, Ollama, LM Studio) copies a pattern's
    escapes (``\\s``, ``\\.``) verbatim into a grammar it then refuses, or crashes on when sampling starts.
    Lengths, item counts, choices, number bounds and the field order stay; a reply is still validated against
    its patterns.
    """
    return _clamped(_without_bounds(output.model_json_schema(), bounds=("pattern",)))


def _clamped(node: Any) -> Any:
    """``node`` with every string's ``maxLength`` capped, every number given a finite number of digits and
    every field of every object required.

    A JSON number is otherwise unbounded in a grammar: a small model asked for a confidence in [0, 1] was seen
    writing ``0.8934567893456789...`` until ``max_tokens`` cut the reply. So numbers get a range (when they
    have none) and at most :data:`NUMBER_DECIMALS` decimals.

    Fields are required so the reply is written in the schema's order, reasoning before verdict (verdict-first
    schemas made the small critic accept every wrong answer): llama.cpp's grammar puts required fields before
    optional ones, so an expert's ``Position`` came out answer first, reasoning last. A field with a default is
    then written explicitly (``"claim": null``). The reply is still validated against the schema itself.
    """
    if isinstance(node, dict):
        bounded = {
            key: min(value, GRAMMAR_MAX_LENGTH) if key == "maxLength" and isinstance(value, int) else _clamped(value)
            for key, value in node.items()
        }
        if node.get("type") == "object" and isinstance(node.get("properties"), dict):
            bounded["required"] = list(node["properties"])
        if node.get("type") in ("number", "integer"):
            bounded.setdefault("minimum", -NUMBER_LIMIT)
            bounded.setdefault("maximum", NUMBER_LIMIT)
            if node["type"] == "number":
                bounded.setdefault("multipleOf", 10**-NUMBER_DECIMALS)
        return bounded
    if isinstance(node, list):
        return [_clamped(value) for value in node]
    return node


STRING_BOUNDS = ("maxLength", "minLength", "pattern")


def _without_bounds(
    node: Any, arrays_only: bool = False, in_array: bool = False, bounds: tuple[str, ...] = STRING_BOUNDS
) -> Any:
    """``node`` without the keywords ``bounds`` (inside arrays only, if ``arrays_only``).

    A keyword is dropped only where its value is a bound (a string or a number): a field *named* ``pattern`` or
    ``maxLength`` has a schema (a dict) for its value and stays.
    """
    if isinstance(node, dict):
        drop = in_array or not arrays_only
        return {
            key: _without_bounds(value, arrays_only, in_array or key in ("items", "$defs"), bounds)
            for key, value in node.items()
            if not (drop and key in bounds and not isinstance(value, dict))
        }
    if isinstance(node, list):
        return [_without_bounds(value, arrays_only, in_array, bounds) for value in node]
    return node
