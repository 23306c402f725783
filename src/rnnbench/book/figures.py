"""Results figures staged into the book, where HTML and Typst can embed them.

HTML output drops images above the project folder and Typst cannot read outside it, so a chapter shows a
copy of each figure from <book>/_staged/; its caption still names the results file it came from. A figure is
staged without an extension: each format picks its own (_quarto.yml's default-image-extension: PNG for HTML,
the vector PDF for Typst).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rnnbench import paths
from rnnbench.book.format import label_slug
from rnnbench.book.results import missing_result, results_root

STAGING_DIR = "_staged"  # inside the book folder: HTML and Typst can only embed images under the project folder


def stage_figure(source: str | Path, name: str, staging: str | Path = STAGING_DIR) -> str:
    """Copy a results figure's PNG and PDF into <book>/<staging>/ and return the path to write in markdown,
    without an extension."""
    source = Path(source)
    target = Path(staging) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    for fmt in paths.FIGURE_FORMATS:
        found = source.with_suffix(f".{fmt}")
        if not found.is_file():
            raise missing_result(found)
        shutil.copyfile(found, target.with_suffix(f".{fmt}"))
    return target.as_posix()


def book_figure(name: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> str:
    """The figure drawn from results/tables/<name>.csv by rule book_figure, staged into the book."""
    return stage_figure(paths.book_figure(results_root(results), name, "png"), f"table-{label_slug(name)}", staging)
