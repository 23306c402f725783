"""Our runs beside the published rows; perplexity against parameter count, with the analytic crossover."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from rnnbench.config.runs import RunConfig
from rnnbench.params import count, ff_lm_shapes, rnn_lm_shapes
from rnnbench.published import load_published, reference_rows
from rnnbench.results.comparison import (
    comparison_table,
    crossover_table,
    log_interpolate,
    matched_cost,
    our_runs,
    ranking_by_epoch,
    ranking_settled,
    read_corpus_stats,
    read_run,
    run_status,
    setting_key,
    vocabulary_agreement,
)


def _config(**settings) -> dict:
    cfg = RunConfig.from_settings(settings)
    return {"run_id": cfg.run_id, **cfg.to_dict()}


def _metrics(**values) -> dict:
    base = {
        "test_ppl": 150.0,
        "valid_ppl": 155.0,
        "epochs": 3,
        "steps": 100,
        "diverged": False,
        "diverged_step": None,
        "diverged_reason": None,
        "parameters": 1000,
        "train_seconds": 10.0,
        "tokens_per_second": 1e4,
        "clipped_fraction": 0.0,
    }
    return {**base, **values}


def _write_run(root, config: dict, metrics: dict):
    run_dir = root / config["run_id"]
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps(config))
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    return run_dir


# -------------------------------------------------------------------------------------------------
# Status: which of our rows can stand beside a published one.


def test_status_reads_how_the_run_ended():
    cfg = _config(family="rnn", corpus="ptb", schedule="mikolov", max_epochs=25)
    assert run_status(cfg, _metrics(epochs=14)) == "converged"  # the schedule stopped it
    assert run_status(cfg, _metrics(epochs=25)) == "epoch cap"
    assert run_status({**cfg, "schedule": "constant"}, _metrics(epochs=3)) == "epoch cap"
    assert run_status({**cfg, "eval_tokens": 2000}, _metrics(epochs=3)) == "subset"
    assert run_status(cfg, _metrics(diverged=True, test_ppl=None)) == "diverged"
    # one of ten test columns at 46,146 against a median of 250: its perplexity is not the model's reading
    assert run_status(cfg, _metrics(epochs=14, test_column_worst=46146.0, test_column_median=250.0)) == "stuck column"
    assert run_status(cfg, _metrics(epochs=14, test_column_worst=330.0, test_column_median=250.0)) == "converged"


# -------------------------------------------------------------------------------------------------
# The comparison table: published numbers and ours, both read from files.


def test_comparison_reads_published_rows_and_our_metrics_files(tmp_path):
    rnn_cfg = _config(family="rnn", corpus="ptb", hidden=400, embed_dim=200, dropout=0.5, max_epochs=25)
    ff_cfg = _config(family="ff", corpus="brown", context=4, hidden=200, max_epochs=3, schedule="constant")
    short_cfg = _config(family="rnn", corpus="ptb", hidden=50, max_epochs=3)
    agreement_cfg = _config(family="rnn", corpus="agreement", output="full")
    runs = [
        read_run(_write_run(tmp_path, rnn_cfg, _metrics(test_ppl=120.5, epochs=13, parameters=2_000_000)), "paper"),
        read_run(_write_run(tmp_path, ff_cfg, _metrics(test_ppl=280.0, epochs=3)), "short"),
        read_run(_write_run(tmp_path, short_cfg, _metrics(test_ppl=200.0, epochs=3)), "short"),
        read_run(_write_run(tmp_path, agreement_cfg, _metrics(test_ppl=3.0)), "short"),
    ]
    stats_file = tmp_path / "ptb-0123abcd.json"
    stats_file.write_text(
        json.dumps(
            {"corpus": "ptb", "train_tokens": 929589, "valid_tokens": 73760, "test_tokens": 82430, "vocab_size": 10000}
        )
    )
    published = load_published()
    table = comparison_table(published, our_runs(runs), read_corpus_stats([stats_file]))

    # every published row appears with its own number and source, untouched
    theirs = table[table["origin"] == "published"].set_index(["corpus", "model"])
    assert len(theirs) == len(published)
    for row in published.itertuples():
        assert theirs.loc[(row.corpus, row.model), "test_ppl"] == row.test_ppl
        assert theirs.loc[(row.corpus, row.model), "source"] == row.source

    # ours: the metrics file's perplexity, measured against the published row of its corpus and family
    refs = {(r.corpus, r.reference_for): r for r in reference_rows(published).itertuples()}
    rnn = table[table["model"] == rnn_cfg["run_id"]].iloc[0]
    assert rnn["origin"] == "ours (paper)" and rnn["status"] == "converged"
    assert rnn["test_ppl"] == 120.5
    assert rnn["reference_model"] == refs[("ptb", "rnn")].model
    assert rnn["reference_ppl"] == refs[("ptb", "rnn")].test_ppl
    assert rnn["ratio_to_reference"] == pytest.approx(120.5 / refs[("ptb", "rnn")].test_ppl)
    assert rnn["split"] == "ours (ptb): 929,589 / 73,760 / 82,430 tokens train / valid / test, |V| = 10,000"
    assert "H = 400" in rnn["description"] and "dropout 0.5" in rnn["description"] and "seed 1" in rnn["description"]

    ff = table[table["model"] == ff_cfg["run_id"]].iloc[0]
    assert (ff["origin"], ff["status"], ff["reference_ppl"]) == (
        "ours (short)",
        "epoch cap",
        refs[("brown", "ff")].test_ppl,
    )
    assert ff["split"] == ""  # no statistics given for brown: left blank, not guessed
    assert "n - 1 = 4" in ff["counting"]

    # the synthetic corpus has no published rows, so it has no place here
    assert agreement_cfg["run_id"] not in set(table["model"])
    # corpus by corpus, published rows first, then the paper-scale run, then short runs
    ptb = table[table["corpus"] == "ptb"]["origin"].tolist()
    assert ptb == sorted(ptb, key=["published", "ours (paper)", "ours (short)"].index)
    assert table["corpus"].tolist().index("brown") > max(i for i, c in enumerate(table["corpus"]) if c == "ptb")


def test_a_subset_or_diverged_run_gets_no_ratio(tmp_path):
    smoke = _config(family="rnn", corpus="ptb", train_tokens=20000, eval_tokens=2000)
    broken = _config(family="rnn", corpus="ptb", hidden=64)
    runs = [
        {"config": smoke, "metrics": _metrics(test_ppl=900.0), "scale": "short"},
        {"config": broken, "metrics": _metrics(test_ppl=None, diverged=True), "scale": "short"},
    ]
    table = comparison_table(load_published(), our_runs(runs))
    ours = table[table["origin"] != "published"].set_index("model")
    assert ours.loc[smoke["run_id"], "status"] == "subset" and math.isnan(
        ours.loc[smoke["run_id"], "ratio_to_reference"]
    )
    assert ours.loc[broken["run_id"], "status"] == "diverged" and math.isnan(ours.loc[broken["run_id"], "test_ppl"])


def test_a_ratio_needs_the_vocabularies_within_five_percent():
    # Brown: NLTK's edition with Bengio's rare-word rule has 17,905 words, theirs 16,383: 17,905 / 16,383 - 1
    # = 1,522 / 16,383 = +9.3%, over 5%. PTB's 10,000 are the same files' 10,000. 17,200 would be +4.99%.
    assert vocabulary_agreement(10_000, 10_000) == ""
    assert vocabulary_agreement(17_200, 16_383) == ""
    assert vocabulary_agreement(17_905, 16_383) == (
        "not comparable: |V| = 17,905 against 16,383 (+9.3%; a ratio needs them within 5%)"
    )
    assert vocabulary_agreement(15_500, 16_383).startswith("not comparable: |V| = 15,500 against 16,383 (-5.4%")
    assert vocabulary_agreement(None, 16_383) == "not comparable: a vocabulary size is unknown"


def test_brown_gets_no_ratio_over_another_vocabulary_and_a_stale_reference_run_none_at_all(tmp_path):
    brown = _config(family="ff", corpus="brown", context=4, hidden=200, max_epochs=30)
    ptb = _config(family="rnn", corpus="ptb", hidden=400, max_epochs=30)
    stats = {"train_tokens": 800000, "valid_tokens": 200000, "test_tokens": 161192}
    runs = [
        {
            "config": brown,
            "metrics": _metrics(test_ppl=250.0, epochs=12),
            "scale": "reference",
            "corpus_stats": {"corpus": "brown", **stats, "vocab_size": 17905},
        },
        {"config": ptb, "metrics": _metrics(test_ppl=120.0, epochs=12), "scale": "reference", "stale": "changed"},
    ]
    table = comparison_table(load_published(), our_runs(runs)).set_index("model")
    row = table.loc[brown["run_id"]]
    assert (row["origin"], row["status"]) == ("ours (reference)", "converged")
    assert math.isnan(row["ratio_to_reference"]) and row["comparable"].startswith("not comparable: |V| = 17,905")
    assert row["split"].endswith("|V| = 17,905")  # the run's own split, not the config's
    stale = table.loc[ptb["run_id"]]
    assert (stale["status"], stale["comparable"], stale["notes"]) == ("stale", "stale reference run", "changed")
    assert math.isnan(stale["ratio_to_reference"])


def test_missing_run_files_and_bad_scale_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="metrics.json is missing"):
        (tmp_path / "r").mkdir()
        (tmp_path / "r" / "config.json").write_text("{}")
        read_run(tmp_path / "r", "paper")
    with pytest.raises(ValueError, match=r"scale must be one of \('reference', 'paper', 'short'\)"):
        read_run(tmp_path / "r", "long")


# -------------------------------------------------------------------------------------------------
# Crossover in practice.


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
            "config": _config(family="ff", corpus="ptb", context=4, hidden=200, embed_dim=100),
            "metrics": _metrics(parameters=ff_params, test_ppl=170.0),
            "scale": "short",
        },
        {
            "config": _config(family="ff", corpus="ptb", context=2, hidden=200, embed_dim=100),
            "metrics": _metrics(parameters=ff2_params, test_ppl=190.0),
            "scale": "short",
        },
        {
            "config": _config(family="rnn", corpus="ptb", hidden=200, embed_dim=100),
            "metrics": _metrics(parameters=rnn_params, test_ppl=160.0),
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


def _cost_table(points) -> pd.DataFrame:
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


def test_matched_cost_reads_the_rnn_curve_in_log_cost():
    # RNN: 200 at 1,000 parameters, 150 at 4,000; 2,000 is halfway in log2 (1 of 2 doublings) -> 175.
    table = _cost_table(
        [("rnn", 1000, 10.0, 200.0), ("rnn", 4000, 40.0, 150.0), ("ff", 2000, 40.0, 190.0), ("ff", 8000, 5.0, 140.0)]
    )
    by_params = matched_cost(table, "parameters").set_index("setting")
    assert by_params.loc["ff2", "rnn_test_ppl"] == pytest.approx(175.0)
    assert by_params.loc["ff2", "rnn_advantage"] == pytest.approx(15.0)  # the RNN is 15 lower at equal size
    assert math.isnan(by_params.loc["ff3", "rnn_test_ppl"])  # beyond the largest RNN: no extrapolation
    by_time = matched_cost(table, "train_seconds").set_index("setting")
    assert by_time.loc["ff2", "rnn_test_ppl"] == pytest.approx(150.0)  # 40 s: the second RNN exactly
    assert math.isnan(by_time.loc["ff3", "rnn_test_ppl"])  # 5 s: faster than any RNN run


def test_matched_cost_averages_each_models_seeds_on_both_sides():
    # RNN at 1,000 parameters: seeds at 190 and 210, mean 200; at 4,000: one seed, 150. The feed-forward model at
    # 2,000 (halfway in log): seeds 185 and 195 (10 s and 30 s of training), mean 190, against the curve's 175.
    table = _cost_table(
        [("rnn", 1000, 10.0, 190.0), ("rnn", 1000, 10.0, 210.0), ("rnn", 4000, 40.0, 150.0)]
        + [("ff", 2000, 10.0, 185.0), ("ff", 2000, 30.0, 195.0)]
    )
    table["setting"] = ["rnn-small", "rnn-small", "rnn-large", "ff", "ff"]
    (row,) = matched_cost(table, "parameters").itertuples()
    assert (row.setting, row.seeds, row.rnn_seeds) == ("ff", 2, 1)
    assert (row.ff_test_ppl, row.ff_test_min, row.ff_test_max) == (190.0, 185.0, 195.0)
    assert row.rnn_test_ppl == pytest.approx(175.0) and row.rnn_advantage == pytest.approx(15.0)
    (timed,) = matched_cost(table, "train_seconds").itertuples()
    assert timed.cost == 20.0 and timed.rnn_test_ppl == pytest.approx(175.0)  # 20 s: halfway from 10 s to 40 s


def test_the_rnn_seeds_of_a_matched_row_are_those_of_the_points_it_is_read_between():
    # RNN points at 1,000 (two seeds), 4,000 (two) and 16,000 parameters (one). A model at 2,000 is read between the
    # first two: 2 seeds; at 8,000, between the last two: 1; at 4,000, off the second point alone: 2; at 32,000,
    # outside the curve: nothing is read, 0.
    rnn = [("rnn", 1000, 10.0, 200.0)] * 2 + [("rnn", 4000, 40.0, 150.0)] * 2 + [("rnn", 16000, 160.0, 120.0)]
    ff = [("ff", p, 10.0, 150.0) for p in (2000, 8000, 4000, 32000)]
    table = _cost_table(rnn + ff)
    table["setting"] = ["r1", "r1", "r4", "r4", "r16", "f2", "f8", "f4", "f32"]
    matched = matched_cost(table, "parameters").set_index("setting")
    assert matched["rnn_seeds"].to_dict() == {"f2": 2, "f8": 1, "f4": 2, "f32": 0}


def test_the_seeds_of_one_model_share_a_setting_key():
    config = {"run_id": "ff-ptb-1", "family": "ff", "corpus": "ptb", "hidden": 200, "seed": 1}
    other_seed = {**config, "run_id": "ff-ptb-2", "seed": 2}
    wider = {**config, "hidden": 400}
    assert setting_key(config) == setting_key(other_seed) != setting_key(wider)
    assert setting_key(config).startswith("ff-ptb-")


def _curves(valid_by_run) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"run_id": r, "epoch": e + 1, "valid_ppl": v}
            for r, values in valid_by_run.items()
            for e, v in enumerate(values)
        ]
    )


def test_ranking_by_epoch_follows_the_kept_models():
    # ff2 (2,000 parameters) trains two epochs; rnn0 (1,000) and rnn1 (4,000) three. 2,000 is halfway between
    # them in log, so the RNN curve there is the mean of the two. Epoch 1: (300 + 260)/2 = 280 > 250, ff2 leads.
    # Epoch 2: (220 + 180)/2 = 200 < 210, the RNN leads. Epoch 3: ff2 has stopped and keeps 210; rnn0 rose to
    # 230 but keeps its best, 220, so (220 + 160)/2 = 190: still the RNN, and the last two epochs agree.
    crossover = _cost_table([("rnn", 1000, 1.0, 0.0), ("rnn", 4000, 1.0, 0.0), ("ff", 2000, 1.0, 0.0)])
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
    # Epoch 1: the RNN beats neither ff run at matched size; epoch 2: one of the two. The best run is an ff run
    # at both epochs, but the matched count moved, so the ranking has not settled.
    crossover = _cost_table(
        [("rnn", 1000, 1.0, 0.0), ("rnn", 4000, 1.0, 0.0), ("ff", 2000, 1.0, 0.0), ("ff", 2000, 1.0, 0.0)]
    )
    curves = _curves({"rnn0": [300.0, 200.0], "rnn1": [300.0, 200.0], "ff2": [250.0, 150.0], "ff3": [280.0, 210.0]})
    ranking = ranking_by_epoch(curves, crossover)
    assert ranking["rnn_leads"].tolist() == [0, 1] and ranking["leader"].tolist() == ["ff", "ff"]
    settled = ranking_settled(ranking).iloc[0]
    assert not settled["settled"] and settled["leader_since_epoch"] == 1
    one_epoch = ranking_settled(ranking[ranking["epoch"] == 1]).iloc[0]
    assert pd.isna(one_epoch["settled"])


def test_ranking_leaves_out_failed_runs():
    crossover = _cost_table([("rnn", 1000, 1.0, 0.0), ("ff", 2000, 1.0, 0.0)])
    crossover.loc[crossover["run_id"] == "rnn0", "status"] = "diverged"
    ranking = ranking_by_epoch(_curves({"rnn0": [100.0], "ff1": [250.0]}), crossover)
    assert ranking.empty  # no learned RNN: no row claims a leader


def test_log_interpolate_edges():
    xs, ys = np.array([10.0, 1000.0]), np.array([1.0, 3.0])
    assert log_interpolate(100.0, xs, ys) == pytest.approx(2.0)
    assert log_interpolate(10.0, xs, ys) == 1.0 and log_interpolate(1000.0, xs, ys) == 3.0
    assert math.isnan(log_interpolate(9.9, xs, ys)) and math.isnan(log_interpolate(0.0, xs, ys))
    assert math.isnan(log_interpolate(5.0, np.array([]), np.array([])))
    with pytest.raises(ValueError, match="by must be"):
        matched_cost(_cost_table([]), "epochs")


def test_crossover_figure_marks_the_analytic_tie(tmp_path):
    from rnnbench.plots.figures import crossover_figure, save

    vocab, cutoffs = 10_000, (1000, 5000)
    runs = (
        [
            {
                "config": _config(family="ff", corpus="ptb", context=c, hidden=200, embed_dim=100, seed=seed),
                "metrics": _metrics(parameters=count(ff_lm_shapes(vocab, 100, c, 200, cutoffs=cutoffs)), test_ppl=y),
                "scale": "short",
            }
            for c, y, seed in ((2, 190.0, 1), (4, 165.0, 1), (4, 175.0, 2))
        ]
        + [
            {
                "config": _config(family="rnn", corpus="ptb", hidden=h, embed_dim=100),
                "metrics": _metrics(parameters=count(rnn_lm_shapes(vocab, 100, h, cutoffs=cutoffs)), test_ppl=y),
                "scale": "short",
            }
            for h, y in ((100, 180.0), (200, 160.0))
        ]
        + [
            {
                "config": _config(family="rnn", corpus="ptb", hidden=300),
                "metrics": _metrics(test_ppl=None, diverged=True),
                "scale": "short",
            }
        ]
    )
    table = crossover_table(our_runs(runs))
    fig = crossover_figure(table, title="PTB", source="data: test")
    ax = fig.axes[0]
    rnn_200 = count(rnn_lm_shapes(vocab, 100, 200, cutoffs=cutoffs))
    verticals = [line.get_xdata()[0] for line in ax.lines if line.get_linestyle() == ":"]
    assert verticals == [rnn_200]  # one feed-forward H, one dotted line at the Elman LM of that d and H
    assert "1 run(s) without a comparable perplexity" in ax.get_title()
    # n-1 = 4 is one model of two seeds, 165 and 175: one point at their mean, 170, and a bar from 165 to 175.
    ff_line = next(line for line in ax.lines if line.get_label() == "feed-forward, H=200 (over n-1)")
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

    from rnnbench.plots.figures import _minor_count_labels

    fig, ax = plt.subplots()
    ax.set_xscale("log")
    label = _minor_count_labels(ax)
    ax.set_xlim(1.1e6, 3.8e6)
    assert [label(v, None) for v in (1.2e6, 1.5e6, 2e6, 3e6)] == ["1.2M", "1.5M", "2M", "3M"]
    ax.set_xlim(1e4, 1e7)
    assert [label(v, None) for v in (1.2e5, 1.5e5, 2e5, 3e5, 5e5, 7e5)] == ["", "", "200k", "", "500k", ""]
    plt.close(fig)


def test_the_reference_summary_keeps_a_dynamic_row_apart_from_the_static_seeds():
    from rnnbench.book.published import reference_runs

    def row(model, seed, ppl, reference, ref_ppl):
        return {
            "corpus": "ptb", "family": "rnn", "studies": "paper_rnn_ptb", "origin": "ours (reference)",
            "model": model, "seed": seed, "test_ppl": ppl, "valid_ppl": ppl + 7, "epochs": 16,
            "status": "converged", "commit": "abcdef123", "parameters": 1, "description": f"RNN, seed {seed}",
            "reference_model": reference, "reference_ppl": ref_ppl, "comparable": "yes",
        }  # fmt: skip

    frame = pd.DataFrame(
        [
            row("rnn-a", 1, 120.0, "RNN LM", 124.7),
            row("rnn-b", 2, 126.0, "RNN LM", 124.7),
            row("rnn-b dynamic", 2, 117.0, "RNN LM, dynamic evaluation", 123.2),
        ]
    )
    static, dynamic = reference_runs(frame).to_dict("records")
    # two seeds: mean 123, range 120-126, straddling 124.7; the dynamic row alone, against 123.2
    assert (static["test_ppl"], static["test_min"], static["test_max"], static["seeds"]) == (
        123.0,
        120.0,
        126.0,
        "1, 2",
    )
    assert static["ratio"] == pytest.approx(123.0 / 124.7) and static["description"] == "RNN"
    assert (dynamic["test_ppl"], dynamic["reference_model"], dynamic["seeds"]) == (
        117.0,
        "RNN LM, dynamic evaluation",
        "2",
    )
