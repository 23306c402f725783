"""A best run or setting chosen on the validation split only, and reported on the test split.

A study's metric says which split the book reports; SELECTED_ON says what the choice of "best" reads:

    test_ppl            valid_ppl   the validation perplexity at the run's best epoch (metrics.json)
    agreement_accuracy  valid_ppl   the agreement probe is scored on the test split only; the validation
                                    perplexity is what an agreement run records of a held-out split
    valid_ppl           valid_ppl   already validation
    tokens_per_second   itself      measured while training, on no held-out split: choosing by it reads
    clipped_fraction    itself      no test data

Choosing by the test metric and reporting the same number would report the best of several draws of test
noise as if it were one: the winner's test number is biased low. A metric with no entry, or a candidate
without its validation value, is an error, never a silent fall back to the test split.

Candidates are the runs (or settings) that learned (rnnbench.results.outcome): callers pass only those.
"""

from __future__ import annotations

import pandas as pd

from rnnbench.metrics import LOWER_IS_BETTER

SELECTED_ON = {
    "test_ppl": "valid_ppl",
    "agreement_accuracy": "valid_ppl",
    "valid_ppl": "valid_ppl",
    "tokens_per_second": "tokens_per_second",
    "clipped_fraction": "clipped_fraction",
}


def selection_metric(metric: str) -> str:
    """The metric a best ``metric`` is chosen by (SELECTED_ON)."""
    if metric not in SELECTED_ON:
        raise ValueError(
            f"metric {metric!r} has no validation metric to choose a best run by; known: {', '.join(SELECTED_ON)}"
        )
    return SELECTED_ON[metric]


def ranked(candidates: pd.DataFrame, metric: str, *, suffix: str = "", what: str = "run") -> pd.DataFrame:
    """``candidates`` best first by the validation metric of ``metric`` (its column is the metric's name plus
    ``suffix``: "_mean" in a table over seeds), ties kept in their order.

    A candidate without a validation value is an error naming it (``what`` says what a row is), not a row
    quietly ranked by its test number or dropped."""
    on = selection_metric(metric)
    column = f"{on}{suffix}"
    if column not in candidates.columns:
        raise ValueError(
            f"no {column!r} column to choose the best {what} by: a best {metric} is chosen on {on} only "
            f"(columns: {', '.join(map(str, candidates.columns))})"
        )
    missing = candidates[column].isna()
    if missing.any():
        rows = ", ".join(str(i) for i in candidates.index[missing])
        raise ValueError(
            f"{int(missing.sum())} {what}(s) ({rows}) have no {column}: a best {metric} is chosen on {on} only, "
            "never on the test split"
        )
    return candidates.sort_values(column, ascending=on in LOWER_IS_BETTER, kind="stable")


def best_and_worst(
    candidates: pd.DataFrame, metric: str, *, suffix: str = "", what: str = "run"
) -> tuple[pd.Series, pd.Series]:
    """The best and the worst of ``candidates`` by the validation metric of ``metric`` (ranked)."""
    if candidates.empty:
        raise ValueError(f"no {what} to choose from")
    order = ranked(candidates, metric, suffix=suffix, what=what)
    return order.iloc[0], order.iloc[-1]
