"""The ablation sections' tables and figures, from a small results folder written by hand."""

import json
import math

import pandas as pd
import pytest

from rnnbench import ablation_report as ab
from rnnbench.ablation_plots import distance_curves, distance_heatmap, norm_trace


def write_study(root, name, about, runs, metrics):
    """runs: list of (run_id, {varied settings and seed}); metrics: run_id -> {metric: value}."""
    folder = root / "studies" / name
    folder.mkdir(parents=True)
    rows = [
        {"study": name, "run_id": run, **point, "metric": m, "value": v}
        for run, point in runs
        for m, v in metrics[run].items()
    ]
    pd.DataFrame(rows).to_csv(folder / "summary.csv", index=False)
    (folder / "study.json").write_text(json.dumps({"name": name, "run_ids": [r for r, _ in runs], **about}))
    return folder


def distance_rows(setting, value, accuracies, probes=10):
    return [
        {
            setting: value,
            "distance": d,
            "seeds": 1,
            "probes": probes,
            "accuracy_mean": a,
            "accuracy_min": a,
            "accuracy_max": a,
            "accuracy_sd": float("nan"),
        }
        for d, a in accuracies
    ]


@pytest.fixture
def window_results(tmp_path):
    ff = write_study(
        tmp_path,
        "window_agreement",
        {"family": "ff", "corpus": "agreement", "metric": "agreement_accuracy", "vary": ["context"], "fixed": {}},
        [("f2", {"context": 2, "seed": 1})],
        {"f2": {"parameters": 34_521, "agreement_accuracy": 0.7}},
    )
    rnn = write_study(
        tmp_path,
        "recurrence_agreement",
        {"family": "rnn", "corpus": "agreement", "metric": "agreement_accuracy", "vary": ["hidden"], "fixed": {}},
        [("r60", {"hidden": 60, "seed": 1}), ("r115", {"hidden": 115, "seed": 1})],
        {"r60": {"parameters": 34_689}, "r115": {"parameters": 63_344}},
    )
    # Window 2: right at distances 1-2, chance at 3-4. RNN H = 60: 0.9 at 1-2, 0.8 at 3-4.
    pd.DataFrame(distance_rows("context", 2, [(1, 1.0), (2, 0.9), (3, 0.5), (4, 0.4)])).to_csv(
        ff / "distance.csv", index=False
    )
    rows = distance_rows("hidden", 60, [(1, 0.9), (2, 0.9), (3, 0.8), (4, 0.8)]) + distance_rows(
        "hidden", 115, [(1, 1.0)]
    )
    pd.DataFrame(rows).to_csv(rnn / "distance.csv", index=False)
    return tmp_path


def test_each_window_is_set_against_its_matched_rnn_within_and_beyond_its_width(window_results):
    pairs = ab.window_against_recurrence("window_agreement", "recurrence_agreement", window_results)
    row = pairs.iloc[0]
    assert (row["context"], row["hidden"]) == (2, 60)  # 34,689 is nearer 34,521 than 63,344 is
    assert (row["ff_parameters"], row["rnn_parameters"]) == (34_521, 34_689)
    assert row["ff_within"] == pytest.approx(0.95) and row["ff_beyond"] == pytest.approx(0.45)
    assert row["rnn_within"] == pytest.approx(0.9) and row["rnn_beyond"] == pytest.approx(0.8)
    assert row["beyond_probes"] == 20


def test_the_window_section_states_the_numbers_and_stages_its_figures(window_results, tmp_path):
    for study in ("window_agreement", "recurrence_agreement"):
        for name in ("distance-heatmap", "distance-curves"):
            for fmt in ("png", "pdf"):
                (window_results / "studies" / study / f"{name}.{fmt}").write_bytes(b"x")
    text = ab.window_section(window_results, staging=tmp_path / "staged")
    assert "window 0.950 / 0.450, RNN (H = 60) 0.900 / 0.800" in text
    assert "for 1 of the 1 windows" in text and "{#tbl-window-recurrence}" in text
    assert "{#fig-window-agreement-distance-curves}" in text


def test_clipping_table_lists_each_setting_once_with_its_spread(tmp_path):
    about = {"family": "rnn", "corpus": "ptb", "metric": "test_ppl"}
    metrics = lambda ppl, diverged, step, frac, cos: {
        "test_ppl": ppl,
        "diverged": diverged,
        "diverged_step": step,
        "clipped_fraction": frac,
        "clip_cosine_mean": cos,
        "grad_norm_median": 1.0,
        "grad_norm_q95": 3.0,
        "grad_norm_max": 9.0,
    }
    write_study(
        tmp_path,
        "clipping_ptb",
        {**about, "vary": ["clip_mode", "lr"], "fixed": {"clip": 15}},
        [
            ("n1", {"clip_mode": "none", "lr": 1.0, "seed": 1}),
            ("n2", {"clip_mode": "none", "lr": 1.0, "seed": 2}),
            ("v1", {"clip_mode": "value", "lr": 1.0, "seed": 1}),
        ],
        {
            "n1": metrics(float("nan"), 1, 20, 0.0, float("nan")),
            "n2": metrics(float("nan"), 1, 30, 0.0, float("nan")),
            "v1": metrics(float("nan"), 1, 20, 0.0, float("nan")),
        },
    )
    write_study(
        tmp_path,
        "value_threshold_ptb",
        {**about, "vary": ["clip"], "fixed": {"clip_mode": "value", "lr": 1.0}},
        [("v1", {"clip": 15, "seed": 1}), ("w1", {"clip": 0.01, "seed": 1})],
        {"v1": metrics(float("nan"), 1, 20, 0.0, float("nan")), "w1": metrics(650.0, 0, None, 1.0, 0.8)},
    )
    table = ab.clipping_table(["clipping_ptb", "value_threshold_ptb"], tmp_path)
    assert list(table["clipping"]) == ["none", "value ±0.01", "value ±15"]  # the shared value ±15 once
    none = table.iloc[0]
    assert (none["runs"], none["diverged_runs"]) == (2, 2)
    assert (none["diverged_step_min"], none["diverged_step_max"]) == (20, 30)
    assert table.iloc[1]["clip_cosine_mean_mean"] == pytest.approx(0.8)


def test_figures_draw_distance_and_trace_tables():
    distances = pd.DataFrame(
        distance_rows("bptt", 0, [(1, 0.9), (2, 0.8)]) + distance_rows("bptt", 2, [(1, 0.9), (2, 0.5)])
    )
    study = {"name": "truncation_agreement", "vary": ["bptt"]}
    for draw in (distance_heatmap, distance_curves):
        fig = draw(distances, study, source="data: x")
        assert fig.axes
    trace = pd.DataFrame(
        {
            "run_id": ["a", "a", "b"],
            "clip_mode": ["none", "none", "norm"],
            "lr": 1.0,
            "seed": 1,
            "step": [1, 2, 1],
            "loss": 5.0,
            "grad_norm": [1.0, math.inf, 2.0],
            "clipped": False,
            "clip_cosine": 1.0,
            "diverged": [True, True, False],
            "last": [False, True, True],
        }
    )
    fig = norm_trace(trace, {"name": "clipping_ptb", "vary": ["clip_mode", "lr"]}, source="data: x")
    assert fig.axes[0].get_yscale() == "log"
