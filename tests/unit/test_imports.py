"""The import graph stays layered: read from the source with ``ast``, so no module has to be imported.

Every import counts: one inside a function (a lazy import hides a cycle from Python, not from the reader) and
one under ``if TYPE_CHECKING:`` (it never runs, but the two modules still need each other to be read). Three
granularities are checked: units, ``moot``'s top-level modules and packages (``moot.cli``, ``moot.store``,
``moot.teams`` ...); the same one level down, inside every package that has sub-packages (``moot.harness``:
``arms``, ``jobs``, ``reports`` and ``suites`` imported each other in two cycles that no module cycle showed);
and single modules, so two modules of one package that import each other (``models/_spec`` and
``models/_providers`` did) are a cycle too.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "moot"

PRIVATE_ALLOWED = {
    # The command line mounts the harness's ``compare`` command; a Typer command is not library API.
    ("moot.cli", "moot.harness._cli"),
    # reasoning-gym's scorer evaluates answers, so its child confines itself with the sandbox's own layers and
    # keeps its work directories as a sandbox run's (swept the same way): the sandbox's machinery, not its API.
    ("moot.harness.suites._score_worker", "moot.sandbox._confine"),
    ("moot.harness.suites._score_worker", "moot.sandbox._sandbox"),
}
"""Imports of another package's private module (``from moot.X._y import`` outside ``moot/X/``) that are meant."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _child(package: str, module: str) -> str | None:
    """The child of ``package`` (a sub-package or module) that ``module`` is or lies in; None outside it, and for
    the package's own ``__init__``, which gathers its children and so imports them all."""
    if not module.startswith(package + "."):
        return None
    return ".".join(module.split(".")[: package.count(".") + 2])


def _child_graph(package: str) -> dict[str, set[str]]:
    """Which children of ``package`` import which others (``moot``'s children are the units)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in _edges():
        source_child, target_child = _child(package, source), _child(package, target)
        if source_child is not None and target_child is not None and source_child != target_child:
            graph[source_child].add(target_child)
    return graph


def _packages_with_subpackages() -> list[str]:
    """Every package of moot, ``moot`` itself included, one of whose children is a package."""
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    return sorted(name for name in packages if any(other.rpartition(".")[0] == name for other in packages))


def _imported(node: ast.ImportFrom) -> Iterator[str]:
    """The moot modules ``from X import a, b`` loads: ``X.a`` where that is a module (``from moot import cli``),
    else ``X`` itself."""
    assert node.module is not None
    for alias in node.names:
        submodule = f"{node.module}.{alias.name}"
        yield submodule if submodule in MODULES else node.module


def _imports(path: Path) -> Iterator[str]:
    """The moot modules ``path`` imports, wherever the import statement stands."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("moot"):
            yield from _imported(node)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.startswith("moot."))


def _edges() -> list[tuple[str, str]]:
    return [(module, target) for module, path in MODULES.items() for target in _imports(path)]


def _module_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in _edges():
        if source != target:
            graph[source].add(target)
    return graph


def _unit_graph() -> dict[str, set[str]]:
    return _child_graph("moot")


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), set()) - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _placed(body: list[ast.stmt], where: str) -> Iterator[tuple[ast.stmt, str]]:
    """Each statement of ``body`` and below with where it stands: ``module``, ``type-checking`` or ``function``."""
    for node in body:
        yield node, where
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _placed(node.body, "function")
        elif _is_type_checking(node):
            assert isinstance(node, ast.If)
            yield from _placed(node.body, "type-checking")
            yield from _placed(node.orelse, where)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from _placed([n for n in getattr(node, field, []) if isinstance(n, ast.stmt)], where)


def _placements(module: str, target: str) -> set[str]:
    """Where the import statements of ``module`` that load ``target`` stand (read apart from ``_imports``)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return {
        where
        for node, where in _placed(tree.body, "module")
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and target in _imported(node)
    }


ANCHORS = {
    ("moot.sandbox._cancel", "moot.sandbox._runner"): "type-checking",
    ("moot.tracing._tracer", "moot.store"): "function",
    ("moot.cli", "moot.harness._cli"): "module",
}
"""One import standing only in each place an import can stand, so the graph has each edge for that reason."""


def test_the_graph_sees_imports_in_functions_and_under_type_checking():
    edges = set(_edges())
    for (source, target), where in ANCHORS.items():
        placements = _placements(source, target)
        assert placements == {where}, f"{source} -> {target} stands {sorted(placements)}: pick another anchor"
        assert (source, target) in edges, f"the graph misses an import that stands {where}: {source} -> {target}"


def test_no_unit_imports_itself_back():
    graph = _unit_graph()
    cycles = sorted(unit for unit in list(graph) if unit in _reachable(graph, unit))
    assert not cycles, f"import cycles through: {', '.join(cycles)}"


def test_no_sub_package_imports_itself_back():
    packages = _packages_with_subpackages()
    assert {"moot", "moot.harness"} <= set(packages), f"the walk misses packages with sub-packages: {packages}"
    for package in packages:
        graph = _child_graph(package)
        cycles = sorted(child for child in list(graph) if child in _reachable(graph, child))
        assert not cycles, f"import cycles inside {package} through: {', '.join(cycles)}"


def test_no_module_imports_itself_back():
    graph = _module_graph()
    cycles = sorted(module for module in list(graph) if module in _reachable(graph, module))
    assert not cycles, f"import cycles through: {', '.join(cycles)}"


def test_entry_points_and_store_sit_on_no_cycle():
    graph = _unit_graph()
    for unit in ("moot.cli", "moot.testing", "moot.store", "moot.teams"):
        assert unit not in _reachable(graph, unit), f"{unit} imports itself back"
    assert "moot.teams" not in _reachable(graph, "moot.store"), "the run store must not load the teams"


def test_results_never_import_presentation():
    """A result is plain data; ``moot.display`` decides how it shows, dispatched on its type."""
    graph = _unit_graph()
    for unit in ("moot.teams", "moot.store", "moot.messages"):
        assert "moot.display" not in _reachable(graph, unit), f"{unit} imports the presentation package"


def _private_import(source: str, target: str) -> bool:
    """``target`` is a private module of a package other than ``source``'s."""
    parts = target.split(".")
    return len(parts) >= 3 and parts[2].startswith("_") and _unit(source) != _unit(target)


def test_cross_package_private_imports_are_only_the_allowed_ones():
    found = {(source, target) for source, target in _edges() if _private_import(source, target)}
    unexpected = sorted(found - PRIVATE_ALLOWED)
    assert not unexpected, "import from the package's __init__ instead: " + ", ".join(
        f"{source} -> {target}" for source, target in unexpected
    )
    assert not PRIVATE_ALLOWED - found, f"stale allow-list entries: {sorted(PRIVATE_ALLOWED - found)}"


def _documented_packages() -> list[tuple[str, set[str]]]:
    """The package table of docs/architecture.md: each package and what it imports, in the table's order."""
    doc = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = []
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`moot"):
            imports = {f"moot.{name.strip()}" for name in cells[2].split(",") if name.strip() not in ("", "–")}
            table.append((cells[0].strip("`"), imports))
    return table


def test_the_architecture_docs_package_table_is_the_code():
    table = _documented_packages()
    graph = _unit_graph()
    units = {u for u in graph} | {t for targets in graph.values() for t in targets}
    assert {name for name, _ in table} == units
    for position, (name, imports) in enumerate(table):
        assert imports == graph.get(name, set()), f"{name}: the table says {sorted(imports)}"
        earlier = {n for n, _ in table[:position]}
        assert imports <= earlier, f"{name} imports {sorted(imports - earlier)}, listed after it"
