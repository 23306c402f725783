"""Figures of our runs beside the published rows: tables of rnnbench.results.crossover and
rnnbench.results.learning_curves in, a figure out.

learning_curves_figure   validation perplexity against training tokens seen, one line per run, a panel per corpus
crossover_figure         test perplexity against parameter count, both families, the analytic tie marked
"""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns

from rnnbench.findings.setting_words import corpus as corpus_words
from rnnbench.metrics import FAMILY_LABELS, METRIC_LABELS
from rnnbench.plots.style import PRINT_WIDTH, level_colours, plain_log_ticks

# A run's line by its scale: solid a reference or paper-scale run, dashed a short one.
SCALE_STYLES = {"reference": "-", "paper": "-", "short": "--"}


def learning_curves_figure(table: pd.DataFrame) -> plt.Figure:
    """Validation perplexity against training tokens seen (log axes), one line per run, a panel per corpus
    (rnnbench.results.learning_curves.learning_curves): colour the family, dashed a short run, a dot at each epoch's
    end; runs of one epoch are their dots alone, named so in the legend."""
    sns.set_theme(style="whitegrid", context="paper")
    corpora = list(dict.fromkeys(table["corpus"])) or ["none"]
    width = min(3.6 * len(corpora), PRINT_WIDTH)  # printed at most this wide, so at the size drawn
    fig, axes = plt.subplots(1, len(corpora), figsize=(width, 3.4), layout="constrained", squeeze=False)
    colors = {"rnn": "black", "ff": "tab:red", "lstm": "tab:blue"}
    for ax, corpus in zip(axes[0], corpora, strict=True):
        here = table[(table["corpus"] == corpus) & table["valid_ppl"].notna()]
        labelled: set[tuple[str, str]] = set()
        # A scale and family whose every run ended after one epoch has points, not curves: drawn and named so.
        epochs = here.groupby(["scale", "family", "run_id"], sort=False)["tokens_seen"].count()
        one_epoch = epochs.groupby(level=["scale", "family"]).max().eq(1)
        for (scale, family, _), run in here.groupby(["scale", "family", "run_id"], sort=False):
            key = (scale, family)
            points = bool(one_epoch.get(key, False))
            label = f"{FAMILY_LABELS.get(family, family)}, {scale}{' (one epoch)' if points else ''}"
            label = label if key not in labelled else None
            labelled.add(key)
            ax.plot(
                run["tokens_seen"].astype(float),
                run["valid_ppl"],
                "" if points else SCALE_STYLES.get(scale, "-"),
                marker="o",
                markersize=3.5 if points else 2.5,
                linewidth=1.6 if scale == "reference" else 1.0,
                color=colors.get(family, "0.4"),
                alpha=1.0 if scale == "reference" else 0.6,
                label=label,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_ticks(ax)
        # Tokens in short form (1M, 2M), minor ones labelled only where they do not crowd.
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: _short_count(v)))
        ax.xaxis.set_minor_locator(matplotlib.ticker.LogLocator(base=10, subs=(2, 3, 5)))
        ax.xaxis.set_minor_formatter(
            _minor_count_labels(ax)
        )  # plain numbers, minor ones only within a decade: never printed over each other
        ax.tick_params(axis="y", which="both", labelsize=8)
        ax.set_xlabel("training tokens seen")
        ax.set_ylabel("validation perplexity")
        ax.set_title(corpus_words(corpus), fontsize=9)
        if labelled:
            ax.legend(fontsize=7)
    return fig


def _short_count(value: float) -> str:
    """A parameter count as a tick label: 250k, 1.2M."""
    return f"{value / 1e6:g}M" if value >= 1e6 else f"{value / 1e3:g}k"


# Where the minor ticks of a parameter-count axis sit, as multiples of each power of ten. The models of one
# corpus often lie within a factor of two (1.1M to 1.7M on PTB), where ticks only at 2-9 times a power of ten
# would leave them unlabelled; at 1.2 and 1.5 they are read off directly. Over more than a decade these crowd,
# and only the ticks at LABELLED_MINOR (times a power of ten) keep a label.
MINOR_SUBS = (1.2, 1.5, 2, 3, 5, 7)
LABELLED_MINOR = (2, 5)


def _minor_count_labels(ax: plt.Axes) -> matplotlib.ticker.Formatter:
    """The x axis's minor tick labels: every one where the axis spans a decade or less, else those at
    LABELLED_MINOR times a power of ten."""

    def label(value: float, _position) -> str:
        low, high = ax.get_xlim()
        if np.log10(high / low) <= 1:
            return _short_count(value)
        multiple = round(value / 10 ** np.floor(np.log10(value)), 1)
        return _short_count(value) if multiple in LABELLED_MINOR else ""

    return matplotlib.ticker.FuncFormatter(label)


def crossover_figure(table: pd.DataFrame, *, title: str = "") -> plt.Figure:
    """Test perplexity against parameter count, both families (rnnbench.results.crossover.crossover_table, one scale).

    A point is a model: the mean of its seeds' test perplexities (rnnbench.results.crossover.setting_means), with a bar
    over their range where it has more than one. The Elman models form one line over H; the feed-forward models
    one line per H over the context n-1, each point labelled with its n-1, hollow once the analytic formula makes
    it larger than the Elman LM of the same d and H. A dotted vertical line per feed-forward H marks that Elman
    LM's size: where the feed-forward line crosses it is the analytic tie, n-1 = 1 + H/d. Runs without a
    perplexity (diverged) are counted under the title, not drawn.
    """
    from rnnbench.results.crossover import setting_means
    from rnnbench.results.runs import MEASURED

    runs = table[table["status"].isin(MEASURED) & table["test_ppl"].notna()]
    # Reference runs (trained to convergence, rnnbench.results.reference) are points of their own, not on the lines.
    reference = runs[runs["scale"] == "reference"] if "scale" in runs else runs.iloc[0:0]
    runs = runs.drop(reference.index)
    drawn = setting_means(runs, "parameters", keep=("family", "ff_larger", "rnn_equivalent_parameters"))
    sns.set_theme(style="whitegrid", context="paper")
    fig, ax = plt.subplots(figsize=(PRINT_WIDTH, 4.6), layout="constrained")  # printed at the size drawn
    for family, color in (("rnn", "black"), ("ff", "tab:red")):
        name = FAMILY_LABELS[family]
        points = reference[reference["family"] == family]
        if len(points):
            label = f"{name}, reference (trained to convergence)"
            ax.scatter(points["parameters"], points["test_ppl"], marker="*", s=90, color=color, zorder=4, label=label)
    rnn = drawn[drawn["family"] == "rnn"].sort_values("parameters")
    if len(rnn):
        ax.plot(rnn["parameters"], rnn["test_ppl"], "-o", color="black", label="Elman RNN (over H)")
        _seed_ranges(ax, rnn, "black")
        for row in rnn.itertuples():
            ax.annotate(
                f"H={row.hidden:g}",
                (row.parameters, row.test_ppl),
                textcoords="offset points",
                xytext=(4, -10),
                fontsize=7,
            )
    ff = drawn[drawn["family"] == "ff"]
    palette = list(level_colours(range(max(ff["hidden"].nunique(), 1))).values())
    for color, (hidden, group) in zip(palette, ff.groupby("hidden"), strict=True):
        group = group.sort_values("context")
        label = f"feed-forward, H={hidden}, points labelled n-1"
        ax.plot(group["parameters"], group["test_ppl"], "-", color=color, label=label)
        _seed_ranges(ax, group, color)
        larger = group["ff_larger"].fillna(False).astype(bool)
        ax.scatter(group.loc[~larger, "parameters"], group.loc[~larger, "test_ppl"], color=color, zorder=3)
        ax.scatter(
            group.loc[larger, "parameters"],
            group.loc[larger, "test_ppl"],
            facecolors="white",
            edgecolors=[color],
            zorder=3,
        )
        # Neighbouring windows differ by one word's weights and often by little perplexity: short labels (the
        # n-1 alone, named in the legend) alternate above and below their points, so that close ones do not
        # print over each other.
        for i, row in enumerate(group.itertuples()):
            ax.annotate(
                f"{row.context:g}",
                (row.parameters, row.test_ppl),
                textcoords="offset points",
                xytext=(3, 3) if i % 2 == 0 else (3, -9),
                fontsize=7,
                color=color,
            )
        for size in group["rnn_equivalent_parameters"].dropna().unique():
            ax.axvline(float(size), color=color, linestyle=":", linewidth=1)
    ax.set_xscale("log")
    # Sizes span less than a decade or two: labelled ticks in short form (250k, 1.2M), not 2.05 × 10⁵.
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: _short_count(v)))
    ax.xaxis.set_minor_locator(matplotlib.ticker.LogLocator(base=10, subs=MINOR_SUBS))
    ax.xaxis.set_minor_formatter(_minor_count_labels(ax))
    ax.tick_params(axis="x", which="both", labelsize=7, length=3)  # one length: labels on one line
    ax.set_xlabel("parameters")
    ax.set_ylabel(METRIC_LABELS["test_ppl"])
    lines = textwrap.wrap(title, 70)
    if (drawn["seeds"] > 1).any():
        lines.append("a point: a model's mean over its seeds; a bar: their range")
    left_out = len(table) - len(runs) - len(reference)
    if left_out:
        lines.append(f"{left_out} run(s) without a comparable perplexity are not shown")
    ax.set_title("\n".join(lines), fontsize=9)
    if len(drawn) or len(reference):
        from matplotlib.lines import Line2D

        handles, _ = ax.get_legend_handles_labels()
        if len(ff):
            handles += [
                Line2D([], [], color="0.4", linestyle=":", label="Elman RNN of the same d and H (analytic tie)"),
                Line2D(
                    [],
                    [],
                    color="0.4",
                    marker="o",
                    markerfacecolor="white",
                    linestyle="",
                    label="feed-forward larger than that RNN",
                ),
            ]
        # Under the axes, over no point, leaving them the print width.
        fig.legend(handles=handles, fontsize=7.5, loc="outside lower center", ncol=2, frameon=False)
    return fig


def _seed_ranges(ax: plt.Axes, models: pd.DataFrame, color: Any) -> None:
    """A vertical bar over the range of each model's seeds (setting_means rows), where it has more than one."""
    seeded = models[models["seeds"] > 1]
    if len(seeded):
        spread = [seeded["test_ppl"] - seeded["test_min"], seeded["test_max"] - seeded["test_ppl"]]
        ax.errorbar(seeded["parameters"], seeded["test_ppl"], yerr=spread, fmt="none", ecolor=color, capsize=2, lw=0.8)
