"""The truncation chapter's figure: what a cut gradient costs the dependencies it cuts, and what the length costs
on PTB. A table in, a figure out.

truncation_figure   (a) per cut length k, accuracy within a gradient block and across a cut, of the runs cut every
                    k steps and of full-sentence BPTT on the same probes, one line per seed; (b) the interaction
                    (within minus across, cut runs minus full-sentence BPTT) per k, seeds as points and the
                    interval the findings test; (c) PTB's metric against k under each design, seeds as points

Only the runs that learned are drawn as points and means (rnnbench.results.outcome); a PTB run that did not learn is
a hollow grey marker, one that diverged a red cross at the top, never a point among the others.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from rnnbench.findings.truncation import ACCURACY_MARGIN, FULL, interactions, split_gaps
from rnnbench.plots.style import DIVERGED_COLOR, FAILED_COLOR, HEIGHT, WIDTH, apply_theme

FULL_COLOUR = (0.5, 0.5, 0.5)  # full-sentence BPTT, the control, in grey as in the per-study cut figure
OFFSET = 0.17  # how far each side of a cut length's position the two designs' pairs sit


def _legend_below(ax: plt.Axes) -> None:
    """Under the panel, where it hides no point."""
    ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)


def _within_across(ax: plt.Axes, reach: pd.DataFrame, colour) -> None:
    """Panel (a): at each k, full-sentence BPTT's pair left of the position and the cut runs' right of it, a seed's
    within (filled) joined to its across (hollow)."""
    gaps, split = split_gaps(reach)
    lengths = sorted(k for k in gaps["bptt"].unique() if k > FULL)
    for x, k in enumerate(lengths):
        for rows, shade, side in (
            (gaps[(gaps["bptt"] == FULL) & (gaps["cut_every"] == k)], FULL_COLOUR, -1),
            (gaps[(gaps["bptt"] == k) & (gaps["cut_every"] == k)], colour, 1),
        ):
            for _, run in rows.iterrows():
                xs = [x + side * OFFSET - 0.07, x + side * OFFSET + 0.07]
                ys = [run["within_accuracy"], run["beyond_accuracy"]]
                ax.plot(xs, ys, color=shade, linewidth=0.8, alpha=0.8)
                ax.plot(xs[0], ys[0], "o", color=shade, markersize=3.5)
                ax.plot(xs[1], ys[1], "o", color=shade, markersize=3.5, markerfacecolor="white")
    ax.set_xticks(range(len(lengths)), [f"k = {int(k)}" for k in lengths])
    ax.set_xlim(-0.6, max(len(lengths), 1) - 0.4)
    ax.set_xlabel("cut length k")
    ax.set_ylabel("agreement accuracy")
    where = "a cut" if split == "block" else "k"
    ax.set_title(f"(a) within a block (filled) and across {where} (hollow)", fontsize=8)
    ax.plot([], [], "o-", color=FULL_COLOUR, markersize=3.5, label="full-sentence BPTT, same probes")
    ax.plot([], [], "o-", color=colour, markersize=3.5, label="gradient cut every k steps")
    _legend_below(ax)


def _interaction(ax: plt.Axes, reaches: Mapping[str, pd.DataFrame], colours: Mapping[str, tuple]) -> None:
    """Panel (b): each study's interaction per k, its seeds as points and its interval as a bar, studies side by
    side; 0 (no interaction) solid, the accuracy margin dotted."""
    found = {name: interactions(reach) for name, reach in reaches.items()}
    lengths = sorted({int(k) for points, _ in found.values() for k in points["k"]})
    shift = np.linspace(-OFFSET, OFFSET, len(reaches)) if len(reaches) > 1 else [0.0]
    for (name, (points, intervals)), dx in zip(found.items(), shift, strict=True):
        x_of = {k: x + dx for x, k in enumerate(lengths)}
        ax.plot(points["k"].map(x_of) - 0.04, points["interaction"], "o", color=colours[name], alpha=0.45, ms=3)
        xs = intervals["k"].map(x_of) + 0.04
        ax.errorbar(
            xs,
            intervals["mean"],
            yerr=[intervals["mean"] - intervals["low"], intervals["high"] - intervals["mean"]],
            fmt="D",
            color=colours[name],
            markersize=4,
            capsize=2.5,
            linewidth=1.1,
            label=name,
        )
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.axhline(ACCURACY_MARGIN, color="0.4", linestyle=":", linewidth=1)
    ax.set_xticks(range(len(lengths)), [f"k = {k}" for k in lengths])
    ax.set_xlim(-0.6, max(len(lengths), 1) - 0.4)
    ax.set_xlabel("cut length k")
    ax.set_ylabel("interaction (accuracy)")
    ax.set_title("(b) (within − across), cut minus full BPTT", fontsize=8)
    ax.plot([], [], ":", color="0.4", label="the accuracy margin")
    _legend_below(ax)


# Panel (c)'s designs told apart by hue, marker and line together: two hues of one sequential map were too close
# to read at print size.
DESIGN_STYLES = (("o", "-"), ("s", "--"), ("^", "-."), ("D", ":"))


def _ptb(ax: plt.Axes, runs: pd.DataFrame, metric: str, colours: Mapping[str, tuple]) -> None:
    """Panel (c): the metric against k, a colour, marker and line style per design; a learned seed a point, their
    mean a line."""
    top = runs.loc[runs["outcome"] == "learned", "value"].max() if (runs["outcome"] == "learned").any() else 1.0
    for i, (design, rows) in enumerate(runs.groupby("design", sort=False)):
        marker, line = DESIGN_STYLES[i % len(DESIGN_STYLES)]
        learned = rows[rows["outcome"] == "learned"]
        ax.plot(learned["bptt"], learned["value"], marker, color=colours[design], alpha=0.6, markersize=3.5)
        means = learned.groupby("bptt")["value"].mean()
        ax.plot(means.index, means.values, line, marker=marker, color=colours[design], linewidth=1.4, markersize=4.5,
                label=design)  # fmt: skip
        failed = rows[rows["outcome"] == "did not learn"]
        ax.plot(failed["bptt"], failed["value"], "o", color=FAILED_COLOR, markerfacecolor="none", markersize=4)
        diverged = rows[rows["outcome"] == "diverged"]
        ax.plot(diverged["bptt"], [top] * len(diverged), "x", color=DIVERGED_COLOR, markersize=5)
    lengths = sorted(runs["bptt"].unique())
    ax.set_xticks(lengths, [f"{int(k)}" for k in lengths])
    ax.set_xlabel("truncation length k")
    ax.set_ylabel(metric)
    ax.set_title(f"(c) PTB: {metric} against k", fontsize=8)
    ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def truncation_figure(
    reaches: Mapping[str, pd.DataFrame],
    ptb: pd.DataFrame,
    *,
    metric: str,
) -> plt.Figure:
    """``reaches``: a legend name -> a study's reach.csv (rnnbench.results.reach), the first drawn in panel (a),
    every one in panel (b); ``ptb``: one row per PTB run, design (its legend name), bptt, seed, outcome and value
    (``metric``, its axis name), drawn in panel (c) where it has a row."""
    apply_theme()
    # Two panels side by side, and PTB's below them at the page's width: at a third of it each, its type is too small.
    layout = [["a", "b"], ["c", "c"]] if not ptb.empty else [["a", "b"]]
    size = (WIDTH * 1.4, HEIGHT * 1.75) if not ptb.empty else (WIDTH * 1.4, HEIGHT)
    ratios = [1.2, 1.0] if not ptb.empty else [1.0]
    fig, axes = plt.subplot_mosaic(layout, figsize=size, layout="constrained", height_ratios=ratios)
    palette = sns.color_palette("viridis", max(len(reaches), 2) + 1)
    colours = {name: palette[i] for i, name in enumerate(reaches)}
    if reaches:
        _within_across(axes["a"], next(iter(reaches.values())), palette[0])
        _interaction(axes["b"], reaches, colours)
    if not ptb.empty:
        designs = list(dict.fromkeys(ptb["design"]))
        tones = sns.color_palette("colorblind", max(len(designs), 2))
        _ptb(axes["c"], ptb, metric, {d: tones[i] for i, d in enumerate(designs)})
    return fig
