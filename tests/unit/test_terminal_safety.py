"""Text from outside moot is shown, never obeyed: no byte a terminal acts on reaches stdout or stderr."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from rich.markdown import Markdown
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from typer.testing import CliRunner

from moot._exit_codes import say_error
from moot.boundary._terminal import TerminalConsole, safe_rich_text
from moot.cli import app
from moot.display.blocks import Fold, Note, Paragraph, to_html, to_markdown
from tests.conftest import make_critique

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = (
    "a\x1b]52;c;cHduZWQ=\x07 clipboard, \x1b]0;title\x07 title, \x1b[2J clear, \x00 nul, \x9b31m c1, "
    "\u202e bidi, \x1b[31m red [bold]markup[/bold] [link=file:///etc/passwd]link[/link] \ud800"
)
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _printed(*renderables: object, **options: object) -> str:
    buffer = io.StringIO()
    console = TerminalConsole(file=buffer, color_system=None, width=60)
    for renderable in renderables:
        console.print(renderable, **options)  # type: ignore[arg-type]
    return buffer.getvalue()


def test_every_kind_of_renderable_is_shown_escaped():
    table = Table(HOSTILE)
    table.add_row(HOSTILE)
    out = _printed(HOSTILE, Text(HOSTILE, style="bold"), Panel(Markdown(HOSTILE), title=HOSTILE), table)
    assert RAW.search(out) is None
    assert "\\x1b]52;c;" in out and "\\x00" in out and "\\u202e" in out and "\\ud800" in out


def test_a_rule_and_soft_wrapped_lines_are_escaped_too():
    buffer = io.StringIO()
    console = TerminalConsole(file=buffer, color_system=None, width=40)
    console.rule(HOSTILE)
    console.print(HOSTILE, soft_wrap=True, markup=False)
    assert RAW.search(buffer.getvalue()) is None


def test_with_colour_on_only_rich_own_sequences_remain():
    buffer = io.StringIO()
    TerminalConsole(file=buffer, force_terminal=True, color_system="standard", width=200).print(
        Text(HOSTILE, style="red"), markup=False
    )
    without_sgr = re.sub(r"\x1b\[[0-9;]*m", "", buffer.getvalue())  # rich's own colour codes
    assert RAW.search(without_sgr) is None


def test_styled_spans_follow_the_escapes():
    text = Text.assemble(("\x1b[2J", "bold"), ("after", "red"))
    safe = safe_rich_text(text)
    assert safe.plain == "\\x1b[2Jafter"
    assert [(s.start, s.end, s.style) for s in safe.spans] == [(0, 7, "bold"), (7, 12, "red")]


def test_one_line_errors_are_escaped(capsys):
    say_error(f"boom: {HOSTILE}")
    err = capsys.readouterr().err
    assert err.startswith("moot: error: boom:") and err.count("\n") == 1
    assert RAW.search(err) is None


def test_the_written_report_forms_are_escaped():
    blocks = [Paragraph(HOSTILE), Note("error", HOSTILE), Fold("output", HOSTILE)]
    for written in (to_markdown(blocks), to_html(blocks)):
        assert RAW.search(written) is None
        assert "\\x1b]52;c;" in written
        written.encode("utf-8")


def test_a_model_reply_streamed_by_moot_run_reaches_the_terminal_escaped(tmp_path, monkeypatch):
    script = tmp_path / "script.json"
    reply = HOSTILE.replace("\ud800", "")  # a scripted reply is JSON text: everything but a lone surrogate
    script.write_text(
        json.dumps({"generator": [f"def f(): ...\n\n{reply}"], "critic": [make_critique(92).model_dump()]})
    )
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MOOT_STORE", str(tmp_path / "runs.sqlite3"))
    result = CliRunner().invoke(app, ["run", "code_review", "--model", f"scripted:{script}"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "\\x1b]52;c;" in result.stdout
    assert RAW.search(result.stdout) is None and RAW.search(result.stderr) is None
    shown = CliRunner().invoke(app, ["runs"])
    run_id = re.search(r"[0-9a-f]{32}", shown.stdout)
    if run_id is not None:
        show = CliRunner().invoke(app, ["show", run_id.group()])
        assert RAW.search(show.stdout) is None and RAW.search(show.stderr) is None
