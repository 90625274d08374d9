"""Structured data from outside moot (JSON, YAML), parsed with bounded time and memory or refused in one line.

Python's parsers trust their input: ``json.loads`` recurses once per nesting level (a few kilobytes of
``[`` end in RecursionError), PyYAML expands aliases while it builds objects (586 bytes of nested aliases
become gigabytes), and both turn a 5,000-digit number into an exception of their own. Here every limit is
checked before anything else looks at the data:

* size first, on the raw bytes;
* JSON nesting with one linear scan, before ``json.loads`` is called;
* YAML as a node graph first (composing does not expand aliases), walked once with every alias counted
  as often as it would be expanded, stopping at the first node past the limit; only then built;
* numbers: non-finite constants (``NaN``, ``Infinity``) refused, integers past Python's digit limit
  refused as bad input rather than raised as ValueError.

Every refusal is a :class:`~moot.errors.ConfigError` whose message names the source and the limit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from moot.boundary._text import one_line, text_in
from moot.errors import ConfigError

__all__ = ["DataBounds", "json_depth", "load_json", "load_json_as", "load_yaml", "yaml_document"]

_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
"""A JSON string (an unclosed one runs to the end, so the scan never starts over inside it) or a bracket."""
_SURROGATE_ESCAPE = re.compile(r"\\[uU]0{0,4}[dD][89a-fA-F]")
"""A ``\\udXXX`` escape: JSON and YAML both turn it into a lone surrogate, which no UTF-8 writer accepts."""


@dataclass(frozen=True)
class DataBounds:
    """How much outside data may hold before it is refused: bytes, nesting depth, nodes (aliases expanded)."""

    max_bytes: int = 1_000_000
    max_depth: int = 64
    max_nodes: int = 200_000


DEFAULT_BOUNDS = DataBounds()


def _size(what: str, data: str | bytes, bounds: DataBounds) -> str:
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > bounds.max_bytes:
        raise ConfigError(f"{what} holds {size:,} bytes; at most {bounds.max_bytes:,} are read")
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{what} is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); save it as UTF-8"
            ) from None
    return data


def json_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in JSON text, strings skipped: one linear pass, no recursion.

    Every match either is a bracket or consumes a whole string (to the end of the text if it is never closed),
    so no character is scanned twice: text full of escaped quotes costs no more than any other text.
    """
    depth = deepest = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def load_json(data: str | bytes, what: str, bounds: DataBounds = DEFAULT_BOUNDS) -> Any:
    """JSON from outside, within ``bounds``; anything else is a one-line ConfigError naming ``what``."""
    text = _size(what, data, bounds)
    depth = json_depth(text)
    if depth > bounds.max_depth:
        raise ConfigError(f"{what} is nested {depth} levels deep; at most {bounds.max_depth} are read")
    try:
        return _valid_strings(json.loads(text, parse_constant=_no_constant), text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{what} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # digit limit, NaN/Infinity
        raise ConfigError(f"{what} is not valid JSON: {one_line(str(exc), 200)}") from None


def load_json_as(value: object, what: str, kind: type, bounds: DataBounds = DEFAULT_BOUNDS) -> Any:
    """JSON text kept in a stored column or field: it must be text, and decode (within ``bounds``) to a ``kind``."""
    if not isinstance(value, str):
        raise ConfigError(f"{what} holds {type(value).__name__}, not JSON text")
    data = load_json(value, what, bounds)
    if not isinstance(data, kind):
        raise ConfigError(f"{what} holds JSON that is not a {kind.__name__}")
    return data


def load_yaml(
    data: str | bytes, what: str, bounds: DataBounds = DEFAULT_BOUNDS, loader: type[yaml.SafeLoader] = yaml.SafeLoader
) -> Any:
    """YAML from outside, within ``bounds`` (aliases counted as expanded), built by a safe ``loader``."""
    try:
        return yaml_document(data, what, bounds, loader)[1]
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} is not valid YAML: {one_line(str(exc), 300)}") from None


def yaml_document(
    data: str | bytes, what: str, bounds: DataBounds = DEFAULT_BOUNDS, loader: type[yaml.SafeLoader] = yaml.SafeLoader
) -> tuple[yaml.Node | None, Any]:
    """The document's node graph and its value, within ``bounds``: for readers that point at a line.

    A bound crossed is a one-line ConfigError; a syntax error is left as PyYAML's ``YAMLError`` (with its
    mark), so the caller can name the line. :func:`load_yaml` is this for everyone else.
    """
    text = _size(what, data, bounds)
    parser = loader(text)  # its reader refuses characters YAML does not allow (a NUL) with a YAMLError
    try:
        node = parser.get_single_node()
        if node is None:
            return None, None
        _check_nodes(node, what, bounds)
        return node, _valid_strings(parser.construct_document(node), text)
    except RecursionError:
        raise ConfigError(f"{what} is nested too deeply; at most {bounds.max_depth} levels are read") from None
    except ValueError as exc:  # an int past the digit limit, as the constructor builds it
        if isinstance(exc, ConfigError):  # a bound crossed: already one line
            raise
        raise ConfigError(f"{what} holds a value that cannot be read: {one_line(str(exc), 200)}") from None
    finally:
        parser.dispose()


def _valid_strings(value: Any, source: str) -> Any:
    """``value`` with every string valid Unicode (a lone surrogate escaped by ``text_of``), so what was read can be
    written anywhere; a cheap scan of ``source`` skips the walk when no escape could have made one."""
    if _SURROGATE_ESCAPE.search(source) is None:
        return value
    return text_in(value)


def _check_nodes(root: yaml.Node, what: str, bounds: DataBounds) -> None:
    """Walk the node graph as construction would, aliases expanded, and stop at the first bound crossed."""
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > bounds.max_nodes:
            raise ConfigError(
                f"{what} expands to more than {bounds.max_nodes:,} values (aliases counted each time they are "
                "used); write the data out, or split the file"
            )
        if depth > bounds.max_depth:
            raise ConfigError(f"{what} is nested more than {bounds.max_depth} levels deep; flatten it")
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend(((key, depth + 1), (value, depth + 1)))
        elif isinstance(node.value, str) and len(node.value) > bounds.max_bytes:  # pragma: no cover - size bounds it
            raise ConfigError(f"{what} holds a value of {len(node.value):,} characters")
