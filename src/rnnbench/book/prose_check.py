"""The rendered book's main text read as a reader reads it, and every name of the pipeline found in it.

A chapter of the main text speaks of networks, settings and what was measured; the names the pipeline gives
them (a study's or analysis's key, a run id, a Snakemake rule), and any other code identifier (a table's column,
a setting's key), belong to the appendices, the captions (which say where a figure or table comes from) and the
code. This reads the HTML pages of the chapters listed under
``book: chapters:`` of the book's _quarto.yml (never ``appendices:``), keeps the page's ``<main>`` without its
captions, code blocks, mathematics, navigation and scripts, and reports each such name left in its prose and table cells:

    python -m rnnbench.book.prose_check RESULTS [--workflow CHECKOUT]

RESULTS is a results folder whose book was rendered (``RESULTS/report/_book``); the rule names are read from
CHECKOUT's Snakefile and workflow/rules/*.smk (default: the checkout this package runs from). Exits 1 when a
name is found.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from glob import glob
from html.parser import HTMLParser
from pathlib import Path

from rnnbench import paths
from rnnbench.config.locations import package_checkout
from rnnbench.config.schema import run_settings_schema

# Elements whose text is not the chapter's prose: captions (they name their source on purpose), code blocks,
# navigation and its buttons, scripts, inline drawings and mathematics (MathML: its TeX source writes b_h, h_t).
# A table's cells are prose: they are read.
SKIPPED_TAGS = frozenset(
    {"script", "style", "nav", "pre", "figcaption", "caption", "template", "svg", "button", "math"}
)
# Quarto 1.9 marks a float's caption with this class (on figcaption today; on a div in some layouts).
SKIPPED_CLASSES = frozenset({"quarto-float-caption", "sidebar", "margin-sidebar", "quarto-title-meta"})
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
# Elements that end a run of words: text on either side of them does not join into one word.
BREAKING_TAGS = frozenset(
    {"p", "div", "td", "th", "tr", "li", "ul", "ol", "dl", "dt", "dd", "br", "section", "table", "figure", "blockquote"}
    | {"h1", "h2", "h3", "h4", "h5", "h6", "header", "footer", "main"}
)
RULE = re.compile(r"^(?:rule|checkpoint)\s+([A-Za-z_]\w*)\s*:", re.MULTILINE)
RULE_WORD = re.compile(r"\brules? $")  # "the rule train", "rule report"
CONTEXT = 40  # characters of the page shown on each side of a name found
# A code identifier in words' place (mlp_first_layer, clip_times_median, test_ppl): lower-case parts joined by
# underscores, the first of two letters or more (a symbol such as b_h is mathematics), not part of a path or file.
IDENTIFIER = re.compile(r"(?<![\w./\\-])[a-z]{2,}[a-z0-9]*(?:_[a-z0-9]+)+(?![\w/-]|\.\w)")


@dataclass(frozen=True)
class Names:
    """The pipeline's names, by kind: ``{kind: names}`` with kinds study, analysis, rule."""

    by_kind: Mapping[str, frozenset[str]]

    def kind_of(self, name: str) -> str:
        return next(kind for kind, names in self.by_kind.items() if name in names)


@dataclass(frozen=True)
class Finding:
    page: str
    kind: str  # study, analysis, run id, rule or identifier
    word: str
    context: str

    def __str__(self) -> str:
        return f"{self.page}: {self.kind} {self.word!r} in '…{self.context}…'"


def main_chapters(quarto_yml: str | Path) -> list[str]:
    """The chapters of the main text, in order: ``book: chapters:`` (parts flattened), without ``appendices:``."""
    import yaml

    config = yaml.safe_load(Path(quarto_yml).read_text(encoding="utf-8")) or {}
    found = []
    for entry in config.get("book", {}).get("chapters", []):
        if isinstance(entry, str):
            found.append(entry)
        elif isinstance(entry, Mapping):
            if str(entry.get("part", "")).endswith(".qmd"):
                found.append(str(entry["part"]))
            found += [str(c) for c in entry.get("chapters", [])]
    return found


def rule_names(checkout: str | Path) -> set[str]:
    """Every ``rule NAME:`` (and checkpoint) of the Snakefile and workflow/rules/*.smk."""
    checkout = Path(checkout)
    files = [checkout / "Snakefile", *sorted((checkout / "workflow" / "rules").glob("*.smk"))]
    return {name for path in files if path.is_file() for name in RULE.findall(path.read_text(encoding="utf-8"))}


def pipeline_names(results: str | Path, checkout: str | Path) -> Names:
    """Study and analysis keys of a results folder (the folders holding their records) and the workflow's rules."""
    results = str(results)
    studies = {Path(record).parent.name for record in glob(paths.study_record(results, "*"))}
    analyses = {Path(folder).name for folder in glob(paths.analysis_dir(results, "*")) if Path(folder).is_dir()}
    return Names(
        {"study": frozenset(studies), "analysis": frozenset(analyses), "rule": frozenset(rule_names(checkout))}
    )


def run_id_pattern() -> re.Pattern[str]:
    """A run id as RunConfig.run_id spells it, <family>-<corpus>-<10 hex digits>, with the schema's families and
    corpora."""
    properties = run_settings_schema()["properties"]
    families = "|".join(map(re.escape, properties["family"]["enum"]))
    corpora = "|".join(map(re.escape, properties["corpus"]["enum"]))
    return re.compile(rf"(?<![\w-])(?:{families})-(?:{corpora})-[0-9a-f]{{10}}(?![\w-])")


class _Prose(HTMLParser):
    """Collects the text of a page that a reader reads as prose, each run marked as inline code or not, and
    whether it lies inside ``<main>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, whether this element starts a skipped subtree)
        self.runs: list[tuple[str, bool, bool]] = []  # (text, in code, in main)

    def _skipped(self) -> bool:
        return any(skip for _, skip in self.stack)

    def _inside(self, tag: str) -> bool:
        return any(name == tag for name, _ in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BREAKING_TAGS:
            self.runs.append((" ", False, self._inside("main")))
        if tag in VOID_TAGS:
            return
        classes = set((dict(attrs).get("class") or "").split())
        self.stack.append((tag, tag in SKIPPED_TAGS or bool(classes & SKIPPED_CLASSES)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BREAKING_TAGS:
            self.runs.append((" ", False, self._inside("main")))

    def handle_endtag(self, tag: str) -> None:
        if tag in BREAKING_TAGS:
            self.runs.append((" ", False, self._inside("main")))
        # an end tag closes its element and any left open inside it; a stray end tag closes nothing
        for depth in range(len(self.stack) - 1, -1, -1):
            if self.stack[depth][0] == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        if not self._skipped():
            self.runs.append((data, self._inside("code"), self._inside("main")))


def page_prose(html: str) -> tuple[str, list[tuple[int, int]]]:
    """The page's prose as one string (whitespace collapsed) and the spans of it shown as inline code.

    Only ``<main>`` is read when the page has one (Quarto's pages do: the sidebars, table of contents and page
    navigation lie outside it)."""
    parser = _Prose()
    parser.feed(html)
    parser.close()
    runs = parser.runs
    if any(in_main for _, _, in_main in runs):
        runs = [run for run in runs if run[2]]
    text, code = "", []
    for data, in_code, _ in runs:
        data = re.sub(r"\s+", " ", data)
        if text.endswith(" ") and data.startswith(" "):
            data = data[1:]
        if in_code and data:
            if code and code[-1][1] == len(text):  # one code element in several runs (a highlighted span)
                code[-1] = (code[-1][0], len(text) + len(data))
            else:
                code.append((len(text), len(text) + len(data)))
        text += data
    return text, code


def _word(names: Iterable[str], *, ends: str = "-") -> re.Pattern[str]:
    """Any of ``names`` as a whole word: not inside a longer name, nor after a dot (plots.study_figures.study_figure
    is a Python name, not the pipeline's) nor before one that goes on (study_figure.py), nor beside ``ends``."""
    names = sorted(names, key=lambda n: (-len(n), n))  # the longest first: clipping_ptb_x before clipping_ptb
    return re.compile(rf"(?<![\w.{ends}])(?:{'|'.join(map(re.escape, names))})(?![\w{ends}]|\.\w)")


def check_page(html: str, names: Names, page: str = "") -> list[Finding]:
    """Every pipeline name in the page's prose and table cells, in page order.

    A name that is also an ordinary word (``train``, ``report``, ``all``: letters only) counts only where the
    page names it as a target (inside a ``snakemake ...`` command shown as code, or right after the word rule);
    a name with an underscore, or a run id, counts wherever it stands; any other code identifier (IDENTIFIER)
    counts outside inline code."""
    text, code = page_prose(html)
    plain = {n for ns in names.by_kind.values() for n in ns if n.isalpha()}
    marked = {n for ns in names.by_kind.values() for n in ns if not n.isalpha()}
    commands = [(a, b) for a, b in code if text[a:b].lstrip().startswith("snakemake ")]
    found: list[tuple[int, Finding]] = []

    def add(start: int, end: int, kind: str) -> None:
        context = text[max(0, start - CONTEXT) : end + CONTEXT].strip()
        found.append((start, Finding(page, kind, text[start:end], context)))

    def named_as_rule(match: re.Match[str]) -> bool:
        in_command = any(a <= match.start() and match.end() <= b for a, b in commands)
        return in_command or bool(RULE_WORD.search(text[max(0, match.start() - 12) : match.start()]))

    for match in run_id_pattern().finditer(text):
        add(match.start(), match.end(), "run id")
    if marked:
        for match in _word(marked).finditer(text):
            add(match.start(), match.end(), names.kind_of(match.group()))
    if plain:
        # a path's folder (results/, report/_book) is not a target: a plain name beside '/' is no rule
        for match in _word(plain, ends="/-").finditer(text):
            if named_as_rule(match):
                add(match.start(), match.end(), names.kind_of(match.group()))
    # any other identifier, where it is not shown as code and not already found as a name of the pipeline
    spans = [(start, start + len(f.word)) for start, f in found] + list(code)
    for match in IDENTIFIER.finditer(text):
        if not any(a <= match.start() < b for a, b in spans):
            add(match.start(), match.end(), "identifier")
    return [finding for _, finding in sorted(found, key=lambda pair: pair[0])]


def check_book(book: str | Path, chapters: Sequence[str], names: Names) -> list[Finding]:
    """Every pipeline name in the rendered pages of ``chapters`` (a missing page is a finding too)."""
    findings = []
    for chapter in chapters:
        page = Path(book) / Path(chapter).with_suffix(".html")
        if not page.is_file():
            findings.append(Finding(page.name, "missing page", chapter, "the chapter was not rendered"))
            continue
        findings += check_page(page.read_text(encoding="utf-8"), names, page.name)
    return findings


def check_results_book(results: str | Path, checkout: str | Path) -> list[Finding]:
    """The main text of the book rendered in a results folder (``<results>/report/_book``)."""
    report = Path(paths.report_dir(str(results)))
    chapters = main_chapters(report / "_quarto.yml")
    return check_book(report / "_book", chapters, pipeline_names(results, checkout))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rnnbench.book.prose_check", description=__doc__.split("\n")[0])
    parser.add_argument("results", help="a results folder whose book was rendered (its report/_book)")
    parser.add_argument("--workflow", default=None, help="the checkout whose Snakemake rules are looked for")
    args = parser.parse_args(argv)
    checkout = args.workflow or package_checkout()
    if checkout is None:
        parser.error("this package runs from no checkout: name one with --workflow")
    findings = check_results_book(args.results, checkout)
    for finding in findings:
        print(finding)
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.page] = counts.get(finding.page, 0) + 1
    summary = ", ".join(f"{page} {n}" for page, n in counts.items())
    print(f"{len(findings)} pipeline names in the main text" + (f" ({summary})" if summary else ""), file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
