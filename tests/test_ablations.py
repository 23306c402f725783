"""The ablations' tables, on cases worked by hand: accuracy per distance over the seeds that learned, reach of a
window or a segment, the norm trace and clipping read from step records, measurements over the seeds that learned
with the failed ones counted, matched sizes."""

import math

import pandas as pd
import pytest

from rnnbench.results.ablations import (
    clipping_from_steps,
    distance_table,
    learning_table,
    reach_table,
    running_loss,
    runs_frame,
    setting_table,
    speed_table,
    study_extras,
    trace_table,
)
from rnnbench.results.matching import matched_pairs


def agreement(rows):
    return pd.DataFrame(rows, columns=["distance", "n", "accuracy"])


@pytest.fixture
def bptt_runs():
    """Three truncation lengths, three seeds each. At k = 10 two seeds learned and the third did not; at k = 2
    one learned, one diverged (no agreement table) and one did not learn; at k = 1 none learned."""
    record = {"name": "truncation", "run_ids": ["a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3"], "vary": ["bptt"]}
    points = [{"bptt": k, "seed": seed} for k in (10, 2, 1) for seed in (1, 2, 3)]
    outcomes = {
        "a1": "learned",
        "a2": "learned",
        "a3": "did not learn",
        "b1": "learned",
        "b2": "diverged",
        "b3": "did not learn",
        "c1": "did not learn",
        "c2": "diverged",
        "c3": "did not learn",
    }
    return runs_frame(record, points, outcomes)


def test_accuracy_per_distance_is_the_mean_and_range_over_the_seeds_that_learned(bptt_runs):
    tables = {
        "a1": agreement([(1, 10, 1.0), (5, 4, 0.5)]),
        "a2": agreement([(1, 10, 0.8), (5, 6, 0.75)]),
        "a3": agreement([(1, 10, 0.5), (5, 5, 0.2)]),  # did not learn: counted, never averaged in
        "b1": agreement([(1, 10, 0.9), (5, 5, 0.4)]),
        "b3": agreement([(1, 10, 0.5), (5, 5, 0.5)]),
        "c1": agreement([(1, 10, 0.5), (5, 5, 0.5)]),
        "c3": agreement([(1, 10, 0.5), (5, 5, 0.5)]),
    }
    table = distance_table(bptt_runs, tables, ["bptt"])
    # Config order of the setting (10, 2, 1), then distance.
    assert list(zip(table["bptt"], table["distance"], strict=True)) == [
        (10, 1),
        (10, 5),
        (2, 1),
        (2, 5),
        (1, 1),
        (1, 5),
    ]
    k10_d5 = table.iloc[1]
    assert (k10_d5["runs"], k10_d5["seeds_learned"], k10_d5["seeds_failed"], k10_d5["diverged_runs"]) == (3, 2, 1, 0)
    assert k10_d5["probes"] == 10  # 4 + 6 probes of the two seeds that learned; a3's 5 left out
    # (0.5 + 0.75) / 2 = 0.625, each seed one measurement; with a3 it would be (0.5 + 0.75 + 0.2) / 3 = 0.483
    assert k10_d5["accuracy_mean"] == pytest.approx(0.625)
    assert (k10_d5["accuracy_min"], k10_d5["accuracy_max"]) == (0.5, 0.75)
    assert k10_d5["accuracy_sd"] == pytest.approx(math.sqrt(2 * 0.125**2))  # sample sd of 0.5, 0.75
    k2_d1 = table.iloc[2]
    # one learned (0.9), one diverged, one did not learn (0.5): the mean is b1's alone
    assert (k2_d1["runs"], k2_d1["seeds_learned"], k2_d1["seeds_failed"], k2_d1["diverged_runs"]) == (3, 1, 2, 1)
    assert k2_d1["accuracy_mean"] == pytest.approx(0.9) and math.isnan(k2_d1["accuracy_sd"])
    # no seed learned at k = 1: its distances are listed, with no mean, and marked by seeds_learned = 0
    k1 = table[table["bptt"] == 1]
    assert len(k1) == 2 and (k1["seeds_learned"] == 0).all() and (k1["seeds_failed"] == 3).all()
    assert k1["accuracy_mean"].isna().all() and (k1["probes"] == 0).all()


def test_a_run_that_finished_without_its_agreement_table_is_an_error(bptt_runs):
    with pytest.raises(ValueError, match="a2 did not diverge"):
        distance_table(bptt_runs, {"a1": agreement([(1, 1, 1.0)]), "b1": agreement([(1, 1, 1.0)])}, ["bptt"])


def test_a_run_missing_from_the_summary_is_an_error():
    with pytest.raises(ValueError, match="run r2 of study s has no outcome"):
        runs_frame({"name": "s", "run_ids": ["r1", "r2"]}, [{"seed": 1}, {"seed": 2}], {"r1": "learned"})


def test_reach_splits_distances_at_the_width_and_weights_by_probes():
    distances = pd.DataFrame(
        {
            "context": [2, 2, 2, 0, 0, 4],
            "distance": [1, 2, 3, 1, 9, 1],
            "runs": [2, 2, 2, 2, 2, 2],
            "seeds_learned": [2, 2, 2, 1, 1, 0],
            "probes": [10, 30, 20, 5, 5, 0],
            "accuracy_mean": [0.9, 0.7, 0.5, 0.6, 0.8, math.nan],
        }
    )
    reach = reach_table(distances, "context").set_index("context")
    # Within a window of 2: (10 * 0.9 + 30 * 0.7) / 40 = 0.75; beyond it, the one distance 3 at 0.5.
    assert reach.loc[2, "within_accuracy"] == pytest.approx(0.75)
    assert reach.loc[2, "within_probes"] == 40
    assert reach.loc[2, "beyond_accuracy"] == pytest.approx(0.5)
    # Width 0 (full-sentence BPTT) reaches everything: (5 * 0.6 + 5 * 0.8) / 10, nothing beyond.
    assert reach.loc[0, "width"] == math.inf
    assert reach.loc[0, "within_accuracy"] == pytest.approx(0.7)
    assert math.isnan(reach.loc[0, "beyond_accuracy"]) and reach.loc[0, "beyond_probes"] == 0
    # The setting's seed counts come along; where no seed learned there is no accuracy.
    assert (reach.loc[0, "seeds_learned"], reach.loc[0, "runs"]) == (1, 2)
    assert reach.loc[4, "seeds_learned"] == 0 and math.isnan(reach.loc[4, "within_accuracy"])


def test_fraction_clipped_and_cosine_are_read_from_the_step_records():
    # Four steps, two clipped with cosines 0.9 and 0.7 (as steps.csv writes booleans: True/False).
    steps = pd.DataFrame({"clipped": ["True", "False", "True", "False"], "clip_cosine": [0.9, 1.0, 0.7, 1.0]})
    stats = clipping_from_steps(steps)
    assert stats["clipped_fraction"] == pytest.approx(0.5)
    assert stats["clip_cosine_mean"] == pytest.approx(0.8)  # over the clipped steps only
    assert stats["clip_cosine_min"] == pytest.approx(0.7)
    unclipped = clipping_from_steps(pd.DataFrame({"clipped": [False, False], "clip_cosine": [1.0, 1.0]}))
    assert unclipped["clipped_fraction"] == 0 and math.isnan(unclipped["clip_cosine_mean"])


def test_the_trace_holds_the_first_seeds_runs_and_marks_where_a_diverged_run_stopped():
    record = {"run_ids": ["n1", "n2", "v1"], "vary": ["clip_mode"]}
    runs = runs_frame(
        record,
        [{"clip_mode": "none", "seed": 1}, {"clip_mode": "none", "seed": 2}, {"clip_mode": "value", "seed": 1}],
        {"n1": "diverged", "n2": "learned", "v1": "did not learn"},
    )

    def step(norms):
        return pd.DataFrame(
            {"step": range(1, len(norms) + 1), "loss": 5.0, "grad_norm": norms, "clipped": False, "clip_cosine": 1.0}
        )

    trace = trace_table(runs, {"n1": step([1.0, 80.0]), "v1": step([1.0, 2.0, 3.0])}, ["clip_mode"])
    assert set(trace["run_id"]) == {"n1", "v1"}  # seed 2 is not traced
    last = trace[trace["last"]]
    assert list(zip(last["run_id"], last["step"], last["grad_norm"], strict=True)) == [("n1", 2, 80.0), ("v1", 3, 3.0)]
    assert trace.loc[trace["run_id"] == "n1", "diverged"].all()
    assert set(trace.loc[trace["run_id"] == "v1", "outcome"]) == {"did not learn"}


def test_learning_curves_sum_each_runs_tokens_and_seconds_over_its_epochs():
    record = {"run_ids": ["h1", "h2"], "vary": ["hidden"]}
    runs = runs_frame(
        record, [{"hidden": 100, "seed": 1}, {"hidden": 200, "seed": 1}], {"h1": "learned", "h2": "diverged"}
    )
    # h1: two epochs of 1,000 tokens at 100 tok/s (10 s each); h2 finished one epoch of 600 tokens in 3 s and
    # diverged in its second, which has no validation perplexity.
    epochs = {
        "h1": pd.DataFrame(
            {
                "epoch": [1, 2],
                "lr": [0.002, 0.001],
                "train_ppl": [400.0, 250.0],
                "valid_ppl": [300.0, 220.0],
                "tokens_per_second": [100.0, 100.0],
                "seconds": [10.0, 10.0],
            }
        ),
        "h2": pd.DataFrame(
            {
                "epoch": [1, 2],
                "lr": [0.002, 0.002],
                "train_ppl": [500.0, math.nan],
                "valid_ppl": [450.0, math.nan],
                "tokens_per_second": [200.0, 50.0],
                "seconds": [3.0, 2.0],
            }
        ),
    }
    table = learning_table(runs, epochs, ["hidden"])
    assert list(table["tokens_seen"]) == [1_000, 2_000, 600, 700]
    assert list(table["seconds_trained"]) == [10.0, 20.0, 3.0, 5.0]
    assert list(table["hidden"]) == [100, 100, 200, 200]
    assert table.loc[table["run_id"] == "h2", "diverged"].all()
    assert math.isnan(table["valid_ppl"].iloc[3]) and table["valid_ppl"].iloc[1] == 220.0
    with pytest.raises(ValueError, match="tokens_per_second"):
        learning_table(runs, {k: v.drop(columns="tokens_per_second") for k, v in epochs.items()}, ["hidden"])


def summary_rows(runs):
    """A long summary (as summary.csv) from (run, lr, seed, outcome, {metric: value}) tuples."""
    rows = []
    for run, lr, seed, state, metrics in runs:
        for metric, value in metrics.items():
            value = float("nan") if value is None else float(value)
            rows.append({"run_id": run, "lr": lr, "seed": seed, "outcome": state, "metric": metric, "value": value})
    return pd.DataFrame(rows)


def measured(ppl, valid, diverged=0, step=None, clipped=0.5):
    return {
        "test_ppl": ppl,
        "valid_ppl": valid,
        "diverged": diverged,
        "diverged_step": step,
        "clipped_fraction": clipped,
    }


@pytest.fixture
def three_seeds():
    """Three settings of three seeds each, judged as rnnbench.results.outcome would against a unigram of 1,000:

    lr 1    two learned (200, 220), one did not learn (900: above 0.75 x 1,000)
    lr 2    one learned (300), one did not learn (800), one diverged (blew up to 7.9e11 before it was caught)
    lr 5    none learned: two did not learn (950, 990), one diverged with no perplexity
    """
    return summary_rows(
        [
            ("a1", 1.0, 1, "learned", measured(200.0, 210.0, clipped=0.25)),
            ("a2", 1.0, 2, "learned", measured(220.0, 230.0, clipped=0.75)),
            ("a3", 1.0, 3, "did not learn", measured(900.0, 910.0, clipped=0.0)),
            ("b1", 2.0, 1, "learned", measured(300.0, 310.0)),
            ("b2", 2.0, 2, "did not learn", measured(800.0, 805.0)),
            ("b3", 2.0, 3, "diverged", measured(7.9e11, None, diverged=1, step=12, clipped=1.0)),
            ("c1", 5.0, 1, "did not learn", measured(950.0, 960.0)),
            ("c2", 5.0, 2, "diverged", measured(None, None, diverged=1, step=7, clipped=1.0)),
            ("c3", 5.0, 3, "did not learn", measured(990.0, 995.0)),
        ]
    )


def test_setting_table_averages_the_seeds_that_learned_and_counts_the_rest(three_seeds):
    table = setting_table(three_seeds, ["lr"], ["test_ppl", "clipped_fraction", "diverged_step"]).set_index("lr")
    counts = table[["runs", "seeds_learned", "seeds_failed", "diverged_runs"]]
    assert counts.loc[1.0].tolist() == [3, 2, 1, 0]
    assert counts.loc[2.0].tolist() == [3, 1, 2, 1]
    assert counts.loc[5.0].tolist() == [3, 0, 3, 1]
    # lr 1: (200 + 220) / 2 = 210, not (200 + 220 + 900) / 3 = 440
    assert table.loc[1.0, "test_ppl_mean"] == pytest.approx(210.0)
    assert (table.loc[1.0, "test_ppl_min"], table.loc[1.0, "test_ppl_max"]) == (200.0, 220.0)
    assert table.loc[1.0, "clipped_fraction_mean"] == pytest.approx(0.5)  # (0.25 + 0.75) / 2; a3's 0.0 left out
    # lr 2: the one seed that learned, 300; neither 800 nor 7.9e11 enters the mean or the range
    assert table.loc[2.0, ["test_ppl_mean", "test_ppl_min", "test_ppl_max"]].tolist() == [300.0, 300.0, 300.0]
    assert table.loc[2.0, "clipped_fraction_mean"] == pytest.approx(0.5)  # the diverged run's 1.0 left out
    # lr 5: no seed learned, so no mean
    assert table.loc[5.0, ["test_ppl_mean", "test_ppl_min", "test_ppl_max", "clipped_fraction_mean"]].isna().all()
    # the divergence step is the diverged runs' own measure
    assert table.loc[2.0, "diverged_step_mean"] == 12 and table.loc[5.0, "diverged_step_min"] == 7
    assert math.isnan(table.loc[1.0, "diverged_step_mean"])


def test_a_seed_whose_test_column_stuck_is_counted_and_left_out_of_the_test_mean():
    # Three seeds that learned. Seed 3's worst test column read at 46,146 against a median column of 257 (above
    # 5 x 257 = 1,285): its test perplexity, 439, is that column's doing. Seed 1's worst, 320, is within it.
    def with_columns(ppl, valid, worst, median):
        return {**measured(ppl, valid), "test_column_worst": worst, "test_column_median": median}

    summary = summary_rows(
        [
            ("k1", 35.0, 1, "learned", with_columns(230.0, 280.0, 320.0, 250.0)),
            ("k2", 35.0, 2, "learned", with_columns(226.0, 279.0, 300.0, 240.0)),
            ("k3", 35.0, 3, "learned", with_columns(439.3, 279.7, 46_146.0, 257.0)),
        ]
    )
    row = setting_table(summary, ["lr"], ["test_ppl", "valid_ppl"]).iloc[0]
    assert (row["seeds_learned"], row["seeds_stuck"]) == (3, 1)
    assert row["test_ppl_mean"] == pytest.approx(228.0)  # (230 + 226) / 2, not (230 + 226 + 439.3) / 3
    assert row["test_ppl_max"] == 230.0
    assert row["valid_ppl_mean"] == pytest.approx((280.0 + 279.0 + 279.7) / 3)  # validation read it fine


def test_setting_table_refuses_a_summary_without_outcomes(three_seeds):
    with pytest.raises(ValueError, match="no 'outcome' column.*rule study_summary"):
        setting_table(three_seeds.drop(columns="outcome"), ["lr"], ["test_ppl"])


def test_each_window_is_paired_with_the_rnn_of_the_nearest_parameter_count():
    # Feed-forward with |V| = 313, d = 32, H = 64: 30,425 + 2,048 (n-1) parameters (rnnbench.params);
    # an Elman RNN of hidden size H: 10,329 + 346 H + H^2.
    ff = pd.DataFrame({"context": [2, 16], "parameters": [34_521, 63_193]})
    rnn = pd.DataFrame({"hidden": [60, 85, 115], "parameters": [34_689, 46_964, 63_344]})
    pairs = matched_pairs(ff, rnn).set_index("context")
    assert pairs.loc[2, "hidden"] == 60 and pairs.loc[16, "hidden"] == 115
    assert pairs.loc[2, "ratio"] == pytest.approx(34_689 / 34_521)
    with pytest.raises(ValueError, match="no Elman RNN"):
        matched_pairs(ff, rnn.iloc[0:0])


def test_steps_to_the_loss_every_learned_run_reaches():
    """Window 2. tanh's losses 5, 5, 4, 4, 3, 3 run 5, 4.5, 4, 3.5, 3 from step 2, lowest 3; sigmoid's 5, 5, 5, 5,
    4, 4 run 5, 5, 5, 4.5, 4, lowest 4. The target is the higher lowest, 4 (perplexity e^4 = 54.598): tanh reaches
    it at step 4, the sigmoid at step 6. The relu run did not learn and gets no count, though its loss fell to 2."""
    losses = {"tanh": [5, 5, 4, 4, 3, 3], "sigmoid": [5, 5, 5, 5, 4, 4], "relu": [5, 4, 3, 2, 2, 2]}
    runs = pd.DataFrame(
        {
            "run_id": list(losses),
            "activation": list(losses),
            "seed": [1, 1, 1],
            "outcome": ["learned", "learned", "did not learn"],
            "diverged": [False] * 3,
        }
    )
    steps = {run: pd.DataFrame({"step": range(1, 7), "loss": loss}) for run, loss in losses.items()}
    table = speed_table(runs, steps, ["activation"], window=2).set_index("activation")
    assert table["lowest_loss"].tolist() == [3.0, 4.0, 2.0]
    assert set(table["target_loss"]) == {4.0} and table["target_ppl"].iloc[0] == pytest.approx(54.59815)
    assert table.loc["tanh", "steps_to_target"] == 4 and table.loc["sigmoid", "steps_to_target"] == 6
    assert math.isnan(table.loc["relu", "steps_to_target"]) and table["steps"].tolist() == [6, 6, 6]
    # a thinned steps.csv has no running mean over steps, and the error names the run and the setting to raise
    thinned = pd.DataFrame({"step": [1, 3, 5], "loss": [5, 4, 3]})
    with pytest.raises(ValueError, match="thinned"):
        running_loss(thinned, window=2)
    with pytest.raises(ValueError, match="run sigmoid: steps.csv is thinned .* steps_max_rows"):
        speed_table(runs, {**steps, "sigmoid": thinned}, ["activation"], window=2)


def test_extras_follow_what_the_study_is():
    # a recurrence at several truncation lengths: each run's accuracy within reach and beyond it
    assert study_extras("agreement", ["bptt"], "agreement_accuracy") == ["distance", "reach"]
    assert study_extras("agreement", ["clip_mode", "lr"], "agreement_accuracy") == ["distance", "trace"]
    assert study_extras("agreement", ["clip_mode", "lr"], "test_ppl") == ["trace", "learning"]
    assert study_extras("ptb", ["clip"], "test_ppl") == ["trace", "learning"]
    assert study_extras("ptb", ["hidden"], "test_ppl") == ["learning"]
    assert study_extras("ptb", ["hidden"], "agreement_accuracy") == []
    # runs that cut the gradient within sentences: the probes each cut separates from their head, and the others
    assert study_extras("agreement", ["bptt"], "agreement_accuracy", sentence_cuts=True) == [
        "distance",
        "cuts",
        "reach",
    ]
    assert study_extras("agreement", ["bptt"], "test_ppl", sentence_cuts=True) == ["learning"]
    # an Elman study of activations: its dead units and its steps to a common training loss
    assert study_extras("ptb", ["activation"], "test_ppl") == ["learning", "units", "speed"]
    assert study_extras("ptb", ["activation"], "test_ppl", family="ff") == ["learning"]
