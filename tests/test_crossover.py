"""Perplexity against parameter count, with the analytic crossover; the RNN curve read at matched cost."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_runs import run_config, run_metrics

from rnnbench.params import count, ff_lm_shapes, rnn_lm_shapes
from rnnbench.results.crossover import crossover_table, matched_cost
from rnnbench.results.matching import TOLERANCE, nearest, within
from rnnbench.results.runs import our_runs


def test_crossover_columns_follow_the_parameter_formula():
    """d = 100, H = 200: FF(n-1) - RNN = d H (n-1) - d H - H^2 = 20,000 (n-1) - 60,000.

    A tie at n-1 = 1 + H/d = 3; the FF model is larger from n-1 = 4. With |V| = 10,000 and the adaptive
    softmax both families share, the RNN of the same d and H has exactly FF(4)'s count minus 20,000.
    """
    vocab, cutoffs = 10_000, (1000, 5000)
    ff_params = count(ff_lm_shapes(vocab, 100, 4, 200, cutoffs=cutoffs))
    rnn_params = count(rnn_lm_shapes(vocab, 100, 200, cutoffs=cutoffs))
    ff2_params = count(ff_lm_shapes(vocab, 100, 2, 200, cutoffs=cutoffs))
    runs = [
        {
            "config": run_config(family="ff", corpus="ptb", context=4, hidden=200, embed_dim=100),
            "metrics": run_metrics(parameters=ff_params, test_ppl=170.0),
            "scale": "short",
        },
        {
            "config": run_config(family="ff", corpus="ptb", context=2, hidden=200, embed_dim=100),
            "metrics": run_metrics(parameters=ff2_params, test_ppl=190.0),
            "scale": "short",
        },
        {
            "config": run_config(family="rnn", corpus="ptb", hidden=200, embed_dim=100),
            "metrics": run_metrics(parameters=rnn_params, test_ppl=160.0),
            "scale": "short",
        },
    ]
    table = crossover_table(our_runs(runs)).set_index("context")
    ff4, ff2 = table.loc[4], table.loc[2]
    assert ff4["tie_context"] == 3.0 and ff4["crossover_context"] == 4
    assert ff4["ff_larger"] and not ff2["ff_larger"]
    assert ff_params - rnn_params == 20_000
    assert ff4["rnn_equivalent_parameters"] == rnn_params == ff2["rnn_equivalent_parameters"]
    rnn = table[table["family"] == "rnn"].iloc[0]
    assert pd.isna(rnn["tie_context"]) and pd.isna(rnn["rnn_equivalent_parameters"])
    # FF(2) is 20,000 smaller than the RNN, so it stays on the frontier though worse; FF(4) is larger and
    # worse than the RNN, so the RNN beats it
    assert ff2_params == rnn_params - 20_000
    assert rnn["pareto"] and ff2["pareto"] and not ff4["pareto"]


def cost_table(points) -> pd.DataFrame:
    rows = [
        {
            "corpus": "ptb",
            "scale": "short",
            "family": f,
            "run_id": f"{f}{i}",
            "setting": f"{f}{i}",
            "status": "epoch cap",
            "context": 4 if f == "ff" else None,
            "hidden": 10,
            "parameters": p,
            "train_seconds": s,
            "test_ppl": y,
            "valid_ppl": y + 5,
        }
        for i, (f, p, s, y) in enumerate(points)
    ]
    return pd.DataFrame(rows)


def test_matched_cost_reads_the_rnn_model_nearest_in_log_cost_within_the_tolerance():
    # RNN models at 1,000 and 4,000 parameters (200 and 150). ff at 1,100: nearest 1,000 (ratio 0.909, within
    # 1.25) -> 200. ff at 2,000: nearest 1,000 or 4,000 are both a factor 2 away, beyond 1.25: nothing is read,
    # no value between them is made up. ff at 4,900: 4,000 is 1/1.225 away, within -> 150.
    table = cost_table(
        [("rnn", 1000, 10.0, 200.0), ("rnn", 4000, 40.0, 150.0)]
        + [("ff", 1100, 12.0, 190.0), ("ff", 2000, 40.0, 190.0), ("ff", 4900, 100.0, 140.0)]
    )
    by_params = matched_cost(table, "parameters").set_index("setting")
    assert by_params.loc["ff2", "rnn_test_ppl"] == 200.0 and by_params.loc["ff2", "rnn_cost"] == 1000.0
    assert by_params.loc["ff2", "rnn_advantage"] == pytest.approx(-10.0)  # the RNN is 10 higher at this size
    assert math.isnan(by_params.loc["ff3", "rnn_test_ppl"]) and by_params.loc["ff3", "rnn_seeds"] == 0
    assert by_params.loc["ff4", "rnn_test_ppl"] == 150.0 and by_params.loc["ff4", "rnn_advantage"] == -10.0
    by_time = matched_cost(table, "train_seconds").set_index("setting")
    assert by_time.loc["ff3", "rnn_test_ppl"] == 150.0  # 40 s: the second RNN exactly
    assert by_time.loc["ff2", "rnn_test_ppl"] == 200.0  # 12 s against 10 s: 1.2 apart
    assert math.isnan(by_time.loc["ff4", "rnn_test_ppl"])  # 100 s: 2.5 times the slowest RNN


def test_matched_cost_averages_each_models_seeds_on_both_sides():
    # RNN at 1,000 parameters: seeds at 190 and 210, mean 200; at 4,000: one seed, 150. The feed-forward model at
    # 1,200 (nearest 1,000, 1.2 apart): seeds 185 and 195 (10 s and 30 s of training), mean 190, against 200.
    table = cost_table(
        [("rnn", 1000, 10.0, 190.0), ("rnn", 1000, 10.0, 210.0), ("rnn", 4000, 40.0, 150.0)]
        + [("ff", 1200, 10.0, 185.0), ("ff", 1200, 30.0, 195.0)]
    )
    table["setting"] = ["rnn-small", "rnn-small", "rnn-large", "ff", "ff"]
    (row,) = matched_cost(table, "parameters").itertuples()
    assert (row.setting, row.seeds, row.rnn_seeds) == ("ff", 2, 2)
    assert (row.ff_test_ppl, row.ff_test_min, row.ff_test_max) == (190.0, 185.0, 195.0)
    assert row.rnn_test_ppl == 200.0 and row.rnn_advantage == -10.0
    (timed,) = matched_cost(table, "train_seconds").itertuples()
    # 20 s (the mean of 10 and 30): 10 s is 2 apart, 40 s is 2 apart: neither within 1.25
    assert timed.cost == 20.0 and math.isnan(timed.rnn_test_ppl)


def test_the_tolerance_is_one_rule_for_every_matched_comparison():
    assert within(1.25) and within(1 / 1.25) and not within(1.26) and TOLERANCE == 1.25
    assert nearest(2000.0, np.array([1000.0, 3000.0])) == 1  # log(1.5) < log(2)


def test_bad_cost_names_the_choices():
    with pytest.raises(ValueError, match="by must be"):
        matched_cost(cost_table([]), "epochs")


def test_crossover_figure_marks_the_analytic_tie(tmp_path):
    from rnnbench.plots.comparison_figures import crossover_figure
    from rnnbench.plots.style import save

    vocab, cutoffs = 10_000, (1000, 5000)
    runs = (
        [
            {
                "config": run_config(family="ff", corpus="ptb", context=c, hidden=200, embed_dim=100, seed=seed),
                "metrics": run_metrics(parameters=count(ff_lm_shapes(vocab, 100, c, 200, cutoffs=cutoffs)), test_ppl=y),
                "scale": "short",
            }
            for c, y, seed in ((2, 190.0, 1), (4, 165.0, 1), (4, 175.0, 2))
        ]
        + [
            {
                "config": run_config(family="rnn", corpus="ptb", hidden=h, embed_dim=100),
                "metrics": run_metrics(parameters=count(rnn_lm_shapes(vocab, 100, h, cutoffs=cutoffs)), test_ppl=y),
                "scale": "short",
            }
            for h, y in ((100, 180.0), (200, 160.0))
        ]
        + [
            {
                "config": run_config(family="rnn", corpus="ptb", hidden=300),
                "metrics": run_metrics(test_ppl=None, diverged=True),
                "scale": "short",
            }
        ]
    )
    table = crossover_table(our_runs(runs))
    fig = crossover_figure(table, title="PTB")
    ax = fig.axes[0]
    rnn_200 = count(rnn_lm_shapes(vocab, 100, 200, cutoffs=cutoffs))
    verticals = [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":"]
    assert verticals == [rnn_200]  # one feed-forward H, one dotted line at the Elman LM of that d and H
    assert "1 run(s) without a comparable perplexity" in ax.get_title()
    # n-1 = 4 is one model of two seeds, 165 and 175: one point at their mean, 170, and a bar from 165 to 175.
    ff_line = next(line for line in ax.lines if line.get_label() == "feed-forward, H=200, points labelled n-1")
    assert list(ff_line.get_ydata()) == [190.0, 170.0]
    (bars,) = [c for c in ax.containers if c.has_yerr]
    (segment,) = bars.lines[2][0].get_segments()
    assert segment[:, 1].tolist() == [165.0, 175.0]
    assert "a bar: their range" in ax.get_title()
    save(fig, str(tmp_path / "crossover.png"))
    assert (tmp_path / "crossover.png").stat().st_size > 0


def test_crossover_ticks_label_the_models_range_and_thin_out_over_decades():
    """PTB's models lie between 1.1M and 3.8M (half a decade): the minor ticks at 1.2M, 1.5M, 2M and 3M are all
    labelled, so the crowded 1.1M-1.7M stretch is read off directly. From 10k to 10M (three decades) only the
    ticks at 2 and 5 times a power of ten keep a label."""
    import matplotlib.pyplot as plt

    from rnnbench.plots.comparison_figures import _minor_count_labels

    fig, ax = plt.subplots()
    ax.set_xscale("log")
    label = _minor_count_labels(ax)
    ax.set_xlim(1.1e6, 3.8e6)
    assert [label(v, None) for v in (1.2e6, 1.5e6, 2e6, 3e6)] == ["1.2M", "1.5M", "2M", "3M"]
    ax.set_xlim(1e4, 1e7)
    assert [label(v, None) for v in (1.2e5, 1.5e5, 2e5, 3e5, 5e5, 7e5)] == ["", "", "200k", "", "500k", ""]
    plt.close(fig)
