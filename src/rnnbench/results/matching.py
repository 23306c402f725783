"""Matched size: the one rule by which a feed-forward window is set against an Elman recurrence "at its size",
read by the findings (recurrence_beats_window), the window section of the agreement studies and the comparison
chapter's tables (tables/matched_parameters.csv, matched_time.csv).

    TOLERANCE                      two models are matched when their costs are within this factor of each other
    nearest(cost, costs)           the index of the cost nearest ``cost`` on a log scale
    matched_pairs(ff, rnn, by)     each window paired with the recurrence of the nearest cost, and whether they match

A model is a setting with its seeds averaged; nothing is interpolated between settings, so a value read "at
matched size" is always one that a trained model reached.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

TOLERANCE = 1.25


def within(ratio: float) -> bool:
    """Whether two costs whose ratio is ``ratio`` are matched."""
    return 1 / TOLERANCE <= ratio <= TOLERANCE


def nearest(cost: float, costs: np.ndarray) -> int:
    """The position in ``costs`` of the one nearest ``cost`` on a log scale (the first of ties)."""
    if len(costs) == 0:
        raise ValueError("no cost to match against")
    return int(np.argmin(np.abs(np.log(np.asarray(costs, dtype=float) / float(cost)))))


def matched_pairs(ff: pd.DataFrame, rnn: pd.DataFrame, by: str = "parameters") -> pd.DataFrame:
    """Each feed-forward size (``context``, ``by``) paired with the Elman RNN size (``hidden``, ``by``) whose
    cost is nearest on a log scale: context, ff_<by>, hidden, rnn_<by>, ratio (RNN cost / feed-forward cost) and
    matched (the ratio within TOLERANCE)."""
    ff = ff[["context", by]].drop_duplicates("context")
    rnn = rnn[["hidden", by]].drop_duplicates("hidden")
    if rnn.empty:
        raise ValueError("no Elman RNN to pair the feed-forward windows with")
    rows = []
    for f in ff.itertuples(index=False):
        r = rnn.iloc[nearest(float(getattr(f, by)), rnn[by].to_numpy(dtype=float))]
        ratio = float(r[by]) / float(getattr(f, by))
        rows.append(
            {
                "context": int(f.context),
                f"ff_{by}": getattr(f, by),
                "hidden": int(r["hidden"]),
                f"rnn_{by}": r[by],
                "ratio": ratio,
                "matched": within(ratio),
            }
        )
    return pd.DataFrame(rows)
