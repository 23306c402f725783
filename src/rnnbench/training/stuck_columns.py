"""Whether a stream run's test perplexity is one evaluation column's doing, decided once.

A recurrent model reads an evaluation split as B parallel columns (rnnbench.data.batching.batchify), each from
h_0 = 0 at its first token, the state carried from there to the column's end. A model can fall, from one such
start, into a state it then never leaves: that column reads at a perplexity far above the others' for its whole
length, and the run's test perplexity, the mean NLL over all columns, is that one column's doing rather than a
measure of how the model reads text.

    stuck column    the worst column's perplexity above STUCK_SPREAD times the median column's
                    (metrics.json test_column_worst, test_column_median)

A run with a stuck column is still judged by rnnbench.results.outcome (its validation is read the same way and is
untouched unless a validation column sticks too); its test perplexity is marked, and a mean over seeds leaves it
out, counted (rnnbench.results.ablations.setting_table).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import median

# Columns of one split differ by the text they hold: a model that reads text well keeps its worst column within
# a small factor of its median one (1.33 at most over the PTB stream runs of the default build, ten columns of
# 8,200 tokens each); a stuck one is off by two orders of magnitude. Five sits well clear of both.
STUCK_SPREAD = 5.0


def worst_and_median(column_ppl: Sequence[float]) -> tuple[float, float]:
    """(the worst, the median) of a run's column perplexities; NaN for both without columns."""
    values = [float(v) for v in column_ppl]
    return (max(values), median(values)) if values else (math.nan, math.nan)


def stuck(worst: float | None, median_ppl: float | None) -> bool:
    """Whether a run's worst test column marks a stuck one; False when either is unknown (not a stream run, or
    one trained before runs kept their columns)."""
    if worst is None or median_ppl is None or math.isnan(worst) or math.isnan(median_ppl):
        return False
    return worst > STUCK_SPREAD * median_ppl
