"""What a reader of the triple-latent layer has to read: the files and code lines reached from
``TripleLatentMixer.forward`` (issue 51, item 2: at most 4 files and 400 code lines).

    python tests/repo/layer_reach.py            # the table; exit status 1 when over a limit

How it walks (statically, with ``ast``; nothing is imported or run):
- it starts at the layer's ``forward`` and ``__init__`` (the constructor says what ``self.proj``,
  ``self.out`` ... are, so a reader of forward reads it too);
- from a function it follows every name that resolves to a function, class or constant of
  ``tl_minimal``: a name defined in the same module, a name imported from another module of the
  package (``from .x import f``), an attribute of an imported module (``kernels.f``), and an
  attribute of ``self`` (a method or class attribute found along the class's bases in the package);
- a class reached by name counts whole (its methods run when it is used); a class reached
  through ``self.method`` counts its ``class`` line and the members reached;
- torch and the standard library are not followed.

What counts: the code lines of everything reached (a definition's lines, without its docstrings,
comments and blank lines); module docstrings and imports are not counted.

The seam a reader can skip: ``tl_minimal/kernels.py``, the speed kernels (custom autograd
functions, each the same numbers as a line of plain PyTorch that its docstring names). Its
internals are not walked or counted. In return the seam is held to three rules, which
tests/repo/test_layer_reach.py checks: the layer reaches it from ONE call site, written as a call on
the module (``kernels.decays(...)``, so a reader sees where the seam is); what it reaches there
is tested equal to its plain form in tests/model/test_kernels.py; and the layer as a whole is
tested equal to its for-loop form (tests/model/test_readout.py).
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tl_minimal"
START = ("tl_minimal.readout", "TripleLatentMixer")
SEAM = "tl_minimal.kernels"
MAX_FILES, MAX_CODE_LINES = 4, 400


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    defs: dict = field(default_factory=dict)      # top-level name -> node
    imports: dict = field(default_factory=dict)   # local name -> ("module", mod) or ("symbol", mod, name)
    code_lines: set = field(default_factory=set)  # lines with code (no docstring, comment or blank)


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def _code_lines(text: str, tree: ast.Module) -> set[int]:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return lines - _docstring_lines(tree)


def _resolve_relative(module: str, level: int, target: str | None, is_package: bool) -> str:
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([target] if target else []))


def load_package() -> dict[str, Module]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        mod = Module(name, path, tree, code_lines=_code_lines(text, tree))
        mod.is_package = is_package
        modules[name] = mod
    for mod in modules.values():
        for node in mod.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                mod.defs[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            mod.defs[name.id] = node
            elif isinstance(node, ast.ImportFrom):
                source = (_resolve_relative(mod.name, node.level, node.module, mod.is_package) if node.level
                          else node.module or "")
                for alias in node.names:
                    local = alias.asname or alias.name
                    if f"{source}.{alias.name}" in modules:
                        mod.imports[local] = ("module", f"{source}.{alias.name}")
                    elif source in modules:
                        mod.imports[local] = ("symbol", source, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        mod.imports[alias.asname or alias.name.split(".")[0]] = ("module", alias.name)
    return modules


@dataclass
class Reach:
    lines: dict = field(default_factory=dict)        # module -> set of reached line numbers
    members: list = field(default_factory=list)      # (module, qualified name) in the order reached
    seam_sites: set = field(default_factory=set)     # (module, line, seam name) of each call site
    seam_names: set = field(default_factory=set)     # seam names reached


def _symbol(modules, module: str, name: str, seen=()):
    """(module, name) of the definition ``name`` refers to in ``module``, following re-exports."""
    mod = modules[module]
    if name in mod.defs:
        return module, name
    kind = mod.imports.get(name)
    if kind and kind[0] == "symbol" and (kind[1], kind[2]) not in seen:
        return _symbol(modules, kind[1], kind[2], (*seen, (kind[1], kind[2])))
    return None


def _class_member(modules, module: str, cls: str, attr: str):
    """(module, class, node) defining ``attr`` along the package bases of ``cls``, or None."""
    node = modules[module].defs.get(cls)
    if not isinstance(node, ast.ClassDef):
        return None
    for stmt in node.body:
        names = ([stmt.name] if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else
                 [n.id for t in getattr(stmt, "targets", [getattr(stmt, "target", None)]) if t is not None
                  for n in ast.walk(t) if isinstance(n, ast.Name)] if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                 else [])
        if attr in names:
            return module, cls, stmt
    for base in node.bases:
        if isinstance(base, ast.Name):
            found = _symbol(modules, module, base.id)
            if found:
                hit = _class_member(modules, *found, attr)
                if hit:
                    return hit
    return None


def walk(modules: dict[str, Module] | None = None) -> Reach:
    modules = modules or load_package()
    reach = Reach()
    done = set()
    todo = []

    def add_lines(module, first, last):
        reach.lines.setdefault(module, set()).update(range(first, last + 1))

    def visit(module, node, qualname, cls=None):
        key = (module, qualname)
        if key in done:
            return
        done.add(key)
        reach.members.append(key)
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        add_lines(module, first, node.end_lineno)
        todo.append((module, node, cls))

    def reach_class_line(module, cls_node):
        first = min([cls_node.lineno, *(d.lineno for d in cls_node.decorator_list)])
        add_lines(module, first, cls_node.body[0].lineno - 1)  # a base counts once a member of it is reached

    def reach_symbol(module, name, site_module, site_line):
        if module == SEAM:
            reach.seam_sites.add((site_module, site_line, name))
            reach.seam_names.add(name)
            return
        node = modules[module].defs[name]
        visit(module, node, name)

    start_module, start_class = START
    cls_node = modules[start_module].defs[start_class]
    reach_class_line(start_module, cls_node)
    for stmt in cls_node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in ("__init__", "forward"):
            visit(start_module, stmt, f"{start_class}.{stmt.name}", cls=(start_module, start_class))

    while todo:
        module, node, cls = todo.pop()
        if isinstance(node, ast.ClassDef) and cls is None:
            cls = (module, node.name)
            for base in node.bases:  # a class reached by name: its package bases are read too
                if isinstance(base, ast.Name) and (found := _symbol(modules, module, base.id)):
                    reach_symbol(*found, module, base.lineno)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                found = _symbol(modules, module, sub.id)
                if found:
                    reach_symbol(*found, module, sub.lineno)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                owner = sub.value.id
                kind = modules[module].imports.get(owner)
                if kind and kind[0] == "module":
                    target = kind[1]
                    if target == SEAM:
                        reach.seam_sites.add((module, sub.lineno, sub.attr))
                        reach.seam_names.add(sub.attr)
                    elif sub.attr in modules[target].defs:
                        reach_symbol(target, sub.attr, module, sub.lineno)
                elif owner == "self" and cls is not None:
                    hit = _class_member(modules, *cls, sub.attr)
                    if hit:
                        hit_module, hit_cls, stmt = hit
                        reach_class_line(hit_module, modules[hit_module].defs[hit_cls])
                        name = getattr(stmt, "name", None) or sub.attr
                        visit(hit_module, stmt, f"{hit_cls}.{name}", cls=(hit_module, hit_cls))
    return reach


def report(reach: Reach, modules: dict[str, Module]) -> list[tuple[str, int]]:
    """(file, code lines reached) per file, in reading order of first reach."""
    rows = []
    for module in dict.fromkeys(m for m, _ in reach.members):
        code = len(reach.lines[module] & modules[module].code_lines)
        rows.append((str(modules[module].path.relative_to(PACKAGE.parent)), code))
    return rows


def main() -> int:
    modules = load_package()
    reach = walk(modules)
    rows = report(reach, modules)
    total = sum(n for _, n in rows)
    print(f"reached from {START[0]}.{START[1]}.forward (code lines: no docstrings, comments or blank lines)")
    for path, n in rows:
        print(f"  {path:40s} {n:4d}")
    print(f"  {'total':40s} {total:4d}   in {len(rows)} files   (limits: {MAX_CODE_LINES} lines, {MAX_FILES} files)")
    print("what it reads:", ", ".join(q for _, q in reach.members))
    sites = sorted(reach.seam_sites)
    print(f"the seam ({SEAM}, not counted): {', '.join(sorted(reach.seam_names)) or 'not reached'}; call sites:")
    for module, line, name in sites:
        print(f"  {modules[module].path.relative_to(PACKAGE.parent)}:{line}  kernels.{name}")
    ok = total <= MAX_CODE_LINES and len(rows) <= MAX_FILES
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
