"""Figures of gradient decay: the book's figures beside two worked tables (BOOK_FIGURES) and a decay analysis's
curves, one function each, a table in, a figure out.

jacobian_figure       ||dh_tau/dh_0|| and ||U^tau|| against tau (results/tables/jacobian_product.csv)
decay_figure          factor ** distance (results/tables/decay.csv), down to DECAY_FLOOR
decay_curves_figure   a decay analysis's curves: backward gradient and forward move against distance, per sweep value

Each is drawn at the book's print width (rnnbench.plots.style.PRINT_WIDTH), so that its type prints at the size
set here, with one categorical colour per level and a second cue beside it (a line style, or a marker where the
line style already says what is measured): a few levels of a sequential map are near twins in print.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
import pandas as pd

from rnnbench.plots.style import PRINT_WIDTH, apply_theme, level_colours, level_markers, level_styles

TICK_SIZE, LABEL_SIZE, LEGEND_SIZE = 8, 9, 8  # points, as printed
LOG_TICKS = 7  # at most this many labelled decades on a log axis: 10^-24 to 10^8 in every power would crowd
STRIDES = (1, 2, 3, 4, 5, 10, 20, 25, 50, 100)  # decades between labelled ticks, the fewest that keeps LOG_TICKS


class DecadeLocator(matplotlib.ticker.Locator):
    """Ticks at every k-th power of ten, k the first of STRIDES that leaves at most LOG_TICKS in view: round
    steps (10^-20, 10^-10, 10^0), where matplotlib's own would step by any number of decades (10^-58, 10^-20)."""

    def __call__(self):
        low, high = sorted(self.axis.get_view_interval())
        return self.tick_values(low, high)

    def tick_values(self, vmin: float, vmax: float):
        if not vmin > 0:
            vmin = vmax / 10 if vmax > 0 else 1.0
        first, last = int(np.ceil(np.log10(vmin) - 1e-9)), int(np.floor(np.log10(vmax) + 1e-9))
        stride = next((k for k in STRIDES if (last - first) // k + 1 <= LOG_TICKS), STRIDES[-1])
        return [10.0**e for e in range(first - first % stride + (stride if first % stride else 0), last + 1, stride)]


def _legible(ax: plt.Axes) -> None:
    """Print-size ticks, and a log y axis labelled at round steps of at most LOG_TICKS decades."""
    ax.tick_params(axis="both", which="major", labelsize=TICK_SIZE)
    ax.yaxis.set_major_locator(DecadeLocator())
    ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())


def jacobian_figure(jacobian: pd.DataFrame) -> plt.Figure:
    """||dh_tau/dh_0|| against tau, one colour and marker per spectral radius of U, with ||U^tau|| dashed in the
    same colour (log scale)."""
    apply_theme()
    data = jacobian.assign(radius=jacobian["spectral_radius"].round(2).map(lambda r: f"{r:g}"))
    fig, ax = plt.subplots(figsize=(PRINT_WIDTH, 3.6), layout="constrained")
    radii = list(pd.unique(data["radius"]))
    colours, markers = level_colours(radii), level_markers(radii)
    for radius, group in data.groupby("radius", sort=False):
        every = max(len(group) // 8, 1)  # a marker every few steps: a cue, not a point per step
        ax.plot(
            group["distance"],
            group["jacobian_norm"],
            color=colours[radius],
            marker=markers[radius],
            markersize=4,
            markevery=every,
            label=f"ρ(U) = {radius}",
        )
        ax.plot(group["distance"], group["u_power_norm"], color=colours[radius], linestyle="--", linewidth=0.9)
    ax.set_yscale("log")
    _legible(ax)
    ax.set_xlabel("distance τ (steps)", fontsize=LABEL_SIZE)
    ax.set_ylabel("spectral norm (log scale)", fontsize=LABEL_SIZE)
    # Beside the axes: the lines fan out over the whole plot, and a legend inside would cover some.
    ax.legend(
        title="solid: ‖$\\partial h_\\tau/\\partial h_0$‖\ndashed: ‖$U^\\tau$‖",
        fontsize=LEGEND_SIZE,
        title_fontsize=LEGEND_SIZE,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    return fig


# The decay figure's lowest drawn value. A factor of 0.01 reaches 10^-200 in 100 steps; an axis down there lays
# the factors near one (the ones the chapter argues about) flat along its top. Lines leave through this floor,
# each marked where it does.
DECAY_FLOOR = 1e-35


def decay_figure(decay: pd.DataFrame) -> plt.Figure:
    """factor ** distance on a log scale, one colour and line style per factor; the axis ends at DECAY_FLOOR, and
    a line that falls below it is labelled with its factor where it leaves."""
    apply_theme()
    fig, ax = plt.subplots(figsize=(PRINT_WIDTH, 3.6), layout="constrained")
    factors = sorted(decay["factor"].unique())
    colours, styles = level_colours(factors), level_styles(factors)
    for factor in factors:
        rows = decay[decay["factor"] == factor].sort_values("distance")
        ax.plot(
            rows["distance"],
            rows["value"],
            color=colours[factor],
            linestyle=styles[factor],
            lw=1.5,
            label=f"{factor:g}",
        )
        below = rows[rows["value"] < DECAY_FLOOR]
        if len(below):
            ax.annotate(
                f"{factor:g} ↓",
                (below["distance"].iloc[0], DECAY_FLOOR),
                textcoords="offset points",
                xytext=(3, 4),
                fontsize=TICK_SIZE,
                color=colours[factor],
            )
    ax.set_yscale("log")
    if (decay["value"] < DECAY_FLOOR).any():
        ax.set_ylim(bottom=DECAY_FLOOR)
    _legible(ax)
    ax.set_xlabel("distance (steps)", fontsize=LABEL_SIZE)
    ax.set_ylabel(r"$\mathrm{factor}^{\,\mathrm{distance}}$ (log scale)", fontsize=LABEL_SIZE)
    ax.legend(
        title="factor", fontsize=LEGEND_SIZE, title_fontsize=LEGEND_SIZE, loc="upper left", bbox_to_anchor=(1.01, 1.0)
    )
    return fig


# Figures the book shows beside a worked table: the table's name -> the function that draws it.
BOOK_FIGURES = {"jacobian_product": jacobian_figure, "decay": decay_figure}


# The rows of a decay figure: what is measured, how (a curves table's direction and method), and its axis label.
BACKWARD = ("backward", "one_pass")
FORWARD = ("forward", "jvp")


def _level(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def decay_curves_figure(
    curves: pd.DataFrame,
    *,
    hue: str,
    panel: str | None = None,
    rows: Sequence[tuple[str, str]] = (BACKWARD, FORWARD),
    quantity: str = "h",
    max_distance: int | None = None,
    title: str = "",
) -> plt.Figure:
    """Decay curves (a decay analysis's curves table): norm against distance on a log y axis.

    One row per (direction, method) of ``rows`` that the table has: by default the backward gradient ||dL/dh||
    on top and, below it on the same distances, the forward move of h per unit move of x_1 (exact JVP), so that
    blame and information can be read against each other. One panel per value of ``panel`` (a sweep, e.g. the
    activation), one colour and line style per value of ``hue`` (e.g. the spectral radius): the median over
    sequences, with the 10-90% quantile band shaded. Rows with several points per (panel, hue, distance), e.g.
    seeds, are drawn as one line each. Zero norms (underflow) cannot sit on a log axis; the line stops there
    rather than plunging. The panels share the print width; the legend runs under them.
    """
    data = curves[curves["quantity"] == quantity]
    if max_distance is not None:
        data = data[data["distance"] <= max_distance]
    drawn = [(d, m) for d, m in rows if ((data["direction"] == d) & (data["method"] == m)).any()]
    if not drawn:
        raise ValueError(f"no curve of {quantity} measured as any of {list(rows)}")
    panels = sorted(data[panel].unique()) if panel else [None]
    apply_theme()
    fig, axes = plt.subplots(
        len(drawn),
        len(panels),
        figsize=(PRINT_WIDTH, 1.2 + 2.3 * len(drawn)),
        sharex=True,
        sharey="row",
        squeeze=False,
        layout="constrained",
    )
    hues = sorted(data[hue].unique())
    colours, styles = level_colours(hues), level_styles(hues)
    lead = [c for c in ("run_id", "seed", "epoch") if c in data.columns and c not in (hue, panel)]
    for i, (row, (direction, method)) in enumerate(zip(axes, drawn, strict=True)):
        measured = data[(data["direction"] == direction) & (data["method"] == method)]
        for ax, value in zip(row, panels, strict=True):
            part = measured if panel is None else measured[measured[panel] == value]
            for key, line in part.groupby([hue, *lead], sort=True):
                level = key[0] if isinstance(key, tuple) else key
                line = line.sort_values("distance")
                positive = line[line["median"] > 0]
                ax.plot(positive["distance"], positive["median"], color=colours[level], ls=styles[level], lw=1.3)
                band = line[(line["q10"] > 0) & (line["q90"] > 0)]
                ax.fill_between(band["distance"], band["q10"], band["q90"], color=colours[level], alpha=0.12, lw=0)
            ax.set_yscale("log")
            _legible(ax)
            if panel is not None and i == 0:
                ax.set_title(f"{panel} = {value}", fontsize=LABEL_SIZE)
        row[0].set_ylabel(
            f"backward: ||dL/d{quantity}||"
            if direction == "backward"
            else f"forward: move of {quantity}\nper unit move of x_1",
            fontsize=LABEL_SIZE,
        )
    for ax in axes[-1]:
        ax.set_xlabel("distance (steps)", fontsize=LABEL_SIZE)
    handles = [plt.Line2D([], [], color=colours[h], ls=styles[h], lw=1.6) for h in hues]
    fig.legend(
        handles,
        [_level(h) for h in hues],
        title=hue,
        fontsize=LEGEND_SIZE,
        title_fontsize=LEGEND_SIZE,
        loc="outside lower center",  # under the panels, over no line, whatever their number
        ncol=min(len(hues), 6),
    )
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, 70)), fontsize=LABEL_SIZE)
    return fig
