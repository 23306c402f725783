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
