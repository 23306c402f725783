"""Test perplexity against parameter count (the crossover in practice), and each feed-forward model against the
Elman curve at matched cost.

Inputs are our runs as rnnbench.results.runs.our_runs tabulates them; every number in the outputs is a copy of an
input or computed from inputs, none is typed here.

    crossover_table(ours, corpus)          both families' test perplexity against parameter count, with the
                                           analytic crossover of rnnbench.params beside every feed-forward run
    matched_cost(crossover, by)            the RNN's perplexity at each feed-forward run's parameter count
                                           (or training time), read off the RNN curve
    setting_means(runs, by)                one row per model: a setting, its seeds averaged
    log_interpolate(x, xs, ys)             y at x on the piecewise-linear curve through (log xs, ys)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rnnbench.params import crossover_context, ff_minus_rnn
from rnnbench.results.runs import MEASURED

CROSSOVER_COLUMNS = (
    "corpus",
    "scale",
    "family",
    "run_id",
    "setting",
    "seed",
    "status",
    "embed_dim",
    "hidden",
    "context",
    "parameters",
    "test_ppl",
    "valid_ppl",
    "train_seconds",
    "job_wall_seconds",
    "tie_context",
    "crossover_context",
    "ff_larger",
    "rnn_equivalent_parameters",
    "pareto",
)


def crossover_table(ours: pd.DataFrame, corpus: str = "ptb") -> pd.DataFrame:
    """Feed-forward and Elman runs on one corpus: test perplexity against parameter count.

    For every feed-forward run without direct connections, the analytic crossover of rnnbench.params at
    its d and H: ``tie_context`` = 1 + H/d (the n-1 at which it has exactly as many parameters as the Elman
    LM of the same d, H and output layer), ``crossover_context`` (the smallest n-1 at which it has more),
    ``ff_larger`` (whether this run is past it) and ``rnn_equivalent_parameters``, the size of that Elman LM
    (its own count minus the difference the analytic formula gives). ``pareto`` marks the runs no other
    run of the same scale beats with fewer or as many parameters.
    """
    table = ours[(ours["corpus"] == corpus) & ours["family"].isin(["ff", "rnn"])].copy()
    ff = (table["family"] == "ff") & ~table["direct"].astype(bool)
    table["tie_context"] = np.where(ff, 1 + table["hidden"] / table["embed_dim"], np.nan)
    table["crossover_context"] = pd.array(
        [
            crossover_context(d, h) if is_ff else None
            for is_ff, d, h in zip(ff, table["embed_dim"], table["hidden"], strict=True)
        ],
        dtype="Int64",
    )
    table["ff_larger"] = pd.array(
        [
            bool(c >= x) if is_ff else None
            for is_ff, c, x in zip(ff, table["context"], table["crossover_context"], strict=True)
        ],
        dtype="boolean",
    )
    table["rnn_equivalent_parameters"] = pd.array(
        [
            p - ff_minus_rnn(c, d, h) if is_ff else None
            for is_ff, p, c, d, h in zip(
                ff, table["parameters"], table["context"], table["embed_dim"], table["hidden"], strict=True
            )
        ],
        dtype="Int64",
    )
    table["pareto"] = False
    for _, group in table.groupby("scale"):
        table.loc[group.index, "pareto"] = _pareto(group)
    table = table.sort_values(["scale", "family", "parameters"], kind="stable")
    return table[list(CROSSOVER_COLUMNS)].reset_index(drop=True)


def _pareto(group: pd.DataFrame) -> pd.Series:
    """True for runs that no other run beats (lower perplexity) with at most as many parameters."""
    ok = group["status"].isin(MEASURED) & group["test_ppl"].notna()
    flags = pd.Series(False, index=group.index)
    for i in group.index[ok]:
        others = group[ok & (group.index != i)]
        beaten = (others["parameters"] <= group.at[i, "parameters"]) & (others["test_ppl"] < group.at[i, "test_ppl"])
        flags[i] = not beaten.any()
    return flags


MATCHED_COLUMNS = (
    "corpus",
    "scale",
    "by",
    "setting",
    "context",
    "hidden",
    "seeds",
    "cost",
    "ff_valid_ppl",
    "ff_test_ppl",
    "ff_test_min",
    "ff_test_max",
    "rnn_seeds",
    "rnn_test_ppl",
    "rnn_advantage",
    "ratio",
)


def matched_cost(crossover: pd.DataFrame, by: str = "parameters") -> pd.DataFrame:
    """Each feed-forward model against the Elman curve of the same corpus and scale at equal ``by``.

    ``by`` is "parameters" or "train_seconds". A model is a setting with its seeds averaged (``setting_means``):
    one row per feed-forward setting, and the RNN curve through its settings' means. The RNN's perplexity at the
    feed-forward model's cost is read off that curve by linear interpolation in log(cost) between the two
    nearest points; outside the range they span it is NaN (no extrapolation). ``rnn_advantage`` = FF perplexity
    - RNN perplexity, so a positive value says by how much the RNN beats the feed-forward model at that cost;
    ``seeds`` and ``rnn_seeds`` (the fewer of the one or two curve points the RNN's value is read from; 0 where none
    is read) say how many seeds each mean rests on.
    """
    if by not in ("parameters", "train_seconds"):
        raise ValueError(f"by must be 'parameters' or 'train_seconds', got {by!r}")
    usable = crossover[crossover["status"].isin(MEASURED) & crossover[by].notna()]
    rows = []
    for (corpus, scale), group in usable.groupby(["corpus", "scale"], sort=False):
        rnn = setting_means(group[group["family"] == "rnn"], by).sort_values(by)
        for ff in setting_means(group[group["family"] == "ff"], by).itertuples():
            cost = float(getattr(ff, by))
            rnn_ppl = log_interpolate(cost, rnn[by].to_numpy(float), rnn["test_ppl"].to_numpy(float))
            rows.append(
                {
                    "corpus": corpus,
                    "scale": scale,
                    "by": by,
                    "setting": ff.setting,
                    "context": ff.context,
                    "hidden": ff.hidden,
                    "seeds": ff.seeds,
                    "cost": cost,
                    "ff_valid_ppl": ff.valid_ppl,
                    "ff_test_ppl": ff.test_ppl,
                    "ff_test_min": ff.test_min,
                    "ff_test_max": ff.test_max,
                    "rnn_seeds": _read_seeds(cost, rnn, by),
                    "rnn_test_ppl": rnn_ppl,
                    "rnn_advantage": ff.test_ppl - rnn_ppl,
                    "ratio": ff.test_ppl / rnn_ppl,
                }
            )
    return pd.DataFrame(rows, columns=list(MATCHED_COLUMNS))


def _read_seeds(cost: float, curve: pd.DataFrame, by: str) -> int:
    """The fewest seeds of the curve points (setting_means rows) log_interpolate reads at ``cost``: the nearest at or
    below it and the nearest at or above it; 0 outside the curve's span, where nothing is read."""
    below, above = curve[curve[by] <= cost], curve[curve[by] >= cost]
    if below.empty or above.empty:
        return 0
    return int(min(below.sort_values(by)["seeds"].iloc[-1], above.sort_values(by)["seeds"].iloc[0]))


def setting_means(runs: pd.DataFrame, by: str, keep: Sequence[str] = ()) -> pd.DataFrame:
    """One row per setting of ``runs`` (crossover rows), its seeds averaged: the mean ``by`` (a parameter count is
    the same for every seed; training seconds are not), the mean perplexities, the test range and the seeds, and
    the columns of ``keep`` as its first seed has them (settings every seed shares)."""
    return (
        runs.groupby("setting", sort=False)
        .agg(
            **{column: (column, "first") for column in keep},
            context=("context", "first"),
            hidden=("hidden", "first"),
            seeds=("run_id", "size"),
            **{by: (by, "mean")},
            valid_ppl=("valid_ppl", "mean"),
            test_ppl=("test_ppl", "mean"),
            test_min=("test_ppl", "min"),
            test_max=("test_ppl", "max"),
        )
        .reset_index()
    )


def log_interpolate(x: float, xs: np.ndarray, ys: np.ndarray) -> float:
    """y at x on the piecewise-linear curve through (log xs, ys); NaN outside [min xs, max xs] or x <= 0."""
    if len(xs) == 0 or x <= 0 or x < xs.min() or x > xs.max():
        return math.nan
    order = np.argsort(xs)
    return float(np.interp(math.log(x), np.log(xs[order]), ys[order]))
