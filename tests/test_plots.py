"""Study figures on small hand-made summaries: what is drawn, what is marked, what the axes say."""

from __future__ import annotations

import math

import matplotlib.collections
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from rnnbench.plots import style
from rnnbench.plots.decay_figures import BOOK_FIGURES
from rnnbench.plots.study_figures import study_figure


def summary(rows, metric="agreement_accuracy", setting="clip_mode"):
    """Long summary (as summary.csv) from (setting value, seed, metric value, diverged[, outcome]) tuples; the
    outcome is "diverged" for a diverged run and "learned" for the rest unless the tuple names it."""
    out = []
    for i, (value, seed, measured, diverged, *state) in enumerate(rows):
        keys = {
            "study": "s",
            "run_id": f"run-{i}",
            "family": "rnn",
            "corpus": "agreement",
            "seed": seed,
            setting: value,
            "outcome": state[0] if state else ("diverged" if diverged else "learned"),
        }
        out += [{**keys, "metric": metric, "value": measured}, {**keys, "metric": "diverged", "value": float(diverged)}]
    return pd.DataFrame(out)


def study(setting="clip_mode", metric="agreement_accuracy", vary=None):
    return {
        "name": "s",
        "description": "A study",
        "family": "rnn",
        "corpus": "agreement",
        "metric": metric,
        "vary": vary or [setting],
        "fixed": {},
        "seeds": [1, 2],
        "run_ids": [],
    }


def joined_lines(ax):
    """Lines of two or more points drawn with a visible line style (a line joining x positions)."""
    return [line for line in ax.get_lines() if len(line.get_xdata()) > 1 and line.get_linestyle() not in ("None", "")]


def hollow(ax):
    """Markers drawn without a face (runs that did not learn): the offsets of faceless scatter points."""
    found = []
    for collection in ax.collections:
        if not isinstance(collection, matplotlib.collections.PathCollection):  # error bars are line collections
            continue
        faces = collection.get_facecolors()
        if len(collection.get_offsets()) and (len(faces) == 0 or (faces[:, 3] == 0).all()):
            found += [tuple(o) for o in collection.get_offsets()]
    return found


def crosses(ax):
    """Points drawn with the x marker (diverged runs)."""
    found = 0
    for collection in ax.collections:
        paths = collection.get_paths()
        if len(paths) and len(paths[0].vertices) == 4 and len(collection.get_offsets()):  # 'x' is two strokes
            found += len(collection.get_offsets())
    return found


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_categories_are_points_never_a_line():
    table = summary(
        [
            ("none", 1, 0.53, 0),
            ("none", 2, 0.55, 0),
            ("norm", 1, 0.62, 0),
            ("norm", 2, 0.64, 0),
            ("value", 1, 0.50, 0),
            ("value", 2, 0.52, 0),
        ]
    )
    ax = study_figure(table, study()).axes[0]
    assert joined_lines(ax) == []
    assert [t.get_text() for t in ax.get_xticklabels()] == ["none", "norm", "value"]  # config order, not sorted


def test_a_numeric_setting_is_a_line_through_the_seed_means_with_their_range():
    table = summary([(2, 1, 0.50, 0), (2, 2, 0.52, 0), (10, 1, 0.60, 0), (10, 2, 0.66, 0)], setting="bptt")
    ax = study_figure(table, study("bptt")).axes[0]
    (line,) = joined_lines(ax)
    assert list(line.get_xdata()) == [2, 10]
    assert np.allclose(line.get_ydata(), [0.51, 0.63])  # means over seeds
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert math.isclose(band.min(), 0.50) and math.isclose(band.max(), 0.66)  # seeds' min to max


def test_orders_of_magnitude_get_a_log_axis():
    table = summary([(16, 1, 2400.0, 0), (32, 1, 30.0, 0)], metric="test_ppl", setting="hidden")
    ax = study_figure(table, study("hidden", "test_ppl")).axes[0]
    assert ax.get_yscale() == "log"
    close = summary([(16, 1, 240.0, 0), (32, 1, 130.0, 0)], metric="test_ppl", setting="hidden")
    assert study_figure(close, study("hidden", "test_ppl")).axes[0].get_yscale() == "linear"


def test_a_tiny_difference_does_not_fill_the_height():
    """0.501 against 0.508: the range is at least a tenth of the value (0.05), so the gap is under 15%."""
    table = summary([("none", 1, 0.501, 0), ("norm", 1, 0.508, 0)])
    low, high = study_figure(table, study()).axes[0].get_ylim()
    assert high - low >= 0.05
    assert (0.508 - 0.501) / (high - low) < 0.15


def test_diverged_runs_are_crosses_counted_in_the_title():
    """Two of four runs diverged: one with a finite blown-up value, one with none. Neither is a point."""
    table = summary([("none", 1, 7.9e11, 1), ("value", 1, float("nan"), 1), ("norm", 1, 0.62, 0), ("norm", 2, 0.60, 0)])
    ax = study_figure(table, study()).axes[0]
    assert crosses(ax) == 2
    assert "2 of 4 runs diverged" in ax.get_title()
    assert ax.get_ylim()[1] <= 1.0  # 7.9e11 did not stretch the axis
    assert ax.get_yscale() == "linear"


def test_a_figure_whose_runs_all_diverged_says_so():
    table = summary([("none", 1, float("nan"), 1), ("value", 1, 1e26, 1)])
    ax = study_figure(table, study()).axes[0]
    assert crosses(ax) == 2
    assert "2 of 2 runs diverged" in ax.get_title()
    assert any("every run diverged" in t.get_text() for t in ax.texts)


def test_the_second_varied_setting_is_the_colour():
    table = summary([("none", 1, 0.5, 0), ("norm", 1, 0.6, 0)])
    table["lr"] = [1.0, 1.0, 10.0, 10.0]
    ax = study_figure(table, study(vary=["clip_mode", "lr"])).axes[0]
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == ["lr = 1.0", "lr = 10.0"]


def test_book_figures_draw_from_their_tables():
    decay = pd.DataFrame({"factor": [0.5, 0.5, 0.9, 0.9], "distance": [1, 2, 1, 2], "value": [0.5, 0.25, 0.9, 0.81]})
    ax = BOOK_FIGURES["decay"](decay).axes[0]
    assert ax.get_yscale() == "log" and len(ax.get_lines()) == 2


def test_the_decay_figure_ends_at_its_floor_and_names_each_line_that_leaves():
    # 0.01^d falls below the floor, 10^-35, at d = 18 (10^-36); 0.9^100 = 2.7 x 10^-5 stays in view.
    d = np.arange(1, 101)
    decay = pd.DataFrame({"factor": [0.01] * 100 + [0.9] * 100, "distance": [*d, *d], "value": [*0.01**d, *0.9**d]})
    ax = BOOK_FIGURES["decay"](decay).axes[0]
    assert ax.get_ylim()[0] == pytest.approx(1e-35)
    assert [(t.get_text(), t.xy[0]) for t in ax.texts] == [("0.01 ↓", 18)]


@pytest.mark.parametrize("sizes, scale", [((0, 50, 100), "linear"), ((8, 64, 512), "log")])
def test_a_log_x_axis_only_for_positive_sizes(sizes, scale):
    """ff hidden = 0 (no hidden layer) next to 50 and 100: a log axis would drop the 0 without a word;
    positive sizes spanning a factor of 16 or more get a log2 axis."""
    table = summary([(h, 1, 200.0 + h, 0) for h in sizes], metric="test_ppl", setting="hidden")
    assert study_figure(table, study("hidden", "test_ppl")).axes[0].get_xscale() == scale


def test_a_summary_from_the_workflow_draws_and_saves(tmp_path):
    """The summary's own columns (as summarize_study writes them) and a study.json, to a file."""
    table = summary([(16, 1, 240.0, 0), (32, 1, float("nan"), 1)], metric="test_ppl", setting="hidden")
    fig = study_figure(table, study("hidden", "test_ppl"))
    assert fig.axes[0].get_title() == "A study\n1 of 2 runs diverged (× on the top edge)"
    assert fig.axes[0].get_ylabel() == "test perplexity"
    style.save(fig, str(tmp_path / "figure.pdf"))
    assert (tmp_path / "figure.pdf").read_bytes().startswith(b"%PDF")


def test_a_run_that_did_not_learn_is_hollow_and_in_no_mean():
    """Three seeds at bptt 10: 0.60 and 0.66 learned, 0.51 did not (chance). The line's mean is 0.63, not
    (0.60 + 0.66 + 0.51) / 3 = 0.59, and its band stops at 0.60; the third seed is a hollow point at 0.51."""
    table = summary(
        [
            (2, 1, 0.70, 0),
            (2, 2, 0.72, 0),
            (10, 1, 0.60, 0),
            (10, 2, 0.66, 0),
            (10, 3, 0.51, 0, "did not learn"),
        ],
        setting="bptt",
    )
    ax = study_figure(table, study("bptt")).axes[0]
    (line,) = joined_lines(ax)
    assert np.allclose(line.get_ydata(), [0.71, 0.63])
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert math.isclose(band.min(), 0.60) and math.isclose(band.max(), 0.72)
    assert hollow(ax) == [(10.0, 0.51)]
    assert "did not learn" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert "1 of 5 did not learn (hollow ○, in no mean)" in ax.get_title()


def test_a_setting_whose_seeds_all_failed_has_no_mean_point():
    table = summary(
        [
            ("none", 1, 0.50, 0, "did not learn"),
            ("none", 2, float("nan"), 1),
            ("norm", 1, 0.62, 0),
        ]
    )
    ax = study_figure(table, study()).axes[0]
    means = [line for line in ax.get_lines() if line.get_marker() == "o" and len(line.get_xdata())]
    assert [list(line.get_xdata()) for line in means] == [[1.0]]  # only norm's mean; none has none
    assert hollow(ax) == [(0.0, 0.50)] and crosses(ax) == 1
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "did not learn" in legend and "diverged" in legend


def test_a_summary_without_outcomes_is_refused():
    table = summary([("none", 1, 0.5, 0)]).drop(columns="outcome")
    with pytest.raises(ValueError, match="no 'outcome' column"):
        study_figure(table, study())


def test_a_probe_draws_one_accuracy_line_per_network_beside_the_gradient_on_a_log_axis(tmp_path):
    from rnnbench.decay.probe import States, probe_table
    from rnnbench.plots.probe_figures import probe_figure

    rng = np.random.default_rng(0)
    n = 200
    distance = np.tile(np.arange(4), n // 4)
    label = rng.integers(0, 2, n)
    parts = []
    for run_id in ("a", "b"):
        for snapshot in ("0", "final"):
            states = States(
                sentence=np.arange(n) // 4,
                distance=distance,
                label=label,
                nearest=np.where(distance >= 3, 1 - label, label),  # an attractor from d = 3 on
                state=rng.normal(size=(n, 4)) + label[:, None],
                gradient=0.5**distance,
                relative=0.5**distance,
            )
            table = probe_table(states, folds=2, l2=0.01, seed=0)
            parts.append(table.assign(run_id=run_id, snapshot=snapshot))
    fig = probe_figure(pd.concat(parts, ignore_index=True), title="probe")
    every, attracted, gradient = fig.axes[:3]
    assert len([line for line in every.lines if line.get_marker() == "o"]) == 4  # one per (run, snapshot)
    assert len([line for line in attracted.lines if line.get_marker() == "o"]) == 4
    assert gradient.get_yscale() == "log" and len(gradient.lines) == 4
    assert [len(line.get_xdata()) for line in gradient.lines] == [4] * 4  # every line at least two points
    style.save(fig, str(tmp_path / "probe.png"))
