"""The one place that owns the boundary between moot and what it did not write.

Caches, result stores, suite files, what a program printed, what a model replied: all of it is *data*,
decoded strictly (undecodable parts escaped, never an exception), bounded (size, depth, digits, nodes),
shown terminal-safe, and never unpickled or executed; an argument given to a constructor is checked here too.
Everything in moot that reads outside input calls this package rather than ``json.loads``, ``yaml.load`` or
``print`` directly.
"""

from moot.boundary._arguments import (
    argument_error,
    checked_choice,
    checked_count,
    checked_mapping,
    checked_number,
    checked_optional_text,
    checked_pattern,
    checked_strings,
    checked_text,
    shown,
)
from moot.boundary._data import DataBounds, json_depth, load_json, load_json_as, load_yaml, yaml_document
from moot.boundary._python import compile_python, parse_python, unparse_python
from moot.boundary._reading import read_bounded
from moot.boundary._sqlite import SQLITE_ERRORS, open_sqlite, require_columns
from moot.boundary._terminal import TerminalConsole, safe_rich_text
from moot.boundary._text import clip, one_line, terminal_safe, text_in, text_of

__all__ = [
    "SQLITE_ERRORS",
    "DataBounds",
    "TerminalConsole",
    "argument_error",
    "checked_choice",
    "checked_count",
    "checked_mapping",
    "checked_number",
    "checked_optional_text",
    "checked_pattern",
    "checked_strings",
    "checked_text",
    "clip",
    "compile_python",
    "json_depth",
    "load_json",
    "load_json_as",
    "load_yaml",
    "one_line",
    "open_sqlite",
    "parse_python",
    "read_bounded",
    "require_columns",
    "safe_rich_text",
    "shown",
    "terminal_safe",
    "text_in",
    "text_of",
    "unparse_python",
    "yaml_document",
]
