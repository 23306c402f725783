"""The ablations' tables, on cases worked by hand: accuracy per distance over seeds, reach of a window or a
segment, the norm trace and clipping read from step records, measurements over seeds, matched sizes."""

import math

import pandas as pd
import pytest

from rnnbench.ablations import (
    clipping_from_steps,
    distance_table,
    matched_pairs,
    reach_table,
    runs_frame,
    setting_table,
    study_extras,
    trace_table,
)


def agreement(rows):
    return pd.DataFrame(rows, columns=["distance", "n", "accuracy"])


@pytest.fixture
def bptt_runs():
    """Two truncation lengths, two seeds each; the second seed at k = 2 diverged (no agreement table)."""
    record = {"run_ids": ["a1", "a2", "b1", "b2"], "vary": ["bptt"]}
    points = [{"bptt": 10, "seed": 1}, {"bptt": 10, "seed": 2}, {"bptt": 2, "seed": 1}, {"bptt": 2, "seed": 2}]
    metrics = [{"diverged": False}, {"diverged": False}, {"diverged": False}, {"diverged": True}]
    return runs_frame(record, points, metrics)


def test_accuracy_per_distance_is_the_mean_and_range_over_the_seeds_that_did_not_diverge(bptt_runs):
    tables = {
        "a1": agreement([(1, 10, 1.0), (5, 4, 0.5)]),
        "a2": agreement([(1, 10, 0.8), (5, 6, 0.75)]),
        "b1": agreement([(1, 10, 0.9), (5, 5, 0.4)]),
    }
    table = distance_table(bptt_runs, tables, ["bptt"])
    # Config order of the setting (10 before 2), then distance.
    assert list(zip(table["bptt"], table["distance"])) == [(10, 1), (10, 5), (2, 1), (2, 5)]
    k10_d5 = table.iloc[1]
    assert k10_d5["seeds"] == 2 and k10_d5["probes"] == 10  # 4 + 6 probes
    assert k10_d5["accuracy_mean"] == pytest.approx(0.625)  # (0.5 + 0.75) / 2: each seed one measurement
    assert (k10_d5["accuracy_min"], k10_d5["accuracy_max"]) == (0.5, 0.75)
    assert k10_d5["accuracy_sd"] == pytest.approx(math.sqrt(2 * 0.125**2))  # sample sd of 0.5, 0.75
    k2_d1 = table.iloc[2]
    assert k2_d1["seeds"] == 1 and k2_d1["accuracy_mean"] == pytest.approx(0.9)  # the diverged seed left out
    assert math.isnan(k2_d1["accuracy_sd"])


def test_a_run_that_finished_without_its_agreement_table_is_an_error(bptt_runs):
    with pytest.raises(ValueError, match="a2 did not diverge"):
        distance_table(bptt_runs, {"a1": agreement([(1, 1, 1.0)]), "b1": agreement([(1, 1, 1.0)])}, ["bptt"])


def test_reach_splits_distances_at_the_width_and_weights_by_probes():
    distances = pd.DataFrame(
        {
            "context": [2, 2, 2, 0, 0],
            "distance": [1, 2, 3, 1, 9],
            "probes": [10, 30, 20, 5, 5],
            "accuracy_mean": [0.9, 0.7, 0.5, 0.6, 0.8],
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
        [{"diverged": True}, {"diverged": False}, {"diverged": False}],
    )
    step = lambda norms: pd.DataFrame(
        {"step": range(1, len(norms) + 1), "loss": 5.0, "grad_norm": norms, "clipped": False, "clip_cosine": 1.0}
    )
    trace = trace_table(runs, {"n1": step([1.0, 80.0]), "v1": step([1.0, 2.0, 3.0])}, ["clip_mode"])
    assert set(trace["run_id"]) == {"n1", "v1"}  # seed 2 is not traced
    last = trace[trace["last"]]
    assert list(zip(last["run_id"], last["step"], last["grad_norm"])) == [("n1", 2, 80.0), ("v1", 3, 3.0)]
    assert trace.loc[trace["run_id"] == "n1", "diverged"].all()


def test_setting_table_takes_metrics_over_seeds_that_did_not_diverge_and_divergence_steps_over_those_that_did():
    rows = []
    for run, lr, seed, ppl, diverged, step, clipped in [
        ("a", 1.0, 1, 200.0, 0, None, 0.25),
        ("b", 1.0, 2, 220.0, 0, None, 0.75),
        ("c", 5.0, 1, None, 1, 12, 0.0),
        ("d", 5.0, 2, 300.0, 0, None, 0.5),
        ("e", 5.0, 3, None, 1, 7, 0.0),
    ]:
        for metric, value in [
            ("test_ppl", ppl),
            ("diverged", diverged),
            ("diverged_step", step),
            ("clipped_fraction", clipped),
        ]:
            rows.append(
                {
                    "run_id": run,
                    "lr": lr,
                    "seed": seed,
                    "metric": metric,
                    "value": float("nan") if value is None else float(value),
                }
            )
    table = setting_table(pd.DataFrame(rows), ["lr"], ["test_ppl", "clipped_fraction", "diverged_step"]).set_index("lr")
    every = setting_table(pd.DataFrame(rows), ["lr"], ["clipped_fraction"], every_run=["clipped_fraction"]).set_index(
        "lr"
    )
    assert every.loc[5.0, "clipped_fraction_mean"] == pytest.approx(0.5 / 3)  # 0.0, 0.5, 0.0: diverged runs count
    assert table.loc[1.0, "runs"] == 2 and table.loc[1.0, "diverged_runs"] == 0
    assert table.loc[1.0, "test_ppl_mean"] == pytest.approx(210.0)
    assert table.loc[1.0, "clipped_fraction_mean"] == pytest.approx(0.5)
    assert table.loc[5.0, "diverged_runs"] == 2
    assert table.loc[5.0, "test_ppl_mean"] == pytest.approx(300.0)  # the one seed that trained
    assert table.loc[5.0, "clipped_fraction_mean"] == pytest.approx(0.5)  # diverged runs' 0.0 left out
    assert (table.loc[5.0, "diverged_step_min"], table.loc[5.0, "diverged_step_max"]) == (7, 12)
    assert math.isnan(table.loc[1.0, "diverged_step_mean"])


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


def test_extras_follow_what_the_study_is():
    assert study_extras("agreement", ["bptt"], "agreement_accuracy") == ["distance"]
    assert study_extras("agreement", ["clip_mode", "lr"], "agreement_accuracy") == ["distance", "trace"]
    assert study_extras("agreement", ["clip_mode", "lr"], "test_ppl") == ["trace"]
    assert study_extras("ptb", ["clip"], "test_ppl") == ["trace"]
    assert study_extras("ptb", ["hidden"], "test_ppl") == []
