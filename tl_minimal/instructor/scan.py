"""Flag the cells of a submission that reach for what grades it, for a TA to read (not a zero).

Scanned: the answer cells and every other code cell whose text differs from the release; the kinds
are the tables below (docs/instructors.md, section 5). A flag reads
"<grade id or cell number>: <kind> (<what was seen>) line <n>: <the line>".
"""

from __future__ import annotations

import ast
import contextlib

from IPython.core.inputtransformer2 import TransformerManager

from .predictions import cell_text

FRAMES = {"inspect", "currentframe", "_getframe", "f_back", "f_locals", "f_globals", "gc", "tb_frame",
          "get_referrers", "exc_info", "settrace", "setprofile"}
MONKEY = {"setattr", "delattr", "__builtins__", "builtins", "importlib", "__import__"}
MONKEY_ATTRIBUTES = MONKEY | {"modules", "meta_path", "path_hooks", "__dict__", "__code__", "__globals__",
                              "__closure__"}
KEY = {"answer_key", "__file__", "solutions", "answer_key.json"}
ENV = {"environ", "putenv", "getenv", "unsetenv", "environb"}
DYNAMIC = {"exec", "eval", "compile", "fromhex", "b64decode", "a85decode", "b85decode", "decodebytes", "unhexlify",
           "marshal", "codecs", "base64", "binascii", "pickle"}
COMPUTED = {"getattr", "setattr", "hasattr", "delattr"}
NAMESPACES = {"globals", "vars", "locals"}
IMPORTS = {"meta_path", "path_hooks", "path_importer_cache", "importlib", "__import__", "find_spec", "exec_module",
           "MetaPathFinder", "Loader", "module_from_spec", "spec_from_loader"}
PROCESS = {"subprocess", "system", "fork", "Popen", "multiprocessing", "spawnv", "execv", "posix_spawn", "threading",
           "Thread"}
WORDS = (("dynamic code", DYNAMIC), ("import system", IMPORTS), ("process", PROCESS))  # names, attributes, imports
# a name or an attribute: the first rule whose words hold it
NAMES = (({"get_ipython"}, "ipython"), (FRAMES, "frames"), (MONKEY, "monkeypatch"), (ENV, "environment"),
         (KEY, "key file"), ({"ex"}, "checker"))
ATTRIBUTES = ((FRAMES, "frames"), (ENV, "environment"), (MONKEY_ATTRIBUTES, "monkeypatch"), (KEY, "key file"))


def _python(source: str) -> str:
    """The cell as Python: IPython's magics and shell lines become get_ipython() calls."""
    return TransformerManager().transform_cell(source)


def _imported(tree: ast.AST, modules: set[str], ours: set[str]) -> None:
    """Add the names the imports of ``tree`` bind to modules, and those imported from tl_minimal."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.add(alias.asname or alias.name.split(".")[0])
                if alias.name.split(".")[0] == "tl_minimal":
                    ours.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tl_minimal":
            for alias in node.names:  # `from tl_minimal import exercises as ex`: a module too
                ours.add(alias.asname or alias.name)
                modules.add(alias.asname or alias.name)


def _cell_flags(source: str, modules: set[str], ours: set[str]) -> list[str]:
    python = _python(source)
    try:
        tree = ast.parse(python)
    except SyntaxError:
        return ["not python (the cell does not parse)"]
    found, lines = {}, python.splitlines()  # (kind, what) -> the flag of its first line
    node = tree

    def add(kind, what):
        number = getattr(node, "lineno", 0)
        line = lines[number - 1].strip()[:100] if 0 < number <= len(lines) else ""
        found.setdefault((kind, what), f"{kind} ({what}) line {number}: {line}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name in COMPUTED and len(node.args) > 1 and not isinstance(node.args[1], ast.Constant):
                add("computed name", f"{name} with a name made at run time")
            elif name in NAMESPACES:
                add("computed name", f"{name}()")
        if isinstance(node, (ast.Name, ast.Attribute)):
            word = node.id if isinstance(node, ast.Name) else node.attr
            for kind, words in WORDS:
                if word in words:
                    add(kind, word)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = alias.name if isinstance(node, ast.Import) else node.module or ""
                top = name.split(".")[0]
                for kind, words in WORDS:
                    if top in words or alias.name in words:
                        add(kind, f"imports {name}")
                if name.startswith("tl_minimal.exercises") or (name, alias.name) == ("tl_minimal", "exercises"):
                    add("checker", f"imports {name}")
                elif top == "tl_minimal":
                    add("reference", f"imports {name}")
                elif top in ("inspect", "gc", "traceback"):
                    add("frames", f"imports {top}")
                elif top in ("importlib", "builtins"):
                    add("monkeypatch", f"imports {top}")
        elif isinstance(node, ast.Name):
            kind = next((kind for words, kind in NAMES if node.id in words), None)
            if kind:
                add(kind, "uses ex" if node.id == "ex" else node.id)
            elif node.id in ours and isinstance(node.ctx, ast.Load):
                add("reference", f"uses {node.id}, imported from tl_minimal")
        elif isinstance(node, ast.Attribute):
            kind = next((kind for words, kind in ATTRIBUTES if node.attr in words), None)
            if kind:
                add(kind, node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if any(k in node.value for k in ("answer_key", "TL_GRADED", "solutions")):
                add("key file" if "TL_GRADED" not in node.value else "environment", repr(node.value[:40]))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                root = target
                while isinstance(root, (ast.Attribute, ast.Subscript)):
                    root = root.value
                if isinstance(target, (ast.Attribute, ast.Subscript)) and isinstance(root, ast.Name) \
                        and root.id in modules:
                    add("monkeypatch", f"assigns to {ast.unparse(target)}")
    return list(found.values())


def _label(cell: dict, number: int) -> str:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or f"cell {number}"


def scan(submission: dict, release: dict) -> list[str]:
    """The flags of one submitted notebook (a dict), judged against the release it answers."""
    released = {cell_text(c) for c in release.get("cells", []) if c.get("cell_type") == "code"}
    locked = {c["metadata"]["nbgrader"]["grade_id"] for c in release.get("cells", [])
              if c.get("metadata", {}).get("nbgrader", {}).get("locked")}
    modules, ours = set(), set()  # of every cell: a module imported in one is used in another
    for cell in submission.get("cells", []):
        with contextlib.suppress(SyntaxError):
            if cell.get("cell_type") == "code":
                _imported(ast.parse(_python(cell_text(cell))), modules, ours)
    flags = []
    for number, cell in enumerate(submission.get("cells", [])):
        if cell.get("cell_type") != "code" or _label(cell, number) in locked:
            continue  # test cells are restored from the release before grading
        is_answer = cell.get("metadata", {}).get("nbgrader", {}).get("solution")
        if not is_answer and cell_text(cell) in released:
            continue  # an unchanged cell of the release
        flags += [f"{_label(cell, number)}: {flag}" for flag in _cell_flags(cell_text(cell), modules, ours)]
    return flags
