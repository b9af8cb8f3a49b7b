"""The library's core points one way: concept files import nothing from the model assembly,
views nothing from training, no module of the core takes a private name from another, every
import sits at the top of its file, and the core's imports have no cycle.

"Core" here: the top-level modules of tl_minimal and tl_minimal/views (the study code under
experiments/, training/, data/ and exercises/ is checked by its own tests)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tl_minimal"
CONCEPTS = ("running_state", "pair_memory", "readout", "slots", "conv", "kv_fusion",
            "gla", "h3", "deltanet", "key_source")  # the six, then the family and ablation (issue 33)
ASSEMBLY = ("layers", "models", "registry", "model_config", "transformer")
CORE = sorted([p for p in PACKAGE.glob("*.py")] + [p for p in (PACKAGE / "views").glob("*.py")])


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path):
    """(imported module, names taken from it, is the import at the top of the file) for each import
    of a tl_minimal module in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = f"{base}.{node.module}" if node.level and node.module else (node.module if not node.level else base)
            if not module.startswith("tl_minimal"):
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                if (PACKAGE.parent / Path(*sub.split("."))).with_suffix(".py").exists() or \
                        (PACKAGE.parent / Path(*sub.split("."))).is_dir():
                    yield sub, [], id(node) in top          # a module imported by name
                else:
                    yield module, [alias.name], id(node) in top
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tl_minimal"):
                    yield alias.name, [], id(node) in top


GRAPH = {_module_name(p): list(_imports(p)) for p in CORE}


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_at_the_top_and_no_private_names(module):
    for target, names, at_top in GRAPH[module]:
        assert at_top, f"{module} imports {target} inside a function or block: move it to the top"
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{module} imports private name(s) {private} from {target}"


def test_concepts_import_nothing_from_the_assembly_and_views_nothing_from_training():
    for module, edges in GRAPH.items():
        targets = {t for t, _, _ in edges}
        if module.rpartition(".")[2] in CONCEPTS:
            bad = {t for t in targets if t.rpartition(".")[2] in ASSEMBLY or t.startswith(
                ("tl_minimal.training", "tl_minimal.data", "tl_minimal.views", "tl_minimal.experiments"))}
            assert not bad, f"concept file {module} imports {bad}"
        if module.startswith("tl_minimal.views"):
            bad = {t for t in targets if t.startswith(("tl_minimal.training", "tl_minimal.experiments"))}
            assert not bad, f"view {module} imports {bad}"


def test_the_core_has_no_import_cycle():
    graph = {m: {t for t, _, _ in edges if t in GRAPH and t != m} for m, edges in GRAPH.items()}
    graph = {m: {t for t in ts if t != "tl_minimal"} for m, ts in graph.items()}  # the package's own top
    state: dict[str, int] = {}

    def visit(m, path):
        state[m] = 1
        for t in graph[m]:
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [m])
