"""Which activation, at a glance: the activation studies side by side (rnnbench.results.activation's table in, a
figure out). A row per study, four panels each, with the activations along every panel's axis and each start of U
beside the other:

    steps to the study's common training loss | the metric it ended at | share of units silent | share of steps clipped

Every seed is a point. A run that diverged has no steps, metric or units: it is a red cross at the top of those
panels (and at its share of steps clipped, which it has); a run that did not learn is a hollow grey point at its
value, or at the top where it has none. The clipping panel stands beside the others because a threshold that acts
on every step of one activation's runs and on some of another's makes their comparison one of clipping too.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import matplotlib.transforms
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from rnnbench.metrics import METRIC_LABELS
from rnnbench.plots.style import DIVERGED_COLOR, FAILED_COLOR, PRINT_WIDTH, apply_theme
from rnnbench.results.activation import ACTIVATIONS, DEFAULT_START

# Each start of U its colour: the default draw, then the starts that keep U from stretching (Le et al. 2015).
START_COLORS = {DEFAULT_START: "tab:blue", "identity": "tab:orange", "orthogonal": "tab:green"}
OTHER_START_COLOR = "tab:purple"
TOP = 0.93  # where a run with no value is marked, as a fraction of the panel's height: above every value
CORPUS_NAMES = {"ptb": "PTB", "agreement": "agreement"}
LABEL_SIZE = 7.5  # points, as printed: four panels share the print width
# Each activation's short name along a panel's axis, where three full names would run together; the sigmoid is σ,
# as the field writes it.
ACTIVATION_TICKS = {"tanh": "tanh", "sigmoid": "σ", "relu": "ReLU"}


def panels(metric: str, target_ppl: float) -> list[tuple[str, str, float]]:
    """(column, y label, scale) of a study's four panels: a share is drawn as a percentage."""
    target = f"steps to training\nperplexity {target_ppl:.3g}" if not math.isnan(target_ppl) else "steps to target"
    return [
        ("steps_to_target", target, 1.0),
        ("value", METRIC_LABELS.get(metric, metric), 1.0),
        ("silent_fraction", "units silent (%)", 100.0),
        ("clipped_fraction", "steps clipped (%)", 100.0),
    ]


def offsets(starts: list[str], seeds: list) -> tuple[dict[str, float], dict]:
    """Where each start sits beside its activation, and each seed beside its start: fixed, so the same table
    draws the same figure."""
    width = 0.5 / max(len(starts), 1)
    at = {s: (i - (len(starts) - 1) / 2) * width for i, s in enumerate(starts)}
    seed_at = {s: (j - (len(seeds) - 1) / 2) * width * 0.35 for j, s in enumerate(seeds)}
    return at, seed_at


def activation_figure(table: pd.DataFrame) -> plt.Figure:
    """The figure of an activation table (rnnbench.results.activation.activation_table): see the module docstring."""
    apply_theme()
    studies = list(dict.fromkeys(table["study"])) or ["none"]
    # Drawn at the print width, so that its type prints at the sizes set here (LABEL_SIZE).
    fig, axes = plt.subplots(
        len(studies), 4, figsize=(PRINT_WIDTH, 2.2 * len(studies) + 0.45), layout="constrained", squeeze=False
    )
    starts = sorted(set(table["start"]), key=lambda s: (s != DEFAULT_START, s)) if len(table) else [DEFAULT_START]
    corpora = list(table.drop_duplicates("study")["corpus"]) if len(table) else []
    for row, study in zip(axes, studies, strict=True):
        here = table[table["study"] == study]
        activations = [a for a in ACTIVATIONS if a in set(here["activation"])]
        activations += sorted(set(here["activation"]) - set(ACTIVATIONS))
        x_of = {a: i for i, a in enumerate(activations)}
        start_at, seed_at = offsets(starts, sorted(set(here["seed"])))
        metric = str(here["metric"].iloc[0]) if len(here) else ""
        target = float(here["target_ppl"].dropna().iloc[0]) if here["target_ppl"].notna().any() else math.nan
        for ax, (column, label, scale) in zip(row, panels(metric, target), strict=True):
            top = matplotlib.transforms.blended_transform_factory(ax.transData, ax.transAxes)
            missing = []
            for run in here.itertuples(index=False):
                x = x_of[run.activation] + start_at[run.start] + seed_at[run.seed]
                value = getattr(run, column)
                color = START_COLORS.get(run.start, OTHER_START_COLOR)
                if run.outcome == "diverged":
                    style = {"marker": "x", "color": DIVERGED_COLOR, "s": 30, "linewidths": 1.4, "zorder": 3}
                elif run.outcome != "learned":
                    style = {"marker": "o", "facecolors": "none", "edgecolors": FAILED_COLOR, "s": 22, "zorder": 3}
                else:
                    style = {"marker": "o", "color": color, "s": 18, "alpha": 0.85, "zorder": 2}
                if pd.isna(value):
                    missing.append((x, style))
                else:
                    ax.scatter([x], [value * scale], **style)
            if scale != 1.0:  # a share, in per cent: from zero, and a panel of zeros still shows where zero is
                high = min(105.0, max(5.0, 1.1 * np.nanmax([*(here[column] * scale), 0.0])))
                ax.set_ylim(-0.04 * high, high)
            if missing:  # room above the values, where the runs that have none are marked
                low, high = ax.get_ylim()
                ax.set_ylim(low, high + 0.25 * (high - low))
                for x, style in missing:
                    ax.scatter([x], [TOP], transform=top, clip_on=False, **style)
            ax.set_xticks(range(len(activations)), [ACTIVATION_TICKS.get(a, a) for a in activations])
            ax.set_xlim(-0.6, len(activations) - 0.4)
            ax.set_ylabel(label, fontsize=LABEL_SIZE)
            ax.tick_params(labelsize=LABEL_SIZE)
        name = CORPUS_NAMES.get(corpora[studies.index(study)], study) if corpora else study
        row[0].set_title(name, loc="left", fontsize=9, fontweight="bold")
    handles = [
        Line2D([], [], marker="o", linestyle="", color=START_COLORS.get(s, OTHER_START_COLOR), label=f"{s} start")
        for s in starts
    ]
    handles += [
        Line2D([], [], marker="o", linestyle="", markerfacecolor="none", color=FAILED_COLOR, label="did not learn"),
        Line2D([], [], marker="x", linestyle="", color=DIVERGED_COLOR, label="diverged"),
    ]
    fig.legend(handles=handles, loc="outside upper center", ncols=len(handles), fontsize=LABEL_SIZE, frameon=False)
    return fig
