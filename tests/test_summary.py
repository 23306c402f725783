"""Summary tables: the study's tidy long table, Snakemake benchmarks, corpus statistics, and the figure they feed."""

import json
import math

import pandas as pd
import pytest

from rnnbench.config.runs import RunConfig
from rnnbench.config.settings import load_config
from rnnbench.metrics import RUN_METRICS, TOKENS_PER_CPU_SECOND, RunOutputError, read_metrics, tokens_per_cpu_second
from rnnbench.results.summary import (
    BLEW_UP,
    benchmark_table,
    corpus_table,
    study_record,
    summarize_study,
    unigram_perplexities,
)


def write_json(path, data):
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def study_runs(tmp_path):
    """Two runs of a hidden-size study: one finished, one diverged (null perplexities, no agreement)."""
    configs = [RunConfig.from_settings({"family": "rnn", "corpus": "ptb", "hidden": h}) for h in (50, 100)]
    points = [{"hidden": 50, "seed": 1}, {"hidden": 100, "seed": 1}]
    files = [
        write_json(
            tmp_path / "a.json",
            {
                "run_id": configs[0].run_id,
                "test_ppl": 180.5,
                "valid_ppl": 190.25,
                "epochs": 4,
                "steps": 5000,
                "diverged": False,
                "diverged_step": None,
                "parameters": 1_234_567,
                "train_seconds": 600.0,
                "tokens_per_second": 7000.0,
                "clipped_fraction": 0.125,
            },
        ),
        write_json(
            tmp_path / "b.json",
            {
                "run_id": configs[1].run_id,
                "test_ppl": None,
                "valid_ppl": None,
                "epochs": 1,
                "steps": 17,
                "diverged": True,
                "diverged_step": 17,
                "parameters": 2_000_000,
                "train_seconds": 3.5,
                "tokens_per_second": None,
                "clipped_fraction": 0.0,
            },
        ),
    ]
    return points, configs, files


def test_summarize_study_is_one_row_per_run_and_metric_keys_first(study_runs):
    points, configs, files = study_runs
    table = summarize_study("rnn_hidden", points, configs, files)
    assert list(table.columns) == [
        *("study", "run_id", "family", "corpus", "seed", "hidden", "outcome", "metric", "value"),
    ]
    # 2 runs x (their metrics, whether training blew up, their speed in CPU time)
    assert len(table) == 2 * (len(RUN_METRICS) + 2)
    assert table["metric"].tolist() == [*RUN_METRICS, BLEW_UP, TOKENS_PER_CPU_SECOND] * 2
    assert (
        (table["study"] == "rnn_hidden").all() and (table["family"] == "rnn").all() and (table["corpus"] == "ptb").all()
    )
    value = table.set_index(["hidden", "metric"])["value"]
    assert value[(50, "test_ppl")] == 180.5 and value[(50, "valid_ppl")] == 190.25
    assert value[(50, "parameters")] == 1_234_567 and value[(50, "clipped_fraction")] == 0.125
    assert value[(50, "diverged")] == 0.0 and math.isnan(value[(50, "diverged_step")])
    assert math.isnan(value[(50, "agreement_accuracy")])  # not in this run's metrics: NaN, the row is kept
    assert value[(100, "diverged")] == 1.0 and value[(100, "diverged_step")] == 17.0
    assert math.isnan(value[(100, "test_ppl")]) and math.isnan(value[(100, "tokens_per_second")])  # null -> NaN
    assert table.groupby("hidden")["run_id"].first().tolist() == [configs[0].run_id, configs[1].run_id]


def test_each_run_is_judged_against_its_corpus_unigram_baseline(study_runs):
    points, configs, files = study_runs
    key = configs[0].corpus_key
    by_run = lambda table: table.groupby("run_id")["outcome"].first()  # noqa: E731
    # unigram 700: 180.5 is well under 0.75 x 700 = 525; the other run diverged
    judged = by_run(summarize_study("s", points, configs, files, {key: 700.0}))
    assert (judged[configs[0].run_id], judged[configs[1].run_id]) == ("learned", "diverged")
    # a unigram of 200 would make 180.5 no better than counting words (0.75 x 200 = 150)
    assert by_run(summarize_study("s", points, configs, files, {key: 200.0}))[configs[0].run_id] == "did not learn"
    # no baseline given: not called learned
    assert by_run(summarize_study("s", points, configs, files))[configs[0].run_id] == "unknown"


def test_a_run_blew_up_where_it_diverged_or_ended_above_its_corpus_unigram(study_runs):
    points, configs, files = study_runs
    key = configs[0].corpus_key
    blown = lambda table: table[table["metric"] == BLEW_UP].set_index("run_id")["value"]  # noqa: E731
    # unigram 700: the first run's 180.5 is far below it; the second diverged
    judged = blown(summarize_study("s", points, configs, files, {key: 700.0}))
    assert (judged[configs[0].run_id], judged[configs[1].run_id]) == (0.0, 1.0)
    # a unigram of 150: 180.5 is worse than word frequencies alone, a blow-up the divergence rules did not stop
    assert blown(summarize_study("s", points, configs, files, {key: 150.0}))[configs[0].run_id] == 1.0
    # no baseline: not judged
    assert math.isnan(blown(summarize_study("s", points, configs, files))[configs[0].run_id])


def test_unigram_perplexities_read_the_test_rows_of_the_baselines_table():
    table = pd.DataFrame(
        {
            "corpus_key": ["ptb-1", "ptb-1", "ptb-1", "brown-2"],
            "model": ["unigram", "unigram", "kn5", "unigram"],
            "split": ["valid", "test", "test", "test"],
            "perplexity": [650.0, 690.0, 141.2, 800.0],
        }
    )
    assert unigram_perplexities(table) == {"ptb-1": 690.0, "brown-2": 800.0}


def test_summarize_study_needs_one_metrics_file_per_run(study_runs):
    points, configs, files = study_runs
    with pytest.raises(ValueError):
        summarize_study("s", points, configs, files[:1])


BENCHMARK_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def test_benchmark_table_takes_wall_time_from_snakemake_and_cpu_time_and_memory_from_the_run(tmp_path):
    # Snakemake writes one row per repeat; "NA" where it could not sample the process. Its CPU time (240.1,
    # 9.5) and memory (812.3, 500.0) are samples and are not read: the run's own counts are.
    a = tmp_path / "a.tsv"
    a.write_text(BENCHMARK_HEADER + "125.5\t0:02:05\t812.3\t2048.0\t800.1\t801.2\t1.5\t0.2\t97.4\t240.1\n")
    b = tmp_path / "b.tsv"
    b.write_text(
        BENCHMARK_HEADER
        + "10.0\t0:00:10\t500.0\t900.0\t490.0\t491.0\t0.1\t0.0\t50.0\t9.5\n"
        + "12.0\t0:00:12\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA\n"
    )
    metrics_a = write_json(tmp_path / "a.json", {"cpu_seconds": 248.0, "peak_rss_mb": 830.5})
    metrics_b = write_json(tmp_path / "b.json", {"cpu_seconds": 11.5, "peak_rss_mb": 512.0})
    table = benchmark_table(["rnn-ptb-aaaaaaaaaa", "ff-ptb-bbbbbbbbbb"], [a, b], [metrics_a, metrics_b])
    assert list(table.columns) == ["rule", "run_id", "repeat", "wall_seconds", "cpu_seconds", "max_rss_mb"]
    assert table["run_id"].tolist() == ["rnn-ptb-aaaaaaaaaa", "ff-ptb-bbbbbbbbbb", "ff-ptb-bbbbbbbbbb"]
    assert table["repeat"].tolist() == [0, 0, 1] and (table["rule"] == "train").all()
    assert table["wall_seconds"].tolist() == [125.5, 10.0, 12.0]
    assert (table["cpu_seconds"].iloc[0], table["max_rss_mb"].iloc[0]) == (248.0, 830.5)
    # the run's metrics are its last repeat's: an earlier repeat has no count of its own
    assert math.isnan(table["cpu_seconds"].iloc[1]) and table["cpu_seconds"].iloc[2] == 11.5


def test_benchmark_table_without_jobs_or_counts_has_the_key_columns(tmp_path):
    assert list(benchmark_table([], [], []).columns) == ["rule", "run_id", "repeat"]
    old = tmp_path / "old.tsv"  # a run trained before runs counted their cost: unknown, not zero
    old.write_text("s\th:m:s\tmax_rss\n3.0\t0:00:03\t100.0\n")
    metrics = write_json(tmp_path / "old.json", {"test_ppl": 150.0})
    table = benchmark_table(["r"], [old], [metrics])
    assert list(table.columns) == ["rule", "run_id", "repeat", "wall_seconds", "cpu_seconds", "max_rss_mb"]
    assert table["cpu_seconds"].isna().all() and table["max_rss_mb"].isna().all()


def test_corpus_table_is_one_row_per_corpus_and_statistic(tmp_path):
    ptb = write_json(tmp_path / "ptb.json", {"corpus": "ptb", "vocab_size": 10000, "train_tokens": 929589})
    agr = write_json(tmp_path / "agr.json", {"corpus": "agreement", "vocab_size": 313})
    table = corpus_table(["ptb-12345678", "agreement-9abcdef0"], [ptb, agr])
    assert list(table.columns) == ["corpus_key", "statistic", "value"]
    assert len(table) == 3 + 2
    value = table.set_index(["corpus_key", "statistic"])["value"]
    assert value[("ptb-12345678", "train_tokens")] == 929589 and value[("agreement-9abcdef0", "vocab_size")] == 313
    assert list(corpus_table([], []).columns) == ["corpus_key", "statistic", "value"]


def test_study_record_says_what_the_study_varies_fixes_and_measures():
    config = load_config(
        {
            "run_overrides": {"max_epochs": 1, "hidden": 32},
            "studies": {
                "clip_hidden": {
                    "description": "clipping by hidden size",
                    "family": "rnn",
                    "corpus": "agreement",
                    "fixed": {"output": "full", "embed_dim": 16, "context": 9},
                    "vary": {"clip_mode": ["none", "norm"], "hidden": [8, 16]},
                    "seeds": [3, 1],
                    "metric": "agreement_accuracy",
                }
            },
        }
    )
    record = study_record(config, "clip_hidden")
    assert {k: record[k] for k in ("name", "description", "family", "corpus", "metric")} == {
        "name": "clip_hidden",
        "description": "clipping by hidden size",
        "family": "rnn",
        "corpus": "agreement",
        "metric": "agreement_accuracy",
    }
    assert record["vary"] == ["clip_mode", "hidden"]  # config order: x axis first, then hue
    # fixed: the study's own settings, then run_overrides', as the runs use them; the override of a varied
    # setting (hidden) is not fixed, and context is left out because an RNN does not read it
    assert record["fixed"] == {"output": "full", "embed_dim": 16, "max_epochs": 1}
    assert record["seeds"] == [3, 1]
    # 2 x 2 settings x 2 seeds, in the order of the summary's rows
    runs = config.study_runs("clip_hidden")
    assert record["run_ids"] == [cfg.run_id for _, cfg in runs] and len(set(record["run_ids"])) == 8
    assert [point for point, _ in runs][:2] == [
        {"clip_mode": "none", "hidden": 8, "seed": 3},
        {"clip_mode": "none", "hidden": 8, "seed": 1},
    ]
    json.dumps(record)  # written as study.json as it is


# --- a damaged metrics.json is named, with its run and the fix, by every table that reads it ---------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"test_ppl": NaN, "diverged": false}', "test_ppl is nan, which training never writes"),
        ('{"test_ppl": Infinity}', "test_ppl is inf, which training never writes"),
        ('{"test_ppl": "180.5"}', "test_ppl is '180.5', not a number"),
        ("garbage\x00{", "not JSON: Expecting value at line 1 column 1"),
        ('{"test_ppl": 180.5', "not JSON: Expecting ',' delimiter at line 1 column 19"),
        ("[180.5]", "a JSON list, not an object"),
    ],
)
def test_a_damaged_metrics_file_is_named_with_its_run_and_the_fix(study_runs, tmp_path, text, problem):
    points, configs, files = study_runs
    files[1].write_text(text)
    expected = (
        f"{files[1]}: the metrics of run {configs[1].run_id} cannot be read ({problem}). Delete that file and the "
        "run trains again (snakemake makes a missing output anew)"
    )
    with pytest.raises(RunOutputError) as caught:
        summarize_study("s", points, configs, files)
    assert str(caught.value) == expected
    bench = write_json(tmp_path / "bench.tsv", None)
    bench.write_text("s\n1.0\n")
    with pytest.raises(RunOutputError) as caught:
        benchmark_table([configs[1].run_id], [bench], [files[1]])
    assert str(caught.value) == expected


def test_a_metrics_file_read_without_a_run_id_is_named_by_its_folder(tmp_path):
    path = tmp_path / "rnn-ptb-0123456789" / "metrics.json"
    path.parent.mkdir()
    path.write_text("{")
    with pytest.raises(RunOutputError, match=r"metrics\.json: the metrics of run rnn-ptb-0123456789 cannot be read"):
        read_metrics(path)
    path.write_text('{"test_ppl": null, "diverged": true, "diverged_reason": "norm", "cpu_seconds": 3}')
    assert read_metrics(path)["diverged_reason"] == "norm"  # null: what training writes for a diverged run


def test_the_speed_in_cpu_time_is_the_tokens_read_over_the_cpu_seconds_taken():
    # 1,000 tokens a wall second for 30 wall seconds: 30,000 tokens; over 20 CPU seconds, 1,500 a CPU second
    assert tokens_per_cpu_second({"tokens_per_second": 1000.0, "train_seconds": 30.0, "cpu_seconds": 20.0}) == 1500.0
    assert math.isnan(tokens_per_cpu_second({"tokens_per_second": None, "train_seconds": 30.0, "cpu_seconds": 20.0}))
    assert math.isnan(tokens_per_cpu_second({"tokens_per_second": 1000.0, "train_seconds": 30.0, "cpu_seconds": 0.0}))
