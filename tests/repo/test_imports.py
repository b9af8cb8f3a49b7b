"""The package's import structure, read from the source with ``ast`` (nothing is imported).

What must hold, and why:
- no import cycles between the modules of ``tl_minimal`` and of the research package ``tl_research``
  (a cycle makes the import order matter
  and hides which module is the foundation of which);
- no private name (``_something``) of one module used by another, neither imported
  (``from .x import _f``) nor reached through an imported module (``x._f``): a private name
  may change without notice, so whoever needs it needs a public one;
- every import at the top of its file, so a reader sees a module's dependencies in one place
  (the short :data:`ALLOWED_LOCAL_IMPORTS` list says which exceptions there are and why);

Which layer may import which (the concept files, the library, the course helpers, the research code)
is import-linter's contract in ``pyproject.toml``, run by ``tests/repo/test_import_contract.py``; this file
keeps what import-linter does not check.

An import of ``a.b.c`` is an edge to the module ``a.b.c`` only, not to the packages ``a`` and
``a.b`` that Python initializes on the way (every module would otherwise depend on its package's
``__init__``, which imports it back: the usual, harmless shape of a package).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "tl_"  # the course package, tl_minimal, and the research package beside it, tl_research
CLONE = Path(__file__).resolve().parents[2]
ROOT = CLONE / "tl_minimal"
RESEARCH = CLONE / "research" / "tl_research"

# imported modules that may stay inside a function, with the reason (keyed by what is imported, so
# that moving the module that imports it does not stale the list)
ALLOWED_LOCAL_IMPORTS = {
    "datasets": "Hugging Face datasets: a slow import, needed only to download a data set",
    "tokenizers": "the MiniMind tokenizer: needed only by the tokenized task",
    "huggingface_hub": "the hub client datasets brings: needed only to read its cache offline (data/offline.py)",
    "jupytext": "only when the blank exercise notebooks are generated",
    "nbclient": "notebook execution: only the notebook-cost benchmark runs notebooks (a dev tool)",
    "nbformat": "notebook execution: only the notebook-cost benchmark runs notebooks (a dev tool)",
    "IPython": "the notebook front end is an extra: loaded only inside a kernel",
    "ipywidgets": "the notebook front end is an extra: loaded only inside a kernel",
    "torch.profiler": "the profiler backend: loaded only by --profile and the memory count",
    "torch._C._profiler": "the profiler backend: loaded only by --profile and the memory count",
    "torch.utils._python_dispatch": "the op counter of the memory count: loaded on use",
}


def allowed_local(target: str) -> bool:
    return any(target == dep or target.startswith(dep + ".") for dep in ALLOWED_LOCAL_IMPORTS)


# ----------------------------------------------------------------------------- reading the source
def module_name(path: Path) -> str:
    parts = list(path.relative_to((RESEARCH if RESEARCH in path.parents else ROOT).parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py")) + sorted(RESEARCH.rglob("*.py"))}


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def resolve(importer: str, level: int, target: str | None) -> str:
    """The absolute name of ``from <level dots><target> import ...`` written in ``importer``."""
    if level == 0:
        return target or ""
    base = importer.split(".")
    if not is_package(importer):
        base = base[:-1]  # a module's relative imports start at its package
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(name: str):
    """(imported module, imported names or None, node, at the top?) for every import in ``name``."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    local = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            local.update(id(n) for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node, id(node) not in local
        elif isinstance(node, ast.ImportFrom):
            yield resolve(name, node.level, node.module), [a.name for a in node.names], node, id(node) not in local


def edges_of(name: str) -> set[str]:
    """The modules of this package that ``name`` imports (``from pkg import mod`` names ``pkg.mod``)."""
    out = set()
    for target, names, _, _ in imports_of(name):
        if not target.startswith(PACKAGE):
            continue
        subs = [f"{target}.{n}" for n in names or () if f"{target}.{n}" in MODULES]
        out.update(subs)
        if names is None or len(subs) < len(names):  # some names are attributes of ``target`` itself
            out.add(target)
    out.discard(name)
    return {m for m in out if m in MODULES}


GRAPH = {name: edges_of(name) for name in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a list of modules, first repeated at the end) per strongly connected component."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(path_within(graph, component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def path_within(graph, component: set[str]) -> list[str]:
    """A closed path through a strongly connected component, found by breadth-first search."""
    start = min(component)
    parents, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while parents[path[-1]] is not None:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, v, start]
                if w not in parents:
                    parents[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(component)


def private_uses(name: str) -> list[str]:
    """``from other import _x`` and ``other_module._x`` in module ``name``, as readable lines."""
    found = []
    aliases = {}  # local name -> the package module it is bound to
    for target, names, node, _ in imports_of(name):
        if not target.startswith(PACKAGE):
            continue
        if names is None:
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
            continue
        for alias in node.names:
            full = f"{target}.{alias.name}"
            if full in MODULES:
                aliases[alias.asname or alias.name] = full
            elif alias.name.startswith("_") and not alias.name.startswith("__") and target != name:
                found.append(f"line {node.lineno}: from {target} import {alias.name}")
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr} ({aliases[node.value.id]})")
    return found


# ----------------------------------------------------------------------------- the checks
def test_the_walk_sees_the_package():
    """The walk finds the modules and their imports (a broken walk would pass every check below)."""
    assert {"tl_minimal", "tl_minimal.models", "tl_minimal.running_state"} <= set(MODULES)
    assert "tl_minimal.running_state" in GRAPH["tl_minimal"]
    assert resolve("tl_minimal.models", 1, "layers") == "tl_minimal.layers"
    assert resolve("tl_minimal.training", 2, None) == "tl_minimal"  # a package's ``..`` is its parent
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_names_across_modules(name):
    found = private_uses(name)
    assert not found, f"{name} uses private names of other modules:\n" + "\n".join(found)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_at_the_top(name):
    local = [(target, node.lineno) for target, _, node, top in imports_of(name)
             if not top and not allowed_local(target)]
    assert not local, f"{name} imports inside functions (move them to the top): " + ", ".join(
        f"{t} (line {n})" for t, n in local)


def test_the_allow_list_is_used():
    """Every allowed local import still exists (a stale entry would hide nothing but mislead)."""
    seen = {target for name in MODULES for target, _, _, top in imports_of(name) if not top}
    stale = [dep for dep in ALLOWED_LOCAL_IMPORTS if not any(t == dep or t.startswith(dep + ".") for t in seen)]
    assert not stale, (f"no module imports {stale} inside a function any more: remove them from "
                       "ALLOWED_LOCAL_IMPORTS in tests/repo/test_imports.py")
