"""The book's bibliography (reports/references.bib) read without a BibTeX library, the citations its chapters and
rnnbench.book make found, and the rendered reference list checked against both.

A citation is pandoc's: ``[@key]``, ``[@a; @b]`` or ``@key`` in running text. A cross-reference looks the same
(``@sec-...``, ``@fig-...``, ``@tbl-...``, ``@eq-...``), so those prefixes are not citations.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

CROSSREF_PREFIXES = ("sec-", "fig-", "tbl-", "eq-")
# pandoc's citation key: a letter, digit or _ first, then letters, digits and internal punctuation; punctuation that
# ends it ends the sentence, not the key ("@elman1990." cites elman1990). Not after a word character, so that an
# address (name@host) is not a citation, nor after a backslash (an escaped @).
CITATION = re.compile(r"(?<![\w\\])@([A-Za-z0-9_][\w:.#$%&+?<>~/-]*)")
KEY_END = ":.#$%&+?<>~/-"
# The fields each entry type needs to be found by a reader, as BibTeX's standard styles require them; pages where
# the venue has them.
REQUIRED = {
    "article": ("author", "title", "journal", "volume", "pages", "year"),
    "inproceedings": ("author", "title", "booktitle", "pages", "year"),
    "book": ("author", "title", "publisher", "year"),
    "manual": ("author", "title", "organization", "year"),
    "misc": ("author", "title", "howpublished", "year"),
    "techreport": ("author", "title", "institution", "year"),
    "phdthesis": ("author", "title", "school", "year"),
}
PAGES = re.compile(r"\d+(--\d+)?")
YEAR = re.compile(r"(1[89]|20)\d\d")


@dataclass(frozen=True)
class Entry:
    kind: str  # the entry type, lower case (article, inproceedings, ...)
    key: str
    fields: Mapping[str, str]  # field name (lower case) -> its value without the outer braces or quotes
    line: int  # where the entry starts, 1-based


def parse_bib(text: str) -> list[Entry]:
    """Every ``@type{key, name = {value}, ...}`` entry of a .bib text, in order. Text outside entries is a comment,
    as BibTeX reads it; a malformed entry raises ValueError naming its line."""
    entries, at = [], 0
    while (start := text.find("@", at)) >= 0:
        line = text.count("\n", 0, start) + 1
        head = re.compile(r"@(\w+)\s*\{\s*([^,\s{}]+)\s*,").match(text, start)
        if head is None:
            raise ValueError(f"line {line}: an @ that opens no entry (@type{{key, ...}})")
        kind, key, at = head.group(1).lower(), head.group(2), head.end()
        fields: dict[str, str] = {}
        while True:
            at = _skip_space(text, at)
            if at >= len(text):
                raise ValueError(f"line {line}: entry {key!r} is never closed")
            if text[at] == "}":
                at += 1
                break
            name = re.compile(r"([A-Za-z][\w-]*)\s*=\s*").match(text, at)
            if name is None:
                raise ValueError(f"line {text.count(chr(10), 0, at) + 1}: {key!r}: expected a field (name = value)")
            value, at = _value(text, name.end(), key)
            if name.group(1).lower() in fields:
                raise ValueError(f"line {line}: {key!r} has the field {name.group(1)!r} twice")
            fields[name.group(1).lower()] = value
            at = _skip_space(text, at)
            if at < len(text) and text[at] == ",":
                at += 1
            elif at < len(text) and text[at] != "}":
                raise ValueError(f"line {text.count(chr(10), 0, at) + 1}: {key!r}: expected , or }} after a field")
        entries.append(Entry(kind, key, fields, line))
    return entries


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _value(text: str, at: int, key: str) -> tuple[str, int]:
    """A field's value from ``at``: {balanced braces}, "quoted" or a bare number; (value, index after it)."""
    if at < len(text) and text[at] in '{"':
        close = "}" if text[at] == "{" else '"'
        depth, i = 0, at + 1
        while i < len(text):
            char = text[i]
            if char == "{":
                depth += 1
            elif char == "}" and depth > 0:
                depth -= 1
            elif char == close and depth == 0:
                return text[at + 1 : i], i + 1
            i += 1
        raise ValueError(f"{key!r}: a value opened at character {at} is never closed")
    bare = re.compile(r"\d+").match(text, at)
    if bare is None:
        raise ValueError(f'{key!r}: a value must be {{braced}}, "quoted" or a number')
    return bare.group(0), bare.end()


def entry_problems(entries: Sequence[Entry]) -> list[str]:
    """What makes an entry unfit to cite: a key used twice, an unknown type, a required field missing or empty, a
    year that is not one, pages not written first--last, an author not written Family, Given (so that the
    family name is not guessed), a DOI that is not one."""
    problems, seen = [], set()
    for entry in entries:
        where = f"{entry.key} (line {entry.line})"
        if entry.key in seen:
            problems.append(f"{where}: the key is used twice")
        seen.add(entry.key)
        if entry.kind not in REQUIRED:
            problems.append(f"{where}: unknown entry type @{entry.kind}; known: {sorted(REQUIRED)}")
            continue
        for name in REQUIRED[entry.kind]:
            if not entry.fields.get(name, "").strip():
                problems.append(f"{where}: @{entry.kind} needs {name}")
        fields = entry.fields
        if "year" in fields and not YEAR.fullmatch(fields["year"].strip()):
            problems.append(f"{where}: year {fields['year']!r} is not a year")
        if "pages" in fields and not PAGES.fullmatch(fields["pages"].strip()):
            problems.append(f"{where}: pages {fields['pages']!r} is not first--last")
        for name in re.split(r"\s+and\s+", fields.get("author", "")):
            if name.strip() and "," not in name:
                problems.append(f"{where}: author {name.strip()!r} is not written Family, Given")
        if "doi" in fields and not fields["doi"].startswith("10."):
            problems.append(f"{where}: doi {fields['doi']!r} is not a DOI (10.…)")
    return problems


def citations(text: str) -> set[str]:
    """The citation keys of a markdown text: every @key that is not a cross-reference."""
    # a cross-reference is told by its prefix, which an f-string's literal part may hold alone ("@fig-{slug}")
    return {key.rstrip(KEY_END) for key in CITATION.findall(text) if not key.startswith(CROSSREF_PREFIXES)}


def string_literals(source: str) -> list[str]:
    """The strings of a Python source, f-strings' literal parts included and docstrings left out: the words it can
    put into the book."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    ]


def title_text(title: str) -> str:
    """A title as it can be searched for in a rendered page, or a page's text: BibTeX's braces and accent commands
    dropped (\\v{c} is c), accents dropped (č is c), then letters and digits only, lower case (a line break, a
    hyphenation or a quote mark in the page does not matter)."""
    plain = re.sub(r"\\[a-zA-Z]+\s*|\\[^a-zA-Z]|[{}]", "", title)
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", plain).lower())


# --------------------------------------------------------------------------------------------------------------
# The rendered book

# A citation in Quarto's HTML links to its entry; an entry of the list is a div with the entry's id.
HTML_CITED = re.compile(r'href="[^"#]*#ref-([^"]+)"[^>]*role="doc-biblioref"')
HTML_ENTRY = re.compile(r'<div id="ref-([^"]+)" class="csl-entry"')
# A key citeproc did not find is printed in bold with a question mark: "(**nokey?**)".
HTML_UNRESOLVED = re.compile(r"<strong>([^<\s]+)\?</strong>")


def check_rendered_references(
    book: str | Path,
    pages: Iterable[str],
    references_page: str,
    pdf_text: str,
    references_title: str,
    next_title: str | None,
    entries: Mapping[str, Entry],
) -> list[str]:
    """Problems of a rendered book's reference list: a citation that resolved to no entry, an entry cited in the
    HTML pages and missing from the list of ``references_page``, an entry listed and cited nowhere, and an entry
    of that list whose title the PDF's list does not hold (the text from the last ``references_title`` before
    ``next_title``, the title of the chapter after it, or the end)."""
    book, problems, cited = Path(book), [], set()
    for page in pages:
        html = (book / Path(page).with_suffix(".html")).read_text(encoding="utf-8")
        cited |= set(HTML_CITED.findall(html))
        problems += [f"{page}: citation {key!r} names no entry" for key in HTML_UNRESOLVED.findall(html)]
    if not cited:
        problems.append("no page cites anything")
    listed = HTML_ENTRY.findall(
        (book / Path(references_page).with_suffix(".html")).read_text(encoding="utf-8").split('id="refs"', 1)[-1]
    )
    problems += [f"{references_page}: cited {key!r} is not in the list" for key in sorted(cited - set(listed))]
    problems += [f"{references_page}: {key!r} is listed but cited nowhere" for key in sorted(set(listed) - cited)]
    end = len(pdf_text) if next_title is None else pdf_text.rfind(next_title)
    start = pdf_text.rfind(references_title, 0, end)
    printed = title_text(pdf_text[start:end]) if start >= 0 else ""
    if not printed:
        problems.append(f"PDF: no {references_title!r} section before {next_title!r}")
    for key in listed:
        if key in entries and title_text(entries[key].fields["title"]) not in printed:
            problems.append(f"PDF: {key!r} ({entries[key].fields['title']}) is not in its reference list")
    return problems
