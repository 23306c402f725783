"""One function per figure: a tidy table in, a matplotlib figure out. No training, no torch."""

from __future__ import annotations

import textwrap
from typing import Mapping

import matplotlib

matplotlib.use("Agg")  # figures are files; no screen is needed or assumed

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

METRIC_LABELS = {
    "test_ppl": "test perplexity",
    "valid_ppl": "validation perplexity",
    "agreement_accuracy": "agreement accuracy",
    "tokens_per_second": "training tokens / s",
    "clipped_fraction": "fraction of steps clipped",
}


def study_figure(summary: pd.DataFrame, study: Mapping, *, source: str = "") -> plt.Figure:
    """The study's metric against its first varied setting (its second, if any, as colour); seeds give
    the spread (min to max). ``study`` is the study's record (study.json): vary, metric, description.

    ``source`` (the table and rule that produced the figure) is printed small under the axes.

    Runs that diverged have no value for the metric; their count is printed under the title rather
    than silently dropped.
    """
    x, metric = study["vary"][0], study["metric"]
    hue = study["vary"][1] if len(study["vary"]) > 1 else None
    title = study.get("description") or study["name"]
    data = summary[summary["metric"] == metric]
    diverged = summary[(summary["metric"] == "diverged") & (summary["value"] > 0)]
    sns.set_theme(style="whitegrid", context="paper")
    fig, ax = plt.subplots(figsize=(5.0, 3.4), layout="constrained")
    numeric = pd.api.types.is_numeric_dtype(data[x])
    plot = sns.lineplot if numeric else sns.pointplot
    kwargs = {"marker": "o"} if numeric else {"linestyle": "-"}
    plot(data=data, x=x, y="value", hue=hue, errorbar=("pi", 100), ax=ax, **kwargs)
    values = sorted(data[x].unique())
    # A log axis only for positive values: on one, a setting of 0 (ff hidden = 0) would silently vanish.
    if numeric and len(values) > 1 and values[0] > 0 and values[-1] / values[0] >= 16:
        ax.set_xscale("log", base=2)
    if numeric and len(values) <= 12:
        ax.set_xticks(values, labels=[f"{v:g}" for v in values])  # ticks at the settings that were run
    ax.set_xlabel(x)
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    lines = textwrap.wrap(title, 60)  # fits the 5-inch figure at 9 pt
    if len(diverged):
        lines.append(f"{len(diverged)} run(s) diverged and are not shown")
    ax.set_title("\n".join(lines), fontsize=9)
    if source:
        fig.text(0.01, 0.005, source, fontsize=6, color="0.4", ha="left", va="bottom")
        fig.get_layout_engine().set(h_pad=0.12)
    return fig


def save(fig: plt.Figure, path: str) -> None:
    """Write a figure (format from the file name) and free it."""
    from rnnbench.io import atomic_path

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.rsplit(".", 1)[-1], dpi=150)
    plt.close(fig)


def crossover_figure(table: pd.DataFrame, *, title: str = "", source: str = "") -> plt.Figure:
    """Test perplexity against parameter count, both families (rnnbench.comparison.crossover_table, one scale).

    The Elman runs form one line over H; the feed-forward runs one line per H over the context n-1, each
    point labelled with its n-1, hollow once the analytic formula makes it larger than the Elman LM of the
    same d and H. A dotted vertical line per feed-forward H marks that Elman LM's size: where the
    feed-forward line crosses it is the analytic tie, n-1 = 1 + H/d. Runs without a perplexity
    (diverged, or trained on part of the corpus) are counted under the title, not drawn.
    """
    drawn = table[table["status"].isin(["converged", "epoch cap"]) & table["test_ppl"].notna()]
    sns.set_theme(style="whitegrid", context="paper")
    fig, ax = plt.subplots(figsize=(5.6, 3.8), layout="constrained")
    rnn = drawn[drawn["family"] == "rnn"].sort_values("parameters")
    if len(rnn):
        ax.plot(rnn["parameters"], rnn["test_ppl"], "-o", color="black", label="Elman RNN (over H)")
        for row in rnn.itertuples():
            ax.annotate(f"H={row.hidden}", (row.parameters, row.test_ppl), textcoords="offset points",
                        xytext=(4, -10), fontsize=7)
    ff = drawn[drawn["family"] == "ff"]
    palette = sns.color_palette("viridis", max(ff["hidden"].nunique(), 1))
    for color, (hidden, group) in zip(palette, ff.groupby("hidden")):
        group = group.sort_values("context")
        ax.plot(group["parameters"], group["test_ppl"], "-", color=color, label=f"feed-forward, H={hidden} (over n-1)")
        larger = group["ff_larger"].fillna(False).astype(bool)
        ax.scatter(group.loc[~larger, "parameters"], group.loc[~larger, "test_ppl"], color=color, zorder=3)
        ax.scatter(group.loc[larger, "parameters"], group.loc[larger, "test_ppl"], facecolors="white",
                   edgecolors=[color], zorder=3)
        for row in group.itertuples():
            ax.annotate(f"{row.context}", (row.parameters, row.test_ppl), textcoords="offset points",
                        xytext=(3, 3), fontsize=7, color=color)
        for size in group["rnn_equivalent_parameters"].dropna().unique():
            ax.axvline(float(size), color=color, linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylabel(METRIC_LABELS["test_ppl"])
    lines = textwrap.wrap(title, 70)
    left_out = len(table) - len(drawn)
    if left_out:
        lines.append(f"{left_out} run(s) without a comparable perplexity are not shown")
    ax.set_title("\n".join(lines), fontsize=9)
    if len(drawn):
        from matplotlib.lines import Line2D

        handles, _ = ax.get_legend_handles_labels()
        if len(ff):
            handles += [
                Line2D([], [], color="0.4", linestyle=":", label="Elman RNN of the same d and H (analytic tie)"),
                Line2D([], [], color="0.4", marker="o", markerfacecolor="white", linestyle="",
                       label="feed-forward larger than that RNN"),
            ]
        ax.legend(handles=handles, fontsize=7)
    if source:
        fig.text(0.01, 0.005, source, fontsize=6, color="0.4", ha="left", va="bottom")
        fig.get_layout_engine().set(h_pad=0.12)
    return fig


def decay_figure(
    curves: pd.DataFrame,
    *,
    hue: str,
    panel: str | None = None,
    direction: str = "backward",
    method: str = "one_pass",
    quantity: str = "h",
    max_distance: int | None = None,
    title: str = "",
    source: str = "",
) -> plt.Figure:
    """Gradient-decay curves (a decay analysis's curves table): norm against distance on a log y axis.

    One panel per value of ``panel`` (a sweep, e.g. the activation), one line per value of ``hue`` (e.g. the
    spectral radius): the median over sequences, with the 10-90% quantile band shaded. Rows with several
    points per (panel, hue, distance), e.g. seeds, are drawn as one line each.
    Zero norms (underflow) cannot sit on a log axis; the line stops there rather than plunging.
    """
    data = curves[(curves["direction"] == direction) & (curves["method"] == method) & (curves["quantity"] == quantity)]
    if max_distance is not None:
        data = data[data["distance"] <= max_distance]
    panels = sorted(data[panel].unique()) if panel else [None]
    sns.set_theme(style="whitegrid", context="paper")
    fig, axes = plt.subplots(
        1, len(panels), figsize=(2.2 + 2.6 * len(panels), 3.2), sharey=True, squeeze=False, layout="constrained"
    )
    hues = sorted(data[hue].unique())
    colours = dict(zip(hues, sns.color_palette("viridis", len(hues))))
    lead = [c for c in ("run_id", "seed", "epoch") if c in data.columns and c not in (hue, panel)]
    for ax, value in zip(axes[0], panels):
        part = data if panel is None else data[data[panel] == value]
        for key, line in part.groupby([hue, *lead], sort=True):
            level = key[0] if isinstance(key, tuple) else key
            line = line.sort_values("distance")
            positive = line[line["median"] > 0]
            ax.plot(positive["distance"], positive["median"], color=colours[level], lw=1.2)
            band = line[(line["q10"] > 0) & (line["q90"] > 0)]
            ax.fill_between(band["distance"], band["q10"], band["q90"], color=colours[level], alpha=0.15, lw=0)
        ax.set_yscale("log")
        ax.set_xlabel("distance (steps)")
        if panel is not None:
            ax.set_title(f"{panel} = {value}", fontsize=9)
    axes[0][0].set_ylabel(f"||dL/d{quantity}||" if direction == "backward" else f"move of {quantity} per unit move of x_1")
    handles = [plt.Line2D([], [], color=colours[h], lw=1.5) for h in hues]
    labels = [f"{h:g}" if isinstance(h, float) else str(h) for h in hues]
    fig.legend(handles, labels, title=hue, fontsize=7, loc="outside right upper")  # beside the panels, over no line
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, 70)), fontsize=9)
    if source:
        fig.text(0.01, 0.005, source, fontsize=6, color="0.4", ha="left", va="bottom")
        fig.get_layout_engine().set(h_pad=0.12)
    return fig
