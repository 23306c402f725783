"""One function per figure: a tidy table in, a matplotlib figure out. No training, no torch.

study_figure      a study's metric against its varied settings, spread over the seeds that learned, failed runs marked
jacobian_figure   ||dh_tau/dh_0|| and ||U^tau|| against tau (results/tables/jacobian_product.csv)
decay_figure      factor ** distance (results/tables/decay.csv)
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # figures are files; no screen is needed or assumed

import matplotlib.pyplot as plt
import matplotlib.ticker
import matplotlib.transforms as mtransforms
import numpy as np
import pandas as pd
import seaborn as sns

from rnnbench.metrics import METRIC_LABELS
from rnnbench.results.outcome import UNKNOWN, require_outcome

# A metric whose measured values span this ratio or more is drawn on a log axis.
LOG_SPAN = 30.0
# A y range narrower than this fraction of the largest value is widened to it, centred on the data, so a
# 0.5-point difference between 0.501 and 0.508 does not fill the plot's whole height.
MIN_RELATIVE_SPAN = 0.1
DIVERGED_COLOR = "#c0392b"
# A run that finished but did not learn: drawn hollow at its value, in grey, never in a mean or a band.
FAILED_COLOR = "0.35"
# How the figure names a finished run that did not learn, and one that could not be judged (no baseline).
FAILED_LABELS = {"did not learn": "did not learn", UNKNOWN: "not judged (no baseline)"}
WIDTH, HEIGHT = 5.0, 3.4  # inches: fits a page's text width at 9 pt


def apply_theme() -> None:
    """The one look of every figure (the studies', the worked tables', the ablations'): set before drawing."""
    sns.set_theme(style="whitegrid", context="paper")


def study_runs(summary: pd.DataFrame, study: Mapping) -> pd.DataFrame:
    """One row per run: its varied settings, seed, the study's metric (``value``), its ``outcome``
    (rnnbench.results.outcome, from the summary) and ``diverged`` (bool).

    A run counts as diverged when its ``diverged`` metric is true; its value is kept (it may be missing,
    or a finite number far off the scale of the others) but never drawn as an ordinary point, and nor is
    the value of a run that did not learn.
    """
    require_outcome(summary)
    metric = study["metric"]
    keys = [c for c in dict.fromkeys([*study.get("vary", []), "seed"]) if c in summary.columns]
    runs = summary.drop_duplicates("run_id")[["run_id", *keys, "outcome"]].set_index("run_id")
    by_metric = summary.pivot_table(index="run_id", columns="metric", values="value", aggfunc="first", dropna=False)
    values = by_metric[metric] if metric in by_metric else pd.Series(np.nan, index=by_metric.index)
    diverged = (
        by_metric["diverged"].fillna(0) > 0 if "diverged" in by_metric else pd.Series(False, index=by_metric.index)
    )
    diverged = diverged.reindex(runs.index).fillna(False).astype(bool) | (runs["outcome"] == "diverged")
    runs = runs.assign(value=values.reindex(runs.index), diverged=diverged)
    return runs.reset_index()


def _is_numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _y_limits(values: np.ndarray, log: bool, metric: str) -> tuple[float, float]:
    lo, hi = float(values.min()), float(values.max())
    if log:
        return lo / 1.6, hi * 1.6
    span = max(hi - lo, MIN_RELATIVE_SPAN * max(abs(lo), abs(hi)), 1e-12)
    centre = (lo + hi) / 2
    lo, hi = centre - 0.6 * span, centre + 0.6 * span
    if metric.endswith("accuracy") or metric == "clipped_fraction":  # fractions: stay within [0, 1]
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    return lo, hi


def study_figure(summary: pd.DataFrame, study: Mapping, *, source: str) -> plt.Figure:
    """A study's metric against its first varied setting (x), the second as colour; every seed a point.

    ``study`` is the study's study.json (name, description, metric, vary, ...); ``source`` names the table
    and rule that produced the figure, printed small under the axes.

    A numeric setting is a line through the mean over the seeds that learned, with their range as a band; a
    categorical one (clip mode, optimiser, activation) is a point per category with the range as an error bar
    and no line joining the categories. A metric spanning orders of magnitude gets a log axis. A run that
    finished but did not learn (rnnbench.results.outcome) is a hollow grey circle at its value, in no mean or band;
    diverged runs are red crosses on the top edge at their setting. Both are in the legend and counted under
    the title.
    """
    metric = study["metric"]
    vary = list(study.get("vary", []))
    x = vary[0] if vary else "seed"
    hue = vary[1] if len(vary) > 1 else None
    runs = study_runs(summary, study)
    ok = runs[(runs["outcome"] == "learned") & runs["value"].notna()]
    bad = runs[runs["diverged"]]
    failed = runs[~runs["diverged"] & (runs["outcome"] != "learned") & runs["value"].notna()]
    missing = runs[~runs["diverged"] & runs["value"].isna()]

    apply_theme()
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), layout="constrained")
    numeric = _is_numeric(runs[x])
    xs = sorted(runs[x].unique()) if numeric else list(pd.unique(runs[x]))
    position = {v: (float(v) if numeric else float(i)) for i, v in enumerate(xs)}
    hues = list(pd.unique(runs[hue])) if hue else [None]
    palette = dict(zip(hues, sns.color_palette("deep", len(hues)), strict=True))
    # Categorical points of different colours sit side by side, not on top of each other.
    dodge = {h: (0.0 if numeric or len(hues) == 1 else (i - (len(hues) - 1) / 2) * 0.18) for i, h in enumerate(hues)}

    def at(frame: pd.DataFrame) -> list[float]:
        return [
            position[v] + dodge[h] for v, h in zip(frame[x], frame[hue] if hue else [None] * len(frame), strict=True)
        ]

    for h in hues:
        group = ok if hue is None else ok[ok[hue] == h]
        if group.empty:
            continue
        colour, label = palette[h], (f"{hue} = {h}" if hue else None)
        stats = group.groupby(x, sort=False)["value"].agg(["mean", "min", "max"])
        stats = stats.loc[[v for v in xs if v in stats.index]]
        px = np.array([position[v] for v in stats.index]) + dodge[h]
        seeds_x = np.array([position[v] for v in group[x]]) + dodge[h]
        if numeric:
            ax.plot(px, stats["mean"], color=colour, marker="o", markersize=4, label=label)
            if (stats["max"] > stats["min"]).any():
                ax.fill_between(px, stats["min"], stats["max"], color=colour, alpha=0.2, linewidth=0)
            ax.scatter(seeds_x, group["value"], color=colour, s=8, alpha=0.6, zorder=3)
        else:
            spread = np.vstack([stats["mean"] - stats["min"], stats["max"] - stats["mean"]])
            ax.errorbar(
                px,
                stats["mean"],
                yerr=spread,
                fmt="o",
                color=colour,
                markersize=5,
                capsize=3,
                linestyle="none",
                label=label,
            )
            ax.scatter(seeds_x, group["value"], color=colour, s=10, alpha=0.5, zorder=3)

    # A run that did not learn is shown where it ended, so nothing is hidden, but hollow: not a result.
    for state, rows in failed.groupby("outcome", sort=False):
        ax.scatter(
            at(rows),
            rows["value"],
            marker="o" if state == "did not learn" else "s",
            s=28,
            facecolors="none",
            edgecolors=FAILED_COLOR,
            linewidths=1.0,
            zorder=4,
            label=FAILED_LABELS.get(state, str(state)),
        )

    values = np.concatenate([ok["value"].to_numpy(dtype=float), failed["value"].to_numpy(dtype=float)])
    values = values[np.isfinite(values)]
    log = len(values) > 0 and values.min() > 0 and values.max() / values.min() >= LOG_SPAN
    if log:
        ax.set_yscale("log")
    if len(values):
        ax.set_ylim(*_y_limits(values, log, metric))
    else:
        ax.set_yticks([])
        what = "diverged" if len(bad) else "produced no value"
        ax.text(
            0.5,
            0.5,
            f"every run {what}: no {METRIC_LABELS.get(metric, metric)} to plot",
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=9,
            color=DIVERGED_COLOR if len(bad) else "0.3",
        )

    if len(bad):
        # Crosses on the top edge of the axes (x in data, y in axes coordinates): always in view.
        edge = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
        bx = at(bad)
        ax.scatter(
            bx,
            [0.96] * len(bx),
            transform=edge,
            marker="x",
            s=40,
            color=DIVERGED_COLOR,
            clip_on=False,
            zorder=4,
            label="diverged",
        )

    if numeric:
        positive = xs[0] > 0 if xs else False
        if len(xs) > 1 and positive and xs[-1] / xs[0] >= 16:
            ax.set_xscale("log", base=2)
        if len(xs) <= 12:
            ax.set_xticks([position[v] for v in xs], labels=[f"{v:g}" for v in xs])
            ax.minorticks_off()
    else:
        ax.set_xticks(range(len(xs)), labels=[str(v) for v in xs])
        ax.set_xlim(-0.5, len(xs) - 0.5)
        ax.grid(axis="x", visible=False)
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(METRIC_LABELS.get(metric, metric) + (" (log scale)" if log else ""))
    if hue or len(bad) or len(failed):
        ax.legend(fontsize=7, title_fontsize=7, loc="best", frameon=True)

    lines = textwrap.wrap(study.get("description") or study.get("name", ""), 60)  # fits 5 inches at 9 pt
    notes = []
    n = len(runs)
    if len(bad):
        notes.append(f"{len(bad)} of {n} run{'s' if n != 1 else ''} diverged (× on the top edge)")
    did_not_learn = int((runs["outcome"] == "did not learn").sum())
    if did_not_learn:
        notes.append(f"{did_not_learn} of {n} did not learn (hollow ○, in no mean)")
    unjudged = int((~runs["diverged"] & (runs["outcome"] == UNKNOWN)).sum())
    if unjudged:
        notes.append(f"{unjudged} not judged (no baseline; hollow □, in no mean)")
    if len(missing):
        notes.append(f"{len(missing)} produced no value")
    ax.set_title("\n".join(lines + textwrap.wrap("; ".join(notes), 72)), fontsize=9)
    add_source_note(fig, source)
    return fig


def jacobian_figure(jacobian: pd.DataFrame, *, source: str = "") -> plt.Figure:
    """||dh_tau/dh_0|| against tau, one line per spectral radius of U, with ||U^tau|| dashed (log scale)."""
    apply_theme()
    data = jacobian.assign(radius=jacobian["spectral_radius"].round(2).map(lambda r: f"{r:g}"))
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), layout="constrained")
    radii = list(pd.unique(data["radius"]))
    palette = dict(zip(radii, sns.color_palette("viridis", len(radii)), strict=True))
    for radius, group in data.groupby("radius", sort=False):
        ax.plot(group["distance"], group["jacobian_norm"], color=palette[radius], label=f"ρ(U) = {radius}")
        ax.plot(group["distance"], group["u_power_norm"], color=palette[radius], linestyle="--", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("distance τ (steps)")
    ax.set_ylabel("spectral norm (log scale)")
    # Beside the axes: the lines fan out over the whole plot, and a legend inside would cover some.
    ax.legend(
        title="solid: ‖∂h_τ/∂h_0‖\ndashed: ‖U^τ‖",
        fontsize=7,
        title_fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    add_source_note(fig, source)
    return fig


def decay_figure(decay: pd.DataFrame, *, source: str = "") -> plt.Figure:
    """factor ** distance on a log scale, one line per factor."""
    apply_theme()
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), layout="constrained")
    factors = sorted(decay["factor"].unique())
    palette = dict(zip(factors, sns.color_palette("viridis", len(factors)), strict=True))
    for factor in factors:
        rows = decay[decay["factor"] == factor].sort_values("distance")
        ax.plot(rows["distance"], rows["value"], color=palette[factor], label=f"{factor:g}")
    ax.set_yscale("log")
    ax.set_xlabel("distance (steps)")
    ax.set_ylabel("factor ** distance (log scale)")
    ax.legend(title="factor", fontsize=7, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    add_source_note(fig, source)
    return fig


# Figures the book shows beside a worked table: the table's name -> the function that draws it.
BOOK_FIGURES = {"jacobian_product": jacobian_figure, "decay": decay_figure}


SCALE_STYLES = {"reference": "-", "paper": "-", "short": "--"}


def learning_curves_figure(table: pd.DataFrame, *, source: str = "") -> plt.Figure:
    """Validation perplexity against training tokens seen (log axes), one line per run, a panel per corpus
    (rnnbench.results.learning_curves.learning_curves): colour the family, dashed a short run, a dot at each epoch's end."""
    sns.set_theme(style="whitegrid", context="paper")
    corpora = list(dict.fromkeys(table["corpus"])) or ["none"]
    fig, axes = plt.subplots(1, len(corpora), figsize=(3.6 * len(corpora), 3.4), layout="constrained", squeeze=False)
    colors = {"rnn": "black", "ff": "tab:red", "lstm": "tab:blue"}
    names = {"rnn": "Elman RNN", "ff": "feed-forward", "lstm": "LSTM"}
    for ax, corpus in zip(axes[0], corpora, strict=True):
        here = table[(table["corpus"] == corpus) & table["valid_ppl"].notna()]
        labelled: set[tuple[str, str]] = set()
        for (scale, family, _), run in here.groupby(["scale", "family", "run_id"], sort=False):
            key = (scale, family)
            label = f"{names.get(family, family)}, {scale}" if key not in labelled else None
            labelled.add(key)
            ax.plot(
                run["tokens_seen"].astype(float),
                run["valid_ppl"],
                SCALE_STYLES.get(scale, "-"),
                marker="o",
                markersize=2.5,
                linewidth=1.6 if scale == "reference" else 1.0,
                color=colors.get(family, "0.4"),
                alpha=1.0 if scale == "reference" else 0.6,
                label=label,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.ScalarFormatter())
        ax.tick_params(axis="y", which="both", labelsize=7)
        ax.set_xlabel("training tokens seen")
        ax.set_ylabel("validation perplexity")
        ax.set_title(corpus, fontsize=9)
        if labelled:
            ax.legend(fontsize=7)
    add_source_note(fig, source)
    return fig


def add_source_note(fig: plt.Figure, source: str) -> None:
    """The file a figure was drawn from, in small type at its foot, so a figure seen alone still names it."""
    if source:
        fig.text(0.01, 0.005, source, fontsize=6, color="0.4", ha="left", va="bottom")
        fig.get_layout_engine().set(h_pad=0.12)


def save(fig: plt.Figure, path: str) -> None:
    """Write a figure (format from the file name: PNG for HTML, PDF for print) and free it."""
    from rnnbench.io import atomic_path

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.rsplit(".", 1)[-1], dpi=200, metadata=_fixed_metadata(path))
    plt.close(fig)


def _fixed_metadata(path: str) -> dict | None:
    """No creation date in a PDF: the same table draws the same bytes."""
    return {"CreationDate": None} if path.endswith(".pdf") else None


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


def crossover_figure(table: pd.DataFrame, *, title: str = "", source: str = "") -> plt.Figure:
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
    fig, ax = plt.subplots(figsize=(7.0, 3.8), layout="constrained")
    for family, color, name in (("rnn", "black", "Elman RNN"), ("ff", "tab:red", "feed-forward")):
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
    palette = sns.color_palette("viridis", max(ff["hidden"].nunique(), 1))
    for color, (hidden, group) in zip(palette, ff.groupby("hidden"), strict=True):
        group = group.sort_values("context")
        ax.plot(group["parameters"], group["test_ppl"], "-", color=color, label=f"feed-forward, H={hidden} (over n-1)")
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
        # Neighbouring windows differ by one word's weights and often by little perplexity: labels alternate
        # above and below their points so that two close ones do not print over each other.
        for i, row in enumerate(group.itertuples()):
            ax.annotate(
                f"n-1={row.context:g}",
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
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside, over no point
    if source:
        fig.text(0.01, 0.005, source, fontsize=6, color="0.4", ha="left", va="bottom")
        fig.get_layout_engine().set(h_pad=0.12)
    return fig


def _seed_ranges(ax: plt.Axes, models: pd.DataFrame, color: Any) -> None:
    """A vertical bar over the range of each model's seeds (setting_means rows), where it has more than one."""
    seeded = models[models["seeds"] > 1]
    if len(seeded):
        spread = [seeded["test_ppl"] - seeded["test_min"], seeded["test_max"] - seeded["test_ppl"]]
        ax.errorbar(seeded["parameters"], seeded["test_ppl"], yerr=spread, fmt="none", ecolor=color, capsize=2, lw=0.8)


# The rows of a decay figure: what is measured, how (a curves table's direction and method), and its axis label.
BACKWARD = ("backward", "one_pass")
FORWARD = ("forward", "jvp")


def decay_curves_figure(
    curves: pd.DataFrame,
    *,
    hue: str,
    panel: str | None = None,
    rows: Sequence[tuple[str, str]] = (BACKWARD, FORWARD),
    quantity: str = "h",
    max_distance: int | None = None,
    title: str = "",
    source: str = "",
) -> plt.Figure:
    """Decay curves (a decay analysis's curves table): norm against distance on a log y axis.

    One row per (direction, method) of ``rows`` that the table has: by default the backward gradient ||dL/dh||
    on top and, below it on the same distances, the forward move of h per unit move of x_1 (exact JVP), so that
    blame and information can be read against each other. One panel per value of ``panel`` (a sweep, e.g. the
    activation), one line per value of ``hue`` (e.g. the spectral radius): the median over sequences, with the
    10-90% quantile band shaded. Rows with several points per (panel, hue, distance), e.g. seeds, are drawn as one
    line each. Zero norms (underflow) cannot sit on a log axis; the line stops there rather than plunging.
    """
    data = curves[curves["quantity"] == quantity]
    if max_distance is not None:
        data = data[data["distance"] <= max_distance]
    drawn = [(d, m) for d, m in rows if ((data["direction"] == d) & (data["method"] == m)).any()]
    if not drawn:
        raise ValueError(f"no curve of {quantity} measured as any of {list(rows)}")
    panels = sorted(data[panel].unique()) if panel else [None]
    sns.set_theme(style="whitegrid", context="paper")
    fig, axes = plt.subplots(
        len(drawn),
        len(panels),
        figsize=(2.2 + 2.6 * len(panels), 0.4 + 2.8 * len(drawn)),
        sharex=True,
        sharey="row",
        squeeze=False,
        layout="constrained",
    )
    hues = sorted(data[hue].unique())
    colours = dict(zip(hues, sns.color_palette("viridis", len(hues)), strict=True))
    lead = [c for c in ("run_id", "seed", "epoch") if c in data.columns and c not in (hue, panel)]
    for i, (row, (direction, method)) in enumerate(zip(axes, drawn, strict=True)):
        measured = data[(data["direction"] == direction) & (data["method"] == method)]
        for ax, value in zip(row, panels, strict=True):
            part = measured if panel is None else measured[measured[panel] == value]
            for key, line in part.groupby([hue, *lead], sort=True):
                level = key[0] if isinstance(key, tuple) else key
                line = line.sort_values("distance")
                positive = line[line["median"] > 0]
                ax.plot(positive["distance"], positive["median"], color=colours[level], lw=1.2)
                band = line[(line["q10"] > 0) & (line["q90"] > 0)]
                ax.fill_between(band["distance"], band["q10"], band["q90"], color=colours[level], alpha=0.15, lw=0)
            ax.set_yscale("log")
            if panel is not None and i == 0:
                ax.set_title(f"{panel} = {value}", fontsize=9)
        row[0].set_ylabel(
            f"backward: ||dL/d{quantity}||"
            if direction == "backward"
            else f"forward: move of {quantity}\nper unit move of x_1"
        )
    for ax in axes[-1]:
        ax.set_xlabel("distance (steps)")
    handles = [plt.Line2D([], [], color=colours[h], lw=1.5) for h in hues]
    labels = [f"{h:g}" if isinstance(h, float) else str(h) for h in hues]
    fig.legend(handles, labels, title=hue, fontsize=7, loc="outside right upper")  # beside the panels, over no line
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, 70)), fontsize=9)
    if source:
        fig.text(0.01, 0.005, source, fontsize=6, color="0.4", ha="left", va="bottom")
        fig.get_layout_engine().set(h_pad=0.12)
    return fig
