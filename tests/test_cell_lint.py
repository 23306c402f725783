"""The chapters' code linted by ruff: a planted chapter's cells and inline expressions pulled out in the order
Quarto runs them, and ruff's findings reported at the chapter's own lines."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from rnnbench.book import cell_lint

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "pyproject.toml"

needs_ruff = pytest.mark.skipif(
    shutil.which("ruff") is None and importlib.util.find_spec("ruff") is None, reason="ruff is not installed"
)

# Line numbers matter: the tests name them.
CHAPTER = """\
# A chapter {#sec-a}

```{python}
#| label: setup
from rnnbench.book import format as fmt
from rnnbench.book import results as res

runs = res.study_names()
```

There are `{python} fmt.integer(len(runs))` studies.

````markdown
An example of the syntax: `{python} shown`, and a cell:
```{python}
not_a_cell
```
````

```{python}
import math

fmt.integer(math.floor(2.5))
```
"""
CLEAN = CHAPTER.replace("`{python} shown`", "`shown`")  # the example shown as plain code: Quarto runs nothing


def write(tmp_path: Path, text: str, name: str = "a.qmd") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_cells_and_inline_expressions_in_the_order_quarto_runs_them():
    cells = cell_lint.chapter_cells(CHAPTER)
    assert [(c.line, c.inline) for c in cells] == [(4, False), (11, True), (14, True), (21, False)]
    assert cells[0].code.startswith("#| label: setup\nfrom rnnbench.book import format as fmt")
    assert cells[1].code == "fmt.integer(len(runs))"
    # Quarto's inline pattern reads a non-python fence too; a {python} fence inside it is no cell
    assert cells[2].code == "shown"
    assert cells[3].code == "import math\n\nfmt.integer(math.floor(2.5))"


@needs_ruff
def test_a_clean_chapter_passes(tmp_path):
    # an import at the top of a later cell, a cell's last expression (its output), a name used only inline: all fine
    assert cell_lint.lint([write(tmp_path, CLEAN)], CONFIG) == []


@needs_ruff
def test_an_undefined_name_in_a_cell_is_caught_at_its_chapter_line(tmp_path):
    planted = CLEAN.replace("runs = res.study_names()", "runs = res.study_names(folder)")
    problems = cell_lint.lint([write(tmp_path, planted)], CONFIG)
    assert problems == [f"{tmp_path / 'a.qmd'}:8:24: F821 Undefined name `folder` (cell)"]


@needs_ruff
def test_an_unused_import_is_caught_and_one_used_only_inline_is_used(tmp_path):
    planted = CHAPTER.replace("import math\n", "import math\nimport os\n")
    # `res` read only by the prose's inline expression: imported for it, not unused
    planted = planted.replace("runs = res.study_names()", "runs = 3").replace("len(runs)", "len(res.study_names())")
    problems = cell_lint.lint([write(tmp_path, planted)], CONFIG)
    assert problems == [
        f"{tmp_path / 'a.qmd'}:14:1: F821 Undefined name `shown` (inline expression)",
        f"{tmp_path / 'a.qmd'}:22:8: F401 `os` imported but unused (cell)",
    ]


@needs_ruff
def test_the_command_exits_1_on_a_finding(tmp_path, capsys):
    write(tmp_path, CLEAN.replace("fmt.integer(math.floor(2.5))", "fmt.integer(floor(2.5))"))
    assert cell_lint.main([str(tmp_path), "--config", str(CONFIG)]) == 1
    assert "F821 Undefined name `floor`" in capsys.readouterr().out
    write(tmp_path, CLEAN)
    assert cell_lint.main([str(tmp_path), "--config", str(CONFIG)]) == 0
