"""The ablations' figures, one function each: a table of rnnbench.results.ablations in, a figure out.

distance_heatmap   agreement accuracy, head-verb distance x the study's first varied setting
distance_curves    accuracy against distance, one line per value of that setting, seeds' range as a band
norm_trace         pre-clip gradient norm step by step (log y), one line per run, a panel per second setting
learning_curves    validation perplexity epoch by epoch against tokens read and seconds trained, one line per run
cut_contrast       accuracy against distance within a gradient block and across a cut, a panel per cut length,
                   the full-sentence run's on the same probes beside the run cut there
update_cosine      each measured clipped update's cosine to the unclipped one, against its step and against
                   ||g|| / threshold, one colour per clipping setting

Means and ranges are over the seeds that learned (rnnbench.results.ablations); a setting where some seed failed says
how many learned, and one where none did is drawn as such (hatched row, hollow legend marker), not as chance.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd
import seaborn as sns

from rnnbench.plots.style import (
    DIVERGED_COLOR,
    FAILED_COLOR,
    FAILED_LABELS,
    HEIGHT,
    PRINT_WIDTH,
    WIDTH,
    apply_theme,
    level_colours,
    level_markers,
    level_styles,
    never_limits,
    plain_log_ticks,
    setting_value,
)

CHANCE = 0.5  # two verb forms: a model that ignores the head is right half the time


def _label(value) -> str:
    return f"{value:g}" if isinstance(value, (int, float, np.integer, np.floating)) else str(value)


_setting_name = setting_value  # bptt 0 is full-sentence BPTT, an infinite clip threshold no clipping


def _named(setting: str, value) -> str:
    """A legend's words for one value of a setting: its name and value, or "no clipping" alone."""
    name = setting_value(setting, value)
    return name if never_limits(setting, value) else f"{_words(setting)} {name}"


# How a varied setting reads on an axis or a legend.
SETTING_WORDS = {"context": "window n-1", "bptt": "BPTT length k", "hidden": "hidden size H"}


def _words(setting: str) -> str:
    return SETTING_WORDS.get(setting, setting.replace("_", " "))


def _learned(distances: pd.DataFrame, setting: str, value) -> tuple[int, int]:
    """(seeds that learned, runs) of one setting of a distance table."""
    row = distances[distances[setting] == value].iloc[0]
    return int(row["seeds_learned"]), int(row["runs"])


def _counted(setting: str, value, distances: pd.DataFrame, sep: str = " ") -> str:
    """A setting's name, with how many of its seeds learned when any failed (after ``sep``)."""
    k, n = _learned(distances, setting, value)
    name = _setting_name(setting, value)
    if k == n:
        return name
    return f"{name}{sep}(none of {n} learned)" if k == 0 else f"{name}{sep}({k} of {n} learned)"


def _heading(what: str) -> str:
    """A figure's heading: what it draws, in words. The study's name is in the figure's caption, once (provenance
    is not repeated inside the image)."""
    return what[:1].upper() + what[1:]


def _title(ax, study: Mapping, what: str) -> None:
    ax.set_title("\n".join(textwrap.wrap(_heading(what), 60)), fontsize=9)


def distance_heatmap(distances: pd.DataFrame, study: Mapping) -> plt.Figure:
    """Agreement accuracy (mean over the seeds that learned), one row per value of the study's first varied
    setting (config order), one column per head-verb distance; a diverging palette centred on chance (0.5).
    A row whose seeds all failed is hatched grey (not white, which is chance), and a row label says how many
    seeds learned where any failed."""
    setting = study["vary"][0]
    apply_theme()
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), layout="constrained")
    values = list(dict.fromkeys(distances[setting]))
    grid = distances.pivot_table(
        index=setting, columns="distance", values="accuracy_mean", aggfunc="first", dropna=False
    )
    # every distance a column, every setting a row, even where no seed learned (all NaN)
    grid = grid.reindex(index=values, columns=sorted(distances["distance"].unique()))
    sns.heatmap(
        grid,
        ax=ax,
        cmap="RdBu",
        vmin=0.0,
        vmax=1.0,
        center=CHANCE,
        linewidths=0.3,
        cbar_kws={"label": "accuracy (learned seeds' mean)"},
    )
    # the count on a line of its own: a long label would squeeze the grid
    ax.set_yticklabels([_counted(setting, v, distances, sep="\n") for v in values], rotation=0, fontsize=8)
    none = [row for row, v in enumerate(values) if _learned(distances, setting, v)[0] == 0]
    for row in none:
        ax.add_patch(
            mpatches.Rectangle(
                (0, row), grid.shape[1], 1, facecolor="0.85", edgecolor=FAILED_COLOR, hatch="///", linewidth=0
            )
        )
    if none:
        patch = mpatches.Patch(facecolor="0.85", edgecolor=FAILED_COLOR, hatch="///", label="no seed learned")
        ax.legend(handles=[patch], fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.18), frameon=False)
    ax.set_xlabel("head-verb distance (words)")
    ax.set_ylabel(_words(setting))
    if setting in ("bptt", "context"):  # the reach of each row: dependencies beyond it cross the line
        for row, value in enumerate(values):
            if value:
                columns = list(grid.columns)
                edge = sum(1 for d in columns if d <= value)
                if 0 < edge < len(columns):
                    ax.plot([edge, edge], [row, row + 1], color="black", linewidth=1.5)
    _title(
        ax,
        study,
        "accuracy per distance" + (" (black tick: the setting's reach)" if setting in ("bptt", "context") else ""),
    )
    return fig


def distance_curves(distances: pd.DataFrame, study: Mapping) -> plt.Figure:
    """Accuracy against head-verb distance, one line per value of the first varied setting: the mean over
    the seeds that learned, their range shaded; a dotted line at chance; for a window or segment length, its
    reach marked on its line. A setting whose seeds all failed has no line, only a hollow legend entry."""
    setting = study["vary"][0]
    apply_theme()
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), layout="constrained")
    values = list(dict.fromkeys(distances[setting]))
    palette, styles, markers = level_colours(values), level_styles(values), level_markers(values)
    for value in values:
        rows = distances[distances[setting] == value].sort_values("distance")
        colour = palette[value]
        if _learned(distances, setting, value)[0] == 0:
            ax.plot(
                [],
                [],
                color=FAILED_COLOR,
                marker="o",
                markerfacecolor="none",
                linestyle="none",
                label=_counted(setting, value, distances, sep="\n"),
            )
            continue
        ax.plot(
            rows["distance"],
            rows["accuracy_mean"],
            color=colour,
            linestyle=styles[value],
            marker=markers[value],
            markersize=3.5,
            label=_counted(setting, value, distances, sep="\n"),
        )
        if (rows["accuracy_max"] > rows["accuracy_min"]).any():
            ax.fill_between(
                rows["distance"], rows["accuracy_min"], rows["accuracy_max"], color=colour, alpha=0.15, linewidth=0
            )
        if setting in ("bptt", "context") and value and value < rows["distance"].max():
            ax.axvline(value + 0.5, color=colour, linestyle="--", linewidth=0.8)
    ax.axhline(CHANCE, color="0.4", linestyle=":", linewidth=1)
    ax.set_ylim(0.0, 1.02)
    if len(distances):
        ax.set_xlim(distances["distance"].min() - 0.5, distances["distance"].max() + 0.5)
    if not (distances.groupby(setting, sort=False)["seeds_learned"].first() > 0).any():
        ax.text(0.5, 0.75, "no seed learned at any setting", transform=ax.transAxes, ha="center", color=FAILED_COLOR)
    ax.set_xlabel("head-verb distance (words)")
    ax.set_ylabel("agreement accuracy")
    ax.legend(title=_words(setting), fontsize=7, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    reach = " (dashed: each setting's reach)" if setting in ("bptt", "context") else ""
    _title(ax, study, f"accuracy against distance, mean and range over the seeds that learned{reach}")
    return fig


def _mark_end(ax, xs: pd.Series, ys: pd.Series, diverged: bool, outcome: str) -> None:
    """At a line's last point: a red cross for a run that diverged, a hollow grey circle for one that finished
    but did not learn, nothing for one that learned."""
    if diverged:
        ax.scatter(xs.iloc[-1:], ys.iloc[-1:], marker="x", s=40, color=DIVERGED_COLOR, zorder=4)
    elif outcome != "learned":
        ax.scatter(
            xs.iloc[-1:],
            ys.iloc[-1:],
            marker="o",
            s=36,
            facecolors="none",
            edgecolors=FAILED_COLOR,
            linewidths=1.0,
            zorder=4,
        )


def norm_trace(trace: pd.DataFrame, study: Mapping) -> plt.Figure:
    """Pre-clip gradient norm per recorded step on a log axis, one line per value of the study's first varied
    setting, one panel per value of the second (if any); a diverged run ends in a red cross, a run that
    finished but did not learn in a hollow grey circle."""
    vary = list(study["vary"])
    line, panel = vary[0], (vary[1] if len(vary) > 1 else None)
    panels = list(dict.fromkeys(trace[panel])) if panel else [None]
    apply_theme()
    fig, axes = plt.subplots(
        1,
        len(panels),
        figsize=(WIDTH if len(panels) == 1 else 6.3, HEIGHT),
        layout="constrained",
        sharey=True,
        squeeze=False,
    )
    values = list(dict.fromkeys(trace[line]))
    # Runs that never clipped trace the same norms: a dash pattern per line keeps each one visible on top.
    palette, dashes = level_colours(values), level_styles(values)
    positive = trace["grad_norm"][np.isfinite(trace["grad_norm"]) & (trace["grad_norm"] > 0)]
    top = float(positive.max()) if len(positive) else 1.0
    for ax, p in zip(axes[0], panels, strict=True):
        rows = trace if panel is None else trace[trace[panel] == p]
        for value in values:
            run = rows[rows[line] == value].sort_values("step")
            if run.empty:
                continue
            norms = run["grad_norm"].where(np.isfinite(run["grad_norm"]), top)
            ax.plot(
                run["step"],
                norms,
                color=palette[value],
                linestyle=dashes[value],
                linewidth=1.1,
                label=_named(line, value),
            )
            _mark_end(ax, run["step"], norms, bool(run["diverged"].iloc[0]), run["outcome"].iloc[0])
        ax.set_yscale("log")
        plain_log_ticks(ax)  # 0.4, not 4 × 10⁻¹
        ax.set_xlabel("optimiser step")
        if p is not None:
            ax.set_title(f"{panel.replace('_', ' ')} = {setting_value(panel, p)}", fontsize=8)
    axes[0][0].set_ylabel("pre-clip gradient norm (log scale)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if trace["diverged"].any():
        handles.append(plt.Line2D([], [], color=DIVERGED_COLOR, marker="x", linestyle="", label="diverged"))
    finished = trace[~trace["diverged"].astype(bool) & (trace["outcome"] != "learned")]
    for state in dict.fromkeys(finished["outcome"]):
        label = FAILED_LABELS.get(state, str(state))
        handles.append(
            plt.Line2D([], [], color=FAILED_COLOR, marker="o", markerfacecolor="none", linestyle="", label=label)
        )
    axes[0][-1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    seed = trace["seed"].iloc[0] if len(trace) else ""
    fig.suptitle("\n".join(textwrap.wrap(_heading(f"gradient norm before clipping, seed {seed}"), 70)), fontsize=9)
    return fig


def _spread_axis(ax, values: pd.Series) -> None:
    """A log x axis where the values span a decade or more (epochs of tokens, seconds of runs of different
    lengths), else a linear one: a log axis over a narrow range labels only its crowded minor ticks."""
    positive = values[values > 0]
    if len(positive) and positive.max() >= 10 * positive.min():
        ax.set_xscale("log")
    else:
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(3))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 10 else f"{v:g}"))


def learning_curves(learning: pd.DataFrame, study: Mapping) -> plt.Figure:
    """Validation perplexity at each epoch's end against the training tokens read (left) and the seconds trained
    (right), both log scales, one line per run: colour the study's first varied setting, a dash pattern per
    value of the second (if any), seeds in the same style. A run that did not learn is drawn grey with a hollow
    circle at its end, a diverged one with a red cross where its last finished epoch was, on the top edge where
    its perplexity is beyond three times every other run's (the others keep the axis)."""
    vary = list(study["vary"])
    hue, style = (vary[0] if vary else None), (vary[1] if len(vary) > 1 else None)
    apply_theme()
    fig, axes = plt.subplots(1, 2, figsize=(6.3, HEIGHT), layout="constrained", sharey=True, squeeze=False)
    values = list(dict.fromkeys(learning[hue])) if hue else [None]
    palette = level_colours(values)
    styles = list(dict.fromkeys(learning[style])) if style else [None]
    dashes = level_styles(styles)
    curves = learning[learning["valid_ppl"].notna()]
    kept = curves.loc[~curves["diverged"].astype(bool), "valid_ppl"]
    ceiling = 1.5 * kept.max() if len(kept) and curves["valid_ppl"].max() > 3 * kept.max() else np.inf
    for ax, x, label in zip(
        axes[0], ("tokens_seen", "seconds_trained"), ("training tokens read", "seconds trained (wall)"), strict=True
    ):
        for _, run in curves.groupby("run_id", sort=False):
            run = run.sort_values("epoch")
            first = run.iloc[0]
            finished = first["outcome"] == "learned"
            color = palette[first[hue]] if hue else "black"
            shown = run["valid_ppl"].clip(upper=ceiling)
            ax.plot(
                run[x].astype(float),
                shown,
                color=color if finished else FAILED_COLOR,
                linestyle=dashes[first[style]] if style else "-",
                marker="o",
                markersize=2.5,
                linewidth=1.0,
                alpha=0.85,
            )
            _mark_end(ax, run[x].astype(float), shown, bool(first["diverged"]), first["outcome"])
        _spread_axis(ax, curves[x].astype(float))
        ax.set_yscale("log")
        plain_log_ticks(ax)
        ax.set_xlabel(label)
    axes[0][0].set_ylabel("validation perplexity (log scale)")
    handles = [
        plt.Line2D([], [], color=palette[v], marker="o", markersize=3, label=_named(hue, v)) for v in values if hue
    ]
    handles += [plt.Line2D([], [], color="0.3", linestyle=dashes[v], label=_named(style, v)) for v in styles if style]
    # Only what is drawn: a run that diverged in its first epoch has no validation perplexity to draw.
    if curves["diverged"].astype(bool).any():
        handles.append(plt.Line2D([], [], color=DIVERGED_COLOR, marker="x", linestyle="", label="diverged"))
    for state in dict.fromkeys(curves.loc[~curves["diverged"].astype(bool), "outcome"]):
        if state != "learned":
            handles.append(
                plt.Line2D(
                    [],
                    [],
                    color=FAILED_COLOR,
                    marker="o",
                    markerfacecolor="none",
                    label=FAILED_LABELS.get(state, state),
                )
            )
    if handles:
        axes[0][-1].legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("\n".join(textwrap.wrap(_heading("validation perplexity epoch by epoch"), 70)), fontsize=9)
    return fig


def cut_contrast(cuts: pd.DataFrame, study: Mapping) -> plt.Figure:
    """One panel per cut length k (rnnbench.results.cut_accuracy.cut_table): accuracy against distance of the runs cut every k
    steps (colour) and of full-sentence BPTT on the same probes (grey), solid with filled markers on the probes
    whose head and verb share a gradient block, dashed with hollow ones on those a cut separates; the learned
    seeds' mean, their range shaded. A distance with both markers is the control: the same distance, with and
    without a cut between head and verb. A panel's title says how many seeds learned where any failed; a side
    whose seeds all failed has no line."""
    setting = study["vary"][0]
    apply_theme()
    lengths = sorted(cuts["cut_every"].unique()) if len(cuts) else [None]
    fig, axes = plt.subplots(
        1,
        len(lengths),
        figsize=(max(WIDTH, min(2.1 * len(lengths), PRINT_WIDTH)), HEIGHT + 0.6),
        layout="constrained",
        sharey=True,
        squeeze=False,
    )
    cut_colour, full_colour = level_colours([0])[0], (0.5, 0.5, 0.5)
    for ax, k in zip(axes[0], lengths, strict=True):
        panel = cuts[cuts["cut_every"] == k]
        counts = []
        for value in dict.fromkeys(panel[setting]):
            rows = panel[panel[setting] == value]
            full = value == 0
            learned_seeds, runs = _learned(panel, setting, value)
            if learned_seeds < runs:
                counts.append(
                    f"{'full sentence' if full else f'k = {_label(value)}'}: {learned_seeds} of {runs} learned"
                )
            colour = full_colour if full else cut_colour
            who = "full-sentence BPTT, same probes" if full else "cut every k steps"
            for crossing, style in ((False, "-"), (True, "--")):
                side = rows[(rows["crosses_cut"] == crossing) & rows["accuracy_mean"].notna()].sort_values("distance")
                if side.empty:
                    continue
                ax.plot(
                    side["distance"],
                    side["accuracy_mean"],
                    color=colour,
                    linestyle=style,
                    marker="o",
                    markersize=3.5,
                    markerfacecolor="none" if crossing else colour,
                    label=f"{who}: {'across a cut' if crossing else 'within a block'}",
                )
                if (side["accuracy_max"] > side["accuracy_min"]).any():
                    ax.fill_between(
                        side["distance"],
                        side["accuracy_min"],
                        side["accuracy_max"],
                        color=colour,
                        alpha=0.12,
                        linewidth=0,
                    )
        ax.axhline(CHANCE, color="0.4", linestyle=":", linewidth=1)
        if k is not None:
            ax.axvline(k + 0.5, color="black", linestyle=":", linewidth=0.8)
            ax.set_title("\n".join([f"cut every k = {k} steps", *counts]), fontsize=8)
        ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
        ax.set_ylim(0.0, 1.02)
        if len(cuts):
            ax.set_xlim(cuts["distance"].min() - 0.5, cuts["distance"].max() + 0.5)
    axes[0][0].set_ylabel("agreement accuracy")
    axes[0][len(lengths) // 2].set_xlabel("head-verb distance (words)")  # once, under the middle panel
    handles = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if not handles:
        message = "no run was split by a cut" if not len(cuts) else "no seed learned at any setting"
        axes[0][0].text(0.5, 0.75, message, transform=axes[0][0].transAxes, ha="center", color=FAILED_COLOR)
    else:
        fig.legend(handles.values(), handles.keys(), fontsize=7, loc="outside lower center", ncol=2, frameon=False)
    _title_figure(
        fig, study, "accuracy within a gradient block and across a cut (left of the dotted line: distance <= k)"
    )
    return fig


def update_cosine(updates: pd.DataFrame, study: Mapping) -> plt.Figure:
    """Each measured clipped step's cosine between the update taken and the unclipped gradient's, against the
    optimiser step (left) and, for norm clipping, against ||g|| / threshold, how many times clipping shortened the
    gradient (right, log x); one colour per setting, hollow markers for a run that did not learn or diverged. The
    dotted line is the gradient's own cosine under norm clipping: 1, by construction."""
    apply_theme()
    fig, axes = plt.subplots(1, 2, figsize=(6.3, HEIGHT), layout="constrained", sharey=True)
    groups = updates.groupby(["clip_mode", "clip"], sort=False, dropna=False)
    palette, markers = level_colours(list(groups.groups)), level_markers(list(groups.groups))
    for (mode, clip), rows in groups:
        color, ok, y = palette[(mode, clip)], rows["outcome"].eq("learned").to_numpy(), rows["update_cosine"]
        marker = markers[(mode, clip)]
        label = f"norm ≤ {clip:g}" if mode == "norm" else f"{mode} {clip:g}"
        for ax, x in ((axes[0], rows["step"]), (axes[1], rows["grad_norm"] / clip if mode == "norm" else None)):
            if x is not None:
                ax.scatter(x[ok], y[ok], s=10, marker=marker, color=color, label=label)
                ax.scatter(x[~ok], y[~ok], s=10, marker=marker, facecolors="none", edgecolors=color, linewidths=0.8)
    for ax in axes:
        ax.axhline(1.0, color=FAILED_COLOR, linestyle=":", linewidth=1.0)
    if updates.empty:
        axes[0].text(0.5, 0.5, "no clipped step measured", transform=axes[0].transAxes, ha="center", fontsize=8)
    axes[0].set(xlabel="optimiser step", ylabel="cosine to the unclipped update")
    axes[1].set(xlabel="||g|| / threshold (log scale)", xscale="log")
    axes[1].xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    axes[1].xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axes[1].xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    handles, _ = axes[0].get_legend_handles_labels()
    handles.append(
        plt.Line2D([], [], color=FAILED_COLOR, linestyle=":", label="gradient's cosine\n(1 by construction)")
    )
    if not updates["outcome"].eq("learned").all():
        hollow = {"marker": "o", "markerfacecolor": "none", "linestyle": "", "color": FAILED_COLOR}
        handles.append(plt.Line2D([], [], label="did not learn\nor diverged", **hollow))
    axes[1].legend(handles=handles, fontsize=7, loc="best")  # inside, where no point is: the title spans the top
    _title_figure(fig, study, "how far clipping turned the optimiser's update, on the clipped steps measured")
    return fig


def _title_figure(fig: plt.Figure, study: Mapping, what: str) -> None:
    fig.suptitle("\n".join(textwrap.wrap(_heading(what), 70)), fontsize=9)
