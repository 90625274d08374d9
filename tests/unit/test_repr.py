"""Results in Jupyter: ReflectionResult and DebateResult render as HTML and Markdown (same content).

The results carry no ``_repr_html_``: ``moot.display`` registers IPython formatters for them (``_notebook.py``)."""

from __future__ import annotations

from html.parser import HTMLParser
from types import SimpleNamespace

import pytest
from IPython.core.formatters import DisplayFormatter
from IPython.core.interactiveshell import InteractiveShell
from rich.console import Console

from moot.conditions import Consensus, MaxRounds, ScoreThreshold
from moot.display import load_ipython_extension, result_blocks, result_html, result_markdown
from moot.display._notebook import register_with_running_shell
from moot.display._result_blocks import debate_blocks, reflection_blocks
from moot.display._rich_blocks import print_blocks
from moot.display.blocks import Note, Table
from moot.testing import ScriptedModel
from tests.conftest import make_critique, make_debate, make_position, make_rebuttal, make_reflection, make_verdict

TASK = "Write add(a, b)."


async def reflection_result(critic_tail: object = None):
    model = ScriptedModel(
        {
            "generator": ["def add(a, b): ...", "def add(a: int, b: int) -> int:  # <b>|</b>\n    return a + b"],
            "critic": [make_critique(55, "no type hints"), critic_tail or make_critique(91)],
        }
    )
    with model:
        return await make_reflection(model, ScoreThreshold(85) | MaxRounds(4), critic_retries=0).run(task=TASK)


async def debate_result():
    model = ScriptedModel(
        {
            "architect": [make_position("split"), make_rebuttal("keep")],
            "ops": [make_position("keep", confidence=0.9), make_rebuttal("keep")],
            "business": [make_position("keep"), make_rebuttal("keep")],
            "arbiter": [make_verdict("keep")],
        }
    )
    with model:
        return await make_debate(model, Consensus() | MaxRounds(3)).run(task="Split billing out?")


def section(markdown: str, caption: str) -> list[str]:
    """The lines of one Markdown table, found by its caption."""
    lines = markdown.split(f"**{caption}**\n\n", 1)[1].split("\n\n", 1)[0]
    return lines.splitlines()


async def test_reflection_markdown_shows_scores_verdicts_best_draft_tokens_and_transcript():
    result = await reflection_result()
    markdown = result_markdown(result)
    assert markdown.startswith("#### Reflection · 2 round(s)\n\n**stop reason:** quality threshold: score 91 >= 85")
    r1, r2 = (sum(u.prompt_tokens + u.completion_tokens for u in r.usage.values()) for r in result.rounds)
    assert section(markdown, "scores per round") == [
        "| round | score | verdicts | issues | tokens |",
        "|---|---|---|---|---|",
        f"| 1 | 55 | revise (55) | no type hints | {r1} |",
        f"| 2 | 91 | accept (91) | - | {r2} |",
    ]
    assert "**best draft (round 2, score 91):**" in markdown
    assert "```\ndef add(a: int, b: int) -> int:  # <b>|</b>\n    return a + b\n```" in markdown  # verbatim in code
    used = result.usage["critic"]
    row = (
        f"| critic | {used.prompt_tokens} | {used.completion_tokens} | {used.prompt_tokens + used.completion_tokens} |"
    )
    assert row in section(markdown, "tokens")
    assert [row.split(" | ")[:2] for row in section(markdown, "transcript (7 messages)")[2:]] == [
        ["| user", "task"],
        ["| generator", "draft (round 1)"],
        ["| critic", "critique"],
        ["| reflection", "round"],
        ["| generator", "draft (round 2)"],
        ["| critic", "critique"],
        ["| reflection", "round"],
    ]
    assert "# <b>\\|</b>" in section(markdown, "transcript (7 messages)")[6]  # a pipe cannot break the table


async def test_debate_markdown_shows_positions_per_round_agreement_and_verdict():
    result = await debate_result()
    markdown = result_markdown(result)
    assert section(markdown, "positions per round") == [
        "| expert | round 1 | round 2 |",
        "|---|---|---|",
        "| architect | split (0.70) | keep (0.70) |",
        "| ops | keep (0.90) | keep (0.70) |",
        "| business | keep (0.70) | keep (0.70) |",
        "| agreement | 0.67 | 1.00 |",
    ]
    assert "**verdict by arbiter (positions shown as " in markdown and "):** keep\n" in markdown
    assert "**confidence:** 0.80" in markdown
    assert "**stop reason:** consensus: agreement 1.00 >= 1 in round 2" in markdown
    assert "answer changes 1 (argued, adopted 1; unargued, not adopted 0), 0 of the 1 to an answer no other" in markdown
    assert "verdict keeps the first-round vote (keep): yes" in markdown
    assert section(markdown, "tokens")[-1].startswith("| total | ")
    assert "| arbiter | verdict | decision keep, confidence 0.80: ops argued best for keep, and no other" in markdown
    assert "**decided by:** ops's argument" in markdown


class _Checker(HTMLParser):
    """Fails on unbalanced tags; collects text."""

    VOID = frozenset({"br", "hr", "img"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open.pop() == tag, f"unbalanced </{tag}>"

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.parametrize("make", [reflection_result, debate_result])
async def test_html_is_well_formed_escaped_and_says_what_markdown_says(make):
    result = await make()
    checker = _Checker()
    checker.feed(result_html(result))
    checker.close()
    assert checker.open == []
    text = "".join(checker.text)
    assert result.stop_reason in text
    assert "tokens" in text and "transcript" in text
    assert "<b>|</b>" not in result_html(result)  # model output is escaped, never markup


async def test_a_partial_result_is_flagged_in_both_renderings():
    result = await reflection_result(critic_tail="not json at all")
    assert result.partial
    assert '<p style="color:#b00020"><b>partial result:</b>' in result_html(result)
    assert "> **partial result:** the run ended on a fault" in result_markdown(result)
    assert "latest draft (unscored)" not in result_markdown(result)  # round 1 was scored: it is the best so far


@pytest.mark.parametrize("make", [reflection_result, debate_result])
async def test_jupyter_picks_up_both_representations(make):
    """In a kernel the shell runs before ``moot.display`` is imported, and the import registers the formatters."""
    result = await make()
    shell = InteractiveShell.instance()
    register_with_running_shell()  # what importing moot.display does inside a running shell
    data, _ = shell.display_formatter.format(result)
    assert {"text/html", "text/markdown", "text/plain"} <= set(data)
    assert data["text/markdown"] == result_markdown(result)
    assert data["text/html"] == result_html(result)


async def test_load_ext_teaches_a_shell_started_later():
    """``%load_ext moot.display`` calls ``load_ipython_extension``; the result itself carries no ``_repr_html_``."""
    result = await reflection_result()
    shell = SimpleNamespace(display_formatter=DisplayFormatter())
    assert "text/html" not in shell.display_formatter.format(result)[0]
    load_ipython_extension(shell)
    data, _ = shell.display_formatter.format(result)
    assert data["text/html"] == result_html(result) and data["text/markdown"] == result_markdown(result)


async def test_a_result_is_described_by_the_function_registered_on_its_type():
    reflection, debate = await reflection_result(), await debate_result()
    assert result_blocks(reflection) == reflection_blocks(reflection)
    assert result_blocks(debate) == debate_blocks(debate)


@pytest.mark.parametrize("make", [reflection_result, debate_result])
async def test_the_terminal_shows_the_blocks_a_notebook_shows(make):
    """``moot run`` prints a result through the same description as Jupyter: every note and table cell."""
    result = await make()
    blocks = reflection_blocks(result) if make is reflection_result else debate_blocks(result)
    console = Console(record=True, width=400)
    print_blocks(console, blocks)
    text = console.export_text()
    for block in blocks:
        if isinstance(block, Note):
            assert f"{block.label}: {block.text}" in text
        elif isinstance(block, Table) and not block.folded:
            assert all(" ".join(cell.split()) in text for row in block.rows for cell in row)
        elif isinstance(block, Table):
            assert block.caption in text


@pytest.mark.parametrize("make", [reflection_result, debate_result])
async def test_rich_print_of_a_result_shows_moots_view_not_the_dataclass(make):
    """``rich.print(result)`` printed a 9.5k-character repr of every field; it prints what ``moot run`` shows."""
    import io
    import subprocess
    import sys

    import rich

    from moot.display import result_renderable

    result = await make()
    printed, expected = io.StringIO(), Console(record=True, width=100, file=io.StringIO())
    rich.print(result, file=printed)  # rich.print takes a file: a console of its own, at the default width
    expected.print(result_renderable(result))
    assert "TaskResult(" not in printed.getvalue() and "messages=[" not in printed.getvalue()
    shown = Console(record=True, width=100, file=io.StringIO())
    shown.print(result)
    assert shown.export_text() == expected.export_text()
    # the hook is there for whoever imports moot at all, not only after importing moot.display themselves
    code = "import sys; from moot.teams import DebateResult; print(hasattr(DebateResult, '__rich__'))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "True\n"


def test_display_plots_is_an_attribute_after_import_moot_display():
    import subprocess
    import sys

    code = "import moot.display; print(moot.display.plots.plot_run.__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, "plot_run\n"), done.stderr
    blocked = (
        "import sys; sys.modules['matplotlib'] = None\nimport moot.display\ntry:\n    moot.display.plots\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)"
    )  # matplotlib missing (the plot extra not installed): one line naming the extra
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("MissingExtraError ") and "plot" in done.stdout and done.stdout.count("\n") == 1
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        import moot.display

        _ = moot.display.nothing
