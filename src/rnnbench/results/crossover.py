"""Test perplexity against parameter count (the crossover in practice), and each feed-forward model against the
Elman curve at matched cost.

Inputs are our runs as rnnbench.results.runs.our_runs tabulates them; every number in the outputs is a copy of an
input or computed from inputs, none is typed here.

    crossover_table(ours, corpus)          both families' test perplexity against parameter count, with the
                                           analytic crossover of rnnbench.params beside every feed-forward run
    matched_cost(crossover, by)            each feed-forward model against the RNN model of matched parameter count
                                           (or training time): rnnbench.results.matching's rule
    setting_means(runs, by)                one row per model: a setting, its seeds averaged
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rnnbench.params import crossover_context, ff_minus_rnn
from rnnbench.results.matching import nearest, within
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
    "rnn_hidden",
    "rnn_cost",
    "rnn_seeds",
    "rnn_test_ppl",
    "rnn_advantage",
    "ratio",
)


def matched_cost(crossover: pd.DataFrame, by: str = "parameters") -> pd.DataFrame:
    """Each feed-forward model against the Elman model of the same corpus and scale nearest it in ``by``.

    ``by`` is "parameters" or "train_seconds". A model is a setting with its seeds averaged (``setting_means``).
    Each feed-forward model is paired with the RNN model nearest its cost on a log scale; where the two costs are
    within rnnbench.results.matching.TOLERANCE of each other the RNN's mean test perplexity is read (rnn_hidden,
    rnn_cost, rnn_seeds say which model), else it is NaN: nothing is interpolated between models.
    ``rnn_advantage`` = FF perplexity - RNN perplexity, so a positive value says by how much the RNN beats the
    feed-forward model at matched cost; ``seeds`` and ``rnn_seeds`` say how many seeds each mean rests on.
    """
    if by not in ("parameters", "train_seconds"):
        raise ValueError(f"by must be 'parameters' or 'train_seconds', got {by!r}")
    usable = crossover[crossover["status"].isin(MEASURED) & crossover[by].notna()]
    rows = []
    for (corpus, scale), group in usable.groupby(["corpus", "scale"], sort=False):
        rnn = setting_means(group[group["family"] == "rnn"], by).sort_values(by)
        for ff in setting_means(group[group["family"] == "ff"], by).itertuples():
            cost = float(getattr(ff, by))
            match = rnn.iloc[nearest(cost, rnn[by].to_numpy(float))] if len(rnn) else None
            matched = match is not None and within(float(match[by]) / cost)
            rnn_ppl = float(match["test_ppl"]) if matched else math.nan
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
                    "rnn_hidden": match["hidden"] if match is not None else math.nan,
                    "rnn_cost": float(match[by]) if match is not None else math.nan,
                    "rnn_seeds": int(match["seeds"]) if matched else 0,
                    "rnn_test_ppl": rnn_ppl,
                    "rnn_advantage": ff.test_ppl - rnn_ppl,
                    "ratio": ff.test_ppl / rnn_ppl,
                }
            )
    return pd.DataFrame(rows, columns=list(MATCHED_COLUMNS))


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
