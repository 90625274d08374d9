"""The schema the embedded model's grammar is built from: the tightest that compiles, and a warning otherwise.

It needs no llama.cpp (a served model is sent the same schema); only the check of llama.cpp's rule order does."""

from __future__ import annotations

import json
import logging
import re

import pytest
from pydantic import BaseModel, Field

from moot.arbiters import Verdict
from moot.models._reply_schema import GRAMMAR_MAX_LENGTH, NUMBER_DECIMALS, NUMBER_LIMIT, grammar_schema
from moot.roles import Opening, Position
from moot.roles._position import STATEMENT


def test_a_schema_that_compiles_whole_keeps_every_bound_and_warns_nothing(caplog):
    with caplog.at_level(logging.WARNING):
        schema = grammar_schema(Opening, lambda candidate: True)
    assert schema["properties"]["key_arguments"]["items"]["pattern"] == STATEMENT
    assert schema["properties"]["reasoning"]["maxLength"] <= GRAMMAR_MAX_LENGTH
    assert not caplog.records


def test_dropping_bounds_is_said_aloud_naming_the_schema(caplog):
    refused = []

    def compiles(candidate: dict) -> bool:
        keeps_items = "pattern" in json.dumps(candidate["properties"]["key_arguments"])
        refused.append(keeps_items)
        return not keeps_items

    with caplog.at_level(logging.WARNING):
        schema = grammar_schema(Opening, compiles)
    assert refused == [True, False]
    assert "maxLength" in schema["properties"]["reasoning"]  # only the list items lost theirs
    assert [r.getMessage() for r in caplog.records] == [
        "the grammar for Opening drops its list items' string bounds (the full schema does not compile); "
        "replies are still validated against them"
    ]


def test_nothing_compiles_is_an_error_naming_the_schema():
    with pytest.raises(ValueError, match="no grammar can be built for Opening"):
        grammar_schema(Opening, lambda candidate: False)


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("billing shares 6 tables", True),
        ("  two words  ", True),
        ("line\nbreak", True),
        ("confidence", False),
        ("0.8", False),
        ("   ", False),
        ("", False),
    ],
)
def test_a_statement_is_two_words_or_more(text, statement):
    assert bool(re.fullmatch(STATEMENT, text)) is statement


def test_numbers_get_a_finite_number_of_digits_in_the_grammar():
    """A bare JSON number lets a small model write digits until max_tokens (seen: a 900-digit confidence)."""
    schema = grammar_schema(Opening, lambda candidate: True)
    confidence = schema["properties"]["confidence"]
    assert (confidence["minimum"], confidence["maximum"], confidence["multipleOf"]) == (0.0, 1.0, 10**-NUMBER_DECIMALS)

    class Counted(BaseModel):
        count: int
        ratio: float = Field(gt=0)

    bounded = grammar_schema(Counted, lambda candidate: True)["properties"]
    assert (bounded["count"]["minimum"], bounded["count"]["maximum"]) == (-NUMBER_LIMIT, NUMBER_LIMIT)
    assert "multipleOf" not in bounded["count"]  # an integer has no decimals to bound
    assert bounded["ratio"]["exclusiveMinimum"] == 0 and bounded["ratio"]["maximum"] == NUMBER_LIMIT


def test_the_grammar_keeps_the_field_order_on_both_grammar_backends():
    """llama.cpp's grammar writes required fields first: Position would be decoded answer first, reasoning last."""
    LlamaGrammar = pytest.importorskip("llama_cpp").LlamaGrammar
    for output in (Position, Verdict):
        schema = grammar_schema(output, lambda candidate: True)
        fields = list(output.model_json_schema()["properties"])
        assert schema["required"] == fields
        root = next(
            line
            for line in LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)._grammar.splitlines()
            if line.startswith("root ::=")
        )
        kv = [f"{field.replace('_', '-')}-kv" for field in fields]
        assert [root.index(rule) for rule in kv] == sorted(root.index(rule) for rule in kv), root


def test_a_simpler_grammar_still_bounds_numbers_and_keeps_the_field_order():
    """The fallbacks drop string bounds only: a grammar llama.cpp accepts must not let numbers or order loose."""
    tried = []

    def compiles(candidate: dict) -> bool:
        tried.append(candidate)
        return "maxLength" not in json.dumps(candidate)

    schema = grammar_schema(Position, compiles)
    assert len(tried) == 3 and schema is tried[-1]
    confidence = schema["properties"]["confidence"]
    assert (confidence["minimum"], confidence["maximum"], confidence["multipleOf"]) == (0.0, 1.0, 10**-NUMBER_DECIMALS)
    assert schema["required"] == list(Position.model_json_schema()["properties"])
