"""No programs in the chapters: a chapter's cells call rnnbench.book functions that return values, tables and
verdict words, and its sentences are Markdown. A function defined in a cell, or text printed by one, is a program
(and, printed, prose written as Python strings): it belongs in rnnbench.book, its words in the chapter."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rnnbench.book import cell_lint

REPORTS = Path(__file__).resolve().parents[1] / "reports"

# The appendices generated item by item, whose items come from the results: a section per study (a study added in a
# config appears with no change to the book) and an entry per claim. Each may print its items in a loop over them;
# none defines a function, and every other chapter holds neither a def nor a print.
APPENDIX_GENERATORS = {
    "studies.qmd": "a section per study",
    "verdicts.qmd": "an entry per claim",
}


def programs(text: str) -> list[str]:
    """Each ``def`` and each ``print(...)`` call in a chapter's cells, as ``line: what``."""
    found = []
    for cell in cell_lint.chapter_cells(text):
        if cell.inline:
            continue
        for node in ast.walk(ast.parse(cell.code)):
            line = cell.line + getattr(node, "lineno", 1) - 1
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append(f"{line}: def {node.name}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                found.append(f"{line}: print(")
    return sorted(found, key=lambda item: int(item.split(":")[0]))


def test_a_planted_chapter_with_a_def_and_a_print_is_caught():
    chapter = (
        "# A\n\n```{python}\n#| output: asis\ndef caption(x):\n    return f'{x}'\n\n\nprint(caption(1))\n```\n\n"
        "Prose that says print(x) and def f(): nothing run.\n\n```{python}\nvalue = fmt.integer(3)\n```\n"
    )
    assert programs(chapter) == ["5: def caption", "9: print("]
    assert (
        programs(
            chapter.replace("print(caption(1))", "caption(1)").replace(
                "def caption(x):\n    return f'{x}'", "caption = str"
            )
        )
        == []
    )


@pytest.mark.parametrize("chapter", sorted(p.name for p in REPORTS.glob("*.qmd")))
def test_a_chapter_holds_no_def_and_no_print(chapter):
    found = programs((REPORTS / chapter).read_text(encoding="utf-8"))
    if chapter in APPENDIX_GENERATORS:
        defs = [item for item in found if ": def " in item]
        assert defs == [], f"{chapter} defines functions in its cells: move them into rnnbench.book"
        assert found, f"{chapter} prints no item any more: remove it from APPENDIX_GENERATORS"
    else:
        assert found == [], (
            f"{chapter} runs a program in its cells: move it into rnnbench.book, its words into Markdown"
        )


def test_every_appendix_generator_exists():
    missing = sorted(name for name in APPENDIX_GENERATORS if not (REPORTS / name).is_file())
    assert missing == [], f"no such chapter any more: remove {missing} from APPENDIX_GENERATORS"
