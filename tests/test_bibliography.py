"""The book's bibliography: every citation of its chapters, of rnnbench.book and of the published rows names an entry
of reports/references.bib, every entry can be cited, and the book is wired to list them (HTML and Typst PDF alike).
The rendered list is checked in tests/test_book_render.py."""

from __future__ import annotations

from pathlib import Path

import bibcheck
import bookcheck
import pytest
import yaml

from rnnbench.book import quarto
from rnnbench.published import load_published

REPO = Path(__file__).resolve().parents[1]
BOOK = REPO / "reports"
BIB = BOOK / "references.bib"
ENTRIES = {entry.key: entry for entry in bibcheck.parse_bib(BIB.read_text(encoding="utf-8"))}
# The keys the chapters cite the papers by: a key renamed here would leave a citation of it unresolved.
KEYS = (
    "elman1990",
    "bengio2003",
    "mikolov2010",
    "mikolov2011",
    "mikolov2011extensions",
    "pascanu2013",
    "bengio1994",
    "werbos1990",
    "chen1999",
    "kneser1995",
    "linzen2016",
    "khandelwal2018",
    "le2015",
    "hochreiter1997",
    "schuirmann1987",
    "holm1979",
    "marcus1993",
    "francis1979",
    "williams1990",
    "krause2018",
    "pachitariu2013",
    "press2017",
    "inan2017",
)


def chapter_citations(path: Path) -> set[str]:
    """What a chapter cites: in its prose, its captions and every string its cells hold (printed, or shown inline)."""
    chapter = bookcheck.parse_chapter(path)
    text = [chapter.prose(), *chapter.captions()]
    for cell in chapter.cells:
        text += bibcheck.string_literals(cell.code)
    return bibcheck.citations("\n".join(text))


def test_every_entry_can_be_cited():
    assert bibcheck.entry_problems(list(ENTRIES.values())) == []
    assert sorted(set(KEYS) - set(ENTRIES)) == []


def test_every_citation_of_a_chapter_names_an_entry():
    cited = {path.name: chapter_citations(path) for path in sorted(BOOK.glob("*.qmd"))}
    assert {name: sorted(keys - set(ENTRIES)) for name, keys in cited.items() if keys - set(ENTRIES)} == {}
    # the chapters that name papers cite them (a citation lost in an edit would leave the paper unnamed)
    assert {"werbos1990", "bengio1994", "pascanu2013"} <= cited["index.qmd"]
    assert {"mikolov2011", "bengio2003", "marcus1993", "francis1979", "mikolov2010"} <= cited["published.qmd"]
    assert {"kneser1995", "chen1999", "mikolov2011", "linzen2016", "le2015"} <= cited["studies.qmd"]
    assert {"pascanu2013", "schuirmann1987", "holm1979", "williams1990", "bengio2003", "elman1990"} <= cited[
        "ablations.qmd"
    ]


def test_every_citation_the_book_modules_write_names_an_entry():
    cited = {}
    for path in sorted((REPO / "src" / "rnnbench" / "book").glob("*.py")):
        cited[path.name] = bibcheck.citations("\n".join(bibcheck.string_literals(path.read_text(encoding="utf-8"))))
    assert {name: sorted(keys - set(ENTRIES)) for name, keys in cited.items() if keys - set(ENTRIES)} == {}
    assert "pascanu2013" in cited["decay.py"]  # the bound beside each measured rate is theirs
    # the published chapter cites the published rows' papers by their keys
    published = load_published()
    assert set(published["cite_key"]) == {"mikolov2011", "bengio2003"}
    assert set(published["cite_key"]) <= set(ENTRIES)


def test_a_row_cites_the_paper_its_source_names():
    for row in load_published().itertuples():
        entry = ENTRIES[row.cite_key]
        family = entry.fields["author"].split(",")[0]
        assert row.source.startswith(family) and f"({entry.fields['year']})" in row.source, row.model


def test_citations_are_told_from_cross_references_addresses_and_labels_in_the_making():
    text = (
        "As @elman1990 showed [@bengio2003, Table 1; -@pascanu2013], and as Mikolov's paper says (@mikolov2011). "
        "See @sec-unroll, @fig-decay, @tbl-claims and @eq-bptt; write to someone@example.org; \\@escaped; "
        "f'@{label}' is a label a cell fills in."
    )
    assert bibcheck.citations(text) == {"elman1990", "bengio2003", "pascanu2013", "mikolov2011"}


def test_an_entry_unfit_to_cite_is_named():
    planted = """
    @article{a2000, author = {Smith, Ann}, title = {T}, journal = {J}, volume = {1}, pages = {1--9}, year = {2000}}
    @article{a2000, author = {Smith, Ann}, title = {T}, journal = {J}, volume = {1}, pages = {1--9}, year = {2000}}
    @article{b2001, author = {Ann Smith}, title = {T}, volume = {1}, pages = {12-14}, year = {201}}
    @inproceedings{c2002, author = {Doe, J. and Roe, R.}, title = {{T}he "quoted"}, booktitle = "B", pages = 7,
                   year = 2002, doi = {https://doi.org/10.1/x}}
    @webpage{d2003, author = {Doe, J.}, title = {T}, year = {2003}}
    """
    problems = bibcheck.entry_problems(bibcheck.parse_bib(planted))
    assert problems == [
        "a2000 (line 3): the key is used twice",
        "b2001 (line 4): @article needs journal",
        "b2001 (line 4): year '201' is not a year",
        "b2001 (line 4): pages '12-14' is not first--last",
        "b2001 (line 4): author 'Ann Smith' is not written Family, Given",
        "c2002 (line 5): doi 'https://doi.org/10.1/x' is not a DOI (10.…)",
        "d2003 (line 7): unknown entry type @webpage; known: "
        "['article', 'book', 'inproceedings', 'manual', 'misc', 'phdthesis', 'techreport']",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("@article{a, title = {open", "never closed"),
        ("@article{a, title = {T} year = {2000}}", "expected , or } after a field"),
        ("@article{a, = {T}}", "expected a field"),
        ("@article{a, title = {T}, title = {U}}", "the field 'title' twice"),
        ("write to someone@example.org", "an @ that opens no entry"),
    ],
)
def test_a_malformed_bib_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        bibcheck.parse_bib(text)


def test_the_book_lists_what_it_cites_in_html_and_pdf_alike(tmp_path):
    config = yaml.safe_load((BOOK / "_quarto.yml").read_text(encoding="utf-8"))
    assert config["bibliography"] == BIB.name
    assert "references.qmd" in bookcheck.read_book(BOOK).chapter_files
    assert "::: {#refs}" in (BOOK / "references.qmd").read_text(encoding="utf-8")
    # citeproc in both formats: without it Typst sets its own numbered list after the last page, not this one
    assert config["format"]["typst"]["citeproc"] is True
    assert config["format"]["html"].get("citeproc", True) is True
    # the render's copy of the book holds the bibliography, and an edit to it renders the book again
    quarto.copy_book(BOOK, tmp_path)
    assert (tmp_path / BIB.name).read_bytes() == BIB.read_bytes()
    assert 'glob.glob("reports/*.bib")' in (REPO / "workflow" / "rules" / "report.smk").read_text(encoding="utf-8")


def test_a_title_is_found_in_the_page_however_it_is_set():
    title = r"An Efficient Gradient-Based Algorithm for {On-Line} Training of {K}u{\v c}era's Trajectories"
    page = "“An Efficient Gradient-Based Algorithm for on-Line Train-\ning of Kučera’s Trajectories.”"
    assert bibcheck.title_text(title) == bibcheck.title_text(page)


def test_the_published_tables_cite_each_rows_paper_and_an_older_table_names_it(tmp_path):
    from rnnbench.book import published, published_chapter
    from rnnbench.results.beside_published import comparison_table
    from rnnbench.results.runs import our_runs

    path = tmp_path / "tables" / "comparison.csv"
    path.parent.mkdir()
    comparison_table(load_published(), our_runs([])).to_csv(path, index=False)
    rows = published.corpus_rows(published.comparison(tmp_path), "ptb")
    assert rows["measured by"].tolist()[:2] == ["@mikolov2011, Table 2 (thesis: Table 4.1)"] * 2
    assert published_chapter.corpus_comparison(published.comparison(tmp_path), "brown").cite == "@bengio2003"
    # a comparison table written before the rows carried their keys still names each paper, by its source
    published.comparison(tmp_path).drop(columns=["cite_key"]).to_csv(path, index=False)
    rows = published.corpus_rows(published.comparison(tmp_path), "brown")
    assert rows["measured by"].iloc[0] == "Bengio et al. (2003), Table 1, p. 1149"
