"""Every schema moot asks a model for bounds every string, so a reply cannot ramble in one until it is cut."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from moot.arbiters import Verdict
from moot.roles import Opening, Position, Rebuttal, known_roles, role
from moot.roles._plan import Plan, StepResult


def _unbounded_strings(node: Any, path: str = "") -> list[str]:
    """Paths of string schemas with neither a maxLength nor a closed set of values."""
    found = []
    if isinstance(node, dict):
        if node.get("type") == "string" and "maxLength" not in node and not {"enum", "const"} & node.keys():
            found.append(path or "/")
        for key, value in node.items():
            found += _unbounded_strings(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _unbounded_strings(value, f"{path}/{index}")
    return found


def _schemas() -> list[type[BaseModel]]:
    by_role = [role(name).output_type for name in known_roles()]
    return list(
        dict.fromkeys([t for t in by_role if t is not None] + [Position, Opening, Rebuttal, Verdict, Plan, StepResult])
    )


@pytest.mark.parametrize("output", _schemas(), ids=lambda t: t.__name__)
def test_every_string_a_role_is_asked_for_is_bounded(output: type[BaseModel]) -> None:
    assert _unbounded_strings(output.model_json_schema()) == []


def test_the_check_finds_an_unbounded_string() -> None:
    class Loose(BaseModel):
        note: str | None = None

    assert _unbounded_strings(Loose.model_json_schema()) == ["/properties/note/anyOf/0"]
