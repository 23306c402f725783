"""The Quarto book in reports/, checked without Quarto (tests/bookcheck.py runs it as Quarto would).

Every chapter's cells run in order, and every inline expression is evaluated where Quarto would evaluate it,
against a results folder built here by the package's own writers (worked tables, a study per config study from
hand-written metrics.json files, benchmarks, corpora), so the book is checked on a clean checkout. With
RNNBENCH_SMOKE_RESULTS pointing at a finished smoke run (results/smoke), that folder is used instead.

Also checked: cross-references resolve, every table and figure is labelled, captioned with its source and
cited, the files the book names are ones the workflow writes, no number is typed into the prose, the book's
code imports no torch, _quarto.yml is a book of existing chapters, and the formatters and the study
sections on hand-made values. tests/test_book_render.py renders the book with a real Quarto.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import bookcheck
import numpy as np
import pandas as pd
import pytest
import yaml

from rnnbench import jobs, metrics, paths
from rnnbench.book import answers, published, study_sections
from rnnbench.book import figures as fig
from rnnbench.book import format as fmt
from rnnbench.book import results as res
from rnnbench.config.analyses import UNTRAINED_KEYS
from rnnbench.config.files import merge_config_files
from rnnbench.config.settings import Config, load_config
from rnnbench.findings.evidence import Roles
from rnnbench.plots.decay_figures import BOOK_FIGURES
from rnnbench.provenance import write_provenance
from rnnbench.results.dynamic_record import FIELDS
from rnnbench.results.summary import study_record
from rnnbench.worked import TABLES

REPO = Path(__file__).resolve().parents[1]
BOOK = REPO / "reports"
CONFIG_FILES = [REPO / "config" / "config.yaml", REPO / "config" / "smoke.yaml"]
SMOKE_ENV = "RNNBENCH_SMOKE_RESULTS"


@dataclass(frozen=True)
class Fixture:
    results: Path  # the results folder the book reads
    book: Path  # a copy of reports/, where the chapters run (figures are staged into it)
    config: Config  # the configuration whose outputs the results folder holds


# --------------------------------------------------------------------------------------------------------------
# A results folder written by the workflow's own job functions


def _metrics(i: int, cfg, diverged: bool) -> dict:
    """Plausible metrics of run i; a diverged run has no perplexity or accuracy, as train.py writes it. Run 1 of
    each study did not learn (rnnbench.results.outcome): a perplexity above 0.75 times the unigram model's (about 32 on
    the fixture's random text of 32 words), an accuracy at chance; the others learned."""
    test_ppl = 40.0 if i == 1 else 20.0 - 0.5 * i
    metrics = {
        "run_id": cfg.run_id,
        "test_ppl": 7.9e11 if diverged else test_ppl,  # a blown-up run's number, never a result
        "valid_ppl": None if diverged else test_ppl + 0.5,
        "epochs": 1,
        "steps": 30,
        "diverged": diverged,
        "diverged_step": 12 if diverged else None,
        "diverged_reason": "non_finite_loss" if diverged else None,
        "parameters": 10_000 + 100 * i,
        "train_seconds": 2.0 + i,
        "tokens_per_second": 5_000.0 + i,
        "cpu_seconds": 9.5 + i,
        "peak_rss_mb": 400.0 + i,
        "clipped_fraction": 0.25,
        "grad_norm_q05": 0.5,
        "grad_norm_median": 1.0 + 0.1 * i,
        "grad_norm_q95": 3.0,
        "grad_norm_max": 9.0 + i,
        "clip_cosine_mean": {"norm": 1.0, "value": 0.9}.get(cfg.clip_mode),
        # a run that measures the update clipping turned (Adam) measured one clipped step: 0.95 - 0.01 i
        **(
            {"update_cosine_mean": 0.95 - 0.01 * i, "update_cosine_min": 0.95 - 0.01 * i, "update_cosine_steps": 1}
            if cfg.measures_update_cosine
            else {"update_cosine_mean": None, "update_cosine_min": None, "update_cosine_steps": 0}
        ),
    }
    if cfg.family == "rnn" and cfg.corpus == "ptb" and cfg.bptt and not diverged:
        # Read as a stream: ten test columns. Run 2's worst is 100 times its median (rnnbench.training.stuck_columns: stuck).
        metrics["test_column_median"] = test_ppl / 2 if i == 2 else test_ppl
        metrics["test_column_worst"] = 100 * metrics["test_column_median"] if i == 2 else 1.2 * test_ppl
    if cfg.corpus == "agreement" and not diverged:
        metrics["agreement_accuracy"] = 0.5 if i == 1 else 0.6 + 0.04 * i
        metrics["agreement_probes"] = 1500
    return metrics


REFERENCE_MEDIAN = 0.4  # the median pre-clip norm of every relative threshold's reference run

BENCHMARK_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def build_results(results: Path) -> Config:
    """Every output of config.yaml + smoke.yaml, written by rnnbench.jobs; runs are hand-written metrics."""
    merged = merge_config_files(CONFIG_FILES)
    merged["results_dir"] = str(results)
    config = load_config(merged)
    provenance = {
        "config": merged,
        "config_files": [str(f) for f in CONFIG_FILES],
        "command": "pytest fixture",
        "checkout": str(REPO),
    }

    def table(name):
        return {
            "out": paths.table(str(results), name),
            "provenance_file": paths.provenance(paths.table(str(results), name)),
        }

    for name in TABLES:
        jobs.worked_table(name, **table(name), provenance=provenance)

    # The baselines first: each language-model study's runs are judged against them (rule study_summary).
    runs = config.all_runs()
    corpora = {cfg.corpus_key: cfg.corpus for cfg in runs.values()}
    _baselines(results, config, corpora, provenance)
    baselines = paths.table(str(results), "baselines")

    first_study = next(iter(config.studies))
    for study_name, study in config.studies.items():
        points, configs = zip(*config.study_runs(study_name), strict=True)
        metric_files = []
        for i, cfg in enumerate(configs):
            diverged = study_name == first_study and i == len(configs) - 1  # one diverged run, in one study
            path = Path(paths.run_metrics(str(results), cfg.run_id))
            path.parent.mkdir(parents=True, exist_ok=True)
            # A threshold relative to a measured norm resolved as training resolves it (rnnbench.training.loop), from
            # a reference whose median norm is REFERENCE_MEDIAN.
            reference = cfg.clip_reference()
            median = {"run_id": reference.run_id, "grad_norm_median": REFERENCE_MEDIAN} if reference else None
            resolved = cfg.with_clip_from(median)
            clipping = {
                "clip_threshold": resolved.clip
                if resolved.clip_mode != "none" and math.isfinite(resolved.clip)
                else None,
                "clip_reference_median": REFERENCE_MEDIAN if reference else None,
            }
            path.write_text(json.dumps(_metrics(i, cfg, diverged) | clipping), encoding="utf-8")
            Path(paths.run_config(str(results), cfg.run_id)).write_text(
                json.dumps({"run_id": cfg.run_id, **resolved.to_json()}), encoding="utf-8"
            )
            pd.DataFrame(
                {"epoch": [1, 2], "lr": [1.0, 1.0], "train_ppl": [400.0, 300.0], "seconds": [5.0, 5.0],
                 "tokens_per_second": [1000.0, 1000.0], "valid_ppl": [350.0, 310.0 - i]}
            ).to_csv(paths.run_epochs(str(results), cfg.run_id), index=False)  # fmt: skip
            metric_files.append(str(path))
        summary = paths.study_summary(str(results), study_name)
        record = paths.study_record(str(results), study_name)
        jobs.study_summary(
            study_record(config, study_name),
            list(points),
            [c.settings() for c in configs],
            metric_files,
            summary,
            record_file=record,
            provenance_file=paths.provenance(summary),
            provenance=provenance,
            baselines=None if study.corpus == "agreement" else baselines,
        )
        files = [paths.study_figure(str(results), study_name, ext) for ext in paths.FIGURE_FORMATS]
        jobs.study_figure(summary, record, files, provenance_file=paths.provenance(files[0]), provenance=provenance)
        _write_extras(results, config, study_name, points, configs, summary, record, provenance)

    for name in BOOK_FIGURES:
        files = [paths.book_figure(str(results), name, ext) for ext in paths.FIGURE_FORMATS]
        jobs.book_figure(
            name,
            paths.table(str(results), name),
            files,
            provenance_file=paths.provenance(files[0]),
            provenance=provenance,
        )

    relative = paths.clipping_figure_studies(config)  # the clipping figure (rule clipping_figure)
    if relative:
        files = [paths.book_figure(str(results), paths.CLIPPING_FIGURE, ext) for ext in paths.FIGURE_FORMATS]
        studies = {paths.study_summary(str(results), s): paths.study_record(str(results), s) for s in relative}
        jobs.clipping_figure(studies, files, provenance_file=paths.provenance(files[0]), provenance=provenance)

    benchmark_files = []
    for i, run_id in enumerate(sorted(runs)):
        path = results / "benchmarks" / "train" / f"{run_id}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        row = f"{10.0 + i}\t0:00:10\t{400 + i}\t900\t380\t390\t1.0\t2.0\t95.0\t{9.5 + i}\n"
        path.write_text(BENCHMARK_HEADER + row)
        benchmark_files.append(str(path))
    metric_files = [paths.run_metrics(str(results), run_id) for run_id in sorted(runs)]
    jobs.benchmark_table(sorted(runs), benchmark_files, metric_files, **table("benchmarks"), provenance=provenance)

    stats_files = []
    for key, corpus in sorted(corpora.items()):
        path = Path(paths.corpus_stats(str(results), key))
        path.parent.mkdir(parents=True, exist_ok=True)
        stats = {
            "corpus": corpus,
            "vocab_size": 313,
            "train_tokens": 299_432,
            "valid_tokens": 29_880,
            "test_tokens": 29_846,
            "train_unk_rate": 0.0,
            "train_sentences": 20_000,
        }
        path.write_text(json.dumps(stats), encoding="utf-8")
        stats_files.append(str(path))
    jobs.corpus_table(sorted(corpora), stats_files, **table("corpora"), provenance=provenance)
    factors: dict[str, float] = {}  # one per network: a network two analyses measure falls the same way in both
    for name in config.analyses:
        _analysis(config, name, results, provenance, factors)

    # Our runs beside the published rows (rule comparison), from the run folders written above.
    comparison_runs = {}
    for study_name in config.comparison.study_names():
        for _, cfg in config.study_runs(study_name):
            comparison_runs.setdefault(cfg.run_id, []).append(study_name)
    outs = {name: paths.table(str(results), name) for name in paths.COMPARISON_TABLES}
    keys = sorted({runs[run_id].corpus_key for run_id in comparison_runs})
    jobs.comparison_tables(
        str(results),
        comparison_runs,
        [paths.corpus_stats(str(results), key) for key in keys],
        [paths.train_benchmark(str(results), run_id) for run_id in comparison_runs],
        outs,
        baselines_file=baselines,
        scale=config.comparison.scale,
        crossover_corpus=config.comparison.crossover,
        provenance_files={name: paths.provenance(out) for name, out in outs.items()},
        provenance=provenance,
    )
    curves = [paths.book_figure(str(results), paths.LEARNING_CURVES_FIGURE, ext) for ext in paths.FIGURE_FORMATS]
    jobs.learning_curves_figure(
        outs["learning_curves"], curves, provenance_file=paths.provenance(curves[0]), provenance=provenance
    )
    files = [paths.book_figure(str(results), paths.CROSSOVER_FIGURE, ext) for ext in paths.FIGURE_FORMATS]
    jobs.comparison_figure(
        outs["crossover"],
        files,
        title="crossover",
        provenance_file=paths.provenance(files[0]),
        provenance=provenance,
    )
    # The activation studies side by side (rule activation_figure), from their summaries and extra tables above.
    table_file, figure_file = (
        paths.table(str(results), paths.ACTIVATION),
        paths.book_figure(str(results), paths.ACTIVATION, "png"),
    )
    jobs.activation_figure(
        {study: paths.activation_study_files(str(results), study) for study in paths.activation_studies(config)},
        {
            "table": table_file,
            **{ext: paths.book_figure(str(results), paths.ACTIVATION, ext) for ext in paths.FIGURE_FORMATS},
            "table_provenance": paths.provenance(table_file),
            "figure_provenance": paths.provenance(figure_file),
        },
        provenance=provenance,
    )
    # Dynamic evaluation (rule dynamic_evaluation): hand-written records, as the runs' metrics are.
    for i, run_id in enumerate(config.dynamic_run_ids()):
        record = dict.fromkeys(FIELDS) | {"run_id": run_id, "split": "test", "diverged": False, "grid": []}
        record |= {"lr": 1.0, "tokens": 4999, "static_ppl": 300.0 - 10 * i, "dynamic_ppl": 270.0 - 10 * i}
        Path(paths.run_dynamic(str(results), run_id)).write_text(json.dumps(record), encoding="utf-8")
    # The findings (rule findings_table), judged on everything above.
    parts = table(paths.FINDINGS_PARTS_TABLE)
    jobs.findings_table(
        str(results),
        Roles.from_config(config).record(),
        **table(paths.FINDINGS_TABLE),
        provenance=provenance,
        parts_out=parts["out"],
        parts_provenance_file=parts["provenance_file"],
    )
    return config


def _baselines(results: Path, config: Config, corpora: dict, provenance: dict) -> None:
    """The count-based baselines (rule baseline_tables) of small corpora under the config's corpus keys: a small
    generated agreement corpus, and for PTB and Brown a random text of a small vocabulary."""
    from rnnbench.baselines.tables import baseline_tables
    from rnnbench.data.corpora import load_corpus
    from rnnbench.data.prepared import Corpus
    from rnnbench.data.vocab import Vocab
    from rnnbench.io import write_csv

    rng = np.random.default_rng(0)
    vocab = Vocab(("<eos>", "<unk>", *(f"w{i}" for i in range(30))), unk_token="<unk>")
    small = {}
    for key, name in corpora.items():
        if name == "agreement":
            options = {"train_sentences": 300, "valid_sentences": 50, "test_sentences": 100, "attractor_prob": 0.25}
            small[key] = load_corpus("agreement", cache_dir=results.parent / "cache", **options)
        else:
            small[key] = Corpus(name, vocab, *(rng.integers(0, len(vocab), size=n) for n in (3000, 400, 500)))
    for name, frame in baseline_tables(small, config.tables["kn_order"]).items():
        out = paths.table(str(results), name)
        write_csv(out, frame)
        write_provenance(paths.provenance(out), producer="rnnbench.baselines.tables.baseline_tables", **provenance)


def _write_extras(results, config, study_name, points, configs, summary, record, provenance) -> None:
    """A study's per-distance, norm-trace, update, learning and cut tables and figures, from hand-written
    agreement.csv / steps.csv, the run's epochs.csv and, for the cut table, hand-written accuracies per cut (its job
    scores trained models, which this folder lacks)."""
    for kind in paths.study_extra_kinds(config, study_name):
        if kind == "cuts":
            _write_cuts(results, config, study_name, points, configs, summary, record, provenance)
            continue
        if kind == "units":
            _write_units(results, config, study_name, points, configs, summary, provenance)
            continue
        if kind == "reach":
            _write_reach(results, config, study_name, points, configs, summary, provenance)
            continue
        run_files = {}
        for i, cfg in enumerate(configs):
            if kind == "distance":
                path = Path(paths.run_agreement(str(results), cfg.run_id))
                frame = pd.DataFrame(
                    {"distance": [1, 2, 3, 4], "n": 10, "accuracy": [0.9, 0.8, 0.6 + 0.01 * i, 0.5], "split": "test"}
                )
            elif kind == "learning":
                path = Path(paths.run_epochs(str(results), cfg.run_id))
                frame = pd.read_csv(path)  # the run's own, which the fixture wrote with its metrics
            else:
                path = Path(paths.run_steps(str(results), cfg.run_id))
                frame = pd.DataFrame(
                    {
                        "step": [1, 2, 3],
                        "epoch": 1,
                        "lr": 1.0,
                        "loss": 5.0,
                        "grad_norm": [1.0, 4.0 + i, 2.0],
                        "clipped": [False, True, False],
                        "clip_cosine": [1.0, 0.9, 1.0],
                        # measured at steps 1 and 2 where the run measures the update (Adam): 1 where not clipped
                        "update_cosine": [1.0, 0.95 - 0.01 * i, math.nan] if cfg.measures_update_cosine else math.nan,
                    }
                )
            frame.to_csv(path, index=False)
            run_files[cfg.run_id] = str(path)
        out = paths.study_extra_table(str(results), study_name, kind)
        jobs.study_extra_table(
            kind,
            study_record(config, study_name),
            list(points),
            summary,
            run_files,
            out,
            provenance_file=paths.provenance(out),
            provenance=provenance,
        )
        for name in paths.extra_figure_names(kind):
            files = [paths.study_extra_figure(str(results), study_name, name, ext) for ext in paths.FIGURE_FORMATS]
            jobs.study_extra_figure(
                name, out, record, files, provenance_file=paths.provenance(files[0]), provenance=provenance
            )


def _write_cuts(results, config, study_name, points, configs, summary, record, provenance) -> None:
    from rnnbench.io import write_csv
    from rnnbench.results import ablations, cut_accuracy

    runs = ablations.read_runs(study_record(config, study_name), list(points), summary)
    study_cuts = {cfg.bptt for cfg in configs if cfg.segments == "sentence" and cfg.bptt > 0}
    per_run = {}
    for i, cfg in enumerate(configs):
        rows = [
            (k, d, across, 10, 0.9 - 0.1 * across - 0.01 * i)
            for k in cut_accuracy.partitions(cfg.bptt, cfg.segments, study_cuts)
            for d in (1, 2, 3)
            for across in (False, True)
            if not (d == 1 and across)
        ]
        per_run[cfg.run_id] = pd.DataFrame(rows, columns=["cut_every", "distance", "crosses_cut", "n", "accuracy"])
    out = paths.study_extra_table(str(results), study_name, "cuts")
    write_csv(out, cut_accuracy.cut_table(runs, per_run, list(config.studies[study_name].vary)))
    write_provenance(paths.provenance(out), producer="rnnbench.results.cut_accuracy.cut_table", **provenance)
    for name in paths.extra_figure_names("cuts"):
        files = [paths.study_extra_figure(str(results), study_name, name, ext) for ext in paths.FIGURE_FORMATS]
        jobs.study_extra_figure(
            name, out, record, files, provenance_file=paths.provenance(files[0]), provenance=provenance
        )


def _write_reach(results, config, study_name, points, configs, summary, provenance) -> None:
    """The reach table from hand-made accuracies per cut (its job scores trained models, which this folder lacks)."""
    from rnnbench.io import write_csv
    from rnnbench.results import ablations, reach

    runs = ablations.read_runs(study_record(config, study_name), list(points), summary)
    lengths = {cfg.bptt for cfg in configs if cfg.bptt > 0}
    sentence = {cfg.bptt for cfg in configs if cfg.bptt > 0 and cfg.segments == "sentence"}
    per_run = {}
    for i, cfg in enumerate(configs):
        rows = []
        for k, block in reach.reach_lengths(cfg.bptt, cfg.segments, lengths, sentence):
            cuts = pd.DataFrame(
                [(k, d, d > k, 10, 0.9 - 0.2 * (d > k) - 0.01 * i) for d in (1, 2, 3, 4)],
                columns=["cut_every", "distance", "crosses_cut", "n", "accuracy"],
            )
            rows.append(reach.reach_rows(cuts, k, block))
        per_run[cfg.run_id] = pd.concat(rows, ignore_index=True)
    out = paths.study_extra_table(str(results), study_name, "reach")
    write_csv(out, reach.reach_table(runs, per_run, list(config.studies[study_name].vary)))
    write_provenance(paths.provenance(out), producer="rnnbench.results.reach.reach_table", **provenance)


def _write_units(results, config, study_name, points, configs, summary, provenance) -> None:
    """The units table from hand-made masks (its job reads trained models, which this folder lacks): run i has i
    silent units of 32."""
    import numpy as np

    from rnnbench.io import write_csv
    from rnnbench.results import ablations, silent_units

    runs = ablations.read_runs(study_record(config, study_name), list(points), summary)
    silent = {cfg.run_id: (np.arange(32) < i, 5000) for i, cfg in enumerate(configs)}
    out = paths.study_extra_table(str(results), study_name, "units")
    write_csv(out, silent_units.unit_table(runs, silent, list(config.studies[study_name].vary)))
    write_provenance(paths.provenance(out), producer="rnnbench.results.silent_units.unit_table", **provenance)


def _analysis(config: Config, name: str, results: Path, provenance: dict, factors: dict) -> None:
    """An analysis's tables, hand-written: its i-th network's gradient norm falls by a factor 0.8 + 0.05 i per step,
    or by the factor an earlier analysis gave the same network (``factors``: one network, one measurement)."""
    analysis, points = config.analyses[name], config.analysis_points(name)
    root = str(results)
    Path(paths.analysis_dir(root, name)).mkdir(parents=True, exist_ok=True)
    tables: dict[str, list[dict]] = {"curves": [], "rates": [], "passage": [], "probe": []}
    for i, point in enumerate(points):
        keys = dict(point.keys)
        network = json.dumps({k: keys.get(k) for k in ("run_id", "snapshot", *UNTRAINED_KEYS)}, sort_keys=True)
        factor = factors.setdefault(network, 0.8 + 0.05 * i)
        if analysis.kind == "probe":
            tables["probe"] += _probe_rows(keys, factor)
        for d in range(12):
            norm = factor**d
            tables["curves"].append(
                {
                    **keys,
                    "direction": "backward",
                    "method": "one_pass",
                    "quantity": "h",
                    "distance": d,
                    "mean": norm,
                    "geo_mean": norm,
                    "median": norm,
                    "q10": 0.9 * norm,
                    "q90": 1.1 * norm,
                    "min": 0.8 * norm,
                    "max": 1.2 * norm,
                    "count": 4,
                }
            )
        tables["rates"].append(
            {
                **keys,
                "direction": "backward",
                "method": "one_pass",
                "quantity": "h",
                "rate": math.log(factor),
                "jacobian_bound": 0.1,
                "pascanu_bound": 0.2,
                "radius_rate": math.log(factor) + 0.01,
                "rho": factor + 0.01,
                "mean_slope": 0.9,
            }
        )
        for position, word in enumerate(["raj", "partner", "his"], start=1):
            tables["passage"].append(
                {
                    **keys,
                    "position": position,
                    "word": word,
                    "token": word,
                    "distance": 3 - position,
                    "h_norm": factor ** (3 - position),
                    "h_relative": factor ** (3 - position),
                    "evidence": word == "partner",
                }
            )
    for table in paths.ANALYSIS_TABLES[analysis.kind]:
        out = paths.analysis_table(root, name, table)
        pd.DataFrame(tables[table]).to_csv(out, index=False)
        write_provenance(paths.provenance(out), producer="pytest fixture", **provenance)
    Path(paths.analysis_record(root, name)).write_text(json.dumps(analysis.record(points)), encoding="utf-8")
    if analysis.kind in paths.ANALYSIS_FIGURES:
        files = [paths.analysis_figure(root, name, ext) for ext in paths.FIGURE_FORMATS]
        jobs.analysis_figure(
            paths.analysis_table(root, name, paths.ANALYSIS_FIGURES[analysis.kind]),
            paths.analysis_record(root, name),
            files,
            provenance_file=paths.provenance(files[0]),
            provenance=provenance,
        )


def _probe_rows(keys: dict, factor: float) -> list[dict]:
    """A probe's rows, hand-written: a trained network reads the number at 0.95 - 0.02 d, an untrained one at
    0.6 - 0.01 d, shuffled labels at 0.5; the gradient falls by ``factor`` per step."""
    rows = []
    for labels in ("true", "shuffled"):
        for subset in ("all", "attractor"):
            for d in range(12) if subset == "all" else range(3, 12):
                if labels == "shuffled":
                    accuracy = 0.5
                else:
                    accuracy = 0.95 - 0.02 * d if keys["snapshot"] == "final" else 0.6 - 0.01 * d
                n = 2000 - 150 * d
                rows.append(
                    {
                        **keys,
                        "labels": labels,
                        "subset": subset,
                        "distance": d,
                        "n_fit": n * 4 // 5,
                        "n_scored": n if subset == "all" else n // 5,
                        "accuracy": accuracy,
                        "accuracy_low": accuracy - 0.03,
                        "accuracy_high": accuracy + 0.03,
                        "chance": 0.51,
                        "nearest_noun": (1.0 if d < 3 else 0.8) if subset == "all" else 0.0,
                        "gradient_norm": 0.3 * factor**d,
                        "gradient_relative": factor**d,
                    }
                )
    return rows


def copy_book(target: Path) -> Path:
    """reports/ without what a render leaves behind: the chapters run here, never in the checkout."""
    shutil.copytree(BOOK, target, ignore=shutil.ignore_patterns("_book", ".quarto", "*_files", fig.STAGING_DIR))
    return target


def book_fixture(tmp_path_factory, built: Path) -> Fixture:
    """The chapters' fixture (tests/conftest.py's ``fixture``): the real smoke results where SMOKE_ENV names them,
    else ``built`` (build_results), with a copy of reports/ to run the chapters in."""
    root = tmp_path_factory.mktemp("report")
    smoke = os.environ.get(SMOKE_ENV)
    results = Path(smoke).resolve() if smoke else built
    merged = merge_config_files(CONFIG_FILES)
    merged["results_dir"] = str(results)
    return Fixture(results, copy_book(root / "reports"), load_config(merged))


@pytest.fixture(scope="session")
def runs(fixture) -> list[bookcheck.ChapterRun]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(res.RESULTS_ENV, str(fixture.results))
        return bookcheck.run_book(fixture.book)


BOOK_CONFIG = yaml.safe_load((BOOK / "_quarto.yml").read_text(encoding="utf-8"))
CHAPTERS = bookcheck.read_book(BOOK).chapter_files


# --------------------------------------------------------------------------------------------------------------
# The fixture is what the workflow writes


def test_fixture_holds_every_expected_table_and_figure(fixture):
    # the runs' own files are hand-written metrics here: the book reads the tables made from them
    missing = [p for p in paths.tables_and_figures(fixture.config, list(TABLES)) if not Path(p).is_file()]
    assert missing == []


# --------------------------------------------------------------------------------------------------------------
# (5) _quarto.yml


def test_quarto_yml_is_a_book_of_existing_chapters():
    assert BOOK_CONFIG["project"]["type"] == "book"
    assert BOOK_CONFIG["project"]["output-dir"] == "_book"
    assert set(BOOK_CONFIG["format"]) == {"html", "typst"}
    assert BOOK_CONFIG["book"]["author"]  # the Typst book template fails without one
    # Figures are written without an extension: PNG on screen, the vector PDF in print.
    assert BOOK_CONFIG["format"]["html"]["default-image-extension"] == "png"
    assert BOOK_CONFIG["format"]["typst"]["default-image-extension"] == "pdf"
    assert (BOOK / BOOK_CONFIG["format"]["typst"]["include-before-body"]).is_file()
    assert BOOK_CONFIG["execute"]["echo"] is False
    assert BOOK_CONFIG["engine"] == "jupyter"
    assert CHAPTERS[0] == "index.qmd"  # a book's first chapter is its home page
    assert [c for c in CHAPTERS if not (BOOK / c).is_file()] == []
    assert len(set(CHAPTERS)) == len(CHAPTERS)
    assert sorted(p.name for p in BOOK.glob("*.qmd")) == sorted(CHAPTERS)  # no chapter left out of the book


def test_the_workflow_profile_freezes_each_chapter_once():
    """The report rule renders with this profile: the HTML pass freezes, the PDF pass reads it back."""
    profile = yaml.safe_load((BOOK / "_quarto-workflow.yml").read_text(encoding="utf-8"))
    assert profile["execute"]["freeze"] == "auto"
    assert BOOK_CONFIG["execute"]["freeze"] is False  # `quarto render reports` by hand always executes


# --------------------------------------------------------------------------------------------------------------
# (1) every chapter's cells run, (2) every inline expression evaluates


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_cells_run(fixture, monkeypatch, chapter):
    monkeypatch.setenv(res.RESULTS_ENV, str(fixture.results))
    run = bookcheck.run_chapter(fixture.book / chapter, cwd=fixture.book)
    assert len(run.outputs) == len(run.chapter.cells)
    # every chapter reads results but the reference list, which pandoc fills from the bibliography
    assert run.chapter.cells or chapter == "references.qmd", f"{chapter} has no cell"
    for output in run.outputs:
        where = f"{chapter}:{output.cell.line}"
        if output.cell.options.get("output") != "asis":
            assert output.stdout == "", f"{where} prints into the page"
        label = output.cell.label or ""
        if label.startswith("tbl-"):
            assert "|---" in output.markdown() or "|:---" in output.markdown(), f"{where} shows no table"
        if label.startswith("fig-"):
            assert output.figures >= 1, f"{where} draws no figure"
        if output.figures:
            assert label.startswith("fig-"), f"{where} draws a figure without a fig- label"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_inline_expressions_evaluate_as_prose(fixture, monkeypatch, chapter):
    monkeypatch.setenv(res.RESULTS_ENV, str(fixture.results))
    run = bookcheck.run_chapter(fixture.book / chapter, cwd=fixture.book)
    expressions = [e for e, _ in run.chapter.inline_expressions()]
    assert [e for e, _ in run.inline] == expressions
    for expression, text in run.inline:
        assert text.strip(), f"{chapter}: `{expression}` is empty"
        assert not text.startswith(("'", '"')), f"{chapter}: `{expression}` shows a Python string repr"


def test_chapters_with_prose_numbers_use_inline_code():
    assert sum(len(bookcheck.parse_chapter(BOOK / c).inline_expressions()) for c in CHAPTERS) > 50


# --------------------------------------------------------------------------------------------------------------
# (3) labels and cross-references


def test_every_cross_reference_points_at_a_label(runs):
    assert bookcheck.check_references(runs) == []
    assert bookcheck.duplicate_labels(runs) == []


def test_every_figure_and_table_is_labelled_captioned_and_cited(runs):
    cited = set().union(*(run.references() for run in runs))
    for run in runs:
        for cell in run.chapter.cells:
            label = cell.label or ""
            if label.startswith(("fig-", "tbl-")):
                caption = str(cell.options.get(f"{label[:3]}-cap", ""))
                assert "rule" in caption, f"{run.chapter.path.name}: {label} caption names no rule"
                assert label in cited, f"{run.chapter.path.name}: {label} is never cited"
        generated = run.generated()
        assert generated.count("![") == generated.count("){#fig-"), "a generated figure has no label"
        for label in bookcheck.LABEL_DEF.findall(generated):
            if label.startswith(("fig-", "tbl-")):
                assert label in cited, f"{run.chapter.path.name}: generated {label} is never cited"


def test_every_study_has_a_section_table_and_a_figure_where_it_draws_enough(fixture, runs):
    """A figure of fewer than two points apart (one setting, or nothing drawn) is left out; its table stays."""
    labels = set().union(*(run.labels() for run in runs))
    shown = []
    for study in fixture.config.studies:
        slug = fmt.label_slug(study)
        assert {f"sec-study-{slug}", f"tbl-study-{slug}"} <= labels
        shown.append(fig.figure_shown(paths.study_figure(str(fixture.results), study, "png")))
        assert (f"fig-study-{slug}" in labels) == shown[-1], study
    assert any(shown) and not all(shown)  # the fixture has both kinds


def test_a_new_study_appears_with_no_edit(fixture, tmp_path, monkeypatch):
    results = tmp_path / "results"
    shutil.copytree(fixture.results / "studies", results / "studies")
    shutil.copytree(fixture.results / "tables", results / "tables")
    # A study whose figure the book shows: the section of its copy must hold it too.
    source = next(d for d in sorted((results / "studies").iterdir()) if fig.figure_shown(d / "figure.png"))
    added = results / "studies" / "embedding_agreement"
    shutil.copytree(source, added)
    summary = pd.read_csv(added / "summary.csv").assign(study="embedding_agreement")
    summary.to_csv(added / "summary.csv", index=False)
    monkeypatch.setenv(res.RESULTS_ENV, str(results))
    book = copy_book(tmp_path / "reports")
    run = bookcheck.run_chapter(book / "studies.qmd", cwd=book)
    assert {"sec-study-embedding-agreement", "fig-study-embedding-agreement"} <= run.labels()
    assert (book / fig.STAGING_DIR / "study-embedding-agreement.png").is_file()
    assert (book / fig.STAGING_DIR / "study-embedding-agreement.pdf").is_file()


def test_a_study_added_under_a_role_reaches_the_main_text(fixture, tmp_path, monkeypatch):
    """The context chapter finds its window study by role (window_width on PTB), not by name: the same study under
    another name, as a config file would add it, is the one its numbers and its reference come from."""
    results = tmp_path / "results"
    shutil.copytree(fixture.results / "tables", results / "tables")
    shutil.copytree(fixture.results / "studies", results / "studies")
    old, new = results / "studies" / "ff_context_ptb", results / "studies" / "wider_windows_ptb"
    old.rename(new)
    record = json.loads((new / "study.json").read_text(encoding="utf-8")) | {"name": "wider_windows_ptb"}
    (new / "study.json").write_text(json.dumps(record), encoding="utf-8")
    summary = pd.read_csv(new / "summary.csv").assign(study="wider_windows_ptb")
    summary.to_csv(new / "summary.csv", index=False)
    for provenance in new.glob("*.provenance.json"):  # the figure's record travels with it, as a rule writes it
        provenance.rename(new / provenance.name)
    monkeypatch.setenv(res.RESULTS_ENV, str(results))
    book = copy_book(tmp_path / "reports")
    text = bookcheck.run_chapter(book / "context.qmd", cwd=book).markdown()
    # the fixture's study figure draws one setting (its other width diverged), so the chapter points at its table
    assert "@tbl-study-wider-windows-ptb" in text
    assert "ff_context_ptb" not in text and "ff-context-ptb" not in text


# --------------------------------------------------------------------------------------------------------------
# (4) files the book names


def test_named_result_files_are_workflow_outputs(fixture, runs):
    """Captions name files relative to the results folder; each is one a rule writes, and is there."""
    default = load_config(REPO / "config" / "config.yaml")
    root = default.results_dir
    outputs = paths.expected_outputs(default, list(TABLES))
    for name in BOOK_FIGURES:
        files = [paths.book_figure(root, name, ext) for ext in paths.FIGURE_FORMATS]
        outputs += files + [paths.provenance(files[0])]
    expected = {Path(p).relative_to(root).as_posix() for p in outputs}
    named = set()
    for run in runs:
        named |= run.chapter.result_files() | set(bookcheck.RESULT_FILE.findall(run.generated()))
    assert any(n.startswith("figures/") for n in named) and any(n.startswith("studies/") for n in named)
    for name in named:
        assert name in expected, f"{name} is named by the book, but no rule writes it"
        assert (fixture.results / name).is_file(), name


# --------------------------------------------------------------------------------------------------------------
# Prose and the report path


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_number_is_typed_into_the_prose(chapter):
    parsed = bookcheck.parse_chapter(BOOK / chapter)
    assert parsed.typed_numbers() == []


def test_the_report_path_imports_no_torch(fixture):
    program = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import bookcheck\n"
        f"bookcheck.run_book({str(fixture.book)!r})\n"
        "loaded = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, res.RESULTS_ENV: str(fixture.results), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_missing_results_name_the_file_and_the_command(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"tables/decay\.csv.*snakemake"):
        res.table("decay", tmp_path)


# --------------------------------------------------------------------------------------------------------------
# The helpers, on hand-worked values


def test_number_formatters():
    assert fmt.integer(6_310_500) == "6,310,500"
    assert (fmt.counted(1, "run"), fmt.counted(0, "seed"), fmt.counted(1200, "step")) == (
        "1 run",
        "0 seeds",
        "1,200 steps",
    )
    assert fmt.fixed(0.63361, 2) == "0.63"
    assert fmt.sci(7.105427357601002e-15) == "$7.1 \\times 10^{-15}$"
    assert fmt.sci(1e-94) == "$1.0 \\times 10^{-94}$"
    assert fmt.sig(5266.457263) == "5,266"  # whole digits carry the precision
    assert fmt.sig(0.005153775) == "0.00515"
    assert fmt.sig(0.0005153775) == "$5.15 \\times 10^{-4}$"
    assert fmt.sig(float("nan")) == "–"
    assert fmt.sig(1.07e26, plain=True) == "1.07 × 10²⁶"
    assert fmt.percent(99.48462) == "99.5%"
    assert fmt.words(["a", "b", "c"]) == "a, b and c"
    assert fmt.words(["a"]) == "a"


def test_markdown_is_shown_without_quotes():
    value = fmt.integer(29_312)
    assert value._repr_markdown_() == "29,312"
    assert repr(value) == "29,312"
    assert bookcheck.inline_markdown(value) == "29,312"
    assert bookcheck.inline_markdown(24) == "24"
    with pytest.raises(TypeError, match="repr"):
        bookcheck.inline_markdown("24", "n")  # Quarto would print '24', quotes included
    with pytest.raises(TypeError):
        bookcheck.inline_markdown(0.1 + 0.2, "x")  # and 0.30000000000000004


def test_escape_and_code():
    assert fmt.escape("W_h ^ |x|") == "W\\_h \\^ \\|x\\|"
    assert fmt.code("rnn-ptb-59a0e6d8ef") == "`rnn-ptb-59a0e6d8ef`"
    assert fmt.code("||U||") == "\\|\\|U\\|\\|"  # a pipe would end a table cell even inside code


def test_text_with_math_keeps_its_spans_and_escapes_the_rest():
    assert fmt.with_math("5 is $H/d$, W_h of $(n-1)dH = H^2$ | x") == "5 is $H/d$, W\\_h of $(n-1)dH = H^2$ \\| x"
    assert fmt.with_math("no span, one $ sign") == "no span, one \\$ sign"


def test_markdown_table():
    frame = pd.DataFrame({"tensor": ["W_h", "U"], "count": [150_000, 250_000], "ok": [True, False]})
    table = fmt.markdown_table(frame, formats={"count": fmt.integer}, headers={"ok": "agrees"})
    lines = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()]
    assert lines[0] == ["tensor", "count", "agrees"]
    assert [rule.startswith(":") for rule in lines[1]] == [True, False, True]  # text left, numbers right
    assert lines[2:] == [["W\\_h", "150,000", "yes"], ["U", "250,000", "no"]]


def test_markdown_table_cells_read_as_text():
    """Headers read as words; scientific notation in a cell is text, not math (no raw TeX in a viewer)."""
    frame = pd.DataFrame({"test_ppl": [1.07e26, 30.9]})
    table = fmt.markdown_table(frame)
    assert "test ppl" in table and "1.07 × 10²⁶" in table and "$" not in table
    assert fmt.cell_sig(1.07e26) == "1.07 × 10²⁶"
    assert fmt.cell_sci(7.1e-15) == "7.1 × 10⁻¹⁵"
    assert fmt.humanize("dist_to_other_script") == "dist to other script"
    assert fmt.humanize("h_t") == "h_t" and fmt.humanize("‖∂h_1/∂h_0‖") == "‖∂h_1/∂h_0‖"  # not identifiers


def test_a_wide_table_shares_the_page_by_content():
    """Over 72 characters pandoc takes column widths from the dashes: the long-text column gets the largest
    share, at most half the page, and no column is narrower than its longest word."""
    frame = pd.DataFrame(
        {
            "where": ["Backpropagation through time", "Why the memory fades"],
            "claim": ["If any eigenvalue satisfies |lambda| > 1, the product grows without bound. " * 2, "short"],
            "ok": ["yes", "no"],
        }
    )
    rule = fmt.markdown_table(frame).splitlines()[1]
    widths = [part.count("-") for part in rule.strip("|").split("|")]
    assert widths[1] > widths[0] > widths[2]
    assert widths[0] >= len("Backpropagation") + 1
    # the long column's mean cell is 78 characters; its share stops at half the page, leaving the others room
    assert widths[1] == fmt.WIDEST_SHARE == 36


def test_a_narrow_table_is_sized_by_each_format():
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    assert all(len(line) <= fmt.PANDOC_COLUMNS for line in fmt.markdown_table(frame).splitlines())


def _hand_study(tmp_path: Path, runs, vary=("clip_mode",), seeds=(1,)) -> Path:
    """A study "clip" on PTB by hand: runs are (run_id, {setting: value, "seed": s}, test_ppl, valid_ppl, diverged,
    reason, outcome) tuples."""
    results = tmp_path / "results"
    study = results / "studies" / "clip"
    study.mkdir(parents=True)
    rows = []
    for run_id, point, ppl, valid, diverged, reason, state in runs:
        keys = {"study": "clip", "run_id": run_id, "family": "rnn", "corpus": "ptb", **point, "outcome": state}
        rows += [
            {**keys, "metric": "test_ppl", "value": ppl},
            {**keys, "metric": "valid_ppl", "value": valid},
            {**keys, "metric": "diverged", "value": diverged},
            {**keys, "metric": "diverged_step", "value": 12 if diverged else float("nan")},
        ]
        metrics = results / "runs" / run_id / "metrics.json"
        metrics.parent.mkdir(parents=True)
        metrics.write_text(json.dumps({"diverged": bool(diverged), "diverged_reason": reason}))
    pd.DataFrame(rows).to_csv(study / "summary.csv", index=False)
    about = {
        "name": "clip",
        "description": "Clipping on PTB",
        "family": "rnn",
        "corpus": "ptb",
        "metric": "test_ppl",
        "vary": list(vary),
        "fixed": {},
        "seeds": list(seeds),
        "run_ids": [r[0] for r in runs],
    }
    (study / "study.json").write_text(json.dumps(about))
    for ext in paths.FIGURE_FORMATS:
        (study / f"figure.{ext}").write_bytes(b"figure")
    # its record as the figure rule writes it, saying the figure draws enough to be shown
    drawn = {"points": 4, "panels": [{"points": 4, "positions": 2}]}
    (study / "figure.provenance.json").write_text(json.dumps({"drawn": drawn}))
    return results


def _diverged_study(tmp_path: Path) -> Path:
    """Three runs: norm clipping learned, value and none diverged (one blew up to a finite 7.9e11, one has no
    perplexity)."""
    nan = float("nan")
    return _hand_study(
        tmp_path,
        [
            ("r-norm", {"clip_mode": "norm", "seed": 1}, 30.9, 31.2, 0, None, "learned"),
            ("r-none", {"clip_mode": "none", "seed": 1}, 7.9e11, nan, 1, "loss_above_uniform", "diverged"),
            ("r-value", {"clip_mode": "value", "seed": 1}, nan, nan, 1, "non_finite_loss", "diverged"),
        ],
    )


def test_a_study_section_marks_diverged_runs(tmp_path):
    results = _diverged_study(tmp_path)
    table = study_sections.study_table("clip", results)
    assert list(table["diverged"]) == ["no", "yes: loss above uniform, step 12", "yes: non finite loss, step 12"]
    section = study_sections.study_section("clip", results, staging=tmp_path / "figures")
    assert "2 of the 3 runs diverged (`clip_mode` = none and `clip_mode` = value)" in section
    assert "The one run that learned has test perplexity 30.9" in section  # 7.9e11 is not ranked
    assert "(7.9 × 10¹¹)" in section  # printed, in brackets, not hidden
    assert (tmp_path / "figures" / "study-clip.pdf").is_file()


def test_a_study_section_chooses_its_best_run_on_validation_and_ranks_no_failed_run(tmp_path):
    """Four runs of three seeds at one setting and one at another: on test, b (118) would be best; on validation
    a (120) is, so a is the best run and its test 125 is what is printed. c did not learn (900), d diverged."""
    nan = float("nan")
    results = _hand_study(
        tmp_path,
        [
            ("a", {"clip_mode": "norm", "seed": 1}, 125.0, 120.0, 0, None, "learned"),
            ("b", {"clip_mode": "norm", "seed": 2}, 118.0, 122.0, 0, None, "learned"),
            ("c", {"clip_mode": "norm", "seed": 3}, 900.0, 905.0, 0, None, "did not learn"),
            ("d", {"clip_mode": "none", "seed": 1}, nan, nan, 1, "non_finite_loss", "diverged"),
        ],
        seeds=(1, 2, 3),
    )
    section = study_sections.study_section("clip", results, staging=tmp_path / "figures")
    assert (
        "Among the runs that learned, the best run, chosen on validation perplexity so that the test split plays no "
        "part in the choice, is at `clip_mode` = norm, seed 1: test perplexity 125 (validation perplexity 120); "
        "the worst, at `clip_mode` = norm, seed 2: 118 (validation perplexity 122)."
    ) in section
    assert "1 of the 4 runs did not learn (`clip_mode` = norm, seed 3" in section
    assert (
        "Where not every seed learned: 2 of 3 seeds learned at `clip_mode` = norm and 0 of 1 seeds learned at "
        "`clip_mode` = none."
    ) in section
    assert "(900)" in section  # shown in brackets in the table, never ranked
    assert (
        "validation perplexity"
        in study_sections.study_table("clip", results).columns.map(metrics.METRIC_LABELS.get).tolist()
    )


def test_a_study_section_without_validation_numbers_says_so_instead_of_ranking_on_test(tmp_path):
    nan = float("nan")
    results = _hand_study(
        tmp_path,
        [
            ("a", {"clip_mode": "norm", "seed": 1}, 125.0, nan, 0, None, "learned"),
            ("b", {"clip_mode": "none", "seed": 1}, 118.0, nan, 0, None, "learned"),
        ],
    )
    with pytest.raises(ValueError, match="have no valid_ppl.*never on the test split"):
        study_sections.study_section("clip", results, staging=tmp_path / "figures")


QMD = """# A chapter {#sec-a}

```{python}
#| label: tbl-x
#| tbl-cap: "A table, see @sec-b. From tables/decay.csv, rule worked_table."
from rnnbench.book import format as fmt
n = 3
fmt.Markdown("| a |\\n|---:|\\n| 1 |")
```

We have `{python} n` rows (@tbl-x) and code `like {this}`; see @fig-y and email a@b.org.

```bash
echo @fig-ignored 42
```

```{python}
#| output: asis
print("![A figure.](img.png){#fig-y}")
```
"""


def test_the_published_chapter_words_what_the_matched_runs_say(fixture, monkeypatch):
    # the headline's verdict follows the sign of its advantage (feed-forward minus RNN perplexity)
    monkeypatch.setenv(res.RESULTS_ENV, str(fixture.results))
    numbers = published.matched_numbers
    cross = published.crossover()
    # one headline per training budget with a matched pair (converged, short), and one at equal training time
    headlines = sum(m.spanned > 0 for m in (cross.converged, cross.short, cross.by_time))
    words = {12.5: "the RNN beats it by 12.5", -12.5: "the RNN trails it by 12.5", 0.0: "the RNN matches it"}
    for advantage, sentence in words.items():

        def headline(table, by, advantage=advantage):
            return dataclasses.replace(numbers(table, by), advantage=advantage)

        monkeypatch.setattr(published, "matched_numbers", headline)
        text = bookcheck.run_chapter(fixture.book / "matched.qmd", cwd=fixture.book).markdown()
        assert headlines >= 2 and text.count(sentence) == headlines
        assert all(other not in text for other in words.values() if other != sentence)


def test_parse_and_run_a_chapter(tmp_path):
    path = tmp_path / "a.qmd"
    path.write_text(QMD, encoding="utf-8")
    chapter = bookcheck.parse_chapter(path)
    assert [c.line for c in chapter.cells] == [3, 17]
    assert chapter.cells[0].options["label"] == "tbl-x"
    assert chapter.cells[0].code.startswith("from rnnbench")
    assert chapter.inline_expressions() == [("n", 11)]
    assert chapter.labels() == {"sec-a", "tbl-x"}
    assert chapter.references() == {"tbl-x", "fig-y", "sec-b"}  # not the one in the bash block, nor a@b.org
    assert chapter.result_files() == {"tables/decay.csv"}
    assert chapter.typed_numbers() == []
    run = bookcheck.run_chapter(chapter, cwd=tmp_path)
    assert run.inline == [("n", "3")]
    assert run.labels() == {"sec-a", "tbl-x", "fig-y"}
    assert run.images() == ["img.png"]
    assert "We have 3 rows (@tbl-x)" in run.markdown()
    assert bookcheck.check_references([run]) == ["a.qmd: @sec-b"]


def test_inline_expressions_run_where_quarto_runs_them(tmp_path):
    """A paragraph's expressions are evaluated when it is reached, before the cells below it."""
    path = tmp_path / "b.qmd"
    path.write_text("Too early: `{python} later`.\n\n```{python}\nlater = 1\n```\n", encoding="utf-8")
    with pytest.raises(bookcheck.ChapterError, match=r"b\.qmd:1: inline `later`"):
        bookcheck.run_chapter(path, cwd=tmp_path)


def test_typed_numbers_are_found(tmp_path):
    path = tmp_path / "c.qmd"
    path.write_text(
        "Chapter 12 and (12.7) are fine, so are $h_0$ and `x1` and {#sec-a1}; 47 words and 0.9 are not.\n",
        encoding="utf-8",
    )
    assert bookcheck.parse_chapter(path).typed_numbers() == ["47", "0.9"]


def test_typed_numbers_are_found_in_the_words_a_cell_prints(tmp_path):
    # an asis cell's literal words are prose; its formatted values, format specs, docstrings, the names its code
    # reads (decay_47_words) and a cell that prints no page text are not
    code = [
        "```{python}",
        "#| output: asis",
        "def f():",
        '    """Returns 3 things."""',
        "rate = table('decay_47_words')",
        "print(f'{rate:.0%} of the 47 words, $n-1$ = {k}')",
        "print('after 12 steps')",
        "```",
        "",
        "```{python}",
        "x = 'not 5 words on the page'",
        "```",
    ]
    path = tmp_path / "c.qmd"
    path.write_text("\n".join(code) + "\n", encoding="utf-8")
    assert bookcheck.parse_chapter(path).typed_numbers() == ["47", "12"]


def test_the_decay_chapter_words_what_the_rates_say(fixture, monkeypatch):
    # the fixture's untrained networks all lose gradient, 0.8 + 0.05 i a step: below the edge as the story says,
    # and above it the story fails (the networks at rho > 1 still vanish)
    monkeypatch.setenv(res.RESULTS_ENV, str(fixture.results))
    text = bookcheck.run_chapter(fixture.book / "gradients.qmd", cwd=fixture.book).markdown()
    below = "Below the edge the gradient vanishes in every untrained tanh network, as the chapter's story says."
    above = "Above the edge the chapter says the gradient explodes. In the untrained tanh network it still vanishes at"
    assert below in text and above in text
    assert "| at initialisation" in text and "toward the edge" not in text  # the trained networks' table
    # every fixture rate is below 0 and its Jacobian bound 0.1 above: a bound above zero, a gradient that shrinks
    assert (
        "the mean per-step Jacobian norm allows the gradient to grow by 0.1 a step in the log, where it shrinks" in text
    )


def test_the_worked_product_and_the_measured_networks_are_compared_by_their_numbers(fixture, monkeypatch):
    # The fixture's measured tanh networks all shrink (factors 0.8 + 0.05 i) with a mean slope of 0.9; the worked
    # product is computed: at 8 units it shrinks at every radius, at 200 it grows at 2 and 3.
    monkeypatch.setenv(res.RESULTS_ENV, str(fixture.results))
    text = bookcheck.run_chapter(fixture.book / "gradients.qmd", cwd=fixture.book).markdown()
    assert "and there the gradient shrinks above the edge" in text
    assert "This network's units saturate more than the measured networks'." in text
    assert (
        "Built once at each width, this network takes the sign of its product from its width." in text
        and "grows at $\\rho(U) =$ 2 and 3" in text
    )


def test_the_ablation_sections_word_what_the_studies_measured(fixture, tmp_path, monkeypatch):
    # The fixture's truncation_agreement: k = 2 learns 0.85 within reach (0.9 and 0.8 at distances 1-2) and
    # (0.625 + 0.5) / 2 = 0.5625 beyond, above the 0.55 a model that learned must pass; with distance 3 at
    # chance, 0.5 beyond, the same sentence says the dependency is not learned across a boundary.
    monkeypatch.setenv(res.RESULTS_ENV, str(fixture.results))
    text = bookcheck.run_chapter(fixture.book / "ablations.qmd", cwd=fixture.book).markdown()
    above = (
        "The drop from within to beyond is 0.287 to 0.287 across the truncated runs that learned; beyond k the "
        "accuracy stays above chance (0.5), so some of the dependency is learned through what earlier segments "
        "taught the weights."
    )
    assert above in text and "across a boundary the dependency is not learned" not in text
    assert "full-sentence BPTT: 0.700 over all distances (1 of 2 seeds learned); k = 2: 0.850 within reach" in text
    # every fixture run clips a quarter of its steps (often), and value clipping's cosine is 0.9
    assert (
        "Element-wise clipping can turn the gradient itself: at ±0.001 the mean cosine over the steps it clipped (25% of "
        "them) is 0.9." in text
    )
    # a setting's clip rate beside its a-priori regime in its table: 5 x median clipping 25% contradicts rare spikes
    assert "norm, 5 × median" in text and "25%, rare spikes (contradicted)" in text
    # thresholds resolved from the reference's median norm, 0.4 in the fixture: 0.5 x 0.4 and 5 x 0.4
    assert "which is 0.4. The multiples 0.5 and 5 of it give the thresholds 0.2 and 2, and each is crossed" in text
    assert "**Divergence.** No unclipped run diverged here, so clipping had no divergence to stop." in text
    # run 2 of each PTB stream study: its worst test column at 100 x 9.5 = 950, its test perplexity 20 - 0.5 x 2 = 19
    assert (
        "its worst test column at perplexity 950 against a median column at 9.5, which puts its test perplexity "
        "at 19 (validation 19.5)" in text
    )
    # window 2 and its RNN both learned, but within its width the window scores 0.850 against the nearest-noun rule's
    # 1.000: not trained to what it sees, so the pair is not compared, and the section says why
    assert "2 of 2 windows are below the rule by more than 0.02: they are under-trained" in text
    assert "trained to what the window sees" in text and "no comparison is made" in text
    assert "the recurrence beats the window beyond its width in" not in text

    results = tmp_path / "results"
    for folder in ("studies", "tables"):
        shutil.copytree(fixture.results / folder, results / folder)
    distances = pd.read_csv(results / "studies" / "truncation_agreement" / "distance.csv")
    distances.loc[(distances["bptt"] == 2) & (distances["distance"] == 3), "accuracy_mean"] = 0.5
    distances.to_csv(results / "studies" / "truncation_agreement" / "distance.csv", index=False)
    monkeypatch.setenv(res.RESULTS_ENV, str(results))
    book = copy_book(tmp_path / "reports")
    text = bookcheck.run_chapter(book / "ablations.qmd", cwd=book).markdown()
    at_chance = (
        "The drop from within to beyond is 0.350 to 0.350 across the truncated runs that learned; beyond k the "
        "accuracy is at chance (0.5): across a boundary the dependency is not learned."
    )
    assert at_chance in text and "stays above chance" not in text


@pytest.mark.parametrize(
    "planted, words",
    [(verdict, str(answers.says(verdict))) for verdict in ("holds", "fails", "inconclusive", "partly")],
)
def test_the_activation_chapter_words_each_claim_as_its_verdict(fixture, monkeypatch, planted, words):
    # every claim of the chapter given one verdict: the take-away names each claim with that verdict's words
    from rnnbench.book import activation

    monkeypatch.setenv(res.RESULTS_ENV, str(fixture.results))
    monkeypatch.setattr(activation, "verdict", lambda claim, results=None: planted)
    text = bookcheck.run_chapter(fixture.book / "activation.qmd", cwd=fixture.book).markdown()
    claims = ("the sigmoid's quarter", "zero-centred states", "dying ReLU units", "ReLU's missing ceiling")
    said = re.findall(r"the one on (the sigmoid's quarter|zero-centred states|dying ReLU units|ReLU's missing ceiling) "
                      r"(.+?)(?=,| and the one|\. )", text)  # fmt: skip
    assert said == [(claim, words) for claim in claims]
    assert f"That zero-centred states train faster {words}." in text
