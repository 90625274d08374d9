"""Fit over-long text fields of a structured reply to their caps at a sentence end.

A constrained decoder closes a string when it reaches the schema's
``maxLength``, which cuts the last sentence in half; another provider may
ignore the cap and fail validation for a few extra words. Both are fixed the
same way: the text is cut back to the last complete sentence that fits. Text
with no sentence end inside its cap is left as it is, for validation to judge.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["fit_text_lengths"]

_SENTENCE_END = re.compile(r"[.!?。](?=[\s\"')\]]|$)|\n")
_LIST_MARKER = re.compile(r"(?:^|\n)\s*(?:\d{1,3}|[A-Za-z])[.)]$")
"""A cut that would end on an enumeration marker ("2.") ends at the sentence before it instead."""


def fit_text_lengths(data: Any, schema: dict[str, Any]) -> Any:
    """``data`` (parsed JSON) with every string at or over its ``maxLength`` cut back to a sentence end."""
    return _fit(data, schema, schema.get("$defs", {}))


def _fit(data: Any, node: dict[str, Any], defs: dict[str, Any]) -> Any:
    node = _resolve(node, defs)
    if isinstance(data, str):
        cap = node.get("maxLength")
        return _to_sentence(data, cap) if isinstance(cap, int) and len(data) >= cap else data
    if isinstance(data, list) and isinstance(node.get("items"), dict):
        return [_fit(item, node["items"], defs) for item in data]
    if isinstance(data, dict) and isinstance(node.get("properties"), dict):
        properties = node["properties"]
        return {key: _fit(value, properties[key], defs) if key in properties else value for key, value in data.items()}
    return data


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return defs.get(ref.removeprefix("#/$defs/"), node)
    return node


def _to_sentence(text: str, cap: int) -> str:
    for end in reversed([match.end() for match in _SENTENCE_END.finditer(text[:cap])]):
        head = text[:end].rstrip()
        if head and not _LIST_MARKER.search(head):
            return head
    return text
