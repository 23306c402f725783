"""What the Quarto book in reports/ imports, and the reader that checks the book without Quarto.

Three parts:

- Results: where they are (env ``RNNBENCH_RESULTS``, else ``../results`` from reports/, where Quarto runs
  every chapter), their tables, studies and provenance records, laid out as rnnbench.paths says.
- Prose: numbers and tables as markdown. Inline code in a chapter shows a value's markdown (Jupyter's
  ``text/markdown``) or, failing that, its Python repr, quotes and all; the formatters here return
  :class:`Markdown` so a number reads as prose in HTML and in the Typst PDF.
- Chapters: a .qmd split into markdown and ``{python}`` cells, run in order the way Quarto's Jupyter engine
  runs them (inline expressions evaluated when their paragraph is reached), with the labels it defines and
  the cross-references it makes. tests/test_report.py runs the whole book this way.

Nothing here imports torch, directly or through what it imports: the report reads results and never
computes them.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import os
import re
import shutil
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from rnnbench import paths

RESULTS_ENV = "RNNBENCH_RESULTS"
DEFAULT_RESULTS = "../results"  # from reports/, Quarto's working directory for every chapter
STAGING_DIR = "figures"  # inside reports/: HTML and Typst can only embed images under the project folder


# --------------------------------------------------------------------------------------------------------------
# Results


def results_dir() -> Path:
    """The results folder: env RNNBENCH_RESULTS (absolute, or relative to reports/), else ../results."""
    return Path(os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS)


def _root(results: str | Path | None) -> str:
    return str(results if results is not None else results_dir())


def table_path(name: str, results: str | Path | None = None) -> Path:
    return Path(paths.table(_root(results), name))


def table(name: str, results: str | Path | None = None, *, text: Sequence[str] = ()) -> pd.DataFrame:
    """results/tables/<name>.csv; a missing table names the file and the command that builds it.

    ``text``: columns to keep as written (a value printed as "5e-02" must not come back as 0.05).
    """
    path = table_path(name, results)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found: the report reads finished results. Build them with "
            f"`snakemake --cores 8 results`, or point {RESULTS_ENV} at a results folder that has them."
        )
    return pd.read_csv(path, dtype={column: str for column in text})


def provenance_files(results: str | Path | None = None) -> list[Path]:
    """Every provenance record under results/, tables first, then studies, each sorted by name."""
    root = Path(_root(results))
    return sorted(root.glob("tables/*.provenance.json")) + sorted(root.glob("studies/*/*.provenance.json"))


def provenance_table(results: str | Path | None = None) -> pd.DataFrame:
    """One row per provenance record: the output it describes (relative to results/) and what made it."""
    root = Path(_root(results))
    rows = []
    for path in provenance_files(root):
        record = json.loads(path.read_text(encoding="utf-8"))
        rows.append(
            {
                "record": path.relative_to(root).as_posix(),
                "producer": record.get("producer", ""),
                "config_hash": record.get("config_hash", ""),
                "config_files": " ".join(record.get("config_files", [])),
                "git_commit": record.get("git_commit", ""),
                "command": record.get("command", ""),
                "created": record.get("created", ""),
            }
        )
    return pd.DataFrame(
        rows, columns=["record", "producer", "config_hash", "config_files", "git_commit", "command", "created"]
    )


def package_versions(results: str | Path | None = None) -> pd.DataFrame:
    """Package versions across all records: one row per package, every version seen (one, when consistent)."""
    seen: dict[str, list[str]] = {}
    for path in provenance_files(results):
        for package, version in json.loads(path.read_text(encoding="utf-8")).get("packages", {}).items():
            versions = seen.setdefault(package, [])
            if version not in versions:
                versions.append(version)
    rows = [{"package": p, "version": ", ".join(v), "consistent": len(v) == 1} for p, v in seen.items()]
    return pd.DataFrame(rows, columns=["package", "version", "consistent"])


# --------------------------------------------------------------------------------------------------------------
# Studies: whatever results/studies/* holds, so a study added to the config gets its section with no edit.

# Lower is better for these; higher for the rest. Used only to word "best" in the study's prose.
LOWER_IS_BETTER = frozenset({"test_ppl", "valid_ppl", "clipped_fraction"})
METRIC_NAMES = {
    "test_ppl": "test perplexity",
    "valid_ppl": "validation perplexity",
    "agreement_accuracy": "agreement accuracy",
    "tokens_per_second": "training tokens per second",
    "clipped_fraction": "fraction of steps clipped",
    "parameters": "parameters",
    "steps": "optimiser steps",
    "diverged": "diverged",
    "train_seconds": "training seconds",
}
FAMILY_NAMES = {"ff": "feed-forward n-gram", "rnn": "Elman RNN", "lstm": "LSTM"}
# Columns of a study's table beside its own metric, when the runs report them.
STUDY_TABLE_METRICS = ("test_ppl", "agreement_accuracy", "parameters", "steps", "train_seconds")


def study_names(results: str | Path | None = None) -> list[str]:
    """Studies with a summary under results/studies/, sorted by name."""
    root = Path(_root(results)) / "studies"
    return sorted(p.parent.name for p in root.glob("*/summary.csv"))


def study_summary(study: str, results: str | Path | None = None) -> pd.DataFrame:
    return pd.read_csv(paths.study_summary(_root(results), study))


def study_figure_path(study: str, results: str | Path | None = None, fmt: str = "png") -> Path:
    return Path(paths.study_figure(_root(results), study, fmt))


def label_slug(name: str) -> str:
    """Quarto labels: lowercase letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@dataclass(frozen=True)
class StudyInfo:
    name: str
    family: str
    corpus: str
    varied: tuple[str, ...]  # the study's varied settings in config order; the first is the figure's x axis
    metric: str
    description: str
    runs: int
    seeds: tuple[int, ...]

    @property
    def x(self) -> str:
        return self.varied[0]

    @property
    def slug(self) -> str:
        return label_slug(self.name)


def study_info(study: str, results: str | Path | None = None) -> StudyInfo:
    """What a study is: its runs from its summary; its description, metric and varied settings from its
    record (study.json, written by the study_summary rule from the config)."""
    summary = study_summary(study, results)
    record = Path(paths.study_record(_root(results), study))
    if not record.is_file():
        raise FileNotFoundError(f"{record}: the study's record is missing; rerun `snakemake --cores 8 results`")
    named = json.loads(record.read_text(encoding="utf-8"))
    varied = tuple(named["vary"])
    family, corpus = named["family"], named["corpus"]
    metric = named["metric"]
    description = named["description"] or (
        f"{FAMILY_NAMES.get(family, family)} on the {corpus} corpus: {METRIC_NAMES.get(metric, metric)} against {varied[0]}"
    )
    seeds = tuple(sorted(int(s) for s in summary["seed"].unique())) if "seed" in summary else ()
    runs = summary["run_id"].nunique()
    return StudyInfo(study, family, corpus, varied or ("seed",), metric, description, runs, seeds)


def study_table(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """Wide: one row per run (varied settings, seed), the study's metric first, then the other measurements."""
    info = study_info(study, results)
    summary = study_summary(study, results)
    keys = [c for c in dict.fromkeys((*info.varied, "seed")) if c in summary.columns]
    wide = summary.pivot_table(index=keys, columns="metric", values="value", aggfunc="first", dropna=False)
    wide = wide.reset_index()
    wide.columns.name = None
    shown = [info.metric] + [m for m in STUDY_TABLE_METRICS if m != info.metric and m in wide and wide[m].notna().any()]
    if "diverged" in wide and wide["diverged"].fillna(0).gt(0).any():
        shown.append("diverged")
    return wide[keys + shown]


def stage_figure(source: str | Path, name: str, staging: str | Path = STAGING_DIR) -> str:
    """Copy a results figure into reports/<staging>/ and return the path to write in markdown.

    HTML output drops images above the project folder and Typst cannot read outside it, so a figure is
    shown from a copy inside reports/; the caption still names the results file it came from.
    """
    target = Path(staging) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target.as_posix()


def study_section(study: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """One study's section: heading, what it measured, its figure and its table, each with a label."""
    info = study_info(study, results)
    wide = study_table(study, results)
    metric_name = METRIC_NAMES.get(info.metric, info.metric)
    image = stage_figure(study_figure_path(study, results), f"study-{info.slug}.png", staging)
    measured = wide.dropna(subset=[info.metric])
    lower = info.metric in LOWER_IS_BETTER
    lines = [
        f"## The `{info.name}` study {{#sec-study-{info.slug}}}",
        "",
        f"{info.description[0].upper()}{info.description[1:]}.",
        f"The study trains {integer(info.runs)} {FAMILY_NAMES.get(info.family, info.family)} "
        f"run{'s' if info.runs != 1 else ''} on the "
        f"{info.corpus} corpus, varying {words([f'`{v}`' for v in info.varied])}, "
        f"with seed{'s' if len(info.seeds) != 1 else ''} {words([integer(s) for s in info.seeds])}.",
        "",
    ]
    if len(measured) == 1:
        only = measured.iloc[0]
        lines.append(
            f"@fig-study-{info.slug} plots {metric_name} against `{info.x}`, and @tbl-study-{info.slug} lists "
            f"every run. The one measured run has {metric_name} {sig(only[info.metric])}, at {_setting(only, info)}."
        )
    elif len(measured):
        best = measured.sort_values(info.metric, ascending=lower).iloc[0]
        worst = measured.sort_values(info.metric, ascending=not lower).iloc[0]
        lines.append(
            f"@fig-study-{info.slug} plots {metric_name} against `{info.x}`, and @tbl-study-{info.slug} lists "
            f"every run. The best {metric_name}, {sig(best[info.metric])}, is at {_setting(best, info)}; "
            f"the worst, {sig(worst[info.metric])}, at {_setting(worst, info)}."
        )
    else:
        lines.append(f"No run of this study produced a {metric_name}: @tbl-study-{info.slug} lists them.")
    missing = len(wide) - len(measured)
    if missing:
        lines.append(
            f"{integer(missing).capitalize()} run{'s' if missing != 1 else ''} produced no {metric_name} "
            f"(diverged or not measured) and {'are' if missing != 1 else 'is'} left out of the figure."
        )
    summary_file = paths.study_summary("results", study)
    figure_file = paths.study_figure("results", study, "png")
    lines += [
        "",
        f"![{metric_name.capitalize()} against `{info.x}` ({info.name}). From {figure_file}, rule study_figure.]"
        f"({image}){{#fig-study-{info.slug}}}",
        "",
        markdown_table(wide, formats=_study_formats(wide, info), headers=_study_headers(wide)),
        "",
        f": Every run of {info.name}, one row per run. From {summary_file}, rule study_summary. "
        f"{{#tbl-study-{info.slug}}}",
        "",
    ]
    return Markdown("\n".join(lines))


def _setting(row: pd.Series, info: StudyInfo) -> str:
    parts = [f"`{v}` = {_cell(row[v])}" for v in info.varied if v in row]
    if len(info.seeds) > 1:
        parts.append(f"seed {_cell(row['seed'])}")
    return ", ".join(parts)


def _study_formats(wide: pd.DataFrame, info: StudyInfo) -> dict[str, Formatter]:
    counts = {"parameters", "steps", "epochs"} - {info.metric}
    formats: dict[str, Formatter] = {c: (integer if c in counts else sig) for c in wide.columns if c in METRIC_NAMES}
    if "diverged" in wide:
        formats["diverged"] = lambda v: "yes" if v else "no"
    return formats


def _study_headers(wide: pd.DataFrame) -> dict[str, str]:
    return {c: METRIC_NAMES.get(c, c) for c in wide.columns}


# --------------------------------------------------------------------------------------------------------------
# Prose: numbers and tables as markdown


class Markdown(str):
    """Text that Quarto inserts as markdown: inline (`{python} x`) or as a cell's output."""

    def _repr_markdown_(self) -> str:
        return str(self)

    def __repr__(self) -> str:  # Jupyter's text/plain, in case a front end prefers it: still no quotes
        return str(self)


def integer(value: Any) -> Markdown:
    """6310500 -> 6,310,500."""
    return Markdown(f"{int(round(float(value))):,}")


def fixed(value: Any, digits: int = 2) -> Markdown:
    """A fixed number of decimals: fixed(0.6336, 2) -> 0.63."""
    return Markdown(f"{float(value):.{digits}f}")


def sci(value: Any, digits: int = 1) -> Markdown:
    """Scientific notation as math: sci(7.105e-15) -> $7.1 \\times 10^{-15}$."""
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return Markdown(f"${v:g}$")
    mantissa, exponent = f"{v:.{digits}e}".split("e")
    return Markdown(f"${mantissa} \\times 10^{{{int(exponent)}}}$")


def sig(value: Any, digits: int = 3) -> Markdown:
    """Significant digits; scientific (as math) below 0.001 or from a million up; NaN as an en dash."""
    v = float(value)
    if math.isnan(v):
        return Markdown("–")
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6):
        return sci(v, digits - 1)
    if abs(v) >= 10 ** (digits - 1):  # whole digits carry the precision: 5,266 rather than 5.27e+03
        return Markdown(f"{v:,.0f}")
    return Markdown(f"{v:.{digits}g}")


def percent(value: Any, digits: int = 1) -> Markdown:
    """A percentage given in per cent: percent(99.4846) -> 99.5%."""
    return Markdown(f"{float(value):.{digits}f}%")


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


def code(text: Any) -> Markdown:
    """Verbatim text (a hash, a path, a command, a value as printed) as inline code.

    Text with a `|` or a backtick is escaped instead: a code span cannot hold a backtick, and a pipe inside
    a code span in a pipe table would end the cell.
    """
    text = str(text)
    if "|" in text or "`" in text:
        return escape(text)
    return Markdown(f"`{text}`")


Formatter = Callable[[Any], str]


def _cell(value: Any) -> str:
    """Default cell text: integers as written, floats to four significant digits, NaN empty, bools yes/no."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        return str(sig(value, 4))
    return value if isinstance(value, Markdown) else str(escape(value))


def _unpiped(text: str) -> str:
    """Escape every `|` not already escaped: in a pipe table it would end the cell."""
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def markdown_table(
    frame: pd.DataFrame,
    *,
    formats: Mapping[str, Formatter] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Markdown:
    """A pipe table (HTML and Typst alike); numeric columns right-aligned, '|' in text escaped."""
    formats = dict(formats or {})
    headers = dict(headers or {})
    names = [str(escape(h) if not isinstance(h, Markdown) else h) for h in (headers.get(c, c) for c in frame.columns)]
    rows = []
    for record in frame.itertuples(index=False, name=None):  # keeps each column's own type, unlike iterrows
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            missing = value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
            text = "" if missing else (formats[column](value) if column in formats else _cell(value))
            text = str(text) if isinstance(text, Markdown) or column not in formats else str(escape(text))
            cells.append(_unpiped(text).replace("\n", " "))
        rows.append(cells)
    numeric = [
        pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c]) for c in frame.columns
    ]
    rule = ["---:" if n else ":---" for n in numeric]
    lines = ["| " + " | ".join(names) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return Markdown("\n".join(lines))


# --------------------------------------------------------------------------------------------------------------
# Figures the report draws itself, from tables (matplotlib and seaborn; no torch)


def _pyplot():
    # No backend is chosen here: Jupyter's is inline (the figure becomes the cell's output), elsewhere
    # matplotlib falls back to Agg without a display.
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper")
    return plt, sns


def jacobian_figure(jacobian: pd.DataFrame):
    """||dh_tau/dh_0|| against tau, one line per spectral radius of U, with ||U^tau|| dashed (log scale)."""
    plt, sns = _pyplot()
    data = jacobian.assign(radius=jacobian["spectral_radius"].round(2).map(lambda r: f"{r:g}"))
    fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
    radii = data["radius"].unique()
    palette = dict(zip(radii, sns.color_palette("viridis", len(radii)), strict=True))
    for radius, group in data.groupby("radius", sort=False):
        ax.plot(group["distance"], group["jacobian_norm"], color=palette[radius], label=f"ρ(U) = {radius}")
        ax.plot(group["distance"], group["u_power_norm"], color=palette[radius], linestyle="--", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("distance τ (steps)")
    ax.set_ylabel("spectral norm")
    ax.legend(title="solid: ‖∂h_τ/∂h_0‖, dashed: ‖U^τ‖", fontsize=7, title_fontsize=7)
    return fig


def decay_figure(decay: pd.DataFrame):
    """factor ** distance on a log scale, one line per factor."""
    plt, sns = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.4), layout="constrained")
    sns.lineplot(data=decay.assign(factor=decay["factor"].map(lambda f: f"{f:g}")), x="distance", y="value",
                 hue="factor", palette="viridis", ax=ax)
    ax.set_yscale("log")
    ax.set_xlabel("distance (steps)")
    ax.set_ylabel("factor ** distance")
    return fig


# --------------------------------------------------------------------------------------------------------------
# Chapters: parse a .qmd, run it as Quarto's Jupyter engine would, and list its labels and references

FENCE_OPEN = re.compile(r"^```\{python\}\s*$")
FENCE_ANY = re.compile(r"^(`{3,}|~{3,})")
# Quarto's own pattern for inline expressions (src/resources/jupyter/notebook.py, cell_execute_inline).
INLINE = re.compile(r"(?P<prefix>^|[^`])`\{python\}[ \t](?P<expr>[^`]+)`", re.MULTILINE)
LABEL_KINDS = ("fig", "tbl", "sec", "eq")
LABEL_DEF = re.compile(r"\{#((?:fig|tbl|sec|eq)-[A-Za-z0-9_-]+)")
REF = re.compile(r"(?<![\w@./-])@((?:fig|tbl|sec|eq)-[A-Za-z0-9_-]*[A-Za-z0-9])")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
RESULT_FILE = re.compile(r"results/(?:tables|studies)/[A-Za-z0-9_<>./-]*[A-Za-z0-9>]")
TABLE_CALL = re.compile(r"\btable\(\s*[\"']([A-Za-z0-9_]+)[\"']")
# Numbers that prose may type: chapter numbers and equation numbers of the seed, e.g. "Chapter 12", "(12.7)".
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
        named |= {f"results/tables/{name}.csv" for name in TABLE_CALL.findall(source)}
        return named

    def captions(self) -> list[str]:
        return [str(v) for c in self.cells for k, v in c.options.items() if str(k).endswith("-cap")]

    def typed_numbers(self) -> list[str]:
        """Numbers typed by hand into the prose or a caption (outside inline code, math, labels and links)."""
        text = "\n".join([self.prose(), *self.captions()])
        text = re.sub(r"`[^`]*`", " ", text)  # inline code, executable or not
        text = re.sub(r"\$[^$]*\$", " ", text)  # math
        text = re.sub(r"\{[#.][^}]*\}", " ", text)  # attributes: labels and classes
        text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
        text = re.sub(r"@\w[\w-]*", " ", text)  # cross-references
        text = RESULT_FILE.sub(" ", text)  # file names, e.g. results/tables/decay_47_words.csv
        text = ALLOWED_NUMBERS.sub(" ", text)
        return re.findall(r"[^\s]*\d[^\s]*", text)


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
    figures: int  # matplotlib figures open after the cell

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
        """The chapter as pandoc sees it: prose with inline results, and cell outputs in place of cells."""
        parts, outputs, values = [], iter(self.outputs), iter(self.inline)
        for segment in self.chapter.segments:
            if isinstance(segment, Cell):
                parts.append(next(outputs).markdown())
            else:
                parts.append(INLINE.sub(lambda m: m["prefix"] + next(values)[1], segment.text))
        return "\n".join(parts)

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


def inline_markdown(value: Any, expression: str = "") -> str:
    """How an inline value reads in the page; a str or float would show its Python repr, so refuse them."""
    if hasattr(value, "_repr_markdown_"):
        return value._repr_markdown_()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise TypeError(
        f"inline `{{python}} {expression}` is a {type(value).__name__}: Quarto would print its repr "
        f"({value!r}); format it with a rnnbench.report formatter (integer, fixed, sig, sci, percent, words, code)"
    )


def _run_cell(cell: Cell, namespace: dict[str, Any], filename: str) -> CellOutput:
    tree = ast.parse(cell.code, filename=filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() outside Jupyter
        exec(compile(tree, filename, "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace) if last else None
    figures = 0
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        figures = len(plt.get_fignums())
        plt.close("all")
    return CellOutput(cell, stdout.getvalue(), value, figures)


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
    return sorted(
        f"{run.chapter.path.name}: @{ref}" for run in runs for ref in run.references() if ref not in defined
    )


def duplicate_labels(runs: Sequence[ChapterRun]) -> list[str]:
    seen: dict[str, str] = {}
    duplicates = []
    for run in runs:
        for label in sorted(run.labels()):
            if label in seen:
                duplicates.append(f"{label} in {seen[label]} and {run.chapter.path.name}")
            seen[label] = run.chapter.path.name
    return duplicates
