"""The context chapter's values (reports/context.qmd): what each word of context admitted buys a feed-forward window.

    shapes_side_by_side(shapes, n)  both models' tensors at one context, side by side, with their totals
    widening(corpus)     the window study of a corpus (role window_width): its metric per width n−1, mean and range
                         over the seeds that learned, the best width and the two widest, and its staged figure
    blind_windows()      the agreement windows (role window): accuracy within each window's width and beyond it
    lesson_count(table)  the lesson's count (tables/lesson_params.csv): its numbers, and its rows in words

Returns numbers and staged figures; the sentences are the chapter's. Reads results only; no torch.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR, figure_shown, stage_figure
from rnnbench.book.format import Markdown, escape, label_slug
from rnnbench.book.results import results_root, study_about, study_summary
from rnnbench.book.studies import first_of, studies_with_role
from rnnbench.book.window import window_comparison
from rnnbench.results.ablations import setting_table

# Metrics a lower value of which is better; every other metric (an accuracy) is better higher.
LOWER_IS_BETTER = ("test_ppl", "valid_ppl")


@dataclass(frozen=True)
class Widening:
    """One window study: per width n−1 (``widths``, ascending), the mean of its metric over the seeds that learned
    and its range (NaN where none learned)."""

    study: str
    corpus: str
    metric: str
    widths: tuple[int, ...]
    means: tuple[float, ...]
    lows: tuple[float, ...]
    highs: tuple[float, ...]
    seeds: int  # seeds per width
    hidden: int | None  # the hidden size every width shares, where the study fixes one
    figure: str | None  # the study's figure, staged into the book; None where it draws too little to be one

    @property
    def see(self) -> str:
        """Where a reader sees the widths: this chapter's figure, or where it draws too little, the study's table."""
        return f"@fig-context-{self.corpus}" if self.figure else f"@tbl-study-{label_slug(self.study)}"

    @property
    def lower_is_better(self) -> bool:
        return self.metric in LOWER_IS_BETTER

    def _measured(self) -> list[tuple[int, float]]:
        return [(w, m) for w, m in zip(self.widths, self.means, strict=True) if not math.isnan(m)]

    # A width that no seed learned at has no mean; where too few widths have one, a pick is (0, NaN).
    NONE = (0, math.nan)

    @property
    def best(self) -> tuple[int, float]:
        """The width with the best mean, and that mean."""
        pick = min if self.lower_is_better else max
        measured = self._measured()
        return pick(measured, key=lambda wm: wm[1]) if measured else self.NONE

    @property
    def narrowest(self) -> tuple[int, float]:
        measured = self._measured()
        return measured[0] if measured else self.NONE

    @property
    def widest(self) -> tuple[int, float]:
        measured = self._measured()
        return measured[-1] if measured else self.NONE

    @property
    def next_widest(self) -> tuple[int, float]:
        measured = self._measured()
        return measured[-2] if len(measured) > 1 else self.NONE


def widening(corpus: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Widening | None:
    """The first study with role window_width on ``corpus``, or None where there is none."""
    study = first_of(studies_with_role("window_width", results, corpus=corpus))
    if study is None:
        return None
    about = study_about(study, results)
    metric = about["metric"]
    table = setting_table(study_summary(study, results), ["context"], [metric]).sort_values("context")
    source = paths.study_figure(results_root(results), study, "png")
    figure = stage_figure(source, f"study-{label_slug(study)}", staging) if figure_shown(source) else None
    return Widening(
        study=study,
        corpus=about["corpus"],
        metric=metric,
        widths=tuple(int(w) for w in table["context"]),
        means=tuple(float(v) for v in table[f"{metric}_mean"]),
        lows=tuple(float(v) for v in table[f"{metric}_min"]),
        highs=tuple(float(v) for v in table[f"{metric}_max"]),
        seeds=len(about.get("seeds", [])),
        hidden=about.get("fixed", {}).get("hidden"),
        figure=figure,
    )


@dataclass(frozen=True)
class BlindWindows:
    """The agreement windows: per width n−1, accuracy on the head-verb distances within it and beyond it (means
    over the seeds that learned; NaN where no distance lies beyond)."""

    study: str
    widths: tuple[int, ...]
    within: tuple[float, ...]
    beyond: tuple[float, ...]
    figure: str | None  # the windows' accuracy against distance, staged; None where it draws too little

    @property
    def see(self) -> str:
        return "@fig-context-agreement" if self.figure else f"@sec-study-{label_slug(self.study)}"

    @property
    def compared(self) -> list[tuple[int, float, float]]:
        return [
            (w, a, b)
            for w, a, b in zip(self.widths, self.within, self.beyond, strict=True)
            if not (math.isnan(a) or math.isnan(b))
        ]

    @property
    def smallest_fall(self) -> float:
        return min((a - b for _, a, b in self.compared), default=math.nan)

    @property
    def largest_fall(self) -> float:
        return max((a - b for _, a, b in self.compared), default=math.nan)


def blind_windows(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> BlindWindows | None:
    """The windows of the window-against-recurrence comparison, or None where there is none."""
    comparison = window_comparison(results)
    if comparison is None:
        return None
    pairs = comparison.pairs.sort_values("context")
    source = paths.study_extra_figure(results_root(results), comparison.windows, "distance-curves", "png")
    name = f"study-{label_slug(comparison.windows)}-distance-curves"
    return BlindWindows(
        comparison.windows,
        tuple(int(c) for c in pairs["context"]),
        tuple(float(v) for v in pd.to_numeric(pairs["ff_within"])),
        tuple(float(v) for v in pd.to_numeric(pairs["ff_beyond"])),
        stage_figure(source, name, staging) if figure_shown(source) else None,
    )


def shapes_side_by_side(shapes: pd.DataFrame, context: int) -> pd.DataFrame:
    """tables/params_ff_vs_rnn.csv at one context: tensor, shape and count of the feed-forward model (FF) and of
    the recurrent one (RNN) on one row per tensor, the feed-forward model's order first, then a total row."""
    rows = shapes[shapes["context"] == context]
    ff = rows[rows["model"] == "ff"][["tensor", "shape", "count"]]
    rnn = rows[rows["model"] == "rnn"][["tensor", "shape", "count"]]
    order = list(ff["tensor"]) + [t for t in rnn["tensor"] if t not in set(ff["tensor"])]
    table = ff.merge(rnn, on="tensor", how="outer", suffixes=(" (FF)", " (RNN)"))
    table = table.set_index("tensor").loc[order].reset_index()  # an outer merge sorts: put FF's order back
    total = {"tensor": "total", "count (FF)": ff["count"].sum(), "count (RNN)": rnn["count"].sum()}
    return pd.concat([table, pd.DataFrame([total])], ignore_index=True)


def tensor_symbol(name: Any) -> Markdown:
    """A tensor as the equations write it: W_h as $W_h$, V as $V$; a tensor named in words (the embedding, the
    total row) as it is."""
    name = str(name)
    return Markdown(f"${name}$") if re.fullmatch(r"[A-Za-z](_[a-z]+)?", name) else escape(name)


def shape_words(shape: Any) -> str:
    """A tensor shape as the text prints it: 10000x500 as 10,000 × 500; nothing for a row without one."""
    if pd.isna(shape) or not str(shape):
        return ""
    return " × ".join(f"{int(side):,}" for side in str(shape).split("x"))


# Contexts the totals' table shows past the first at which the feed-forward model is the larger: enough to see
# the gap grow by the same step, before the largest context counted closes the table.
PAST_CROSSOVER = 2


def totals_around_crossover(totals: pd.DataFrame) -> pd.DataFrame:
    """tables/params_totals.csv from the smallest context to PAST_CROSSOVER contexts past the first at which the
    feed-forward model is larger, and the largest context: the rows between differ by one word's weights each."""
    larger = totals.loc[totals["larger"] == "ff", "context"]
    if larger.empty:
        return totals
    last = totals["context"].sort_values().tolist()
    shown = [c for c in last if c <= larger.min()]
    shown += [c for c in last if c > larger.min()][:PAST_CROSSOVER] + last[-1:]
    return totals[totals["context"].isin(shown)]


# tables/lesson_params.csv's quantities as the chapter's table names them: the recurrence's tensors by their
# symbols, the first layer of the network that reads the tokens concatenated in words.
LESSON_QUANTITIES = {
    "W_hh": "$W_{hh}$, state to state",
    "W_xh": "$W_{xh}$, input to state",
    "b_h": "$b_h$",
    "recurrence": "the recurrence, in all",
    "mlp_first_layer": "first layer",
    "mlp_first_layer_with_bias": "first layer with its bias",
    "mlp_first_layer_minus_recurrence": "first layer less the recurrence",
}


@dataclass(frozen=True)
class LessonCount:
    d_model: int
    d_h: int
    recurrence: int  # W_hh, W_xh and b_h
    short_tokens: int
    long_tokens: int
    first_layer_short: int  # the concatenating network's first layer, weights only, at short_tokens
    first_layer_long: int
    ratio: int  # first_layer_long / first_layer_short, as the table gives it
    extra: int  # first_layer_long - recurrence
    table: pd.DataFrame  # one row per quantity in words: quantity, tokens, shape, count


def lesson_count(lesson: pd.DataFrame) -> LessonCount:
    """Lesson 001's count (rnnbench.worked.lessons.lesson_params's table): the values the chapter's sentence reads,
    and the table with its quantities named in words (the ratio row is the sentence's, not the table's)."""
    by = lesson.set_index(["quantity", "tokens"])["count"]
    first = lesson[lesson["quantity"] == "mlp_first_layer"].sort_values("tokens")
    short, long = int(first["tokens"].iloc[0]), int(first["tokens"].iloc[-1])
    shown = lesson[lesson["quantity"].isin(LESSON_QUANTITIES)]
    table = pd.DataFrame(
        {
            "quantity": [Markdown(LESSON_QUANTITIES[q]) for q in shown["quantity"]],  # the symbols are TeX
            "tokens": shown["tokens"],
            "shape": shown["shape"].fillna("").str.replace("x", " × ", regex=False),
            "count": shown["count"],
        }
    )
    first_short, first_long = int(first["count"].iloc[0]), int(first["count"].iloc[-1])
    return LessonCount(
        d_model=int(lesson["d_model"].iloc[0]),
        d_h=int(lesson["d_h"].iloc[0]),
        recurrence=int(lesson.loc[lesson["quantity"] == "recurrence", "count"].iloc[0]),
        short_tokens=short,
        long_tokens=long,
        first_layer_short=first_short,
        first_layer_long=first_long,
        ratio=int(lesson.loc[lesson["quantity"].str.startswith("mlp_first_layer_ratio"), "count"].iloc[0]),
        extra=int(by.loc[("mlp_first_layer_minus_recurrence", long)]),
        table=table.reset_index(drop=True),
    )
