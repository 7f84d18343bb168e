"""The architecture, checked: the module maps, engine/'s layers and no import cycle.

The module maps are the ``- ``NAME``  ...`` lines of engine/__init__.py's docstring
(engine/'s modules and perft's) and of scripts/__init__.py's (the tools): each must
name every module of its packages and nothing else, so that a module added, moved or
removed without its map fails here, by name. The layers are the list in
engine/__init__.py's docstring (``layer N: NAME ...``), read from there, so the rule
is written once. Every import counts: at the top, in a
function, under ``TYPE_CHECKING``; relative ones are resolved. A module may import
its own layer and the layers before it; no chain of imports may lead back to where it
started, anywhere in engine/, perft/ and scripts/.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "perft", "scripts")


def read_layers(doc: str) -> list[list[str]]:
    """The ``layer N: NAME ...`` lines of ``doc``, in order (N must count up from 0)."""
    found = re.findall(r"^\s*layer (\d+): (.+)$", doc, re.MULTILINE)
    assert [int(n) for n, _ in found] == list(range(len(found))), "layers must count from 0"
    return [names.split() for _, names in found]


def module_names(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted name -> file of every module in ``packages`` below ``root``."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if "_full" in path.parts or "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MAP_ENTRY = re.compile(r"^- ``([\w.]+)``", re.MULTILINE)


def docstring(path: Path) -> str:
    """The module docstring of the file at ``path`` (read, not imported)."""
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def mapped_modules(doc: str, package: str, absolute: tuple[str, ...] = ()) -> list[str]:
    """The dotted names a map in ``doc`` names: relative to ``package``, except names
    that start with one of the packages ``absolute``, which are written in full."""
    return [
        name if name.split(".")[0] in absolute else f"{package}.{name}"
        for name in MAP_ENTRY.findall(doc)
    ]


def map_problems(where: str, mapped: list[str], modules: dict[str, Path]) -> list[str]:
    """Every module (package ``__init__`` files aside: a package is its modules) that
    the map of ``where`` leaves out, every name it has that is no such module, and
    every name it has twice, as messages."""
    wanted = {name for name, path in modules.items() if path.name != "__init__.py"}
    problems = [
        f"{name} is missing from {where}'s module map"
        for name in sorted(wanted)
        if name not in mapped
    ]
    problems += [
        f"{where}'s module map names {name}, which is no module (stale)"
        for name in sorted(set(mapped) - wanted)
    ]
    problems += [
        f"{where}'s module map names {name} twice"
        for name in sorted({name for name in mapped if mapped.count(name) > 1})
    ]
    return problems


def imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``modules`` that it imports."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = name.split(".") if is_package else name.split(".")[:-1]
                    package = package[: len(package) - (node.level - 1)]
                    base = ".".join(package + ([base] if base else []))
                for alias in node.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def layer_of(module: str, layers: list[list[str]]) -> int | None:
    """The layer whose list names ``module`` (``NAME.*``: the package and its modules)."""
    for rank, names in enumerate(layers):
        for entry in names:
            if entry.endswith(".*"):
                package = entry[:-2]
                if module == package or module.startswith(package + "."):
                    return rank
            elif module == entry:
                return rank
    return None


def upward_imports(graph: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    """Every import of a higher layer, and every module in no layer, as messages."""
    problems = []
    for module in sorted(graph):
        rank = layer_of(module, layers)
        if rank is None:
            problems.append(f"{module} is in no layer of engine/__init__.py's list")
            continue
        for target in sorted(graph[module]):
            target_rank = layer_of(target, layers)
            if target_rank is not None and target_rank > rank:
                problems.append(f"{module} (layer {rank}) imports {target} (layer {target_rank})")
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: strongly connected components of more than one module
    (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_the_rule_is_written_in_the_package_docstring() -> None:
    layers = read_layers(engine.__doc__ or "")
    assert layers and layers[0][0] == "engine", "engine/__init__.py lists no layers"


def test_the_engine_map_names_every_module_of_engine_and_perft() -> None:
    mapped = mapped_modules(docstring(ROOT / "engine" / "__init__.py"), "engine", ("perft",))
    problems = map_problems("engine/__init__.py", mapped, module_names(ROOT, ("engine", "perft")))
    assert not problems, "\n".join(problems)


def test_the_scripts_map_names_every_module_of_scripts() -> None:
    mapped = mapped_modules(docstring(ROOT / "scripts" / "__init__.py"), "scripts")
    problems = map_problems("scripts/__init__.py", mapped, module_names(ROOT, ("scripts",)))
    assert not problems, "\n".join(problems)


def test_the_map_check_catches_a_missing_a_stale_and_a_double_name(tmp_path: Path) -> None:
    """The checker itself, on a small tree: a map relative to ``pkg`` that names
    ``other``'s module in full, leaves one module out, keeps a removed one and names
    one twice."""
    files = ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/a.py", "pkg/sub/b.py")
    for name in (*files, "other/__init__.py", "other/c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    doc = "Map:\n\n- ``sub.a``  a\n- ``sub.gone``  was\n- ``other.c``  c\n- ``sub.a``  again\n"
    mapped = mapped_modules(doc, "pkg", ("other",))
    assert map_problems("pkg/__init__.py", mapped, module_names(tmp_path, ("pkg", "other"))) == [
        "pkg.sub.b is missing from pkg/__init__.py's module map",
        "pkg/__init__.py's module map names pkg.sub.gone, which is no module (stale)",
        "pkg/__init__.py's module map names pkg.sub.a twice",
    ]


def test_no_module_imports_from_a_higher_layer() -> None:
    layers = read_layers(engine.__doc__ or "")
    graph = imports(module_names(ROOT, PACKAGES))
    assert upward_imports(graph, layers) == []


def test_no_import_cycle_in_the_repository() -> None:
    graph = imports(module_names(ROOT, PACKAGES))
    assert cycles(graph) == []


def test_the_checks_catch_a_cycle_and_an_upward_import(tmp_path: Path) -> None:
    """The checker itself, on a small tree: a cycle through a relative import, an
    import under TYPE_CHECKING from a higher layer, and a module in no layer."""
    (tmp_path / "pkg" / "low").mkdir(parents=True)
    (tmp_path / "pkg" / "high").mkdir()
    files = {
        "pkg/__init__.py": "",
        "pkg/low/__init__.py": "",
        "pkg/low/a.py": "from . import b\n",
        "pkg/low/b.py": "def f() -> None:\n    from pkg.low import a\n",
        "pkg/low/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from pkg.high.d import X\n",
        "pkg/high/__init__.py": "",
        "pkg/high/d.py": "from pkg.low.c import Y\nX = 1\n",
        "pkg/stray.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    layers = read_layers("    layer 0: pkg pkg.low.*\n    layer 1: pkg.high.*\n")
    graph = imports(module_names(tmp_path, ("pkg",)))
    assert cycles(graph) == [["pkg.high.d", "pkg.low.c"], ["pkg.low.a", "pkg.low.b"]]
    assert upward_imports(graph, layers) == [
        "pkg.low.c (layer 0) imports pkg.high.d (layer 1)",
        "pkg.stray is in no layer of engine/__init__.py's list",
    ]
