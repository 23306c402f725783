"""What every figure shares: one look, the marks of a run that diverged or did not learn, the source note at a
figure's foot, and how a figure is written to a file (the same table draws the same bytes)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are files; no screen is needed or assumed

import matplotlib.pyplot as plt
import seaborn as sns

from rnnbench.results.outcome import UNKNOWN

# A run that diverged: a red cross, never a point among the others.
DIVERGED_COLOR = "#c0392b"
# A run that finished but did not learn: drawn hollow at its value, in grey, never in a mean or a band.
FAILED_COLOR = "0.35"
# How the figure names a finished run that did not learn, and one that could not be judged (no baseline).
FAILED_LABELS = {"did not learn": "did not learn", UNKNOWN: "not judged (no baseline)"}
WIDTH, HEIGHT = 5.0, 3.4  # inches: fits a page's text width at 9 pt


def apply_theme() -> None:
    """The one look of every figure (the studies', the worked tables', the ablations'): set before drawing."""
    sns.set_theme(style="whitegrid", context="paper")


def add_source_note(fig: plt.Figure, source: str) -> None:
    """The file a figure was drawn from, in small type at its foot, so a figure seen alone still names it."""
    if source:
        fig.text(0.01, 0.005, source, fontsize=6, color="0.4", ha="left", va="bottom")
        fig.get_layout_engine().set(h_pad=0.12)


def save(fig: plt.Figure, path: str) -> None:
    """Write a figure (format from the file name: PNG for HTML, PDF for print) and free it."""
    from rnnbench.io import atomic_path

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.rsplit(".", 1)[-1], dpi=200, metadata=_fixed_metadata(path))
    plt.close(fig)


def _fixed_metadata(path: str) -> dict | None:
    """No creation date in a PDF: the same table draws the same bytes."""
    return {"CreationDate": None} if path.endswith(".pdf") else None
