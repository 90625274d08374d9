"""An item's lettered choices shown in another order, and an answer given in that order read back.

A small model answering a closed answer set leans on the label, not the content: the embedded 0.5B model
answered "A" to 25 of 30 four-choice questions whose keys were spread evenly (docs/compare/multiple-choice-fresh).
Samples of one prompt share that lean, so a vote among them counts it several times. Shown the same choices
rotated (expert 2 sees the second choice as "A", expert 3 the third), a lean on "A" lands on a different choice
for each voter and the votes split, while a choice the voters pick for its content still collects them all. The
rotations are cyclic shifts, so every choice takes every place once across a full set of shifts (a Latin square,
as counterbalanced designs order their conditions).

Only choices the question itself lists, each label once and in the answer set's order (``A) …  B) …``,
``(A) …``, ``A. …``, ``A: …``, inline or one per line), can be moved; a closed set the question does not list
(``Yes, No``) is shown as asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ListedChoices", "listed_choices"]


def _marker(label: str) -> str:
    """A choice's label where a list of choices starts a line or follows a space: ``A)``, ``(A)``, ``A.``, ``A:``."""
    return rf"(?:(?<=\s)|^)\(?{re.escape(label)}[).:][ \t]+"


@dataclass(frozen=True)
class ListedChoices:
    """The choices a question lists: their labels (the item's answer set), in order, and where each choice's text
    sits in the question."""

    question: str
    labels: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]

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
        """An answer given to the rotated item, as the label of the same choice in the question as asked. An
        answer that is no label (malformed) is returned unchanged: the vote and scoring judge it as it is."""
        labels = self.labels
        if answer not in labels:
            return answer
        return labels[(labels.index(answer) + shift) % len(labels)]


def listed_choices(question: str, labels: tuple[str, ...]) -> ListedChoices | None:
    """The choices ``question`` lists under the answer set's ``labels``, or None when it lists them not at all,
    not in order, or not each once: the question is then only ever shown as asked."""
    if len(labels) < 2:
        return None
    texts = [rf"{_marker(label)}([^\n]+?)" for label in labels]
    pattern = r"\s+".join(texts[:-1] + [texts[-1] + r"[ \t]*(?=\n|$)"])
    matches = list(re.finditer(pattern, question))
    if len(matches) != 1:
        return None
    match = matches[0]
    spans = tuple(match.span(group) for group in range(1, len(labels) + 1))
    if any(len(re.findall(_marker(label), question)) != 1 for label in labels):
        return None
    return ListedChoices(question, labels, spans)
