"""The package's layers, along the data flow: configs feed runs, runs feed tables, tables feed figures and the
book. A module imports only from its own layer or the layers below it, at the top of a file or inside a function
alike; and no module over 480 lines (one that long holds two concerns)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "rnnbench"

# Lowest first. A name is a module or a package (then every module in it); the longest name that holds a module
# decides its layer.
LAYERS = [
    # what every layer shares: atomic writes, numbers as text, the metric vocabulary, published rows, the results layout, the record
    # beside each output, Snakemake's locks; the folders read and written, the YAML loader and the schema (every
    # setting's type, range and default, which the corpus options read too)
    ["rnnbench.io", "rnnbench.numbers", "rnnbench.metrics", "rnnbench.published", "rnnbench.paths", "rnnbench.provenance",
     "rnnbench.locks", "rnnbench.config.locations", "rnnbench.config.files", "rnnbench.config.schema"],
    ["rnnbench.data"],  # corpora read, verified, cached; batching
    ["rnnbench.config", "rnnbench.params"],  # the settings, checked against the corpora, and the sizes they imply
    ["rnnbench.models", "rnnbench.baselines"],  # the networks, and the count-based models beside them
    ["rnnbench.training", "rnnbench.decay"],  # runs trained and evaluated; gradients measured in trained networks
    ["rnnbench.worked"],  # the seeds' worked examples, made by the functions that train
    ["rnnbench.results"],  # tables gathered from runs
    ["rnnbench.findings"],  # the claims judged on those tables
    ["rnnbench.plots"],  # figures of tables
    ["rnnbench.book"],  # what the chapters read
    ["rnnbench.jobs", "rnnbench.cli"],  # one function per rule; the command line
]  # fmt: skip

# Imports that run against the layers, each inside a function and each with its reason; a new one fails the test.
ALLOWED_UPWARD = {
    # the kinds of extra table a study gets are decided where those tables are made
    ("rnnbench.paths", "rnnbench.results.ablations"),
    # type annotations only (under TYPE_CHECKING): the report imports paths without the config machinery
    ("rnnbench.paths", "rnnbench.config.settings"),
}
MAX_LINES = 480
# Modules still over the limit, each to be split along its concerns; a module leaves the list when it is split
# (the test fails while a listed module is within the limit), and no module joins it.
OVER_THE_LIMIT: set[str] = set()


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    best, layer = "", None
    for index, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > len(best):
                best, layer = name, index
    if layer is None:
        raise AssertionError(f"{module} is in no layer of tests/test_layers.py: give it one")
    return layer


def is_module(name: str) -> bool:
    path = PACKAGE.parent / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or path.is_dir()


def imported_modules(path: Path) -> set[str]:
    """Every rnnbench module ``path`` imports, at the top or inside a function (``from rnnbench.x import y``: the
    module x.y when y is one, else x)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "rnnbench":
            for alias in node.names:
                named = f"{node.module}.{alias.name}"
                found.add(named if is_module(named) else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "rnnbench")
    return found - {"rnnbench"}


MODULES = sorted(set(PACKAGE.rglob("*.py")) - {PACKAGE / "__init__.py"})  # the package's version only


def test_every_module_has_a_layer():
    for path in MODULES:
        layer_of(module_name(path))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_a_module_imports_only_from_its_layer_or_below(path):
    me = module_name(path)
    upward = sorted(
        target
        for target in imported_modules(path)
        if layer_of(target) > layer_of(me) and (me, target) not in ALLOWED_UPWARD
    )
    assert not upward, f"{me} (layer {layer_of(me)}) imports from a higher layer: {upward}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_module_is_over_the_line_limit(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if module_name(path) in OVER_THE_LIMIT:
        assert lines > MAX_LINES, f"{module_name(path)} is within {MAX_LINES} lines now: take it off OVER_THE_LIMIT"
    else:
        assert lines <= MAX_LINES, f"{module_name(path)}: {lines} lines, over {MAX_LINES}: it holds two concerns"


def test_the_layer_rule_finds_an_upward_import(tmp_path):
    """The check itself: a module of the lowest layer that imports the book is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from rnnbench.book import format\n")  # the file is read, never run
    assert "rnnbench.book.format" in imported_modules(bad)
    assert layer_of("rnnbench.book.format") > layer_of("rnnbench.io")


CONTRIBUTING = PACKAGE.parents[1] / "CONTRIBUTING.md"


def named_in_the_module_table(text: str) -> set[str]:
    """The paths CONTRIBUTING.md's module table names in its first column: `training/loop.py`, or `decay/` for a
    whole package."""
    named = set()
    for line in text.splitlines():
        if line.startswith("| `"):
            named.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return named


def test_the_contributing_module_table_matches_the_tree():
    named = named_in_the_module_table(CONTRIBUTING.read_text(encoding="utf-8"))
    relative = [path.relative_to(PACKAGE).as_posix() for path in MODULES if path.name != "__init__.py"]
    unnamed = [rel for rel in relative if rel not in named and rel.split("/")[0] + "/" not in named]
    assert not unnamed, f"modules CONTRIBUTING.md's table does not name: {unnamed}"
    in_the_package = [name for name in named if name.endswith((".py", "/")) and not name.startswith("workflow/")]
    gone = [name for name in in_the_package if not (PACKAGE / name).exists()]
    assert not gone, f"CONTRIBUTING.md's table names what the tree no longer has: {gone}"
