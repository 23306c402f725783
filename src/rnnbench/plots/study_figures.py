"""A study's figure: its metric against its varied settings, spread over the seeds that learned, failed runs marked
(a study's summary.csv and study.json in, a figure out).

study_runs     one row per run: its varied settings, seed, the study's metric, outcome and divergence
study_figure   the metric against the first varied setting, the second as colour; every seed a point

A setting switched off (an infinite clip threshold: never clip) is no number on the axis: it has a position of its
own, right of the numeric ones past a dotted line, labelled "no clipping", so that the thresholds keep their scale.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import matplotlib.pyplot as plt
import matplotlib.transforms as mtransforms
import numpy as np
import pandas as pd
import seaborn as sns

from rnnbench.metrics import METRIC_LABELS
from rnnbench.numbers import counted
from rnnbench.plots.drawn import ALONE
from rnnbench.plots.style import (
    DIVERGED_COLOR,
    FAILED_COLOR,
    FAILED_LABELS,
    HEIGHT,
    WIDTH,
    apply_theme,
    never_limits,
    setting_value,
)
from rnnbench.results.outcome import UNKNOWN, require_outcome

# A metric whose measured values span this ratio or more is drawn on a log axis.
LOG_SPAN = 30.0
# A y range narrower than this fraction of the largest value is widened to it, centred on the data, so a
# 0.5-point difference between 0.501 and 0.508 does not fill the plot's whole height.
MIN_RELATIVE_SPAN = 0.1
# Positive settings spanning this ratio or more are drawn on a log2 axis (sizes, windows, thresholds that double).
LOG_X_SPAN = 8.0


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


def _positions(xs: list, x: str) -> tuple[dict, bool, float | None]:
    """Where each numeric setting sits on the x axis, whether the axis is log2, and where the dotted line
    between the numbers and a switched-off setting (``never_limits``) goes (None without one). The switched-off
    setting sits right of the largest number by two doublings on a log axis, by one and a half mean gaps on a
    linear one."""
    finite = [v for v in xs if not never_limits(x, v)]
    log = len(finite) > 1 and finite[0] > 0 and finite[-1] / finite[0] >= LOG_X_SPAN
    position = {v: float(v) for v in finite}
    never = [v for v in xs if never_limits(x, v)]
    if not never:
        return position, log, None
    if not finite:
        return {v: 0.0 for v in never}, False, None
    top = float(finite[-1])
    if log:
        at, line = top * 4, top * 2
    else:
        gap = (top - float(finite[0])) / (len(finite) - 1) if len(finite) > 1 else max(abs(top), 1.0)
        at, line = top + 1.5 * gap, top + 0.75 * gap
    return position | {v: at for v in never}, log, line


def one_value_per_network(runs: pd.DataFrame, x: str, hue: str | None, *, numeric: bool) -> bool:
    """Whether the study figure of ``runs`` (study_runs) would draw each network as a point of its own: no setting
    with two drawn runs (one seed, or the others diverged) and no line through two settings' means (a numeric
    setting learned at two values or more, in one colour). A figure of such points is one value per network
    with nothing beside it: the runs' table says as much."""
    drawn = runs[~runs["diverged"] & runs["value"].notna()]
    keys = [x, hue] if hue else [x]
    if drawn.empty or drawn.groupby(keys, dropna=False).size().max() > 1:
        return False
    learned = drawn[drawn["outcome"] == "learned"]
    on_line = learned[[not never_limits(x, v) for v in learned[x]]] if numeric else learned.iloc[0:0]
    return not len(on_line) or on_line.groupby(hue if hue else (lambda _: 0))[x].nunique().max() < 2


def study_figure(summary: pd.DataFrame, study: Mapping) -> plt.Figure:
    """A study's metric against its first varied setting (x), the second as colour; every seed a point.

    ``study`` is the study's study.json (name, description, metric, vary, ...).

    A numeric setting is a line through the mean over the seeds that learned, with their range as a band; a
    categorical one (clip mode, optimiser, activation) is a point per category with the range as an error bar
    and no line joining the categories, and so is a switched-off setting (no clipping) beside numeric ones. A metric spanning orders of magnitude gets a log axis. A run that
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
    if one_value_per_network(runs, x, hue, numeric=_is_numeric(runs[x])):
        ax.set_gid(ALONE)  # each run a point of its own: rnnbench.plots.drawn refuses the figure, the book a table
    numeric = _is_numeric(runs[x])
    xs = sorted(runs[x].unique()) if numeric else list(pd.unique(runs[x]))
    position, log_x, separator = (
        _positions(xs, x) if numeric else ({v: float(i) for i, v in enumerate(xs)}, False, None)
    )
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
        colour, label = palette[h], (f"{hue} = {setting_value(hue, h) if never_limits(hue, h) else h}" if hue else None)
        stats = group.groupby(x, sort=False)["value"].agg(["mean", "min", "max"])
        stats = stats.loc[[v for v in xs if v in stats.index]]
        seeds_x = np.array([position[v] for v in group[x]]) + dodge[h]
        on_line = [numeric and not never_limits(x, v) for v in stats.index]
        line, points = stats[on_line], stats[[not o for o in on_line]]
        if len(line):
            px = np.array([position[v] for v in line.index]) + dodge[h]
            ax.plot(px, line["mean"], color=colour, marker="o", markersize=4, label=label)
            if (line["max"] > line["min"]).any():
                ax.fill_between(px, line["min"], line["max"], color=colour, alpha=0.2, linewidth=0)
        if len(points):
            spread = np.vstack([points["mean"] - points["min"], points["max"] - points["mean"]])
            ax.errorbar(
                np.array([position[v] for v in points.index]) + dodge[h],
                points["mean"],
                yerr=spread,
                fmt="o",
                color=colour,
                markersize=5,
                capsize=3,
                linestyle="none",
                label=None if len(line) else label,
            )
        ax.scatter(seeds_x, group["value"], color=colour, s=8 if numeric else 10, alpha=0.6, zorder=3)

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
        if log_x:
            ax.set_xscale("log", base=2)
        if separator is not None:  # the numbers' scale ends here; right of it, the setting switched off
            ax.axvline(separator, color="0.6", linestyle=":", linewidth=1.0)
            ax.margins(x=0.1)  # room for the label "no clipping" at the axis's end
        if len(xs) <= 12 or separator is not None:
            ax.set_xticks([position[v] for v in xs], labels=[setting_value(x, v) for v in xs])
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
        notes.append(f"{len(bad)} of {counted(n, 'run')} diverged (× on the top edge)")
    did_not_learn = int((runs["outcome"] == "did not learn").sum())
    if did_not_learn:
        notes.append(f"{did_not_learn} of {n} did not learn (hollow ○, in no mean)")
    unjudged = int((~runs["diverged"] & (runs["outcome"] == UNKNOWN)).sum())
    if unjudged:
        notes.append(f"{unjudged} not judged (no baseline; hollow □, in no mean)")
    if len(missing):
        notes.append(f"{len(missing)} produced no value")
    ax.set_title("\n".join(lines + textwrap.wrap("; ".join(notes), 72)), fontsize=9)
    return fig
