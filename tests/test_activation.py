"""The activation studies side by side: rnnbench.results.activation's table, rnnbench.plots.activation_figures' figure
and rnnbench.book.activation's values, on a planted study whose every number is written here by hand."""

from __future__ import annotations

import math

import matplotlib.colors
import pandas as pd
import pytest

from rnnbench.book import activation as book
from rnnbench.plots.activation_figures import activation_figure
from rnnbench.plots.style import DIVERGED_COLOR
from rnnbench.results.activation import activation_table, speed_metric

# A PTB study of three runs from the default start: tanh learned (400 steps to the common loss, validation perplexity
# 280, every step clipped), the sigmoid learned (600 steps, 320, half the steps clipped), ReLU diverged at step 12
# (no steps, no perplexity, no units; three of its four steps clipped). Listed out of the chapter's order.
RUNS = [("r-relu", "relu", "diverged"), ("r-tanh", "tanh", "learned"), ("r-sig", "sigmoid", "learned")]
METRICS = {
    "r-tanh": {"test_ppl": 260.0, "valid_ppl": 280.0, "clipped_fraction": 1.0, "diverged_step": math.nan},
    "r-sig": {"test_ppl": 300.0, "valid_ppl": 320.0, "clipped_fraction": 0.5, "diverged_step": math.nan},
    "r-relu": {"test_ppl": 7e11, "valid_ppl": math.nan, "clipped_fraction": 0.75, "diverged_step": 12.0},
}


def planted() -> pd.DataFrame:
    summary = pd.DataFrame(
        [
            {"study": "act", "run_id": run, "seed": 1, "activation": act, "outcome": outcome, "metric": m, "value": v}
            for run, act, outcome in RUNS
            for m, v in METRICS[run].items()
        ]
    )
    record = {"name": "act", "corpus": "ptb", "metric": "test_ppl", "vary": ["activation"]}
    speed = pd.DataFrame(
        {"run_id": ["r-relu", "r-tanh", "r-sig"], "target_ppl": 350.0, "steps_to_target": [math.nan, 400.0, 600.0]}
    )
    units = pd.DataFrame(
        {
            "run_id": ["r-relu", "r-tanh", "r-sig"],
            "silent_fraction": [math.nan, 0.0, 0.0],
            "units": [math.nan, 100, 100],
        }
    )
    return activation_table({"act": (summary, record, speed, units)})


def test_the_table_holds_each_run_in_the_chapters_order_its_failure_an_outcome():
    table = planted()
    assert list(table["activation"]) == ["tanh", "sigmoid", "relu"]
    assert list(table["start"]) == ["default"] * 3  # a study that does not vary the start trained from the default
    assert set(table["metric"]) == {"valid_ppl"}  # speed is read on validation, never on test
    assert list(table["value"].iloc[:2]) == [280.0, 320.0]
    assert math.isnan(table["value"].iloc[2])  # the diverged run's number is no result
    assert list(table["clipped_fraction"]) == [1.0, 0.5, 0.75]  # the recipe's doing, whatever the outcome
    assert list(table["diverged_step"].fillna(0)) == [0, 0, 12]
    assert speed_metric("agreement_accuracy") == "agreement_accuracy"


def test_a_setting_counts_its_outcomes_and_averages_only_what_learned():
    table = planted()
    tanh, relu = book.setting(table, "act", "tanh"), book.setting(table, "act", "relu")
    assert (tanh.runs, tanh.learned, tanh.diverged, tanh.steps, tanh.value) == (1, 1, 0, 400.0, 280.0)
    assert (relu.runs, relu.learned, relu.diverged, relu.diverged_at) == (1, 0, 1, "12")
    assert math.isnan(relu.steps) and math.isnan(relu.value)
    assert relu.clipped == "75%" and tanh.clipped == "100%"
    assert book.outcomes(relu) == "1 diverged"
    assert book.setting(table, "act", "tanh", "identity").runs == 0  # a start the study never trained from


def test_activations_clipped_in_different_regimes_are_a_confounded_comparison():
    table = planted()
    # every step (tanh) against often (the sigmoid, ReLU): the threshold did not treat them alike
    assert book.clip_differs(table, "act")
    rare = table.assign(clipped_fraction=[0.0, 0.01, 0.02])  # never and rare spikes: the chapter's clipping, alike
    assert not book.clip_differs(rare, "act")
    alike = table.assign(clipped_fraction=[1.0, 0.95, 0.99])  # every step, all of them: alike too
    assert not book.clip_differs(alike, "act")
    # tanh and the sigmoid at rare spikes, the diverged ReLU run at every step on its way up: its share is the
    # explosion's, not the threshold's, so the two that trained were treated alike
    exploded = table.assign(clipped_fraction=[0.01, 0.02, 1.0])
    assert not book.clip_differs(exploded, "act")


def test_the_outcome_table_has_a_row_per_setting_and_marks_what_is_missing():
    shown = book.outcome_table(planted())
    assert list(shown["activation"]) == ["tanh", "sigmoid", "relu"]
    assert list(shown["runs"]) == ["1 learned", "1 learned", "1 diverged"]
    assert list(shown["steps to the loss"]) == ["400", "600", "–"]
    assert list(shown["diverged at step"]) == ["–", "–", "12"]


def _points(ax) -> list[tuple[float, float, str]]:
    """(x, y, colour) of every point an axis drew, y in the axes' fraction where the point is drawn so."""
    found = []
    for collection in ax.collections:
        for x, y in collection.get_offsets():
            colours = collection.get_edgecolor() if len(collection.get_edgecolor()) else collection.get_facecolor()
            found.append((float(x), float(y), matplotlib.colors.to_hex(colours[0])))
    return found


def test_the_figure_marks_the_diverged_run_at_the_top_and_draws_the_others_at_their_values():
    figure = activation_figure(planted())
    steps, metric, silent, clipped = figure.axes[:4]
    diverged = [p for p in _points(steps) if p[2] == matplotlib.colors.to_hex(DIVERGED_COLOR)]
    assert len(diverged) == 1 and diverged[0][1] == pytest.approx(0.93)  # at the top, in the axes' fraction
    values = sorted(p[1] for p in _points(steps) if p[2] != matplotlib.colors.to_hex(DIVERGED_COLOR))
    assert values == [400.0, 600.0]
    assert sorted(p[1] for p in _points(metric)) == [0.93, 280.0, 320.0]  # the diverged run at the top
    assert sorted(p[1] for p in _points(clipped)) == [50.0, 75.0, 100.0]  # per cent; the diverged run's too
    assert steps.get_ylim()[1] > 600  # room above the values for the run that has none
    assert [t.get_text() for t in steps.get_xticklabels()] == ["tanh", "σ", "ReLU"]
