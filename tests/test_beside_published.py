"""Our runs beside the published rows: each with the row it is measured against, the ratio where it is due."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from test_runs import run_config, run_metrics, write_run

from rnnbench.published import load_published, reference_rows
from rnnbench.results.beside_published import comparison_table, read_corpus_stats, vocabulary_agreement
from rnnbench.results.runs import our_runs, read_run


def test_comparison_reads_published_rows_and_our_metrics_files(tmp_path):
    rnn_cfg = run_config(family="rnn", corpus="ptb", hidden=400, embed_dim=200, dropout=0.5, max_epochs=25)
    ff_cfg = run_config(family="ff", corpus="brown", context=4, hidden=200, max_epochs=3, schedule="constant")
    short_cfg = run_config(family="rnn", corpus="ptb", hidden=50, max_epochs=3)
    agreement_cfg = run_config(family="rnn", corpus="agreement", output="full")
    runs = [
        read_run(write_run(tmp_path, rnn_cfg, run_metrics(test_ppl=120.5, epochs=13, parameters=2_000_000)), "paper"),
        read_run(write_run(tmp_path, ff_cfg, run_metrics(test_ppl=280.0, epochs=3)), "short"),
        read_run(write_run(tmp_path, short_cfg, run_metrics(test_ppl=200.0, epochs=3)), "short"),
        read_run(write_run(tmp_path, agreement_cfg, run_metrics(test_ppl=3.0)), "short"),
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
    assert (rnn["origin"], rnn["scale"], rnn["status"]) == ("ours", "paper", "converged")
    assert rnn["test_ppl"] == 120.5
    assert rnn["reference_model"] == refs[("ptb", "rnn")].model
    assert rnn["reference_ppl"] == refs[("ptb", "rnn")].test_ppl
    assert rnn["ratio_to_reference"] == pytest.approx(120.5 / refs[("ptb", "rnn")].test_ppl)
    assert rnn["split"] == "929,589 / 73,760 / 82,430 tokens train / valid / test, |V| = 10,000"
    assert "H = 400" in rnn["description"] and "dropout 0.5" in rnn["description"] and "seed 1" in rnn["description"]

    ff = table[table["model"] == ff_cfg["run_id"]].iloc[0]
    assert (ff["origin"], ff["scale"], ff["status"], ff["reference_ppl"]) == (
        "ours",
        "short",
        "epoch cap",
        refs[("brown", "ff")].test_ppl,
    )
    assert ff["split"] == ""  # no statistics given for brown: left blank, not guessed
    assert "n - 1 = 4" in ff["counting"]

    # the synthetic corpus has no published rows, so it has no place here
    assert agreement_cfg["run_id"] not in set(table["model"])
    # corpus by corpus, published rows first, then the paper-scale run, then short runs
    ptb = (table[table["corpus"] == "ptb"]["origin"] + " " + table[table["corpus"] == "ptb"]["scale"]).tolist()
    assert ptb == sorted(ptb, key=["published ", "ours paper", "ours short"].index)
    assert table["corpus"].tolist().index("brown") > max(i for i, c in enumerate(table["corpus"]) if c == "ptb")


def test_a_subset_or_diverged_run_gets_no_ratio(tmp_path):
    smoke = run_config(family="rnn", corpus="ptb", train_tokens=20000, eval_tokens=2000)
    broken = run_config(family="rnn", corpus="ptb", hidden=64)
    runs = [
        {"config": smoke, "metrics": run_metrics(test_ppl=900.0), "scale": "short"},
        {"config": broken, "metrics": run_metrics(test_ppl=None, diverged=True), "scale": "short"},
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
    brown = run_config(family="ff", corpus="brown", context=4, hidden=200, max_epochs=30)
    ptb = run_config(family="rnn", corpus="ptb", hidden=400, max_epochs=30)
    stats = {"train_tokens": 800000, "valid_tokens": 200000, "test_tokens": 161192}
    runs = [
        {
            "config": brown,
            "metrics": run_metrics(test_ppl=250.0, epochs=12),
            "scale": "reference",
            "corpus_stats": {"corpus": "brown", **stats, "vocab_size": 17905},
        },
        {"config": ptb, "metrics": run_metrics(test_ppl=120.0, epochs=12), "scale": "reference", "stale": "changed"},
    ]
    table = comparison_table(load_published(), our_runs(runs)).set_index("model")
    row = table.loc[brown["run_id"]]
    assert (row["origin"], row["scale"], row["status"]) == ("ours", "reference", "converged")
    assert math.isnan(row["ratio_to_reference"]) and row["comparable"].startswith("not comparable: |V| = 17,905")
    assert row["split"].endswith("|V| = 17,905")  # the run's own split, not the config's
    stale = table.loc[ptb["run_id"]]
    assert (stale["status"], stale["comparable"], stale["notes"]) == ("stale", "stale reference run", "changed")
    assert math.isnan(stale["ratio_to_reference"])


def test_the_reference_summary_keeps_a_dynamic_row_apart_from_the_static_seeds():
    from rnnbench.book.published import reference_runs

    def row(model, seed, ppl, reference, ref_ppl):
        return {
            "corpus": "ptb", "family": "rnn", "studies": "paper_rnn_ptb", "origin": "ours", "scale": "reference",
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
