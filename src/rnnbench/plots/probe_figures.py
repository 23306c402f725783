"""A probe analysis drawn (its probe.csv, rnnbench.decay.probe): what a linear probe reads of the head noun's number
d steps after it, beside the gradient that crosses d steps.

probe_figure   three panels against distance d: held-out accuracy on every example, accuracy where the nearest
               noun has the other number, and the gradient's norm on a log axis; one line per network
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import MaxNLocator

from rnnbench.plots.style import PRINT_WIDTH, apply_theme, level_colours

SNAPSHOT_LABELS = {"0": "initialisation", "final": "trained"}
PANELS = (
    ("all", "every held-out\nexample"),  # on two lines: three panels share the print width
    ("attractor", "nearest noun of\nthe other number"),
)
NETWORK = ("run_id", "snapshot")  # the columns that name one network of the table


def snapshot_label(snapshot: str) -> str:
    return SNAPSHOT_LABELS.get(str(snapshot), f"after {snapshot} epochs")


def probe_figure(table: pd.DataFrame, *, hue: str = "snapshot", title: str = "") -> plt.Figure:
    """Accuracy of the probe against d with its 95% band, per network, coloured by ``hue``; the shuffled-label
    control grey and dashed; chance (the majority rate) dotted and the nearest noun's number dash-dotted, both
    black; right, the geometric mean of ||dL_verb/dh|| d steps back from the verb's state, on a log axis."""
    apply_theme()
    fig, axes = plt.subplots(1, 3, figsize=(PRINT_WIDTH, 4.2), layout="constrained")  # printed at this size
    network = [c for c in NETWORK if c in table.columns]
    hues = sorted(table[hue].astype(str).unique(), key=lambda v: (v == "final", v))
    colours = level_colours(hues)
    true = table[table["labels"] == "true"]
    for ax, (subset, heading) in zip(axes[:2], PANELS, strict=True):
        part = true[true["subset"] == subset]
        for _, line in part.groupby(network, sort=True):
            line = line.sort_values("distance")
            colour = colours[str(line[hue].iloc[0])]
            ax.plot(line["distance"], line["accuracy"], color=colour, lw=1.2, marker="o", ms=2.5)
            ax.fill_between(line["distance"], line["accuracy_low"], line["accuracy_high"], color=colour, alpha=0.12)
        control = table[(table["labels"] == "shuffled") & (table["subset"] == subset)]
        for _, line in control.groupby(network, sort=True):
            line = line.sort_values("distance")
            ax.plot(line["distance"], line["accuracy"], color="0.55", lw=0.8, ls="--")
        reference = part.groupby("distance")[["chance", "nearest_noun"]].mean()
        ax.plot(reference.index, reference["chance"], color="black", lw=1.0, ls=":")
        if subset == "all":
            ax.plot(reference.index, reference["nearest_noun"], color="black", lw=0.8, ls="-.")
        shown = part[["accuracy_low", "nearest_noun"] if subset == "all" else ["accuracy_low"]]
        ax.set_ylim(min(0.3, float(shown.min().min()) - 0.03), 1.02)
        ax.set_title(heading, fontsize=9)
        ax.set_xlabel("d, steps after\nthe head noun")
    axes[0].set_ylabel("held-out accuracy of the probe")
    gradient = true[true["subset"] == "all"]
    for _, line in gradient.groupby(network, sort=True):
        line = line.sort_values("distance")
        positive = line[line["gradient_norm"] > 0]
        ax = axes[2]
        ax.plot(positive["distance"], positive["gradient_norm"], color=colours[str(line[hue].iloc[0])], lw=1.2)
    axes[2].set_yscale("log")
    for ax in axes:
        # d counts steps; at most six labels, which a third of the print width holds without two running together.
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
    axes[2].set_title("gradient crossing\nd steps", fontsize=9)
    axes[2].set_xlabel("d, steps back\nfrom the verb")
    axes[2].set_ylabel(r"‖$\partial L_{\mathrm{verb}}/\partial h$‖, geometric mean")
    handles = [plt.Line2D([], [], color=colours[h], lw=1.5) for h in hues]
    labels = [snapshot_label(h) if hue == "snapshot" else h for h in hues]
    handles += [
        plt.Line2D([], [], color="0.55", lw=0.8, ls="--"),
        plt.Line2D([], [], color="black", lw=1.0, ls=":"),
        plt.Line2D([], [], color="black", lw=0.8, ls="-."),
    ]
    labels += ["shuffled labels", "chance (majority)", "nearest noun's number"]
    # Under the panels: inside any of them it would cover lines.
    fig.legend(handles, labels, fontsize=8, loc="outside lower center", ncol=3, frameon=False)
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, 90)), fontsize=9)
    return fig
