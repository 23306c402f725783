"""The package's imports, read from the source with ast (nothing executed).

They run one way: no module imports, at its top or inside a function, a module that imports it back. Imports
under ``if TYPE_CHECKING:`` are left out: they name types for a checker and never run.

And no module reaches for another's private names (a leading underscore): what one module needs from another
is that module's public API, so a module can change its private helpers without breaking a reader elsewhere."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "rnnbench"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST):
    """Every node but those under an ``if TYPE_CHECKING:`` block."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _package_of(path: Path) -> str:
    """The package a relative import in ``path`` starts from."""
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _import_base(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` reads from, relative imports resolved against ``package``."""
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    return base


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports anywhere in its code, with the packages they sit in
    (importing a.b.c runs a/__init__ and a/b/__init__ first)."""
    name, package = module_name(path), _package_of(path)
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _import_base(node, package)
            # `from a import b` imports the module a.b when there is one, else a name of a
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            found |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & modules
    return found - {name} - {p for p in _parents(name)}


def _parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: imported_modules(path, set(paths)) for name, path in paths.items()}


def _private(name: str) -> bool:
    """A leading underscore, but not a dunder (``__version__``, ``__all__`` are a module's public face)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_names_used(path: Path, modules: set[str]) -> list[str]:
    """Private names of other package modules that ``path`` imports (``from rnnbench.x import _y``, relative
    imports too) or reads off a module it imported (``x._y``), as "rnnbench.x._y"; its own are its to use."""
    name, package = module_name(path), _package_of(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    bound: dict[str, str] = {}  # a name in this module -> the package module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _import_base(node, package)
            if base not in modules:
                continue
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                if _private(alias.name) and base != name:
                    found.append(f"{base}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:  # `import a.b as c` binds c to a.b; `import a.b` binds a
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            first, dot, rest = ast.unparse(node.value).partition(".")
            owner = bound.get(first, "") + dot + rest  # `zed._LIMIT` with zed bound to a.b.z reads a.b.z._LIMIT
            if owner in modules and owner != name:
                found.append(f"{owner}.{node.attr}")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_cycles_finds_a_loop_and_only_the_loop():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_walk_sees_deferred_imports_and_skips_type_checking_ones(tmp_path, monkeypatch):
    package = tmp_path / "rnnbench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "x.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rnnbench import z\n"
        "def f():\n    from rnnbench.y import g\n"
    )
    (package / "y.py").write_text("from . import x\n")
    (package / "z.py").write_text("")
    monkeypatch.setattr(f"{__name__}.PACKAGE", package)
    graph = import_graph()
    assert graph["rnnbench.x"] == {"rnnbench.y"} and graph["rnnbench.y"] == {"rnnbench.x"}
    assert cycles(graph) == [["rnnbench.x", "rnnbench.y"]]


def test_the_package_imports_run_one_way():
    assert cycles(import_graph()) == []


def test_the_walk_finds_private_names_taken_from_another_module(tmp_path, monkeypatch):
    package = tmp_path / "rnnbench"
    (package / "sub").mkdir(parents=True)
    for init in (package / "__init__.py", package / "sub" / "__init__.py"):
        init.write_text('__version__ = "1"\n')
    (package / "y.py").write_text("def _helper():\n    pass\n")
    (package / "sub" / "z.py").write_text("_LIMIT = 3\n")
    (package / "x.py").write_text(
        "from __future__ import annotations\n"
        "from rnnbench import __version__, y\n"
        "from rnnbench.y import _helper\n"
        "from .sub import z as zed\n"
        "import rnnbench.sub.z\n"
        "def _own():\n    return y._helper, zed._LIMIT, rnnbench.sub.z._LIMIT, _own\n"
    )
    (package / "sub" / "w.py").write_text("from ..y import _helper\n")
    monkeypatch.setattr(f"{__name__}.PACKAGE", package)
    modules = {module_name(p) for p in package.rglob("*.py")}
    assert private_names_used(package / "x.py", modules) == [
        "rnnbench.y._helper",
        "rnnbench.y._helper",
        "rnnbench.sub.z._LIMIT",
        "rnnbench.sub.z._LIMIT",
    ]
    assert private_names_used(package / "sub" / "w.py", modules) == ["rnnbench.y._helper"]
    assert private_names_used(package / "y.py", modules) == []  # its own private names are its to use


def test_no_module_uses_another_modules_private_names():
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    used = {name: private_names_used(path, set(paths)) for name, path in sorted(paths.items())}
    assert {name: found for name, found in used.items() if found} == {}
