"""What a figure draws, counted from its matplotlib artists when it is saved, so that the book can refuse a
figure that shows too little to be a figure (one point, one setting, curves of one epoch each) and print a
table instead.

drawn_points   per panel: the data points drawn and at how many distinct x positions they lie
shows          whether a figure's count passes: every panel at least MIN_POINTS points at as many positions

A point is one mark of data in the panel's data coordinates: a vertex of a line, a scatter or error-bar point,
a bar, a heatmap cell. Not points: bands (a range, not a value), reference lines spanning the axes, marks
placed on an edge of the axes (a diverged run's cross), error-bar caps, text, legends and colour bars.
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


def _line_xs(ax: Axes) -> list[np.ndarray]:
    caps = {id(cap) for c in ax.containers if isinstance(c, ErrorbarContainer) for cap in c.lines[1]}
    xs = []
    for line in ax.get_lines():
        if line.get_transform() is not ax.transData or id(line) in caps:
            continue  # a line across the axes (axhline, axvline) or an error bar's cap
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        if line.get_marker() in ("None", "", " ", None) and line.get_linestyle() in ("None", "", " "):
            continue  # drawn as nothing
        xs.append(xy[np.isfinite(xy).all(axis=1), 0])
    return xs


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
    """The data points one panel draws and the distinct x positions they lie at."""
    xs = _line_xs(ax) + _collection_xs(ax)
    every = np.concatenate(xs) if xs else np.array([])
    return {"points": int(every.size), "positions": int(np.unique(np.round(every, 12)).size)}


def drawn_points(fig: Figure) -> dict[str, Any]:
    """The points a figure draws, in total and per panel (colour bars and annotation strips are not panels)."""
    panels = [panel_points(ax) for ax in fig.axes if not hasattr(ax, "_colorbar") and ax.get_gid() != ANNOTATION]
    return {"points": sum(p["points"] for p in panels), "panels": panels}


def shows(drawn: Mapping[str, Any]) -> bool:
    """Whether a figure shows enough to be a figure: every panel at least MIN_POINTS points, at at least
    MIN_POINTS distinct x positions (three seeds at one setting are a column of numbers, a table's job)."""
    panels = drawn.get("panels", [])
    return bool(panels) and all(p["points"] >= MIN_POINTS and p["positions"] >= MIN_POINTS for p in panels)
