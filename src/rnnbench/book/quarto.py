"""Render the Quarto book of one results folder into that folder: <results>/report/_book/.

    <results>/report/            a copy of reports/ (chapters, _quarto*.yml, bibliography, print and screen styles)
    <results>/report/_staged/    the results' figures, staged where HTML and Typst can embed them
    <results>/report/_book/      index.html (and one page per chapter), rnnbench-report.pdf

Each results folder gets its own book, so rendering the smoke results never overwrites the default book.

Quarto runs a chapter's cells once per output format. Here they run once: the HTML pass executes each
chapter and freezes its output (profile ``workflow``: ``freeze: auto``), the frozen output is offered to
the Typst pass under its own format's name, and the Typst pass renders from it without a kernel. (Jupyter's
execution cache would do the same, but Quarto refuses it for chapters with inline expressions.) The frozen
output is cleared before every render, so changed results always execute.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from rnnbench import paths

BOOK_FILES = ("_quarto*.yml", "*.qmd", "*.bib", "*.typ", "*.css", "*.scss", "*.js")  # what a render reads from reports/
PROFILE = "workflow"  # reports/_quarto-workflow.yml
PDF = "rnnbench-report.pdf"  # book.output-file in _quarto.yml


class QuartoMissing(RuntimeError):
    pass


def quarto() -> str:
    found = shutil.which("quarto")
    if found is None:
        raise QuartoMissing(
            "Quarto (1.9 or later) is not on PATH, so the report cannot be rendered. Every result it needs "
            'has been built (the `results` target). Install Quarto (`pip install -e ".[report]"` or a '
            "release from quarto.org), then rerun the same snakemake command: only the report job will run."
        )
    return found


def copy_book(book_dir: str | Path, target: str | Path) -> Path:
    """reports/'s sources into ``target``, replacing sources left there by an earlier render."""
    source, target = Path(book_dir), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    for pattern in BOOK_FILES:
        for old in target.glob(pattern):
            old.unlink()
        for path in source.glob(pattern):
            shutil.copyfile(path, target / path.name)
    return target


def offer_frozen(book: Path, source: str = "html", target: str = "typ") -> int:
    """Copy each chapter's frozen <source>.json to <target>.json; returns how many chapters were frozen."""
    frozen = sorted((book / "_freeze").glob(f"**/execute-results/{source}.json"))
    for path in frozen:
        shutil.copyfile(path, path.with_name(f"{target}.json"))
    return len(frozen)


def render(book_dir: str | Path, *, results_dir: str | Path, log: str | Path | None = None) -> Path:
    """Render the book (HTML + Typst PDF) of ``results_dir`` into <results_dir>/report/_book/; returns that."""
    launcher = quarto()
    results = Path(results_dir)
    book = copy_book(book_dir, paths.report_dir(str(results))).resolve()
    shutil.rmtree(book / "_freeze", ignore_errors=True)
    env = {
        **os.environ,
        "RNNBENCH_RESULTS": str(results.resolve()),  # the chapters run in the copy; read results from anywhere
        "RNNBENCH_RESULTS_NAME": str(results_dir),  # as the config names it, for the book's text
        "QUARTO_PYTHON": os.environ.get("QUARTO_PYTHON", sys.executable),  # the Python that has rnnbench
    }
    pdf_dir = book / "_book-pdf"  # a render cleans its output folder: the PDF pass gets its own
    with open(log, "a", encoding="utf-8") if log else open(os.devnull, "w") as out:
        for command in (
            [launcher, "render", str(book), "--to", "html", "--profile", PROFILE],
            [launcher, "render", str(book), "--to", "typst", "--profile", PROFILE, "--output-dir", str(pdf_dir)],
        ):
            if "typst" in command and offer_frozen(book) == 0:
                raise RuntimeError(f"{book}: the HTML pass froze no chapter, so the PDF pass would run them again")
            done = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}); its output is in {log}")
    shutil.move(pdf_dir / PDF, book / "_book" / PDF)
    shutil.rmtree(pdf_dir)
    return book / "_book"
