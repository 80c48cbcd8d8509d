"""The architecture as tests: the layers import one way, and nothing imports in a circle.

    yaniv (rules, state, views, odds, ranking)  <-  yaniv_env (encoding, AEC, Gym view)  <-  agents  <-  scripts

``docs/architecture.md`` draws the same picture; these tests keep it true.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("yaniv", "yaniv_env", "agents")
LAYER = {"yaniv": 0, "yaniv_env": 1, "agents": 2}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``path`` imports, anywhere in it (at the top or inside a function), bar
    imports only for type checkers."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        for name in names:
            if name in modules:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(path, modules) - {name} for name, path in modules.items()}


def test_the_layers_import_one_way():
    wrong = [
        f"{module} imports {target}"
        for module, targets in import_graph().items()
        for target in targets
        if LAYER[target.split(".")[0]] > LAYER[module.split(".")[0]]
    ]
    assert not wrong, "a lower layer imports a higher one:\n" + "\n".join(wrong)


def test_no_module_imports_in_a_circle():
    graph = import_graph()
    # A package's __init__ re-exporting its own modules is not a circle: its modules import the
    # modules, not the package.
    graph = {m: {t for t in ts if not (ts and t.startswith(m + "."))} for m, ts in graph.items()}
    state: dict[str, int] = {}
    path: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize(
    "module, absent",
    [
        ("yaniv", ("gymnasium", "pettingzoo", "torch", "yaniv_env", "agents")),
        ("yaniv_env", ("agents", "torch", "stable_baselines3")),
        ("agents", ("gymnasium", "torch", "stable_baselines3")),
    ],
)
def test_importing_a_layer_pulls_in_nothing_heavier(module, absent):
    code = f"import sys, {module}; print(' '.join(m for m in {absent!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "", f"import {module} loaded {out.stdout.strip()}"


def test_the_architecture_page_names_real_files_and_every_module():
    """docs/architecture.md stays true: each file or folder it names exists, and each module of the
    three packages is named (by its path, or its folder's when the folder is listed as a whole)."""
    import re

    page = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:yaniv|yaniv_env|agents|tests|docs|configs)/[\w./<>-]*)`", page))
    missing = [p for p in named if "<" not in p and not (ROOT / p).exists()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"
    modules = [p.relative_to(ROOT).as_posix() for package in PACKAGES for p in (ROOT / package).rglob("*.py")
               if p.name != "__init__.py" and "__main__" not in p.name]
    unnamed = [m for m in modules if m not in page and f"{m.rsplit('/', 1)[0]}/" not in named
               and f"`{Path(m).stem}`" not in page]
    assert not unnamed, f"docs/architecture.md does not mention {unnamed}"
