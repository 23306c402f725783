"""The main text's prose check, on pages planted as Quarto 1.9 writes them: a name in a paragraph or a table cell
is found; the same name in a caption, a code block, the navigation or an appendix page is not."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from rnnbench import paths
from rnnbench.book import prose_check
from rnnbench.config.runs import RunConfig

REPO = Path(__file__).resolve().parents[1]
RUN_ID = "rnn-ptb-0123456789"  # <family>-<corpus>-<10 hex digits>, as RunConfig.run_id spells one

# A page as Quarto's HTML book writes it: the header, sidebar and table of contents around <main>, and the page
# navigation, scripts and footer after it. The sidebar, the contents, a script and the footer name the pipeline's
# names on every page.
PAGE = """<!DOCTYPE html>
<html><head><title>Clipping</title>
<script id="quarto-search-options" type="application/json">{{"study": "clipping_ptb"}}</script></head>
<body class="nav-sidebar floating">
<header id="quarto-header"><nav class="quarto-secondary-nav"><a href="runs.html">clipping_ptb</a></nav></header>
<div id="quarto-content">
<nav id="quarto-sidebar" class="sidebar"><a href="appendix.html">Runs of clipping_ptb</a></nav>
<div id="quarto-margin-sidebar" class="sidebar margin-sidebar">
<nav id="TOC" role="doc-toc"><a href="#sec-study-clipping_ptb">clipping_ptb</a></nav></div>
<main class="content" id="quarto-document-content">
<header id="title-block-header"><h1 class="title">Gradient clipping</h1></header>
{body}
</main>
<script id="quarto-html-after-body" type="application/javascript">const study = "clipping_ptb";</script>
<nav class="page-navigation"><a href="decay.html">decay_lstm</a></nav>
</div>
<footer class="footer"><div class="nav-footer"><div class="nav-footer-center">Built by study_summary</div></div></footer>
</body></html>
"""

# The study in every place that is not prose: a figure's caption, a table's float caption and <caption>, a code
# block, and attributes (ids, sources, links).
CLEAN = """
<section id="sec-clipping" class="level2" data-number="2.1"><h2>Clipping the norm</h2>
<p>Clipping the gradient's norm at 0.25 keeps every run of the study below the divergence threshold; the
rule trains, and its results stand in <a href="#tbl-clipping_ptb">Table 2.1</a>.</p>
<div id="fig-clipping_ptb" class="quarto-float quarto-figure quarto-figure-center anchored">
<figure class="quarto-float quarto-float-fig figure"><div aria-describedby="fig-clipping_ptb-caption">
<img src="_staged/study-clipping_ptb.png" class="img-fluid figure-img"></div>
<figcaption class="quarto-float-caption-bottom quarto-float-caption quarto-float-fig" id="fig-clipping_ptb-caption">
Figure 2.1: Test perplexity against the threshold (studies/clipping_ptb/figure.png).</figcaption></figure></div>
<div id="tbl-clipping_ptb" class="quarto-float quarto-figure quarto-figure-center anchored">
<figure class="quarto-float quarto-float-tbl figure">
<figcaption class="quarto-float-caption-top quarto-float-caption quarto-float-tbl" id="tbl-clipping_ptb-caption">
Table 2.1: The study clipping_ptb's runs, from studies/clipping_ptb/summary.csv.</figcaption>
<div aria-describedby="tbl-clipping_ptb-caption"><table class="caption-top table">
<caption>Runs of clipping_ptb</caption>
<thead><tr class="header"><th>threshold</th><th>test ppl</th></tr></thead>
<tbody><tr class="odd"><td>0.25</td><td>141.2</td></tr></tbody></table></div></figure></div>
<div class="sourceCode"><pre class="sourceCode bash"><code>snakemake train --config study=clipping_ptb</code></pre></div>
<p>The book is written into <code>results/report/_book/</code> and rendered by the report rules.</p>
</section>
"""


def planted(tmp_path: Path, pages: dict[str, str], *, appendices: dict[str, str] | None = None) -> Path:
    """A results folder with one study and one analysis, and a rendered book of ``pages`` (name -> body), the
    ``appendices`` listed under book: appendices:."""
    results = tmp_path / "results"
    Path(paths.study_record(str(results), "clipping_ptb")).parent.mkdir(parents=True)
    Path(paths.study_record(str(results), "clipping_ptb")).write_text(json.dumps({"name": "clipping_ptb"}))
    Path(paths.analysis_dir(str(results), "decay_lstm")).mkdir(parents=True)
    report = Path(paths.report_dir(str(results)))
    (report / "_book").mkdir(parents=True)
    appendices = appendices or {}
    book = {"chapters": [f"{name}.qmd" for name in pages]}
    if appendices:
        book["appendices"] = [f"{name}.qmd" for name in appendices]
    (report / "_quarto.yml").write_text(json.dumps({"project": {"type": "book"}, "book": book}))  # JSON is YAML
    for name, body in {**pages, **appendices}.items():
        (report / "_book" / f"{name}.html").write_text(PAGE.format(body=body), encoding="utf-8")
    return results


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A workflow with three rules, one of them an ordinary word."""
    root = tmp_path / "checkout"
    (root / "workflow" / "rules").mkdir(parents=True)
    (root / "Snakefile").write_text('include: "workflow/rules/studies.smk"\n\n\nrule all:\n    input:\n        "x"\n')
    (root / "workflow" / "rules" / "studies.smk").write_text(
        "rule study_summary:\n    output:\n        'a'\n\n\nrule train:\n    output:\n        'b'\n"
    )
    return root


def findings(tmp_path, checkout, body: str, **kwargs) -> list[prose_check.Finding]:
    results = planted(Path(tempfile.mkdtemp(dir=tmp_path)), {"index": CLEAN, "clipping": body}, **kwargs)
    return prose_check.check_results_book(results, checkout)


def test_a_clean_page_passes_though_its_captions_code_and_navigation_name_the_study(tmp_path, checkout):
    assert findings(tmp_path, checkout, CLEAN) == []


def test_a_study_key_in_a_paragraph_is_found_with_its_page_and_context(tmp_path, checkout):
    body = CLEAN + "<p>The study <em>clipping_ptb</em> held 12 runs.</p>"
    assert findings(tmp_path, checkout, body) == [
        prose_check.Finding(
            "clipping.html",
            "study",
            "clipping_ptb",
            "rendered by the report rules. The study clipping_ptb held 12 runs.",
        )
    ]


def test_an_analysis_key_in_a_list_item_is_found(tmp_path, checkout):
    found = findings(tmp_path, checkout, CLEAN + "<ul><li>decay_lstm: rates</li></ul>")
    assert [(f.kind, f.word) for f in found] == [("analysis", "decay_lstm")]


def test_the_same_key_only_in_a_figure_caption_passes(tmp_path, checkout):
    body = CLEAN.replace(
        "Test perplexity against the threshold", "The study clipping_ptb, decay_lstm and rnn-ptb-0123456789"
    )
    assert "The study clipping_ptb" in body
    assert findings(tmp_path, checkout, body) == []


def test_a_run_id_in_a_table_cell_is_found(tmp_path, checkout):
    body = CLEAN.replace("<td>141.2</td>", f"<td>141.2</td><td>{RUN_ID}</td>")
    found = findings(tmp_path, checkout, body)
    assert [(f.page, f.kind, f.word) for f in found] == [("clipping.html", "run id", RUN_ID)]


def test_a_run_id_is_the_pattern_run_config_spells():
    run_id = RunConfig.from_settings({"family": "ff", "corpus": "brown"}).run_id
    assert prose_check.run_id_pattern().fullmatch(run_id)
    # a longer or shorter hash, or a name that only looks like one, is not a run id
    assert not prose_check.run_id_pattern().search("rnn-ptb-0123456789a ff-ptb-012345678 cnn-ptb-0123456789")


def test_a_rule_name_is_found(tmp_path, checkout):
    found = findings(tmp_path, checkout, CLEAN + "<p>Each table is written by study_summary.</p>")
    assert [(f.kind, f.word) for f in found] == [("rule", "study_summary")]


def test_a_rule_that_is_an_ordinary_word_counts_only_where_named_as_a_target(tmp_path, checkout):
    # the word in prose, and a folder of a path, are not the rule; a snakemake command and "the rule all" are
    assert findings(tmp_path, checkout, CLEAN + "<p>We train all networks; see <code>results/all/</code>.</p>") == []
    body = CLEAN + "<p>Run <code>snakemake train --cores 2</code>, then the rule all.</p>"
    assert [(f.kind, f.word) for f in findings(tmp_path, checkout, body)] == [("rule", "train"), ("rule", "all")]


def test_a_dotted_python_name_is_not_a_rule(tmp_path, checkout):
    body = CLEAN + "<table><tr><td>results.summary.study_summary</td><td>study_summary.py</td></tr></table>"
    assert findings(tmp_path, checkout, body) == []


def test_an_appendix_page_is_not_read(tmp_path, checkout):
    appendix = "<p>clipping_ptb ran rnn-ptb-0123456789 through study_summary; decay_lstm measured it.</p>"
    assert findings(tmp_path, checkout, CLEAN, appendices={"runs": appendix}) == []
    # the same page in the main text is read
    results = planted(tmp_path / "main", {"index": CLEAN, "runs": appendix})
    assert len(prose_check.check_results_book(results, checkout)) == 4


def test_a_chapter_without_its_page_is_a_finding(tmp_path, checkout):
    results = planted(tmp_path, {"index": CLEAN})
    (Path(paths.report_dir(str(results))) / "_book" / "index.html").unlink()
    assert [f.kind for f in prose_check.check_results_book(results, checkout)] == ["missing page"]


def test_the_command_prints_each_finding_and_exits_1(tmp_path, checkout, capsys):
    results = planted(tmp_path, {"index": CLEAN, "clipping": CLEAN + f"<p>{RUN_ID}</p>"})
    assert prose_check.main([str(results), "--workflow", str(checkout)]) == 1
    assert f"clipping.html: run id '{RUN_ID}'" in capsys.readouterr().out
    clean = planted(tmp_path / "clean", {"index": CLEAN})
    assert prose_check.main([str(clean), "--workflow", str(checkout)]) == 0
    assert capsys.readouterr().out == ""


def test_the_repositorys_rules_and_main_chapters_are_read():
    rules = prose_check.rule_names(REPO)
    assert {"all", "train", "study_summary", "report"} <= rules
    chapters = prose_check.main_chapters(REPO / "reports" / "_quarto.yml")
    assert chapters[0] == "index.qmd"
    assert all(chapter.endswith(".qmd") for chapter in chapters)


def test_a_code_identifier_in_a_table_cell_is_found_but_not_in_inline_code_mathematics_or_a_path(tmp_path, checkout):
    body = CLEAN.replace("<td>141.2</td>", "<td>141.2</td><td>mlp_first_layer_with_bias</td>")
    body += "<p>Set <code>clip_times_median</code> in config/config.yaml; see tables/lesson_params.csv.</p>"
    body += '<p>The bias <math display="inline"><semantics><annotation>b_h</annotation></semantics></math> too.</p>'
    found = findings(tmp_path, checkout, body)
    assert [(f.kind, f.word) for f in found] == [("identifier", "mlp_first_layer_with_bias")]


def test_a_symbol_written_with_an_underscore_is_not_an_identifier():
    assert prose_check.IDENTIFIER.search("the bias b_h and the state h_t") is None
    assert prose_check.IDENTIFIER.search("its test_ppl").group() == "test_ppl"
