"""What every figure shares: one look, the marks of a run that diverged or did not learn, the colours and line
styles of a few levels, how a setting's value reads, and how a figure is written to its files (the same table
draws the same bytes), with a count of what it draws (rnnbench.plots.drawn).

A figure carries no note of the file it came from: the book's caption names it, and its provenance record
(rnnbench.provenance) says how it was made.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # figures are files; no screen is needed or assumed

import matplotlib.pyplot as plt
import matplotlib.ticker
import seaborn as sns

from rnnbench.results.outcome import UNKNOWN

# A run that diverged: a red cross, never a point among the others.
DIVERGED_COLOR = "#c0392b"
# A run that finished but did not learn: drawn hollow at its value, in grey, never in a mean or a band.
FAILED_COLOR = "0.35"
# How the figure names a finished run that did not learn, and one that could not be judged (no baseline).
FAILED_LABELS = {"did not learn": "did not learn", UNKNOWN: "not judged (no baseline)"}
# The book prints a figure across its text width, about 15 cm: a figure drawn this wide prints its type at the
# size set here, and a wider one would be shrunk, its tick labels with it.
PRINT_WIDTH = 6.0  # inches
WIDTH, HEIGHT = 5.0, 3.4  # inches: a one-panel figure, printed a little larger than drawn
# Categorical colours, told apart by hue (the colour-blind-safe set, without its grey, which marks a failed run,
# and its pale yellow, which vanishes on white). A sequential map makes neighbouring levels near twins.
# Ordered so that the first few differ most: blue, orange, green, pink, sky blue, vermilion, brown, light pink.
CATEGORICAL = [sns.color_palette("colorblind", 10)[i] for i in (0, 1, 2, 4, 9, 3, 5, 6)]
# A second cue beside the colour, for print in grey and for lines that lie on top of each other.
LINE_STYLES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def apply_theme() -> None:
    """The one look of every figure (the studies', the worked tables', the ablations'): set before drawing."""
    sns.set_theme(style="whitegrid", context="paper")


def level_colours(levels: Sequence[Any]) -> dict[Any, Any]:
    """One colour per level: categorical while the levels are few enough to tell apart by hue, else the
    sequential viridis, where at least the order reads."""
    levels = list(levels)
    colours = CATEGORICAL if len(levels) <= len(CATEGORICAL) else sns.color_palette("viridis", len(levels))
    return dict(zip(levels, colours, strict=False))


def level_styles(levels: Sequence[Any]) -> dict[Any, Any]:
    """One line style per level (cycled): the second cue beside ``level_colours``."""
    return {level: LINE_STYLES[i % len(LINE_STYLES)] for i, level in enumerate(levels)}


def level_markers(levels: Sequence[Any]) -> dict[Any, str]:
    """One marker per level (cycled): the second cue where points, not lines, carry the level."""
    return {level: MARKERS[i % len(MARKERS)] for i, level in enumerate(levels)}


def never_limits(setting: str, value: Any) -> bool:
    """Whether ``value`` of ``setting`` is the setting switched off: an infinite threshold never clips."""
    return isinstance(value, numbers.Real) and math.isinf(value) and value > 0


def setting_value(setting: str, value: Any) -> str:
    """How a setting's value reads on an axis or in a legend: an infinite clip threshold is no clipping, a BPTT
    length 0 the full sentence; a number in its shortest form."""
    if never_limits(setting, value):
        return "no clipping" if setting.startswith("clip") else "no limit"
    if setting == "bptt" and value == 0:
        return "full sentence"
    return f"{value:g}" if isinstance(value, numbers.Real) and not isinstance(value, bool) else str(value)


def plain_log_ticks(ax: plt.Axes, axis: str = "y") -> None:
    """A log axis's tick labels as plain numbers (250, not 2.5 × 10²), and its minor ticks labelled only while
    the axis spans less than a decade, where they are the only ticks in view (over more, they would print over
    each other); over more than a factor of three, only those at 2, 3 and 5 times a power of ten."""
    target, limits = (ax.yaxis, ax.get_ylim) if axis == "y" else (ax.xaxis, ax.get_xlim)

    def minor(value: float, _position) -> str:
        low, high = limits()
        if not (low > 0 and high < 10 * low):
            return ""
        leading = round(value / 10 ** math.floor(math.log10(value)), 6)
        return f"{value:g}" if high < 3 * low or leading in (2, 3, 5) else ""

    target.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    target.set_minor_formatter(matplotlib.ticker.FuncFormatter(minor))


def save(fig: plt.Figure, path: str) -> None:
    """Write a figure (format from the file name: PNG for HTML, PDF for print) and free it."""
    save_all(fig, [path])


def save_all(fig: plt.Figure, paths: Sequence[str]) -> dict[str, Any]:
    """Write one figure to every file of ``paths`` (each format from its name), free it, and return what it
    draws (rnnbench.plots.drawn.drawn_points), for the figure's provenance record."""
    from rnnbench.io import atomic_path
    from rnnbench.plots.drawn import drawn_points

    drawn = drawn_points(fig)
    for path in paths:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=path.rsplit(".", 1)[-1], dpi=200, metadata=_fixed_metadata(path))
    plt.close(fig)
    return drawn


def _fixed_metadata(path: str) -> dict | None:
    """No creation date in a PDF: the same table draws the same bytes."""
    return {"CreationDate": None} if path.endswith(".pdf") else None
