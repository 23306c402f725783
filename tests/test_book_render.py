"""The book rendered by a real Quarto (HTML and Typst PDF), and the pages checked as a reader would need them.

Runs when ``quarto`` is on PATH and skips otherwise. With RNNBENCH_SMOKE_RESULTS pointing at a results
folder whose book was rendered (the report rule, as .ci/run does), that book is checked as it is;
otherwise the book is rendered here from the hand-made results of tests/test_report.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import bibcheck
import bookcheck
import pytest

from rnnbench import paths
from rnnbench.book import prose_check, quarto

REPO = Path(__file__).resolve().parents[1]
BOOK = REPO / "reports"

pytestmark = [
    pytest.mark.quarto,
    pytest.mark.skipif(shutil.which("quarto") is None, reason="quarto is not on PATH (the real render needs it)"),
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext/pdfinfo (poppler-utils) not installed"),
]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    smoke = os.environ.get("RNNBENCH_SMOKE_RESULTS")
    if smoke and Path(paths.report_book(smoke)[1]).is_file():
        return Path(paths.report_dir(smoke)) / "_book"
    from test_report import build_results

    results = tmp_path_factory.mktemp("render") / "results"
    build_results(results)
    return quarto.render(BOOK, results_dir=results, log=results / "render.log")


def test_every_chapter_renders_with_its_images_and_references(rendered):
    chapters = bookcheck.read_book(BOOK).chapter_files
    titles = {c: bookcheck.chapter_title(BOOK / c) for c in chapters}
    assert bookcheck.check_rendered(rendered, chapters, titles, rendered / quarto.PDF) == []


def test_figures_are_shown_from_inside_the_book(rendered):
    """Every figure is a staged copy inside the book (HTML drops images above its folder); PNG on screen."""
    html = (rendered / "studies.html").read_text(encoding="utf-8")
    images = bookcheck.HTML_IMAGE.findall(html)
    assert images and all(src.startswith("_staged/") and src.endswith(".png") for src in images)


def test_the_main_text_names_no_study_analysis_run_or_rule(rendered):
    """The chapters of book: chapters: read as prose (captions, code and navigation aside) name no study or analysis
    key, run id or Snakemake rule: those belong to the appendices (rnnbench.book.prose_check)."""
    findings = prose_check.check_results_book(rendered.parent.parent, REPO)
    assert [str(finding) for finding in findings] == []


def test_the_reference_list_holds_every_cited_entry_in_html_and_pdf(rendered):
    """Every citation of the pages resolves to an entry of the references page, which lists those and no other;
    the PDF's references page holds the same entries (pandoc's citeproc sets both)."""
    book = bookcheck.read_book(BOOK)
    chapters = book.chapter_files
    references = book.config["bibliography"]
    entries = {e.key: e for e in bibcheck.parse_bib((BOOK / references).read_text(encoding="utf-8"))}
    page = "references.qmd"
    after = chapters[chapters.index(page) + 1 :]
    pdf = subprocess.run(["pdftotext", str(rendered / quarto.PDF), "-"], capture_output=True, text=True, check=True)
    problems = bibcheck.check_rendered_references(
        rendered,
        chapters,
        page,
        pdf.stdout,
        bookcheck.chapter_title(BOOK / page),
        bookcheck.chapter_title(BOOK / after[0]) if after else None,
        entries,
    )
    assert problems == []
