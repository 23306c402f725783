"""Learning curves: each run's validation perplexity epoch by epoch, and the two families' ranking after each epoch.

learning_curves(ours, epochs)          each run's validation perplexity epoch by epoch, against the
                                       tokens it has trained on and the seconds it has trained
ranking_by_epoch(curves, crossover)    the families' ranking after each epoch, on validation perplexity only
ranking_settled(ranking)               whether that ranking held over the last two epochs, and since when
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from rnnbench.results.crossover import matched_cost
from rnnbench.results.progress import training_progress
from rnnbench.results.runs import MEASURED

LEARNING_COLUMNS = (
    "corpus",
    "scale",
    "family",
    "run_id",
    "studies",
    "seed",
    "status",
    "epoch",
    "lr",
    "train_ppl",
    "valid_ppl",
    "tokens_seen",
    "seconds_trained",
)


def learning_curves(ours: pd.DataFrame, epochs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per run and epoch: its rate, train and validation perplexity, and how far it had come: the
    training tokens and seconds summed over its epochs so far (``epochs``: run id -> its epochs.csv)."""
    frames = []
    for row in ours.itertuples():
        table = training_progress(epochs[row.run_id])
        frames.append(
            pd.DataFrame(
                {
                    "corpus": row.corpus,
                    "scale": row.scale,
                    "family": row.family,
                    "run_id": row.run_id,
                    "studies": row.studies,
                    "seed": row.seed,
                    "status": row.status,
                    "epoch": table["epoch"],
                    "lr": table["lr"],
                    "train_ppl": table["train_ppl"],
                    "valid_ppl": table["valid_ppl"],
                    "tokens_seen": table["tokens_seen"],
                    "seconds_trained": table["seconds_trained"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(LEARNING_COLUMNS))


RANKING_COLUMNS = (
    "corpus",
    "scale",
    "epoch",
    "matched",
    "rnn_leads",
    "best_ff",
    "best_ff_parameters",
    "best_ff_valid_ppl",
    "best_rnn",
    "best_rnn_parameters",
    "best_rnn_valid_ppl",
    "leader",
)


def ranking_by_epoch(curves: pd.DataFrame, crossover: pd.DataFrame) -> pd.DataFrame:
    """The two families' ranking after each epoch, read from validation perplexity only, so that a reader can
    tell a settled ranking from one the training budget decided.

    One row per corpus, scale and epoch up to the last any run trained (the same epoch is the same training
    tokens, every run reading its whole split). A run stands for the model it would keep if stopped there, the
    best by validation so far, and a run that has stopped (converged, or at its epoch cap) keeps its last one
    in the epochs after: so the last row compares the models the runs ended with. ``matched`` feed-forward
    models (settings, their seeds averaged) with an Elman perplexity at their parameter count (matched_cost's
    interpolation, on validation perplexity at that epoch), of which the RNN beats ``rnn_leads``; and the best run of each family at that epoch, its parameters and
    perplexity, ``leader`` the family of the lower. Runs that diverged or did not learn are left out, as
    they are by matched_cost. ``curves``: learning_curves' table; ``crossover``: crossover_table's (the
    runs, parameter counts and statuses).
    """
    runs = crossover[crossover["status"].isin(MEASURED)][list(_RUN_FIELDS)]
    at_epoch = _kept_model_by_epoch(curves[["run_id", "epoch", "valid_ppl"]].merge(runs, on="run_id"))
    rows = []
    for (corpus, scale, epoch), group in at_epoch.groupby(["corpus", "scale", "epoch"], sort=False):
        ff, rnn = group[group["family"] == "ff"], group[group["family"] == "rnn"]
        if ff.empty or rnn.empty:
            continue
        # matched_cost reads test_ppl: here it is the validation perplexity after this epoch.
        matched = matched_cost(group.assign(test_ppl=group["valid_ppl"], train_seconds=np.nan), "parameters")
        matched = matched[matched["rnn_test_ppl"].notna()]
        best_ff, best_rnn = ff.loc[ff["valid_ppl"].idxmin()], rnn.loc[rnn["valid_ppl"].idxmin()]
        rows.append(
            {
                "corpus": corpus,
                "scale": scale,
                "epoch": int(epoch),
                "matched": len(matched),
                "rnn_leads": int((matched["rnn_advantage"] > 0).sum()),
                "best_ff": best_ff["run_id"],
                "best_ff_parameters": best_ff["parameters"],
                "best_ff_valid_ppl": best_ff["valid_ppl"],
                "best_rnn": best_rnn["run_id"],
                "best_rnn_parameters": best_rnn["parameters"],
                "best_rnn_valid_ppl": best_rnn["valid_ppl"],
                "leader": "rnn" if best_rnn["valid_ppl"] < best_ff["valid_ppl"] else "ff",
            }
        )
    table = pd.DataFrame(rows, columns=list(RANKING_COLUMNS))
    return table.sort_values(["corpus", "scale", "epoch"], ignore_index=True)


def _kept_model_by_epoch(at_epoch: pd.DataFrame) -> pd.DataFrame:
    """Each run's validation perplexity after every epoch of its corpus and scale, as the best so far, carried
    past the run's last epoch up to the last epoch any run of the group trained."""
    at_epoch = at_epoch[at_epoch["valid_ppl"].notna()].sort_values(["run_id", "epoch"])
    last = at_epoch.groupby(["corpus", "scale"])["epoch"].transform("max")
    frames = []
    for _, run in at_epoch.assign(group_last=last).groupby("run_id", sort=False):
        epochs = pd.RangeIndex(int(run["epoch"].min()), int(run["group_last"].max()) + 1, name="epoch")
        best = run.set_index("epoch")["valid_ppl"].cummin().reindex(epochs).ffill()
        first = run.iloc[0]
        frames.append(
            pd.DataFrame({"epoch": epochs, "valid_ppl": best.to_numpy()}).assign(**{c: first[c] for c in _RUN_FIELDS})
        )
    return (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["epoch", "valid_ppl", *_RUN_FIELDS])
    )


# What a run carries into every epoch row of _kept_model_by_epoch.
_RUN_FIELDS = ("run_id", "setting", "corpus", "scale", "family", "context", "hidden", "parameters", "status")


def ranking_settled(ranking: pd.DataFrame) -> pd.DataFrame:
    """Per corpus and scale: whether the ranking held between the last two epochs of ranking_by_epoch (the
    best run's family and the count of matched points the RNN wins both unchanged), and the first epoch from
    which the best run's family never changed again. One epoch is not enough to tell: ``settled`` NA."""
    rows = []
    for (corpus, scale), group in ranking.groupby(["corpus", "scale"], sort=False):
        group = group.sort_values("epoch")
        leaders = group["leader"].tolist()
        since = len(leaders) - 1
        while since > 0 and leaders[since - 1] == leaders[-1]:
            since -= 1
        last = group.iloc[-1]
        settled = pd.NA
        if len(group) >= 2:
            before = group.iloc[-2]
            settled = bool(before["leader"] == last["leader"] and before["rnn_leads"] == last["rnn_leads"])
        rows.append(
            {
                "corpus": corpus,
                "scale": scale,
                "last_epoch": int(last["epoch"]),
                "leader": last["leader"],
                "leader_since_epoch": int(group["epoch"].iloc[since]),
                "rnn_leads": int(last["rnn_leads"]),
                "matched": int(last["matched"]),
                "settled": settled,
            }
        )
    columns = ["corpus", "scale", "last_epoch", "leader", "leader_since_epoch", "rnn_leads", "matched", "settled"]
    return pd.DataFrame(rows, columns=columns).astype({"settled": "boolean"})
