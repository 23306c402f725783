"""How far a run had come at the end of each epoch: the training tokens it had read and the seconds it had
trained, summed over its epochs so far, from its epochs.csv (rnnbench.training.loop writes one row per epoch).

A run's epochs.csv holds the training tokens each epoch read (``tokens``) and its seconds. Runs trained before
epochs.csv had that column (the reference runs kept in reference/ among them) hold its tokens per second
instead, so there the count is that rate times the seconds, rounded back to a whole count. The seconds are the training loop's wall time: they include
any time the job waited for a core it shared with other jobs, so they compare runs trained side by side
under the same load, not runs from different machines or loads.

Pure pandas, no torch: the workflow's table jobs and the book both import this.
"""

from __future__ import annotations

import pandas as pd


def training_progress(epochs: pd.DataFrame) -> pd.DataFrame:
    """``epochs`` (one run's epochs.csv) with ``tokens_seen`` and ``seconds_trained``: cumulative over its epochs."""
    counted = "tokens" in epochs.columns
    missing = {"epoch", "seconds", "tokens" if counted else "tokens_per_second"} - set(epochs.columns)
    if missing:
        raise ValueError(f"an epochs table needs the columns {sorted(missing)}; it has {list(epochs.columns)}")
    tokens = epochs["tokens"] if counted else (epochs["tokens_per_second"] * epochs["seconds"]).round()
    return epochs.assign(
        tokens_seen=tokens.cumsum().astype("Int64"),
        seconds_trained=epochs["seconds"].cumsum(),
    )
