"""Numbers, words and tables as markdown that reads the same in the HTML book and the Typst PDF.

Inline code in a chapter shows a value's markdown (Jupyter's ``text/markdown``) or, failing that, its
Python repr, quotes and all; the formatters here return :class:`Markdown` so a number reads as prose.
Table cells are text only (scientific notation as 1.07 × 10²⁶, not math), laid out by tabulate.
label_slug turns a name into a Quarto cross-reference label.

The book is the only reader: the command line's tables (``rnnbench worked``) and the workflow's jobs print
with pandas for a terminal or write CSV, and never markdown, so these live in the book's package.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tabulate import tabulate

from rnnbench import numbers


class Markdown(str):
    """Text that Quarto inserts as markdown: inline (`{python} x`) or as a cell's output."""

    def _repr_markdown_(self) -> str:
        return str(self)

    def __repr__(self) -> str:  # Jupyter's text/plain, in case a front end prefers it: still no quotes
        return str(self)


# A value not measured, in a sentence or a table cell.
NONE = Markdown(numbers.MISSING)


def integer(value: Any) -> Markdown:
    """6310500 -> 6,310,500."""
    return Markdown(f"{int(round(float(value))):,}")


def counted(n: int, noun: str) -> Markdown:
    """A count and its noun, plural unless the count is one (rnnbench.numbers.counted)."""
    return Markdown(numbers.counted(n, noun))


def fixed(value: Any, digits: int = 2) -> Markdown:
    """A fixed number of decimals: fixed(0.6336, 2) -> 0.63; "–" for a value not measured (NaN), as sig writes it."""
    v = float(value)
    if math.isnan(v):
        return NONE
    return Markdown(f"{v:.{digits}f}".replace("-", numbers.MINUS))


def sci(value: Any, digits: int = 1, *, plain: bool = False) -> Markdown:
    """Scientific notation: sci(7.105e-15) -> $7.1 \\times 10^{-15}$ as math in prose; with ``plain``,
    7.1 × 10⁻¹⁵ as text (table cells: math there is set apart from its neighbours, or left raw by a viewer
    without a math renderer)."""
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return Markdown(f"{v:g}" if plain else f"${v:g}$")
    mantissa, exponent = numbers.scientific(v, digits)
    if plain:
        return Markdown(f"{mantissa} × 10{str(exponent).translate(numbers.SUPERSCRIPT)}")
    return Markdown(f"${mantissa.replace(numbers.MINUS, '-')} \\times 10^{{{exponent}}}$")


def sig(value: Any, digits: int = 3, *, plain: bool = False) -> Markdown:
    """Significant digits as rnnbench.numbers writes them; in prose, scientific notation as math."""
    v = float(value)
    text = numbers.significant(v, digits)
    if not plain and math.isfinite(v) and numbers.in_scientific_range(v):  # the same digits, as math
        mantissa, exponent = text.split(" × 10")
        power = exponent.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))
        return Markdown(f"${mantissa.replace(numbers.MINUS, '-')} \\times 10^{{{power}}}$")
    return Markdown(text)


def cell_sig(value: Any, digits: int = 3) -> Markdown:
    """sig() for a table cell: scientific notation as text."""
    return sig(value, digits, plain=True)


def cell_sci(value: Any, digits: int = 1) -> Markdown:
    """sci() for a table cell: as text."""
    return sci(value, digits, plain=True)


def percent(value: Any, digits: int = 1) -> Markdown:
    """A percentage given in per cent: percent(99.4846) -> 99.5%."""
    return Markdown(f"{float(value):.{digits}f}%")


def sig_words(values: Iterable[Any], digits: int = 3) -> Markdown:
    """Numbers as sig() gives them, as a list in words: [0.5, 0.9, 1.0] -> "0.5, 0.9 and 1"."""
    return words(sig(v, digits) for v in values)


def share(fraction: Any) -> Markdown:
    """A fraction in per cent, to two significant digits but none and all whole: share(0.0038) -> 0.38%,
    share(0.021) -> 2.1%, share(0.98) -> 98%, share(1) -> 100%; NaN as an en dash."""
    fraction = float(fraction)
    if math.isnan(fraction):
        return NONE
    if fraction in (0.0, 1.0):
        return Markdown(f"{100 * fraction:.0f}%")
    return Markdown(f"{sig(100 * fraction, 2, plain=True)}%")


def between(lo: Any, hi: Any, formatter: Callable[[Any], Markdown]) -> Markdown:
    """A range as prose: "lo to hi", or the one value where both read the same; – where either is NaN."""
    if math.isnan(float(lo)) or math.isnan(float(hi)):
        return NONE
    low, high = formatter(lo), formatter(hi)
    return low if low == high else Markdown(f"{low} to {high}")


def figure(image: str | None, caption: str, label: str) -> Markdown:
    """A figure as Markdown (``![caption](image){#label}``), or nothing where the results have no such image: a
    chapter places a figure its configuration may not build without showing an empty frame."""
    return Markdown(f"![{caption}]({image}){{#{label}}}\n") if image else Markdown("")


def vector(values: Iterable[Any], digits: int = 3) -> Markdown:
    """A state or a term as the chapter prints one: (0.123, -0.456)."""
    return Markdown("(" + ", ".join(fixed(v, digits) for v in values) + ")")


def words(items: Iterable[Any], conjunction: str = "and") -> Markdown:
    """["a", "b", "c"] -> "a, b and c"."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return Markdown("".join(items))
    return Markdown(f"{', '.join(items[:-1])} {conjunction} {items[-1]}")


MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|^~$@#])")


def escape(text: Any) -> Markdown:
    """Plain text that markdown must not read: no emphasis from `*`/`_`, superscript from `^`, math from `$`,
    citations from `@`, table cells from `|`."""
    return Markdown(MARKDOWN_SPECIAL.sub(r"\\\1", str(text)))


# A TeX span in plain text: from one dollar sign to the next, with no dollar sign inside.
MATH_SPAN = re.compile(r"(\$[^$]+\$)")


def with_math(text: Any) -> Markdown:
    """Plain text that writes its mathematics as TeX spans ($H^2$), as the worked checks' notes do: the text
    escaped as escape() does, the spans left for Quarto to typeset."""
    pieces = MATH_SPAN.split(str(text))  # odd positions hold the spans
    return Markdown("".join(piece if at % 2 else escape(piece) for at, piece in enumerate(pieces)))


def code(text: Any) -> Markdown:
    """Verbatim text (a hash, a path, a command, a value as printed) as inline code.

    Text with a `|` or a backtick is escaped instead: a code span cannot hold a backtick, and a pipe inside
    a code span in a pipe table would end the cell.
    """
    text = str(text)
    if "|" in text or "`" in text:
        return escape(text)
    return Markdown(f"`{text}`")


def label_slug(name: str) -> str:
    """Quarto labels: lowercase letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def humanize(name: Any) -> str:
    """An identifier as words for a header or a cell: chapter_per_step -> chapter per step. Anything
    else (h_t, ‖∂h_1/∂h_0‖) is left as written."""
    name = str(name)
    return name.replace("_", " ") if re.fullmatch(r"[a-z]{2,}[a-z0-9]*(_[a-z0-9]{2,})+", name) else name


Formatter = Callable[[Any], str]


def cell_text(value: Any) -> str:
    """Default cell text: integers as written, floats to four significant digits (as text), NaN empty,
    bools yes/no."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)) and float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return str(sig(value, 4, plain=True))
    return value if isinstance(value, Markdown) else str(escape(value))


def _unpiped(text: str) -> str:
    """Escape every `|` not already escaped: in a pipe table it would end the cell."""
    return re.sub(r"(?<!\\)\|", r"\\|", text)


# A pipe table wider than this (in characters) gets relative column widths from its separator line; up
# to it, every format sizes the columns to their content.
PANDOC_COLUMNS = 72
# A column's share of a wide table never falls below this many characters' worth, so a short header keeps
# its word whole.
MIN_COLUMN = 6
# A column's share of a wide table is at most this many characters' worth, its longest word aside (_separator).
WIDEST_SHARE = PANDOC_COLUMNS // 2


def markdown_table(
    frame: pd.DataFrame,
    *,
    formats: Mapping[str, Formatter] | None = None,
    headers: Mapping[str, str] | None = None,
    align: Mapping[str, str] | None = None,
) -> Markdown:
    """A pipe table for HTML and Typst alike: cells formatted here, laid out by tabulate.

    Numeric columns are right-aligned, '|' in text is escaped, a value that is already :class:`Markdown`
    is written as it is, and headers read as words (``_`` -> space) unless ``headers`` names them;
    ``align`` ("left"/"right") overrides a column's alignment.
    tabulate pads each column to its widest cell, so when pandoc has to give a wide table relative column
    widths (from the dashes under the header) they follow the content instead of being equal.
    """
    formats = dict(formats or {})
    headers = dict(headers or {})
    names = [headers[c] if c in headers else humanize(c) for c in frame.columns]
    names = [str(h) if isinstance(h, Markdown) else str(escape(h)) for h in names]
    rows = []
    for record in frame.itertuples(index=False, name=None):  # keeps each column's own type, unlike iterrows
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            missing = value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
            if missing:
                text = ""
            elif isinstance(value, Markdown) or column not in formats:
                text = cell_text(value)
            else:
                formatted = formats[column](value)
                text = str(formatted) if isinstance(formatted, Markdown) else str(escape(formatted))
            cells.append(_unpiped(text).replace("\n", " "))
        rows.append(cells)
    numeric = [
        pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) for c in frame.columns
    ]
    # A header is never narrower than MIN_COLUMN in the separator (tabulate pads it), so it keeps its word.
    names = [n.ljust(MIN_COLUMN) if len(n) < MIN_COLUMN else n for n in names]
    text = tabulate(
        rows,
        headers=names,
        tablefmt="pipe",
        disable_numparse=True,
        colalign=[(align or {}).get(c, "right" if n else "left") for c, n in zip(frame.columns, numeric, strict=True)],
    )
    lines = text.split("\n")
    if max(len(line) for line in lines) > PANDOC_COLUMNS:
        lines[1] = _separator(
            lines[1],
            [[n, *column] for n, column in zip(names, zip(*rows, strict=True), strict=True)]
            if rows
            else [[n] for n in names],
        )
    return Markdown("\n".join(lines))


def _separator(rule: str, columns: Sequence[Sequence[str]]) -> str:
    """The line under a wide table's header, its dashes giving each column its share of the page width.

    A column gets the length of its average cell, but never less than its longest word (a word cannot
    break, and would run into the next column): one long cell does not take the page from the others.
    Nor more than WIDEST_SHARE: text that long wraps onto several lines whatever its share, and a share past
    it would squeeze the narrow columns beside it until their headers run together.
    """
    weights = []
    for cells in columns:
        longest_word = max((len(w) for cell in cells for w in str(cell).split()), default=1)
        mean = sum(len(str(c)) for c in cells[1:]) / max(len(cells) - 1, 1)
        weights.append(max(longest_word + 1, min(math.ceil(mean), WIDEST_SHARE), 3))
    aligns = rule.strip("|").split("|")
    parts = []
    for align, weight in zip(aligns, weights, strict=True):
        left, right = align.startswith(":"), align.endswith(":")
        parts.append((":" if left else "") + "-" * weight + (":" if right else ""))
    return "|" + "|".join(parts) + "|"
