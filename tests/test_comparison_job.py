"""The comparison's job (rule comparison) and the config block that feeds it; the chapter's matched sentence."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rnnbench import jobs, paths
from rnnbench.book.published import matched_numbers
from rnnbench.config.files import ConfigError, merge_config_files
from rnnbench.config.runs import RunConfig
from rnnbench.config.settings import load_config
from rnnbench.published import load_published, published_path, reference_rows
from rnnbench.results.matching import nearest, within

REPO = Path(__file__).resolve().parents[1]
BENCHMARK_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _run(results: Path, i: int, **settings) -> tuple[str, dict]:
    """A finished run folder: config.json as train.py writes it, metrics.json with made-up values, a benchmark."""
    cfg = RunConfig.from_settings(settings)
    metrics = {
        "test_ppl": 300.0 - 20 * i,
        "valid_ppl": 310.0 - 20 * i,
        "epochs": 2,
        "steps": 100,
        "diverged": False,
        "diverged_step": None,
        "diverged_reason": None,
        "parameters": 1_000 * 2**i,
        "train_seconds": 10.0 + 5 * i,
        "tokens_per_second": 1e4,
        "cpu_seconds": 19.0 + i,
        "peak_rss_mb": 400.0,
        "clipped_fraction": 0.0,
    }
    folder = Path(paths.run_dir(str(results), cfg.run_id))
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"run_id": cfg.run_id, **cfg.to_dict()}))
    (folder / "metrics.json").write_text(json.dumps(metrics))
    pd.DataFrame(
        {"epoch": [1, 2], "lr": [1.0, 0.5], "train_ppl": [400.0, 320.0], "seconds": [4.0, 6.0],
         "tokens_per_second": [250.0, 250.0], "valid_ppl": [380.0, metrics["valid_ppl"]]}
    ).to_csv(folder / "epochs.csv", index=False)  # fmt: skip
    bench = Path(paths.train_benchmark(str(results), cfg.run_id))
    bench.parent.mkdir(parents=True, exist_ok=True)
    bench.write_text(BENCHMARK_HEADER + f"{20.0 + i}\t0:00:20\t400\t900\t380\t390\t1.0\t2.0\t95.0\t{19.0 + i}\n")
    return cfg.run_id, metrics


def _baselines(path: Path, kn5: dict[str, float]) -> str:
    """tables/baselines.csv as rule baseline_tables writes it: each corpus's KN5 (corpus -> test perplexity), on the
    prepared corpus of the default options, the one the runs here read."""
    keys = {corpus: RunConfig.from_settings({"family": "rnn", "corpus": corpus}).corpus_key for corpus in kn5}
    rows = [
        {"corpus_key": keys[corpus], "corpus": corpus, "model": "kn5", "order": 5, "split": "test",
         "perplexity": ppl, "n_tokens": 80}
        for corpus, ppl in kn5.items()
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_the_job_reads_the_published_table_and_our_run_folders(tmp_path):
    results = tmp_path / "results"
    runs = {
        "rnn": _run(results, 0, family="rnn", corpus="ptb", hidden=50, max_epochs=2),
        "rnn2": _run(results, 2, family="rnn", corpus="ptb", hidden=200, max_epochs=2),
        "ff": _run(results, 1, family="ff", corpus="ptb", context=4, hidden=100, max_epochs=2),
        "brown": _run(results, 3, family="ff", corpus="brown", context=4, hidden=100, max_epochs=2),
    }
    stats = tmp_path / "ptb.json"
    stats.write_text(
        json.dumps({"corpus": "ptb", "train_tokens": 900, "valid_tokens": 90, "test_tokens": 80, "vocab_size": 10000})
    )
    outs = {name: str(tmp_path / "out" / f"{name}.csv") for name in paths.COMPARISON_TABLES}
    provenance_files = {name: paths.provenance(out) for name, out in outs.items()}
    baselines = _baselines(tmp_path / "baselines.csv", {"ptb": 150.0, "brown": 300.0})
    jobs.comparison_tables(
        str(results),
        {run_id: ["a_study"] for run_id, _ in runs.values()},
        [str(stats)],
        [paths.train_benchmark(str(results), run_id) for run_id, _ in runs.values()],
        outs,
        baselines_file=baselines,
        scale="short",
        crossover_corpus="ptb",
        provenance_files=provenance_files,
        provenance={"config": {}, "config_files": [], "command": "pytest", "checkout": str(REPO)},
    )
    table = pd.read_csv(outs["comparison"])
    published = load_published()

    # the published rows are the package's, number for number
    theirs = table[table["origin"] == "published"]
    assert theirs["test_ppl"].tolist() == published["test_ppl"].tolist()
    assert theirs["source"].tolist() == published["source"].tolist()

    # ours are the metrics files' numbers, measured against the reference row of their corpus and family
    refs = {(r.corpus, r.reference_for): r.test_ppl for r in reference_rows(published).itertuples()}
    mine = table[(table["origin"] == "ours") & (table["scale"] == "short")].set_index("model")
    assert len(mine) == len(runs)
    for run_id, metrics in runs.values():
        row = mine.loc[run_id]
        assert row["test_ppl"] == metrics["test_ppl"] and row["parameters"] == metrics["parameters"]
        ref = refs[(row["corpus"], row["family"])]
        assert row["reference_ppl"] == ref
        # each over the KN5 of its corpus in tables/baselines.csv
        kn5 = {"ptb": 150.0, "brown": 300.0}[row["corpus"]]
        assert (row["kn_model"], row["kn_ppl"]) == ("kn5", kn5)
        assert row["ratio_to_kn"] == pytest.approx(metrics["test_ppl"] / kn5)
        if row["corpus"] == "brown":  # no statistics of its corpus given: its |V| is unknown, so no ratio
            assert math.isnan(row["ratio_to_reference"]) and math.isnan(row["normalised_ratio"])
            assert row["comparable"] == "not comparable: a vocabulary size is unknown"
        else:
            assert row["ratio_to_reference"] == pytest.approx(metrics["test_ppl"] / ref) and row["comparable"] == "yes"
            their_kn5 = published.set_index(["corpus", "reference_for"]).loc[("ptb", "ngram"), "test_ppl"]
            assert row["normalised_ratio"] == pytest.approx((metrics["test_ppl"] / kn5) / (ref / their_kn5))
        assert row["status"] == "epoch cap" and row["studies"] == "a_study"
        # named inside the results folder: a cluster build of the same config has the same table
        assert row["source"] == f"runs/{run_id}" and (results / row["source"] / "metrics.json").is_file()
    # the job's wall time is Snakemake's benchmark record ("s"), not the training loop's seconds
    bench = pd.read_csv(paths.train_benchmark(str(results), runs["ff"][0]), sep="\t")
    assert mine.loc[runs["ff"][0], "job_wall_seconds"] == bench["s"].iloc[0]
    assert mine.loc[runs["rnn"][0], "split"].endswith("|V| = 10,000")

    # learning curves: each run's epochs, with the tokens and seconds summed so far (250 tok/s x 4 s, x 6 s)
    curves = pd.read_csv(outs["learning_curves"])
    ff_curve = curves[curves["run_id"] == runs["ff"][0]]
    assert ff_curve["tokens_seen"].tolist() == [1000, 2500] and ff_curve["seconds_trained"].tolist() == [4.0, 10.0]
    assert ff_curve["valid_ppl"].tolist() == [380.0, runs["ff"][1]["valid_ppl"]]
    assert set(curves["run_id"]) == {run_id for run_id, _ in runs.values()}

    # matched parameter count: the feed-forward run against the RNN run nearest its count, if within 1.25
    (matched,) = [row for _, row in pd.read_csv(outs["matched_parameters"]).iterrows()]  # one feed-forward model
    (_, rnn), (_, rnn2), (_, ff) = runs["rnn"], runs["rnn2"], runs["ff"]
    counts = np.array([rnn["parameters"], rnn2["parameters"]], float)
    near = (rnn, rnn2)[nearest(ff["parameters"], counts)]
    if within(near["parameters"] / ff["parameters"]):
        assert matched["rnn_test_ppl"] == near["test_ppl"]
        assert matched["rnn_advantage"] == pytest.approx(ff["test_ppl"] - near["test_ppl"])
        assert matched["rnn_seeds"] == 1
    else:
        assert math.isnan(matched["rnn_test_ppl"]) and matched["rnn_seeds"] == 0
    assert matched["seeds"] == 1 and matched["rnn_cost"] == near["parameters"]
    (timed,) = [row for _, row in pd.read_csv(outs["matched_time"]).iterrows()]
    assert timed["cost"] == ff["train_seconds"]
    # Brown is not on the crossover corpus
    assert set(pd.read_csv(outs["crossover"])["corpus"]) == {"ptb"}

    # provenance beside each table, naming what it read
    record = json.loads(Path(provenance_files["comparison"]).read_text())
    assert record["producer"] == "rnnbench.results.beside_published.comparison_table"
    assert str(published_path()) in record["inputs"] and str(stats) in record["inputs"]
    assert baselines in record["inputs"]
    assert all(Path(p).is_file() for p in provenance_files.values())


def test_the_figure_job_draws_the_crossover_table(tmp_path):
    results = tmp_path / "results"
    runs = {
        run_id: ["s"]
        for run_id, _ in (
            _run(results, 0, family="rnn", corpus="ptb", hidden=50),
            _run(results, 1, family="ff", corpus="ptb", context=2, hidden=100),
        )
    }
    outs = {name: str(tmp_path / f"{name}.csv") for name in paths.COMPARISON_TABLES}
    jobs.comparison_tables(
        str(results),
        runs,
        [],
        [paths.train_benchmark(str(results), r) for r in runs],
        outs,
        baselines_file=_baselines(tmp_path / "baselines.csv", {"ptb": 150.0}),
        scale="short",
        crossover_corpus="ptb",
        provenance_files={n: paths.provenance(o) for n, o in outs.items()},
        provenance={"config": {}, "config_files": [], "command": "pytest", "checkout": str(REPO)},
    )
    figures = [str(tmp_path / f"crossover.{fmt}") for fmt in paths.FIGURE_FORMATS]
    jobs.comparison_figure(
        outs["crossover"],
        figures,
        title="ptb",
        provenance_file=str(tmp_path / "p.json"),
        provenance={"config": {}, "config_files": [], "command": "pytest", "checkout": str(REPO)},
    )
    assert all(Path(f).stat().st_size > 0 for f in figures)
    assert json.loads((tmp_path / "p.json").read_text())["inputs"] == [outs["crossover"]]


# -------------------------------------------------------------------------------------------------
# The config's comparison block: checked when the config is loaded, before any job.


def _config(comparison: dict) -> dict:
    merged = merge_config_files([REPO / "config" / "config.yaml"])
    merged["comparison"] = comparison
    return merged


def test_the_shipped_configs_name_their_comparison_studies():
    default = load_config(merge_config_files([REPO / "config" / "config.yaml"]))
    assert default.comparison.scale == "short" and default.comparison.crossover == "ptb"
    assert set(default.comparison.study_names()) <= set(default.studies)
    paper = load_config(merge_config_files([REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"]))
    assert paper.comparison.scale == "paper" and "paper_rnn_ptb" in paper.comparison.study_names()
    # every run of a paper comparison study trains without slices (what `scale: paper` promises), to convergence:
    # a schedule that stops once validation stops gaining, not a constant rate
    for name in paper.comparison.study_names():
        for _, cfg in paper.study_runs(name):
            assert (cfg.train_tokens, cfg.eval_tokens, cfg.max_steps_per_epoch) == (None, None, None)
            assert cfg.schedule in ("mikolov", "plateau")


@pytest.mark.parametrize(
    "comparison, message",
    [
        (
            {"studies": {"ptb": {"ff": ["ff_context_ptb", "no_such_study"]}}},
            r"comparison\.studies\.ptb\.ff\[1\]: no study named 'no_such_study' in this config; studies: .*ff_context_ptb",
        ),
        (
            {"studies": {"ptb": {"ff": ["rnn_hidden_ptb"]}}},
            r"comparison\.studies\.ptb\.ff\[0\]: study 'rnn_hidden_ptb' trains family 'rnn' on corpus 'ptb'; "
            r"list it under comparison\.studies\.ptb\.rnn",
        ),
        (
            {"studies": {"ptb": {"ff": ["ff_context_ptb"]}}, "crossover": "ptb"},
            r"comparison\.crossover: 'ptb' draws both families .* names no rnn study",
        ),
        ({"studies": {"agreement": {"rnn": ["truncation_agreement"]}}}, r"agreement"),
        ({"scale": "long"}, r"long"),
    ],
)
def test_a_bad_comparison_block_fails_at_config_time(comparison, message):
    with pytest.raises(ConfigError, match=message):
        load_config(_config(comparison))


def test_no_comparison_block_means_no_comparison_outputs():
    config = load_config(_config({}))
    assert not config.comparison and paths.comparison_outputs(config) == []
    assert paths.table(config.results_dir, "comparison") not in paths.expected_outputs(config, [])


# -------------------------------------------------------------------------------------------------
# The chapter's numbers: how much the RNN beats the feed-forward model at equal size, from the table.


def test_matched_numbers_read_the_headline_on_validation_among_the_matched():
    # A feed-forward model of 2,000 parameters at 190, matched by an RNN of 2,100 at 175, is beaten by 15 (ratio
    # 190/175 = 1.09). It is the headline for its validation perplexity (195, the lowest of the matched models),
    # though ff-b's test perplexity is lower; ff-c has no RNN within the tolerance.
    matched = pd.DataFrame(
        [
            {
                "setting": "ff-a",
                "context": 4,
                "hidden": 100,
                "cost": 2000.0,
                "ff_valid_ppl": 195.0,
                "ff_test_ppl": 190.0,
                "ff_test_min": 186.0,
                "ff_test_max": 194.0,
                "seeds": 3,
                "rnn_hidden": 50,
                "rnn_cost": 2100.0,
                "rnn_seeds": 1,
                "rnn_test_ppl": 175.0,
                "rnn_advantage": 15.0,
                "ratio": 190.0 / 175.0,
            },
            {
                "setting": "ff-b",
                "context": 2,
                "hidden": 100,
                "cost": 1500.0,
                "ff_valid_ppl": 199.0,
                "ff_test_ppl": 188.0,
                "ff_test_min": 188.0,
                "ff_test_max": 188.0,
                "seeds": 1,
                "rnn_hidden": 40,
                "rnn_cost": 1400.0,
                "rnn_seeds": 1,
                "rnn_test_ppl": 197.0,
                "rnn_advantage": -9.0,
                "ratio": 188.0 / 197.0,
            },
            {
                "setting": "ff-c",
                "context": 8,
                "hidden": 100,
                "cost": 9000.0,
                "ff_valid_ppl": 180.0,
                "ff_test_ppl": 185.0,
                "ff_test_min": 185.0,
                "ff_test_max": 185.0,
                "seeds": 1,
                "rnn_hidden": 50,
                "rnn_cost": 2100.0,
                "rnn_seeds": 0,
                "rnn_test_ppl": math.nan,
                "rnn_advantage": math.nan,
                "ratio": math.nan,
            },
        ]
    )
    m = matched_numbers(matched, "parameters")
    assert (m.context, m.hidden, m.cost, m.ff_test_ppl, m.rnn_test_ppl) == (4, 100, 2000, 190, 175)
    assert m.advantage == 15 and m.ratio == pytest.approx(1.0857, abs=1e-4)
    assert (m.seeds, m.ff_test_min, m.ff_test_max, m.rnn_seeds, m.rnn_hidden, m.rnn_cost) == (3, 186, 194, 1, 50, 2100)
    assert (m.spanned, m.rnn_lower, m.advantage_min, m.advantage_max, m.unmatched) == (2, 1, -9, 15, 1)
    nothing = matched_numbers(matched.iloc[2:], "train_seconds")
    assert (nothing.spanned, nothing.unmatched) == (0, 1) and math.isnan(nothing.advantage)
