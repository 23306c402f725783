"""Results figures staged into the book, where HTML and Typst can embed them, and the rule that keeps a figure
out of it when it shows too little to be one.

HTML output drops images above the project folder and Typst cannot read outside it, so a chapter shows a
copy of each figure from <book>/_staged/; its caption still names the results file it came from. A figure is
staged without an extension: each format picks its own (_quarto.yml's default-image-extension: PNG for HTML,
the vector PDF for Typst).

A figure's provenance record says how many points it draws (rnnbench.plots.drawn). One that draws fewer than two
in a panel, or all at one x position (one setting, curves of one epoch each), or one point per run however
spread (curves none of which joins two points), is no figure: ``figure_shown`` says so, ``stage_figure`` refuses
it, and the chapter prints its numbers as a table instead.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rnnbench import paths
from rnnbench.book.format import label_slug
from rnnbench.book.results import missing_result, results_root
from rnnbench.plots.drawn import MIN_POINTS, one_point_per_series, shows

STAGING_DIR = "_staged"  # inside the book folder: HTML and Typst can only embed images under the project folder


class TooFewPoints(ValueError):
    """A figure the book will not show: it draws too little (rnnbench.plots.drawn.shows)."""


def figure_shown(source: str | Path) -> bool:
    """Whether the figure ``source`` (its PNG) draws enough to be shown, read from its provenance record."""
    return shows(drawn_count(source))


def one_point_each(source: str | Path) -> bool:
    """Whether the figure ``source`` is refused for drawing each run as a point of its own, none joined to another
    (rnnbench.plots.drawn.one_point_per_series), though its points lie at two positions or more."""
    panels = drawn_count(source).get("panels", [])
    return any(one_point_per_series(p) for p in panels) and all(p["positions"] >= MIN_POINTS for p in panels)


def drawn_count(source: str | Path) -> dict:
    """What the figure ``source`` draws (rnnbench.plots.drawn.drawn_points), from its provenance record."""
    record_file = Path(paths.provenance(str(source)))
    if not record_file.is_file():
        raise missing_result(record_file)
    drawn = json.loads(record_file.read_text(encoding="utf-8")).get("drawn")
    if drawn is None:
        raise ValueError(
            f"{record_file} does not say how many points its figure draws: it predates the count; draw the "
            "figure again (its rule, with --forcerun) so that the book can tell whether to show it"
        )
    return drawn


def stage_figure(source: str | Path, name: str, staging: str | Path = STAGING_DIR) -> str:
    """Copy a results figure's PNG and PDF into <book>/<staging>/ and return the path to write in markdown,
    without an extension; a figure that ``figure_shown`` refuses raises TooFewPoints."""
    source = Path(source)
    if not figure_shown(source):
        raise TooFewPoints(
            f"{source} draws fewer than {MIN_POINTS} points, or all at one position, in some panel: the book shows "
            "its numbers as a table, not as this figure"
        )
    target = Path(staging) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    for fmt in paths.FIGURE_FORMATS:
        found = source.with_suffix(f".{fmt}")
        if not found.is_file():
            raise missing_result(found)
        shutil.copyfile(found, target.with_suffix(f".{fmt}"))
    return target.as_posix()


def book_figure_shown(name: str, results: str | Path | None = None) -> bool:
    """Whether the figure of results/figures/<name> draws enough to be shown (``figure_shown``)."""
    return figure_shown(paths.book_figure(results_root(results), name, "png"))


def book_figure(name: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> str:
    """The figure drawn from results/tables/<name>.csv by rule book_figure, staged into the book."""
    return stage_figure(paths.book_figure(results_root(results), name, "png"), f"table-{label_slug(name)}", staging)
