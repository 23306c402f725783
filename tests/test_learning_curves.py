"""The families' ranking after each epoch, on validation perplexity, and whether it settled."""

from __future__ import annotations

import pandas as pd
from test_crossover import cost_table

from rnnbench.results.learning_curves import ranking_by_epoch, ranking_settled


def _curves(valid_by_run) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"run_id": r, "epoch": e + 1, "valid_ppl": v}
            for r, values in valid_by_run.items()
            for e, v in enumerate(values)
        ]
    )


def test_ranking_by_epoch_follows_the_kept_models():
    # ff2 (4,400 parameters) trains two epochs; rnn0 (1,000) and rnn1 (4,000) three. rnn1 is ff2's match (4,000 /
    # 4,400 = 0.91, within 1.25). Epoch 1: 260 > 250, ff2 leads. Epoch 2: 180 < 210, the RNN leads. Epoch 3: ff2
    # has stopped and keeps 210; rnn1 is at 160: still the RNN, and the last two epochs agree.
    crossover = cost_table([("rnn", 1000, 1.0, 0.0), ("rnn", 4000, 1.0, 0.0), ("ff", 4400, 1.0, 0.0)])
    curves = _curves({"rnn0": [300.0, 220.0, 230.0], "rnn1": [260.0, 180.0, 160.0], "ff2": [250.0, 210.0]})
    ranking = ranking_by_epoch(curves, crossover).set_index("epoch")
    assert ranking["matched"].tolist() == [1, 1, 1]
    assert ranking["rnn_leads"].tolist() == [0, 1, 1]
    assert ranking["best_ff_valid_ppl"].tolist() == [250.0, 210.0, 210.0]  # carried past its last epoch
    assert ranking["best_rnn"].tolist() == ["rnn1", "rnn1", "rnn1"]
    assert ranking["best_rnn_valid_ppl"].tolist() == [260.0, 180.0, 160.0]
    assert ranking["leader"].tolist() == ["ff", "rnn", "rnn"]
    settled = ranking_settled(ranking.reset_index()).iloc[0]
    assert settled["last_epoch"] == 3 and settled["leader"] == "rnn" and settled["leader_since_epoch"] == 2
    assert bool(settled["settled"])


def test_ranking_not_settled_while_the_count_moves():
    # ff2 (1,100 parameters) is matched by rnn0 (1,000), ff3 (3,800) by rnn1 (4,000). Epoch 1: the RNN beats
    # neither (300 against 250 and 280); epoch 2: one of the two (rnn1 200 against ff3's 210). The best run is an
    # ff run at both epochs, but the matched count moved, so the ranking has not settled.
    crossover = cost_table(
        [("rnn", 1000, 1.0, 0.0), ("rnn", 4000, 1.0, 0.0), ("ff", 1100, 1.0, 0.0), ("ff", 3800, 1.0, 0.0)]
    )
    curves = _curves({"rnn0": [300.0, 200.0], "rnn1": [300.0, 200.0], "ff2": [250.0, 150.0], "ff3": [280.0, 210.0]})
    ranking = ranking_by_epoch(curves, crossover)
    assert ranking["rnn_leads"].tolist() == [0, 1] and ranking["leader"].tolist() == ["ff", "ff"]
    settled = ranking_settled(ranking).iloc[0]
    assert not settled["settled"] and settled["leader_since_epoch"] == 1
    one_epoch = ranking_settled(ranking[ranking["epoch"] == 1]).iloc[0]
    assert pd.isna(one_epoch["settled"])


def test_ranking_leaves_out_failed_runs():
    crossover = cost_table([("rnn", 1000, 1.0, 0.0), ("ff", 2000, 1.0, 0.0)])
    crossover.loc[crossover["run_id"] == "rnn0", "status"] = "diverged"
    ranking = ranking_by_epoch(_curves({"rnn0": [100.0], "ff1": [250.0]}), crossover)
    assert ranking.empty  # no learned RNN: no row claims a leader
