"""moot uses other packages through their public API only, but for the one llama-cpp-python adapter.

Read from the source with ``ast``, for every module of ``src/moot``:

* no private attribute (``x._name``, not a dunder) is read, assigned or deleted,
  nor named by a string to ``getattr`` and its kin, unless moot itself defines
  that name: a module, a function or method, a class or a class attribute, or
  an attribute assigned as ``self._name``;
* no private module or private name of another package is imported
  (``from llama_cpp._internals import ...``, ``from x import _y``);
* nothing of another package is patched: no assignment to (or deletion of) an
  attribute of a module or class imported from another package, nor
  ``setattr`` / ``delattr`` on one.

A private name of another package can change in any release; what moot needs
below llama-cpp-python's public API is in ``moot/embedded/_llama_cpp.py``,
which checks the installed version at import.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "moot"
ADAPTER = SRC / "embedded" / "_llama_cpp.py"
EXEMPT = {ADAPTER}
ALLOWED = {
    # The sandbox's child disarms fork_exec (which raises no audit event) before untrusted code runs in it.
    ("moot/sandbox/_confine.py", "import _posixsubprocess"),
    ("moot/sandbox/_confine.py", "patch _posixsubprocess.fork_exec"),
}
"""Uses found outside the adapter, each named with why; an entry nothing matches any more fails the test."""
DOCUMENTED = {"_exit"}
"""Names Python documents as public despite the underscore (``os._exit``: end a child without cleanup)."""

Finding = tuple[str, str]
"""Where (a path under src/) and what: ``.name``, ``import module``, ``patch target``."""


@cache
def _trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(SRC.rglob("*.py"))}


def _checked() -> Iterator[tuple[str, ast.Module]]:
    for path, tree in _trees().items():
        if path not in EXEMPT:
            yield path.relative_to(SRC.parent).as_posix(), tree


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _foreign(module: str) -> bool:
    """Not moot's: the sandbox's own modules are copied next to its scripts as ``_moot_*`` and imported so."""
    top = module.split(".")[0]
    return top not in ("moot", "__future__") and not top.startswith("_moot_")


# ------------------------------------------------------------------ private attributes
@cache
def _defined_by_moot() -> frozenset[str]:
    """Every name moot defines: modules and packages, functions and methods, classes and class attributes,
    and attributes assigned as ``self._x`` or ``cls._x``."""
    names = {path.stem for path in _trees()} | {path.name for path in SRC.rglob("*") if path.is_dir()}
    for tree in _trees().values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names.update(_class_attributes(node))
            if _is_own_attribute(node):
                names.add(node.attr)
    return frozenset(names)


def _class_attributes(node: ast.ClassDef) -> Iterator[str]:
    for statement in node.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        targets = [statement.target] if isinstance(statement, ast.AnnAssign) else targets
        yield from (target.id for target in targets if isinstance(target, ast.Name))


def _is_own_attribute(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    )


def _private_attributes(tree: ast.Module) -> Iterator[str]:
    defined = _defined_by_moot() | DOCUMENTED
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else _named_attribute(node)
        if name is not None and _private(name) and name not in defined:
            yield f".{name}"


def _named_attribute(node: ast.AST) -> str | None:
    """The attribute ``getattr``, ``hasattr``, ``setattr`` or ``delattr`` names by a string, if ``node`` is one."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) >= 2):
        return None
    name = node.args[1]
    if node.func.id in ("getattr", "hasattr", "setattr", "delattr") and isinstance(name, ast.Constant):
        return name.value if isinstance(name.value, str) else None
    return None


# --------------------------------------------------------------------- private imports
def _private_imports(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for module in modules:
            if _foreign(module) and any(_private(part) for part in module.split(".")):
                yield f"import {module}"


# ------------------------------------------------------------------------------ patches
def _foreign_names(tree: ast.Module) -> set[str]:
    """The names a module binds to another package's modules, classes and functions: by importing them, or by
    assigning one of those (or an attribute of one) to a name."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names if _foreign(alias.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _foreign(node.module):
            names.update(alias.asname or alias.name for alias in node.names)
    aliases = [node for node in ast.walk(tree) if isinstance(node, ast.Assign) and len(node.targets) == 1]
    aliases = [(node.targets[0].id, node.value) for node in aliases if isinstance(node.targets[0], ast.Name)]
    while new := {name for name, value in aliases if name not in names and _root(value) in names}:
        names |= new
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _targets(node: ast.AST) -> list[ast.expr]:
    """What ``node`` assigns or deletes an attribute of: its targets, or ``setattr``'s / ``delattr``'s object."""
    if isinstance(node, ast.Assign | ast.Delete):
        return [target for target in node.targets if isinstance(target, ast.Attribute)]
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target] if isinstance(node.target, ast.Attribute) else []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
        return node.args[:1]
    return []


def _patches(tree: ast.Module) -> Iterator[str]:
    foreign = _foreign_names(tree)
    for node in ast.walk(tree):
        for target in _targets(node):
            if _root(target) in foreign:
                yield f"patch {ast.unparse(target)}"


# -------------------------------------------------------------------------------- tests
def _found(check: Callable[[ast.Module], Iterator[str]]) -> set[Finding]:
    return {(path, what) for path, tree in _checked() for what in check(tree)}


def _refuse_unexpected(found: set[Finding], kind: str) -> None:
    unexpected = sorted(found - ALLOWED)
    assert not unexpected, f"{kind} outside the adapter: " + ", ".join(f"{path} {what}" for path, what in unexpected)


def test_no_private_attribute_moot_does_not_define_is_used_outside_the_adapter():
    _refuse_unexpected(_found(_private_attributes), "private names of other packages")


def test_no_private_module_or_name_of_another_package_is_imported_outside_the_adapter():
    _refuse_unexpected(_found(_private_imports), "private imports from other packages")


def test_nothing_of_another_package_is_patched_outside_the_adapter():
    _refuse_unexpected(_found(_patches), "assignments to other packages' modules or classes")


def test_every_allowed_use_is_still_there():
    found = _found(_private_imports) | _found(_patches) | _found(_private_attributes)
    assert ALLOWED <= found, f"stale entries: {sorted(ALLOWED - found)}"


def test_the_checks_see_what_they_forbid():
    tree = ast.parse(
        "import llama_cpp\nfrom autogen_agentchat.teams._group_chat import x\nfrom llama_cpp import _internals\n"
        "from autogen_agentchat.teams import BaseGroupChat\nBaseGroupChat.__init__ = None\n"
        "llama_cpp.llama.f = None\nsetattr(llama_cpp, 'g', None)\nllm._ctx.ctx\ngetattr(team, '_participants', ())\n"
    )
    assert list(_private_imports(tree)) == [
        "import autogen_agentchat.teams._group_chat",
        "import autogen_agentchat.teams._group_chat.x",
        "import llama_cpp._internals",
    ]
    assert list(_patches(tree)) == ["patch BaseGroupChat.__init__", "patch llama_cpp.llama.f", "patch llama_cpp"]
    assert sorted(_private_attributes(tree)) == ["._ctx", "._participants"]


def test_what_the_adapter_uses_below_llama_cpp_pythons_public_api():
    """The adapter's own inventory, seen by the same checks: the sampler chain, and the defaults swapped for an
    AMX build's load (its docstring says why each has no public way)."""
    tree = _trees()[ADAPTER]
    assert [*_private_attributes(tree), *_private_imports(tree), *_patches(tree)] == [
        "._init_sampler",
        "patch module.llama_model_default_params",
        "patch module.llama_model_default_params",
    ]
