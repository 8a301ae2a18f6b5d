"""The house's shape: packages by capability on floors, imports only downward, no circle hidden
behind an import inside a function, and small modules that say what they own."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "cluster_iac"

# From the ground up: a package imports only packages on lower floors (and itself); packages
# on one floor do not import each other. docs/architecture.md draws the same floors.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("base",),  # diagnostics, source positions, hostlists, names
    ("formats", "load"),  # one writer per output format; the spec file read with positions
    ("spec",),  # the validated models
    ("catalog",),  # the built-in hardware, merged with the spec's own entries
    ("plan",),  # the IR every check and emitter reads
    ("compile",),  # the passes that make the plan
    ("checks", "lock"),  # the validator; the lock file read and written
    ("emit", "write"),  # the families of output files; the atomic tree and --check
    ("change", "acceptance", "reconcile"),  # capabilities over the plan and rendered trees
    ("render",),  # the orchestrator
    ("cli",),  # the only place that prints or exits
    ("__main__",),
)
FLOOR = {package: floor for floor, packages in enumerate(FLOORS) for package in packages}
MAX_LINES = 400


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _sources() -> dict[str, Path]:
    return {_module(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@cache
def _imports(path: Path, module: str) -> list[tuple[str, bool, int]]:
    """(imported cluster_iac module, inside a function, line) of each import in the file."""
    tree = ast.parse(path.read_text())
    found: list[tuple[str, bool, int]] = []
    modules = _sources()

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            deeper = inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            names: list[str] = []
            if isinstance(child, ast.ImportFrom) and child.module:
                base = child.module
                if child.level:  # relative: not used in this house, but resolve it anyway
                    base = ".".join(module.split(".")[:-child.level] + [child.module])
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                         for a in child.names]
            elif isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            # an import for type checkers only still ties the two files (drawn as an arrow)
            found.extend((name, deeper, child.lineno) for name in names
                         if name.startswith("cluster_iac"))
            visit(child, deeper)

    visit(tree, False)
    return found


@cache
def _top_level_graph() -> dict[str, set[str]]:
    """module -> the cluster_iac modules it imports at module level (importing a module also
    runs its packages' __init__)."""
    graph: dict[str, set[str]] = {}
    modules = _sources()
    for module, path in modules.items():
        targets: set[str] = set()
        for name, inside, _ in _imports(path, module):
            if inside:
                continue
            parts = name.split(".")
            # importing a.b.c runs a.b's __init__ first, unless the importer is inside a.b
            # (then that __init__ is running or has run already)
            targets.update(prefix for n in range(2, len(parts) + 1)
                           if (prefix := ".".join(parts[:n])) in modules
                           and (prefix == name or not module.startswith(prefix + ".")))
        graph[module] = targets - {module}
    return graph


def _reaches(start: str, goal: str) -> bool:
    graph, seen, todo = _top_level_graph(), set(), [start]
    while todo:
        here = todo.pop()
        if here == goal:
            return True
        if here not in seen:
            seen.add(here)
            todo.extend(graph.get(here, ()))
    return False


def test_every_package_is_on_a_floor() -> None:
    packages = {_package(module) for module in _sources()} - {"__init__"}
    assert packages == set(FLOOR), "add the new package to FLOORS (and docs/architecture.md)"


def test_imports_run_only_downward() -> None:
    """Every import, at module level or inside a function, names a package on a lower floor
    or its own: no arrow runs back up and no two packages of one floor lean on each other."""
    wrong = []
    for module, path in _sources().items():
        here = _package(module)
        if here == "__init__":
            continue
        for name, _inside, line in _imports(path, module):
            there = _package(name)
            if there != here and there != "__init__" and FLOOR[there] >= FLOOR[here]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {here} -> {there}")
    assert not wrong, "\n".join(wrong)


def test_no_import_inside_a_function_dodges_a_circle() -> None:
    """An import inside a function is there to keep a module off a path that does not need
    it (validate never loads the emitters, tests/test_startup.py), never to hide a circle:
    moved to the top of its module, it would close none."""
    hiding = []
    for module, path in _sources().items():
        for name, inside, line in _imports(path, module):
            target = name if name in _sources() else name.rsplit(".", 1)[0]
            if inside and target != module and _reaches(target, module):
                hiding.append(f"{path.relative_to(ROOT)}:{line}: {module} -> {target} "
                              f"-> ... -> {module}")
    assert not hiding, "\n".join(hiding)


def test_no_circle_among_modules() -> None:
    graph = _top_level_graph()
    circles = [module for module in graph
               if any(_reaches(target, module) for target in graph[module])]
    assert not circles, circles


@pytest.mark.parametrize("module", sorted(_sources()))
def test_every_module_says_what_it_owns(module: str) -> None:
    tree = ast.parse(_sources()[module].read_text())
    assert ast.get_docstring(tree), f"{module} has no docstring"


def test_no_module_is_over_the_house_limit() -> None:
    long = {str(path.relative_to(ROOT)): lines for path in _sources().values()
            if (lines := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
