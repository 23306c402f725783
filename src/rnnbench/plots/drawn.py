"""What a figure draws, counted from its matplotlib artists when it is saved, so that the book can refuse a
figure that shows too little to be a figure (one point, one setting, curves of one epoch each) and print a
table instead.

drawn_points   per panel: the data points drawn, at how many distinct x positions they lie, how many curves it
               draws and the most points of any one of its series
shows          whether a figure's count passes: every panel at least MIN_POINTS points at as many positions, and
               no panel whose curves are one point each (one point per run)

A point is one mark of data in the panel's data coordinates: a vertex of a line, a scatter or error-bar point,
a bar, a heatmap cell. Not points: bands (a range, not a value), reference lines spanning the axes, marks
placed on an edge of the axes (a diverged run's cross), error-bar caps, text, legends and colour bars.

A series is one artist's points: a line's vertices, a scatter's points, a container's bars, a heatmap's cells. A
curve is a line drawn with a line style, made to join points: a panel of curves none of which joins two points
(learning curves of one epoch per run, at different token counts) draws one point per run however many runs it
holds, and is a table's job unless some other series of the panel (seeds scattered at a setting) spreads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection, QuadMesh
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure

MIN_POINTS = 2  # one point is a number, not a figure: the book shows a table for it
# An axes that only annotates the panel beside it (a strip of the runs that diverged above a panel of the others'
# values) carries this gid: it is part of that panel, not a panel of its own, and may draw nothing.
ANNOTATION = "annotation"
# A panel whose figure knows that each of its points is one run standing alone (one seed, no line through two
# settings: one value per network) carries this gid; its count says so, and the book shows a table instead.
ALONE = "one point per run"


NO_STYLE = ("None", "", " ", None)


def _lines(ax: Axes) -> list[tuple[np.ndarray, bool]]:
    """Each data line of the panel: the x of its finite vertices, and whether it is a curve (has a line style)."""
    caps = {id(cap) for c in ax.containers if isinstance(c, ErrorbarContainer) for cap in c.lines[1]}
    lines = []
    for line in ax.get_lines():
        if line.get_transform() is not ax.transData or id(line) in caps:
            continue  # a line across the axes (axhline, axvline) or an error bar's cap
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        curve = line.get_linestyle() not in NO_STYLE
        if line.get_marker() in NO_STYLE and not curve:
            continue  # drawn as nothing
        lines.append((xy[np.isfinite(xy).all(axis=1), 0], curve))
    return lines


def _line_xs(ax: Axes) -> list[np.ndarray]:
    return [xs for xs, _ in _lines(ax)]


def _collection_xs(ax: Axes) -> list[np.ndarray]:
    xs = []
    for collection in ax.collections:
        if isinstance(collection, PathCollection) and collection.get_offset_transform() is ax.transData:
            offsets = np.asarray(collection.get_offsets(), float).reshape(-1, 2)
            xs.append(offsets[np.isfinite(offsets).all(axis=1), 0])
        elif isinstance(collection, QuadMesh) and collection.get_transform() is ax.transData:
            cells = np.ma.masked_invalid(np.ma.asarray(collection.get_array(), float))
            corners = collection.get_coordinates()  # (rows + 1, columns + 1, 2)
            centres = (corners[:-1, :-1, 0] + corners[1:, 1:, 0]) / 2
            xs.append(np.asarray(centres, float).reshape(cells.shape)[~np.ma.getmaskarray(cells)].ravel())
    for container in ax.containers:
        if isinstance(container, BarContainer):
            xs.append(np.array([bar.get_x() + bar.get_width() / 2 for bar in container.patches], float))
    return xs


def panel_points(ax: Axes) -> dict[str, int]:
    """The data points one panel draws, the distinct x positions they lie at, the curves among its lines (those
    with a line style, with a point) and the most points of one series."""
    lines = _lines(ax)
    xs = [x for x, _ in lines] + _collection_xs(ax)
    every = np.concatenate(xs) if xs else np.array([])
    return {
        "points": int(every.size),
        "positions": int(np.unique(np.round(every, 12)).size),
        "curves": sum(1 for x, curve in lines if curve and x.size),
        "longest": max((x.size for x in xs), default=0),
        **({"alone": True} if ax.get_gid() == ALONE else {}),
    }


def drawn_points(fig: Figure) -> dict[str, Any]:
    """The points a figure draws, in total and per panel (colour bars and annotation strips are not panels)."""
    panels = [panel_points(ax) for ax in fig.axes if not hasattr(ax, "_colorbar") and ax.get_gid() != ANNOTATION]
    return {"points": sum(p["points"] for p in panels), "panels": panels}


def one_point_per_series(panel: Mapping[str, Any]) -> bool:
    """A panel of curves in which no series has two points: one point per run (a count from before curves and
    series were counted does not say, and passes)."""
    return panel.get("alone", False) or (panel.get("curves", 0) > 0 and panel.get("longest", MIN_POINTS) < MIN_POINTS)


def shows(drawn: Mapping[str, Any]) -> bool:
    """Whether a figure shows enough to be a figure: every panel at least MIN_POINTS points, at at least
    MIN_POINTS distinct x positions (three seeds at one setting are a column of numbers, a table's job), and
    no panel of curves one point each (one epoch per run: a column of numbers too, whatever their positions)."""
    panels = drawn.get("panels", [])
    return bool(panels) and all(
        p["points"] >= MIN_POINTS and p["positions"] >= MIN_POINTS and not one_point_per_series(p) for p in panels
    )
