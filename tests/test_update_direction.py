"""A clipping study's table of the clipped steps whose update was measured, and its figure."""

import math

import pandas as pd

from rnnbench.plots.ablation_figures import update_cosine
from rnnbench.results.ablations import runs_frame, study_extras
from rnnbench.results.update_direction import update_table


def steps(clipped, cosines):
    """steps.csv of a run: steps 1.., a norm of 2 each, booleans written as text, as pandas reads them back."""
    n = len(clipped)
    return pd.DataFrame(
        {
            "step": range(1, n + 1),
            "epoch": 1,
            "lr": 0.01,
            "loss": 5.0,
            "grad_norm": [2.0] * n,
            "clipped": [str(c) for c in clipped],
            "clip_cosine": 1.0,
            "update_cosine": cosines,
        }
    )


def test_the_table_keeps_the_clipped_measured_steps_of_every_run_and_drops_where_a_run_diverged():
    # a: steps 1 and 3 measured (step 2 not), step 3 not clipped (cosine 1): only step 1 is kept.
    # b: diverged at its last step 3, measured and clipped there: its update never counted, so only step 1.
    # c: trained before the update was measured (no column): no rows. d: unclipped (clip .inf): nothing measured.
    record = {"run_ids": ["a", "b", "c", "d"], "vary": ["clip"]}
    points = [
        {"clip": 0.1, "seed": 1},
        {"clip": 0.1, "seed": 2},
        {"clip": 0.25, "seed": 1},
        {"clip": math.inf, "seed": 1},
    ]
    outcomes = {"a": "learned", "b": "diverged", "c": "learned", "d": "learned"}
    runs = runs_frame(record, points, outcomes)
    records = {
        "a": steps([True, True, False], [0.8, math.nan, 1.0]),
        "b": steps([True, False, True], [0.9, math.nan, 0.2]),
        "c": steps([True], [0.5]).drop(columns="update_cosine"),
        "d": steps([False, False], [math.nan, math.nan]),
    }
    table = update_table(runs, records, ["clip"], {"clip_mode": "norm", "lr": 0.01})
    assert list(table.columns) == [
        *("run_id", "clip", "seed", "clip_mode", "step", "epoch", "grad_norm", "clip_cosine", "update_cosine"),
        *("outcome", "diverged"),
    ]
    assert table[["run_id", "step", "update_cosine", "outcome"]].values.tolist() == [
        ["a", 1, 0.8, "learned"],
        ["b", 1, 0.9, "diverged"],
    ]
    assert (table["clip_mode"] == "norm").all() and table["clip"].tolist() == [0.1, 0.1]
    assert update_table(runs.iloc[0:0], {}, ["clip"], {}).empty


def test_a_study_gets_the_update_table_where_it_varies_clipping_and_its_runs_measure_the_update():
    assert study_extras("ptb", ["clip_mode"], "test_ppl", updates=True) == ["trace", "update", "learning"]
    assert study_extras("ptb", ["clip_mode"], "test_ppl") == ["trace", "learning"]  # plain SGD: nothing to measure
    assert study_extras("ptb", ["hidden"], "test_ppl", updates=True) == ["learning"]  # Adam, but clipping not varied


def test_the_figure_draws_each_measured_step_against_its_step_and_how_far_it_was_clipped():
    table = pd.DataFrame(
        {
            "run_id": ["a", "a", "b"],
            "clip": [0.1, 0.1, 0.25],
            "seed": 1,
            "clip_mode": "norm",
            "step": [1, 9, 1],
            "epoch": 1,
            "grad_norm": [0.5, 1.0, 0.5],
            "clip_cosine": 1.0,
            "update_cosine": [0.99, 0.8, 0.95],
            "outcome": ["learned", "learned", "did not learn"],
            "diverged": False,
        }
    )
    fig = update_cosine(table, {"name": "clip_threshold_adam_agreement", "vary": ["clip"]})
    left, right = fig.axes[:2]
    assert right.get_xscale() == "log"
    # ||g|| / threshold on the right: 0.5 / 0.1 = 5 and 1 / 0.1 = 10 for run a, 0.5 / 0.25 = 2 for run b
    xs = sorted(float(x) for c in right.collections for x, _ in c.get_offsets())
    assert xs == [2.0, 5.0, 10.0]
    legend = [t.get_text() for t in right.get_legend().get_texts()]
    assert legend[:2] == ["norm ≤ 0.1", "norm ≤ 0.25"] and "did not learn\nor diverged" in legend
    assert update_cosine(table.iloc[0:0], {"name": "s", "vary": ["clip"]}).axes
