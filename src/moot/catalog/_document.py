"""A catalog file read with the line of every field, so any error can point at the line to fix.

Every problem with a catalog file (bad YAML, an unknown or missing field, a
value that does not validate, a template that does not render) is one
:class:`CatalogError`: ``FILE:LINE: what is wrong; what is valid``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from jinja2 import Environment, StrictUndefined, TemplateError, TemplateSyntaxError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.boundary import DataBounds, one_line, read_bounded, yaml_document
from moot.errors import ConfigError

__all__ = ["NAME_PATTERN", "CatalogError", "CatalogFile", "Document", "read_document"]

NAME_PATTERN = r"^[a-z][a-z0-9_]*$"
CATALOG_BOUNDS = DataBounds(max_bytes=1_000_000, max_depth=32, max_nodes=100_000)
"""A role, preset, arbiter or scenario file: a page of fields, a few levels deep. A file past these bounds (an
alias bomb, a megabyte of nesting) is refused before it is built, in one line."""
"""A catalog entry's name: lowercase letters, digits and '_', a letter first."""

Model = TypeVar("Model", bound=BaseModel)


class CatalogFile(BaseModel):
    """What every catalog file holds (a role, a team preset, an arbiter, a scenario): a name and a description.

    Its kind adds the rest; a field that no kind declares is an error, as a misspelt one would be.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    """Roles, team presets and arbiters are found by name, so theirs must be the file's name without ``.yaml``."""
    description: str = Field(min_length=1)


Named = TypeVar("Named", bound=CatalogFile)


class CatalogError(ConfigError):
    """A catalog file is wrong; the message names the file and line."""

    def __init__(self, path: Path, line: int, problem: str) -> None:
        super().__init__(f"{_shown(path)}:{line}: {problem}")
        self.path, self.line = path, line


def _shown(path: Path) -> str:
    """The path relative to the current directory when it is inside it (what a user typed), else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Document:
    """A parsed YAML mapping plus its node tree (for line numbers)."""

    path: Path
    data: dict[str, Any]
    node: yaml.MappingNode

    def line(self, loc: Sequence[str | int] = ()) -> int:
        """The 1-based line of the field at ``loc`` (a pydantic error location), or of its nearest parent."""
        node: yaml.Node = self.node
        line = node.start_mark.line + 1
        for part in loc:
            child = _child(node, part)
            if child is None:
                break
            key, node = child
            line = key.start_mark.line + 1
        return line

    def error(self, problem: str, loc: Sequence[str | int] = ()) -> CatalogError:
        return CatalogError(self.path, self.line(loc), problem)

    def validate_named(self, model: type[Named]) -> Named:
        """``validate``, and the entry's ``name`` must be its file's name: lookup by name finds files by name."""
        spec = self.validate(model)
        if spec.name != self.path.stem:
            raise self.error(f"name {spec.name!r} must match the file name {self.path.stem!r}", ["name"])
        return spec

    def validate(self, model: type[Model]) -> Model:
        """The document as ``model`` (which should forbid extra fields); the first problem is the error."""
        try:
            return model.model_validate(self.data)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise self.error(_problem(first, model), first["loc"]) from None

    def render(self, field: str, variables: Mapping[str, Any]) -> str:
        """Render the text of ``field`` as a Jinja template (undefined variables are errors, not blanks)."""
        text = self.data[field]
        key, value = _child(self.node, field) or (self.node, self.node)
        # A block scalar ("persona: |") starts on the line after its key; a plain one on the key's line.
        first = value.start_mark.line + (2 if getattr(value, "style", None) in ("|", ">") else 1)
        try:
            return _environment().from_string(text).render(**variables).strip()
        except TemplateSyntaxError as exc:
            line = first + (exc.lineno or 1) - 1
            raise CatalogError(self.path, line, f"{field}: template error: {exc.message}") from None
        except TemplateError as exc:
            valid = ", ".join(sorted(variables)) or "none"
            raise CatalogError(self.path, key.start_mark.line + 1, f"{field}: {exc}; variables: {valid}") from None


def _environment() -> Environment:
    return Environment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, autoescape=False)


def _child(node: yaml.Node, part: str | int) -> tuple[yaml.Node, yaml.Node] | None:
    if isinstance(node, yaml.MappingNode):
        return next(((k, v) for k, v in node.value if k.value == part), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part], node.value[part]
    return None


def _problem(error: Any, model: type[BaseModel]) -> str:
    loc = [str(p) for p in error["loc"]]
    where = ".".join(loc)
    if error["type"] == "extra_forbidden":
        valid = f"; valid fields: {', '.join(model.model_fields)}" if len(loc) == 1 else ""
        return f"unknown field {where!r}{valid}"
    if error["type"] == "missing":
        return f"missing field {where!r}"
    return f"{where}: {error['msg'][:1].lower()}{error['msg'][1:]}"


def read_document(path: Path) -> Document:
    """Read a YAML mapping, bounded (size, depth, aliases expanded); syntax errors are CatalogErrors with their line."""
    if isinstance(path, str):
        path = Path(path)
    if not isinstance(path, Path):
        raise ConfigError(f"read_document: path must be a file's path (str or Path), got {type(path).__name__}")
    raw = read_bounded(path, "catalog file", CATALOG_BOUNDS.max_bytes)
    try:
        node, data = yaml_document(raw, str(path), CATALOG_BOUNDS)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise CatalogError(path, line, f"not valid YAML: {one_line(str(exc.problem or exc.context))}") from None
    except yaml.YAMLError as exc:  # the reader's own refusals (a NUL, a byte that is not UTF-8) carry no mark
        raise CatalogError(path, 1, f"not valid YAML: {one_line(str(exc))}") from None
    if not isinstance(node, yaml.MappingNode) or not isinstance(data, dict):
        raise CatalogError(path, 1, "expected a mapping of fields (name: ..., description: ...)")
    return Document(path, data, node)
