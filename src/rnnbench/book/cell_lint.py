"""The book's code cells linted as the house lints its modules: each chapter's Python pulled out and given to
``ruff check`` with the repository's configuration.

    python -m rnnbench.book.cell_lint [REPORTS] [--keep DIR]

Each chapter (REPORTS/*.qmd, default the checkout's reports/) becomes one notebook: its ``{python}`` cells in
order, and each inline `` `{python} expr` `` of the prose as a cell of its own holding that expression, where it
stands in the text. A notebook, not a flat module, because that is what Quarto's Jupyter engine runs, and ruff
reads a notebook cell by cell: a cell's imports are sorted as one block, an import at the top of a cell is in
place (a chapter imports what a section needs where the section starts), and a cell's last expression is its
output, not a useless statement. Every other rule applies as it does to the package. Findings are printed as
``reports/<chapter>.qmd:<line>:<column>: <code> <message>``, the line the chapter's own; exit 1 when any.

Only the standard library and ruff: CI runs this beside ruff, before the package is installed.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CELL_OPEN = re.compile(r"^```\{python[^}]*\}\s*$")
FENCE = re.compile(r"^(`{3,}|~{3,})")
# Quarto's own pattern for inline expressions (src/resources/jupyter/notebook.py, cell_execute_inline)
INLINE = re.compile(r"(?P<prefix>^|[^`])`\{python\}[ \t](?P<expr>[^`]+)`", re.MULTILINE)
# No rule is ignored: the two that cannot hold for a chapter read as one flat module, an import's place at the
# module's top (E402) and an expression statement's use (B018), ruff already reads cell by cell in a notebook
# (an import at the top of its cell, a cell's last expression its output), and every other rule holds for a
# chapter's code as it does for the package's.


@dataclass(frozen=True)
class Cell:
    """Code of one chapter, as Quarto runs it: ``line`` is the chapter's line of the code's first line."""

    code: str
    line: int
    inline: bool  # an inline expression of the prose, not a fenced cell


def chapter_cells(text: str) -> list[Cell]:
    """The ``{python}`` cells (option lines kept: they are comments) and inline expressions of a chapter, in the
    order Quarto's Jupyter engine runs them."""
    lines = text.splitlines()
    cells: list[Cell] = []
    prose: list[tuple[int, str]] = []  # (1-based line, text) outside cells
    fence: str | None = None  # an open fence that is not a cell (its text is prose to Quarto's inline pattern)
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence is None and CELL_OPEN.match(line):
            cells += _inline(prose)
            prose = []
            close = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            if close is None:
                raise ValueError(f"line {i + 1}: a python cell is never closed")
            cells.append(Cell("\n".join(lines[i + 1 : close]), i + 2, inline=False))
            i = close + 1
            continue
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        prose.append((i + 1, line))
        i += 1
    return cells + _inline(prose)


def _inline(prose: list[tuple[int, str]]) -> list[Cell]:
    if not prose:
        return []
    first, text = prose[0][0], "\n".join(line for _, line in prose)
    return [
        Cell(" ".join(m["expr"].split()), first + text[: m.start("expr")].count("\n"), inline=True)
        for m in INLINE.finditer(text)
    ]


def notebook(cells: Sequence[Cell]) -> dict:
    """The cells as a Jupyter notebook (nbformat 4), one notebook cell per cell or inline expression."""
    return {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": cell.code}
            for cell in cells
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def ruff() -> list[str]:
    found = shutil.which("ruff")
    return [found] if found else [sys.executable, "-m", "ruff"]


def lint(chapters: Sequence[Path], config: Path, keep: Path | None = None) -> list[str]:
    """ruff's findings on the chapters' cells, each at its chapter's line."""
    cells = {chapter: chapter_cells(chapter.read_text(encoding="utf-8")) for chapter in chapters}
    with tempfile.TemporaryDirectory() as scratch:
        folder = keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        written = {}
        for chapter, found in cells.items():
            if found:
                path = (folder / chapter.name).with_suffix(".ipynb")
                path.write_text(json.dumps(notebook(found), indent=1), encoding="utf-8")
                written[str(path.resolve())] = chapter
        if not written:
            return []
        command = [*ruff(), "check", "--no-cache", "--output-format", "json", "--config", str(config)]
        done = subprocess.run([*command, *written], capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):  # 1: findings; anything else: ruff itself failed
            raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}): {done.stderr.strip()}")
    problems = []
    for item in json.loads(done.stdout or "[]"):
        chapter = written[str(Path(item["filename"]).resolve())]
        cell = cells[chapter][int(item["cell"]) - 1]
        row, column = item["location"]["row"], item["location"]["column"]
        line = cell.line + row - 1
        where = "inline expression" if cell.inline else "cell"
        problems.append((chapter, line, column, f"{item['code']} {item['message']} ({where})"))
    return [f"{_shown(chapter)}:{line}:{column}: {text}" for chapter, line, column, text in sorted(problems)]


def _shown(path: Path) -> str:
    """The path as the reader typed it: relative to the working folder where it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    checkout = Path(__file__).resolve().parents[3]
    parser = argparse.ArgumentParser(prog="python -m rnnbench.book.cell_lint", description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="?", default=checkout / "reports", type=Path, help="the book's folder")
    parser.add_argument("--config", default=checkout / "pyproject.toml", type=Path, help="ruff's configuration")
    parser.add_argument("--keep", type=Path, help="write the chapters' notebooks here, to read them")
    args = parser.parse_args(argv)
    chapters = sorted(args.reports.glob("*.qmd"))
    if not chapters:
        parser.error(f"{args.reports} holds no chapter (*.qmd)")
    problems = lint(chapters, args.config, args.keep)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problems in the code of {len(chapters)} chapters", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
