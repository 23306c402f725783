"""Does clipping stop divergence, and at what cost? One figure answers it for the clipping studies whose norm
thresholds are multiples of a measured median norm (``clip_times_median``): a panel per learning rate, and in each a
position per multiple and one for no clipping, its own labelled position rather than an infinite threshold.

    relative_runs     one row per run of those studies, from their summaries and records (study.json)
    clipping_figure   the figure: above, the seeds that diverged (a red cross each); below, the metric of those
                      that did not, coloured by the setting's regime; under each position its share of steps clipped

A setting's regime is set before training by its multiple of the median (rnnbench.metrics.threshold_regime: rare
spikes above 1, ordinary steps at or below), as the findings and the book's clipping tables read it; its share of
steps clipped over every one of its runs (a diverged run's over the steps it took) is printed under it as the check.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from rnnbench.metrics import (
    CLIP_ORDINARY,
    CLIP_SPIKES,
    METRIC_LABELS,
    threshold_regime,
)
from rnnbench.plots.drawn import ANNOTATION
from rnnbench.plots.style import DIVERGED_COLOR, FAILED_COLOR, apply_theme
from rnnbench.results.ablations import per_run

SETTINGS = ("clip_mode", "clip_times_median", "lr", "optimizer")
MEASURED = ("clipped_fraction", "clip_threshold", "clip_reference_median")
RELATIVE = "clip_times_median"
UNCLIPPED = "unclipped"  # a setting's regime where it never clips by design: clip_mode none, or an infinite multiple
REGIME_COLORS = {
    CLIP_SPIKES: "#1b7837",
    CLIP_ORDINARY: "#762a83",
    UNCLIPPED: "black",
}
OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam"}


def relative_runs(studies: Iterable[tuple[pd.DataFrame, Mapping]]) -> pd.DataFrame:
    """Every run of the studies (each a summary.csv and its study.json) that set a norm threshold as a multiple of a
    measured median norm, one row each; a study that sets none is left out:

        corpus, optimizer, lr, times (the multiple; inf for no clipping), unclipped, seed, outcome, metric, value,
        clipped_fraction, clip_threshold, clip_reference_median

    A setting neither varied nor fixed by its study is NaN (the run block's default, which the record does not hold).
    """
    columns = ["corpus", "optimizer", "lr", "times", "unclipped", "seed", "outcome", "metric", "value", *MEASURED]
    frames = []
    for summary, record in studies:
        fixed = record.get("fixed", {})
        if RELATIVE not in [*record.get("vary", []), *fixed]:
            continue
        wide = per_run(summary, [*[k for k in SETTINGS if k in summary.columns], "seed", "outcome"])
        for key in (*SETTINGS, *MEASURED, record["metric"]):
            if key not in wide.columns:
                wide[key] = fixed.get(key, math.nan)
        times = pd.to_numeric(wide[RELATIVE].replace({"inf": math.inf}), errors="coerce").astype(float)
        wide = wide.assign(
            corpus=record["corpus"],
            metric=record["metric"],
            value=wide[record["metric"]],
            times=times,
            lr=pd.to_numeric(wide["lr"], errors="coerce").astype(float),
            unclipped=wide["clip_mode"].eq("none") | times.eq(math.inf),
        )
        frames.append(wide[columns])
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True).drop_duplicates(["corpus", "optimizer", "lr", "times", "seed"])


def settings(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per setting of relative_runs: corpus, optimizer, lr, times, unclipped, runs, diverged, share (of steps
    clipped, over every run), regime (UNCLIPPED for no clipping)."""
    keys = ["corpus", "optimizer", "lr", "times", "unclipped"]
    rows = []
    for values, group in runs.groupby(keys, sort=True, dropna=False):
        share = float(group["clipped_fraction"].mean())
        unclipped = bool(values[-1])
        threshold = float(group["clip_threshold"].astype(float).mean())
        regime = UNCLIPPED if unclipped else threshold_regime(threshold, float(values[keys.index("times")]))[0]
        diverged = int(group["outcome"].eq("diverged").sum())
        rows.append({**dict(zip(keys, values, strict=True)), "runs": len(group), "diverged": diverged, "share": share})
        rows[-1]["regime"] = regime
    return pd.DataFrame(rows, columns=[*keys, "runs", "diverged", "share", "regime"])


def _share_words(share: float, unclipped: bool) -> str:
    """A position's share of steps clipped, as its tick reads it."""
    if unclipped:
        return "–"
    if math.isnan(share):
        return "–"
    percent = 100 * share
    return f"{percent:.0f}%" if percent >= 10 else f"{percent:.2g}%"


def _panel_title(corpus: str, optimizer, lr: float, corpora: int) -> str:
    name = OPTIMIZER_NAMES.get(optimizer, optimizer) if isinstance(optimizer, str) else ""
    rate = f"rate {lr:g}" if not math.isnan(lr) else "the run block's rate"
    return ", ".join(part for part in ((corpus if corpora > 1 else ""), name, rate) if part)


def clipping_figure(runs: pd.DataFrame) -> plt.Figure:
    """A panel per (corpus, optimiser, rate) of ``runs`` (relative_runs): one position per multiple of the median
    norm, tightest first, then no clipping after a gap. Above, a strip with a red cross for each seed that diverged;
    below, the metric of each seed that did not (filled in its setting's regime colour if it learned, hollow grey if
    it did not), with the unclipped seeds' mean dashed across the panel where they learned; under each position, the
    share of steps the setting clipped."""
    apply_theme()
    found = settings(runs)
    panels = list(found[["corpus", "optimizer", "lr"]].drop_duplicates().itertuples(index=False, name=None)) or [
        ("", "", math.nan)
    ]
    metric = str(runs["metric"].iloc[0]) if len(runs) else ""
    fig, axes = plt.subplots(
        2,
        len(panels),
        figsize=(max(3.2, 2.0 * len(panels) + 0.5), 3.9),
        layout="constrained",
        sharey="row",
        squeeze=False,
        gridspec_kw={"height_ratios": [1, 5]},
    )
    corpora = found["corpus"].nunique()
    cap = value_cap(runs)
    rng = np.random.default_rng(0)  # the seeds' horizontal spread: the same table draws the same figure
    for column, (corpus, optimizer, lr) in enumerate(panels):
        strip, ax = axes[0][column], axes[1][column]
        strip.set_gid(ANNOTATION)  # the diverged seeds of the panel below: part of it, not a panel
        here = found[_at(found, corpus, optimizer, lr)].sort_values(["unclipped", "times"])
        positions = [i + (1 if u else 0) for i, u in enumerate(here["unclipped"])]  # a gap before no clipping
        panel = runs[_at(runs, corpus, optimizer, lr)]
        for x, setting in zip(positions, here.itertuples(index=False), strict=True):
            _draw_setting(strip, ax, x, setting, panel[_same(panel["times"], setting.times)], rng, cap)
        unclipped = panel[panel["unclipped"]]
        learned = unclipped[unclipped["outcome"] == "learned"]["value"].dropna()
        if len(learned):
            ax.axhline(float(learned.mean()), color="black", linestyle="--", linewidth=0.8, zorder=1)
        labels = [
            ("none" if s.unclipped else f"{s.times:g}×") + "\n" + _share_words(s.share, s.unclipped)
            for s in here.itertuples(index=False)
        ]
        for axis in (strip, ax):
            axis.set_xlim(-0.6, max(positions, default=0) + 0.6)
            if here["unclipped"].any() and not here["unclipped"].all():
                axis.axvline(max(positions) - 1, color="0.75", linewidth=0.8, linestyle=":")
        ax.set_xticks(positions, labels, fontsize=8)
        for tick, regime in zip(ax.get_xticklabels(), here["regime"], strict=True):
            tick.set_color(REGIME_COLORS.get(regime, "0.4"))
        strip.set_xticks(positions, [""] * len(positions))
        strip.set_ylim(0, 1)
        strip.set_yticks([])
        strip.set_title(_panel_title(corpus, optimizer, lr, corpora), fontsize=10)
        ax.tick_params(axis="y", labelsize=8)
    if cap is not None:  # after every panel is drawn: the row shares one axis, set once from all its values
        shown = runs[(runs["outcome"] != "diverged") & (runs["value"] <= cap)]["value"]
        axes[1][0].set_ylim(0.9 * float(shown.min()), cap)
    axes[0][0].set_ylabel("diverged", fontsize=8, rotation=0, ha="right", va="center")
    axes[1][0].set_ylabel(METRIC_LABELS.get(metric, metric), fontsize=9)  # of the seeds that did not diverge
    middle = axes[1][len(panels) // 2]  # one label under every panel's ticks: a figure-wide label would meet the legend
    middle.set_xlabel("threshold as a multiple of the median norm, and the share of steps it clipped", fontsize=9)
    _legend(fig, found, runs, cap)
    return fig


def _same(values: pd.Series, value) -> pd.Series:
    """Equal to ``value``, NaN equal to NaN (a setting the record does not hold)."""
    return values.isna() if pd.isna(value) else values.eq(value)


def _at(frame: pd.DataFrame, corpus: str, optimizer, lr: float) -> pd.Series:
    """The rows of one panel."""
    return frame["corpus"].eq(corpus) & _same(frame["optimizer"], optimizer) & _same(frame["lr"], lr)


def value_cap(runs: pd.DataFrame) -> float | None:
    """The top of the value axis where a perplexity that did not diverge lies far above every learned one (a run
    that blew up without tripping the divergence test): twice the largest learned value, so that the learned seeds
    are not pressed to the floor; None where no value lies above it, or the metric is not a perplexity."""
    metric = str(runs["metric"].iloc[0]) if len(runs) else ""
    learned = runs[runs["outcome"] == "learned"]["value"].dropna()
    finished = runs[runs["outcome"] != "diverged"]["value"].dropna()
    if "ppl" not in metric or not len(learned):
        return None
    cap = 2 * float(learned.max())
    return cap if (finished > cap).any() else None


def _draw_setting(
    strip, ax, x: float, setting, seeds: pd.DataFrame, rng: np.random.Generator, cap: float | None = None
) -> None:
    """One position: its diverged seeds as red crosses in the strip (with their count), the others at their value;
    the values above ``cap`` as hollow triangles side by side on the axis's top edge, their values written below
    them one to a line (written beside each, two seeds' labels overprint one another)."""
    diverged = seeds[seeds["outcome"] == "diverged"]
    spread = np.linspace(-0.18, 0.18, len(diverged)) if len(diverged) > 1 else np.zeros(len(diverged))
    strip.scatter(x + spread, np.full(len(diverged), 0.35), marker="x", color=DIVERGED_COLOR, s=22, linewidths=1.2)
    strip.text(
        x,
        0.75,
        f"{setting.diverged}/{setting.runs}",
        ha="center",
        va="center",
        fontsize=7.5,
        color=DIVERGED_COLOR if setting.diverged else "0.45",
    )
    finished = seeds[seeds["outcome"] != "diverged"].dropna(subset=["value"])
    jitter = rng.uniform(-0.12, 0.12, len(finished))
    color = REGIME_COLORS.get(setting.regime, "0.4")
    learned = finished["outcome"].eq("learned").to_numpy()
    above = (finished["value"] > cap).to_numpy() if cap is not None else np.zeros(len(finished), dtype=bool)
    if above.any():
        off_scale = sorted(finished["value"][above])
        side = np.linspace(-0.12, 0.12, len(off_scale)) if len(off_scale) > 1 else np.zeros(1)
        ax.scatter(x + side, np.full(len(side), 0.97 * cap), marker="^", facecolors="none", edgecolors=FAILED_COLOR,
                   s=22, zorder=3)  # fmt: skip
        ax.text(x, 0.93 * cap, "\n".join(f"{v:,.0f}" for v in off_scale), ha="center", va="top", fontsize=6.5,
                color=FAILED_COLOR, linespacing=1.1)  # fmt: skip
    learned, finished, jitter = learned[~above], finished[~above], jitter[~above]
    ax.scatter(x + jitter[learned], finished["value"][learned], color=color, s=16, zorder=3)
    ax.scatter(
        x + jitter[~learned],
        finished["value"][~learned],
        facecolors="none",
        edgecolors=FAILED_COLOR,
        s=16,
        zorder=3,
    )


def _legend(fig: plt.Figure, found: pd.DataFrame, runs: pd.DataFrame, cap: float | None) -> None:
    """What is drawn: the regimes present, a seed that did not learn, one off the scale (where the axis is capped),
    a diverged seed, the unclipped mean's line."""
    from matplotlib.lines import Line2D

    words = {
        CLIP_SPIKES: "above the median: rare spikes",
        CLIP_ORDINARY: "at or below the median: ordinary steps",
        UNCLIPPED: "no clipping",
    }
    present = set(found["regime"])
    handles = [
        Line2D([], [], marker="o", linestyle="", color=REGIME_COLORS[regime], markersize=4, label=label)
        for regime, label in words.items()
        if regime in present
    ]
    outcomes = set(runs["outcome"])
    if outcomes - {"learned", "diverged"}:
        handles.append(
            Line2D([], [], marker="o", linestyle="", markerfacecolor="none", markeredgecolor=FAILED_COLOR,
                   markersize=4, label="did not learn")
        )  # fmt: skip
    if cap is not None:
        handles.append(
            Line2D([], [], marker="^", linestyle="", markerfacecolor="none", markeredgecolor=FAILED_COLOR,
                   markersize=4, label="off the scale (value below it)")
        )  # fmt: skip
    if "diverged" in outcomes:
        handles.append(Line2D([], [], marker="x", linestyle="", color=DIVERGED_COLOR, markersize=4, label="diverged"))
    handles.append(Line2D([], [], color="black", linestyle="--", linewidth=0.8, label="unclipped mean"))
    fig.legend(handles=handles, loc="outside upper center", ncol=min(len(handles), 3), fontsize=7.5, frameon=False)
