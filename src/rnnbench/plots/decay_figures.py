"""Figures of gradient decay: the book's figures beside two worked tables (BOOK_FIGURES) and a decay analysis's
curves, one function each, a table in, a figure out.

jacobian_figure       ||dh_tau/dh_0|| and ||U^tau|| against tau (results/tables/jacobian_product.csv)
decay_figure          factor ** distance (results/tables/decay.csv)
decay_curves_figure   a decay analysis's curves: backward gradient and forward move against distance, per sweep value
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from rnnbench.plots.style import HEIGHT, WIDTH, add_source_note, apply_theme


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
