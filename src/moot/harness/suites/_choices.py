"""An item's lettered choices shown in another order, and an answer given in that order read back.

A small model answering a closed answer set leans on the label, not the content: the embedded 0.5B model
answered "A" to 25 of 30 four-choice questions whose keys were spread evenly (docs/compare/multiple-choice-fresh).
Samples of one prompt share that lean, so a vote among them counts it several times. Shown the same choices
rotated (expert 2 sees the second choice as "A", expert 3 the third), a lean on "A" lands on a different choice
for each voter and the votes split, while a choice the voters pick for its content still collects them all. The
rotations are cyclic shifts, so every choice takes every place once across a full set of shifts (a Latin square,
as counterbalanced designs order their conditions).

Choices the question itself lists, each label once and in the answer set's order (``A) …  B) …``, ``(A) …``,
``A. …``, ``A: …``, inline or one per line), are moved where they stand. A closed set the question does not list
(``Yes, No``) is listed after it under letters (:func:`lettered_choices`), so a lean on one word becomes a lean on
one letter, which the rotation then splits the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ListedChoices", "choices_to_rotate", "closed_set_instruction", "lettered_choices", "listed_choices"]

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def closed_set_instruction(choices: tuple[str, ...]) -> str:
    """The line a suite file's closed-set item ends with, so every arm sees the set in the task itself."""
    return f"Answer with exactly one of: {', '.join(choices)}."


def _marker(label: str) -> str:
    """A choice's label where a list of choices starts a line or follows a space: ``A)``, ``(A)``, ``A.``, ``A:``."""
    return rf"(?:(?<=\s)|^)\(?{re.escape(label)}[).:][ \t]+"


@dataclass(frozen=True)
class ListedChoices:
    """The choices a question lists: the labels it lists them under, where each choice's text sits in the
    question, and the answer each choice stands for (its label, unless the question was lettered for a set it did
    not list)."""

    question: str
    labels: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    answers: tuple[str, ...] = ()
    """The item's answer set, choice by choice: the labels themselves when the question listed them."""

    def answer_of(self, place: int) -> str:
        return (self.answers or self.labels)[place]

    def texts(self) -> list[str]:
        return [self.question[start:end] for start, end in self.spans]

    def rotated(self, shift: int) -> str:
        """The question with its choices moved ``shift`` places: label i now shows the text of choice i + shift."""
        texts = self.texts()
        count = len(texts)
        question = self.question
        for place in reversed(range(count)):
            start, end = self.spans[place]
            question = question[:start] + texts[(place + shift) % count] + question[end:]
        return question

    def read_back(self, answer: str, shift: int) -> str:
        """An answer given to the rotated question (one of ``labels``), as the item's answer for the same choice.
        An answer that is no label (malformed) is returned unchanged: the vote and scoring judge it as it is."""
        labels = self.labels
        if answer not in labels:
            return answer
        return self.answer_of((labels.index(answer) + shift) % len(labels))


def listed_choices(question: str, labels: tuple[str, ...]) -> ListedChoices | None:
    """The choices ``question`` lists under the answer set's ``labels``, or None when it lists them not at all,
    not in order, or not each once: the question is then only ever shown as asked."""
    if len(labels) < 2:
        return None
    texts = [rf"{_marker(label)}([^\n]+?)" for label in labels]
    pattern = r"\s+".join([*texts[:-1], texts[-1] + r"[ \t]*(?=\n|$)"])
    matches = list(re.finditer(pattern, question))
    if len(matches) != 1:
        return None
    match = matches[0]
    spans = tuple(match.span(group) for group in range(1, len(labels) + 1))
    if any(len(re.findall(_marker(label), question)) != 1 for label in labels):
        return None
    return ListedChoices(question, labels, spans)


def lettered_choices(question: str, choices: tuple[str, ...]) -> ListedChoices | None:
    """A closed set the question does not list, listed after it under letters (``A) Yes``, ``B) No``), the set's
    own instruction line replaced by the letters'. None for a set of fewer than two or more than 26."""
    if not 2 <= len(choices) <= len(LETTERS):
        return None
    letters = tuple(LETTERS[: len(choices)])
    instruction = closed_set_instruction(choices)
    base = question[: -len(instruction)].rstrip() if question.endswith(instruction) else question
    listing = "\n".join(f"{letter}) {choice}" for letter, choice in zip(letters, choices, strict=True))
    lettered = f"{base}\n\n{listing}\n\n{closed_set_instruction(letters)}"
    listed = listed_choices(lettered, letters)
    return None if listed is None else ListedChoices(lettered, letters, listed.spans, answers=choices)


def choices_to_rotate(question: str, choices: tuple[str, ...]) -> ListedChoices | None:
    """The choices a rotation moves: those the question lists, else the set lettered after it."""
    return listed_choices(question, choices) or lettered_choices(question, choices)
