"""The book's chapters read without Quarto: parsed, run in order as Quarto's Jupyter engine runs them, with
the labels they define, the references they make and the numbers typed into their prose.

tests/test_report.py runs the whole book this way against a hand-made results folder, on machines without
Quarto; the real render (tests/test_book_render.py, and .ci/run) covers what only Quarto can tell: that
pandoc and Typst accept the output, every image is found and every reference resolves in the pages.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FENCE_OPEN = re.compile(r"^```\{python\}\s*$")
FENCE_ANY = re.compile(r"^(`{3,}|~{3,})")
# Quarto's own pattern for inline expressions (src/resources/jupyter/notebook.py, cell_execute_inline).
INLINE = re.compile(r"(?P<prefix>^|[^`])`\{python\}[ \t](?P<expr>[^`]+)`", re.MULTILINE)
LABEL_KINDS = ("fig", "tbl", "sec", "eq")
LABEL_DEF = re.compile(r"\{#((?:fig|tbl|sec|eq)-[A-Za-z0-9_-]+)")
REF = re.compile(r"(?<![\w@./-])@((?:fig|tbl|sec|eq)-[A-Za-z0-9_-]*[A-Za-z0-9])")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
# Files the captions name, relative to the results folder (the preface says which folder).
RESULT_FILE = re.compile(r"(?<![\w/.-])(?:tables|studies|figures)/[A-Za-z0-9_<>./-]*\.(?:csv|json|png|pdf)\b")
TABLE_CALL = re.compile(r"\btable\(\s*[\"']([A-Za-z0-9_]+)[\"']")
# Numbers that prose may type: chapter numbers and equation numbers of the seed, e.g. "Chapter 12", "(12.7)".
NAME = re.compile(r"[A-Za-z_][\w.-]*_[\w.-]*")  # snake_case: a table, column or key named in a cell's code
ALLOWED_NUMBERS = re.compile(r"\b(?:Chapters?|Sections?)\s+\d+(?:\.\d+)*|\(\d+\.\d+\)")


@dataclass(frozen=True)
class Cell:
    code: str  # without the #| option lines
    options: Mapping[str, Any]
    line: int  # 1-based line of the opening fence

    @property
    def label(self) -> str | None:
        label = self.options.get("label")
        return str(label) if label else None


@dataclass(frozen=True)
class Text:
    text: str
    line: int


@dataclass(frozen=True)
class Chapter:
    path: Path
    front_matter: Mapping[str, Any]
    segments: tuple[Cell | Text, ...]

    @property
    def cells(self) -> list[Cell]:
        return [s for s in self.segments if isinstance(s, Cell)]

    @property
    def texts(self) -> list[Text]:
        return [s for s in self.segments if isinstance(s, Text)]

    def inline_expressions(self) -> list[tuple[str, int]]:
        """(expression, line) of every inline `{python} ...` in the prose, in order."""
        found = []
        for text in self.texts:
            for match in INLINE.finditer(text.text):
                found.append((match["expr"].strip(), text.line + text.text[: match.start("expr")].count("\n")))
        return found

    def prose(self) -> str:
        """The markdown outside cells, with fenced code blocks removed (they define and cite nothing)."""
        return "\n".join(_strip_fenced(t.text) for t in self.texts)

    def labels(self) -> set[str]:
        """Labels written in the source: {#sec-...} etc. in the prose, label: fig-/tbl- on cells."""
        found = set(LABEL_DEF.findall(self.prose()))
        found |= {c.label for c in self.cells if c.label and c.label.split("-")[0] in LABEL_KINDS}
        return found

    def references(self) -> set[str]:
        """@fig-/@tbl-/@sec-/@eq- references in the prose and in the cells' captions."""
        text = self.prose() + "\n" + "\n".join(str(v) for c in self.cells for v in c.options.values())
        return set(REF.findall(text))

    def result_files(self) -> set[str]:
        """results/... paths the chapter names (captions, prose, code) and tables its code reads by name."""
        source = self.path.read_text(encoding="utf-8")
        named = set(RESULT_FILE.findall(source))
        named |= {f"tables/{name}.csv" for name in TABLE_CALL.findall(source)}
        return named

    def captions(self) -> list[str]:
        return [str(v) for c in self.cells for k, v in c.options.items() if str(k).endswith("-cap")]

    def printed_words(self) -> list[str]:
        """The words a cell with ``output: asis`` writes into the page: the literal parts of its strings and
        f-strings (not the values they format in, not docstrings)."""
        words = []
        for cell in self.cells:
            if str(cell.options.get("output")) == "asis":
                words += _string_literals(ast.parse(cell.code))
        return words

    def typed_numbers(self) -> list[str]:
        """Numbers typed by hand into the prose, a caption or the words a cell prints (outside inline code, math,
        labels and links)."""
        text = "\n".join([self.prose(), *self.captions(), *self.printed_words()])
        text = re.sub(r"`[^`]*`", " ", text)  # inline code, executable or not
        text = re.sub(r"\$[^$]*\$", " ", text)  # math
        text = re.sub(r"\{[#.][^}]*\}", " ", text)  # attributes: labels and classes
        text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
        text = re.sub(r"@\w[\w-]*", " ", text)  # cross-references
        text = RESULT_FILE.sub(" ", text)  # file names, e.g. tables/decay_47_words.csv
        text = ALLOWED_NUMBERS.sub(" ", text)
        return re.findall(r"[^\s]*\d[^\s]*", text)


def _string_literals(tree: ast.AST) -> list[str]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    # a format spec ({x:.0%}) is code, not words
    specs = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None
        for part in ast.walk(node.format_spec)
    }
    # an f-string's literal parts are Constant nodes too; a name (a table's, a column's, a key) is code, not words
    strings = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    strings.sort(key=lambda n: (n.lineno, n.col_offset))  # in the order the page shows them
    return [n.value for n in strings if id(n) not in docstrings | specs and not NAME.fullmatch(n.value)]


def _strip_fenced(text: str) -> str:
    out, fence = [], None
    for line in text.splitlines():
        match = FENCE_ANY.match(line)
        if fence is None and match:
            fence = match.group(1)
            continue
        if fence is not None:
            if line.startswith(fence) and line.strip() == fence:
                fence = None
            continue
        out.append(line)
    return "\n".join(out)


def parse_chapter(path: str | Path) -> Chapter:
    """Split a .qmd into its front matter, markdown text and ``{python}`` cells (with their #| options)."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    front: Mapping[str, Any] = {}
    start = 0
    if lines and lines[0].strip() == "---":
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        front = yaml.safe_load("\n".join(lines[1:end])) or {}
        start = end + 1
    segments: list[Cell | Text] = []
    buffer: list[str] = []
    buffer_line = start + 1
    i = start
    other_fence: str | None = None
    while i < len(lines):
        line = lines[i]
        if other_fence is None and FENCE_OPEN.match(line):
            if buffer:
                segments.append(Text("\n".join(buffer), buffer_line))
            close = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            if close is None:
                raise ValueError(f"{path}:{i + 1}: python cell is never closed")
            body = lines[i + 1 : close]
            option_lines = []
            while body and re.match(r"^#\|", body[0]):
                option_lines.append(re.sub(r"^#\|\s?", "", body.pop(0)))
            options = yaml.safe_load("\n".join(option_lines)) or {}
            segments.append(Cell("\n".join(body), options, i + 1))
            buffer, buffer_line, i = [], close + 2, close + 1
            continue
        match = FENCE_ANY.match(line)
        if other_fence is None and match:
            other_fence = match.group(1)
        elif other_fence is not None and line.strip() == other_fence:
            other_fence = None
        buffer.append(line)
        i += 1
    if buffer:
        segments.append(Text("\n".join(buffer), buffer_line))
    return Chapter(path, front, tuple(segments))


class ChapterError(RuntimeError):
    """A cell or an inline expression of a chapter failed; the message names the file and line."""


@dataclass
class CellOutput:
    cell: Cell
    stdout: str
    value: Any
    figures: int  # matplotlib figures the cell drew (open after it, not before)

    def markdown(self) -> str:
        """What Quarto puts in the page: asis stdout verbatim, and a value's markdown representation."""
        parts = []
        if self.cell.options.get("output") == "asis" and self.stdout:
            parts.append(self.stdout)
        if self.value is not None and hasattr(self.value, "_repr_markdown_"):
            parts.append(self.value._repr_markdown_())
        return "\n".join(parts)


@dataclass
class ChapterRun:
    chapter: Chapter
    namespace: dict[str, Any]
    outputs: list[CellOutput] = field(default_factory=list)
    inline: list[tuple[str, str]] = field(default_factory=list)  # (expression, its markdown)

    def markdown(self) -> str:
        """The chapter as the reader gets it: prose with inline results, cell outputs in place of cells, and of its
        alternative passages only those its metadata flags show (``shown``)."""
        parts, outputs, values = [], iter(self.outputs), iter(self.inline)
        for segment in self.chapter.segments:
            if isinstance(segment, Cell):
                parts.append(next(outputs).markdown())
            else:
                parts.append(INLINE.sub(lambda m: m["prefix"] + next(values)[1], segment.text))
        return shown("\n".join(parts))

    def generated(self) -> str:
        """Markdown the code wrote: cell outputs and inline values."""
        return "\n".join([o.markdown() for o in self.outputs] + [text for _, text in self.inline])

    def labels(self) -> set[str]:
        """Labels of the source plus those the code writes (e.g. one section per study)."""
        return self.chapter.labels() | set(LABEL_DEF.findall(self.generated()))

    def references(self) -> set[str]:
        return self.chapter.references() | set(REF.findall(self.generated()))

    def images(self) -> list[str]:
        return IMAGE.findall(self.generated()) + IMAGE.findall(self.chapter.prose())


# Quarto's conditional content by metadata (rnnbench.book.conditions writes the flags as a YAML block)
CONDITION = re.compile(r'\{\.content-(?P<kind>visible|hidden) (?P<test>when|unless)-meta="(?P<flag>[^"]+)"\}')
META_BLOCK = re.compile(r"^---\n(.*?)\n---$", re.M | re.S)
FENCE = re.compile(r"^(?P<colons>:{3,})\s*(?P<rest>.*)$")


def _flag(meta: dict[str, Any], path: str) -> bool:
    value: Any = meta
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return bool(value)


def _shows(match: re.Match, meta: dict[str, Any]) -> bool:
    on = _flag(meta, match["flag"]) == (match["test"] == "when")
    return on if match["kind"] == "visible" else not on


def shown(markdown: str) -> str:
    """``markdown`` as Quarto shows it: a div or span marked ``.content-visible``/``.content-hidden`` with
    ``when-meta``/``unless-meta`` kept (its markers removed) or dropped by the flags of the YAML metadata blocks in
    the text; a flag no block sets is false. The first block to set a top-level key wins, as in pandoc."""
    meta: dict[str, Any] = {}
    for block in META_BLOCK.findall(markdown):
        try:
            loaded = yaml.safe_load(block)
        except yaml.YAMLError:
            continue
        if isinstance(loaded, dict):
            meta = {**loaded, **meta}
    lines, stack = [], []  # stack: (shows, is_conditional) per open div
    for line in markdown.split("\n"):
        fence = FENCE.match(line)
        if fence and fence["rest"]:
            condition = CONDITION.fullmatch(fence["rest"].strip())
            stack.append((_shows(condition, meta) if condition else True, bool(condition)))
            if condition:
                continue
        elif fence and stack:
            _, conditional = stack.pop()
            if conditional:
                continue
        if all(shows for shows, _ in stack):
            lines.append(line)
    text, position = "\n".join(lines), 0
    # Spans left to right, each searched again after the last was resolved: a span nested in another ends before
    # the outer one's attributes, so it is resolved first and the outer one keeps or drops what it left.
    while match := CONDITION.search(text, position):
        start = match.start()
        if start == 0 or text[start - 1] != "]":
            position = match.end()
            continue
        depth, opening = 0, start - 1
        while opening >= 0:
            depth += {"]": 1, "[": -1}.get(text[opening], 0)
            if depth == 0:
                break
            opening -= 1
        kept = text[opening + 1 : start - 1] if _shows(match, meta) else ""
        text, position = text[:opening] + kept + text[match.end() :], opening
    return text


def inline_markdown(value: Any, expression: str = "") -> str:
    """How an inline value reads in the page; a str or float would show its Python repr, so refuse them."""
    if hasattr(value, "_repr_markdown_"):
        return value._repr_markdown_()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise TypeError(
        f"inline `{{python}} {expression}` is a {type(value).__name__}: Quarto would print its repr "
        f"({value!r}); format it with a rnnbench.book.format formatter (integer, fixed, sig, sci, percent, words, code)"
    )


def _run_cell(cell: Cell, namespace: dict[str, Any], filename: str) -> CellOutput:
    tree = ast.parse(cell.code, filename=filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    stdout = io.StringIO()
    # Figures the cell draws, not those another test left open in this process (pyplot's list is global).
    before = set(_open_figures())
    with contextlib.redirect_stdout(stdout), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() outside Jupyter
        exec(compile(tree, filename, "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace) if last else None
    drawn = [number for number in _open_figures() if number not in before]
    if drawn:
        import matplotlib.pyplot as plt

        for number in drawn:
            plt.close(number)
    return CellOutput(cell, stdout.getvalue(), value, len(drawn))


def _open_figures() -> list[int]:
    if "matplotlib.pyplot" not in sys.modules:  # never imported: nothing drawn, and no import for nothing
        return []
    import matplotlib.pyplot as plt

    return plt.get_fignums()


def run_chapter(chapter: Chapter | str | Path, *, cwd: str | Path | None = None) -> ChapterRun:
    """Run every cell in order in one namespace, evaluating each paragraph's inline expressions when it is
    reached, as Quarto's Jupyter engine does; ``cwd`` is the book folder (Quarto's working directory)."""
    chapter = chapter if isinstance(chapter, Chapter) else parse_chapter(chapter)
    run = ChapterRun(chapter, {"__name__": "__main__"})
    with contextlib.chdir(cwd or chapter.path.parent):
        for segment in chapter.segments:
            if isinstance(segment, Cell):
                filename = f"{chapter.path.name}:{segment.line}"
                try:
                    run.outputs.append(_run_cell(segment, run.namespace, filename))
                except Exception as exc:
                    raise ChapterError(f"{chapter.path}:{segment.line}: cell failed: {exc!r}") from exc
                continue
            for match in INLINE.finditer(segment.text):
                expression = match["expr"].strip()
                line = segment.line + segment.text[: match.start("expr")].count("\n")
                try:
                    value = eval(expression, run.namespace)
                    run.inline.append((expression, inline_markdown(value, expression)))
                except Exception as exc:
                    raise ChapterError(f"{chapter.path}:{line}: inline `{expression}` failed: {exc!r}") from exc
    return run


# --------------------------------------------------------------------------------------------------------------
# The book


@dataclass(frozen=True)
class Book:
    folder: Path
    config: Mapping[str, Any]

    @property
    def chapter_files(self) -> list[str]:
        """Chapters in reading order (book.chapters; parts' chapters flattened)."""
        found = []
        for entry in self.config.get("book", {}).get("chapters", []):
            if isinstance(entry, str):
                found.append(entry)
            elif isinstance(entry, Mapping):
                if "part" in entry and str(entry["part"]).endswith(".qmd"):
                    found.append(str(entry["part"]))
                found += [str(c) for c in entry.get("chapters", [])]
        return found + [str(a) for a in self.config.get("book", {}).get("appendices", [])]

    def chapters(self) -> list[Chapter]:
        return [parse_chapter(self.folder / name) for name in self.chapter_files]


def read_book(folder: str | Path) -> Book:
    folder = Path(folder)
    return Book(folder, yaml.safe_load((folder / "_quarto.yml").read_text(encoding="utf-8")) or {})


def run_book(folder: str | Path) -> list[ChapterRun]:
    """Run every chapter of the book in folder, each in a fresh namespace (Quarto starts a kernel per file)."""
    book = read_book(folder)
    return [run_chapter(chapter, cwd=book.folder) for chapter in book.chapters()]


def check_references(runs: Sequence[ChapterRun]) -> list[str]:
    """Cross-references that point at no label anywhere in the book (a book resolves them across chapters)."""
    defined = set().union(*(run.labels() for run in runs)) if runs else set()
    return sorted(f"{run.chapter.path.name}: @{ref}" for run in runs for ref in run.references() if ref not in defined)


def duplicate_labels(runs: Sequence[ChapterRun]) -> list[str]:
    seen: dict[str, str] = {}
    duplicates = []
    for run in runs:
        for label in sorted(run.labels()):
            if label in seen:
                duplicates.append(f"{label} in {seen[label]} and {run.chapter.path.name}")
            seen[label] = run.chapter.path.name
    return duplicates


# --------------------------------------------------------------------------------------------------------------
# A rendered book, checked (what CI asks of the real render)

HTML_IMAGE = re.compile(r"<img[^>]+src=\"([^\"]+)\"")


def check_rendered(book: str | Path, chapters: Sequence[str], titles: Mapping[str, str], pdf: str | Path) -> list[str]:
    """Problems of a rendered book: a chapter's HTML missing, an image it shows missing, an unresolved
    reference (Quarto prints ``?@label``), a value printed that is not a number (NaN, where a sentence should have
    said the value was not measured), a PDF with fewer pages than chapters or without a chapter's title."""
    import subprocess

    book, problems = Path(book), []
    for chapter in chapters:
        page = book / Path(chapter).with_suffix(".html")
        if not page.is_file():
            problems.append(f"{page}: missing")
            continue
        html = page.read_text(encoding="utf-8")
        if "?@" in html:
            problems.append(f"{page}: unresolved reference {html[html.index('?@') :][:40]!r}")
        for src in HTML_IMAGE.findall(html):
            if not src.startswith(("http:", "https:", "data:")) and not (page.parent / src).is_file():
                problems.append(f"{page}: image {src} missing")
        problems += [f"{page}: {found!r} printed as a number" for found in not_a_number(html_text(html))]
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))
    if pages < len(chapters):
        problems.append(f"{pdf}: {pages} pages for {len(chapters)} chapters")
    text = " ".join(
        subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout.split()
    )
    if "?@" in text:
        problems.append(f"{pdf}: unresolved reference")
    problems += [f"{pdf}: {found!r} printed as a number" for found in not_a_number(text)]
    curly = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})  # Typst sets quotes typographically
    text = text.translate(curly)
    for chapter, title in titles.items():
        if title.translate(curly) not in text:
            problems.append(f"{pdf}: no chapter title {title!r} ({chapter})")
    return problems


# What Python or pandas print for a value that was not measured, as a word of its own, with its neighbours.
NOT_A_NUMBER = re.compile(r".{0,40}\b(?:nan|NaN|<NA>)\b.{0,40}")


def not_a_number(text: str) -> list[str]:
    """Each place ``text`` prints NaN where a number was meant, with the words around it."""
    return NOT_A_NUMBER.findall(" ".join(text.split()))


def html_text(html: str) -> str:
    """A page's words as a reader sees them: scripts, styles and tags dropped, entities read."""
    import html as entities

    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.DOTALL)
    return entities.unescape(re.sub(r"<[^>]+>", " ", html))


def chapter_title(path: str | Path) -> str:
    """The first level-1 heading of a chapter, without its {#label} or {.class} attributes."""
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return re.sub(r"\s*\{[^}]*\}\s*$", "", line[2:]).strip()
    raise ValueError(f"{path}: no level-1 heading")
