"""The layout of a results folder, written once: the workflow's rules, the CI check and the report all ask here.

    <results_dir>/
      corpora/<corpus_key>.json          statistics of each prepared corpus
      runs/<run_id>/                     one training run: config.json, epochs.csv, steps.csv, metrics.json, model.pt
      runs/<run_id>/snapshots/epoch-<k>.pt  its weights after k epochs (0: the initialisation)
      runs/<run_id>/dynamic.json         its test split under dynamic evaluation (comparison.dynamic_evaluation)
      studies/<study>/summary.csv        tidy: one row per run and metric
      studies/<study>/study.json         what the study is: family, corpus, metric, varied and fixed settings, runs
      studies/<study>/figure.{png,pdf}   the study's default figure
      studies/<study>/distance.csv       agreement studies: accuracy per head-verb distance, over seeds
      studies/<study>/trace.csv          clipping studies: gradient norms step by step of the first seed
      studies/<study>/<figure>.{png,pdf} their figures (distance-heatmap, distance-curves, norm-trace)
      analyses/<name>/curves.csv         a gradient-decay analysis: norm against distance, one row per point and distance
      analyses/<name>/rates.csv          its measured rates beside their bounds and log rho(U)
      analyses/<name>/passage.csv        a passage analysis: the gradient at every word of the chapter's passage
      analyses/<name>/analysis.json      what the analysis is: its networks, points, measurement and figure
      analyses/<name>/figure.{png,pdf}   a gradient-decay analysis's curves
      tables/<name>.csv                  worked examples, parameter tables, corpora, benchmarks
      tables/{baselines,kn_discounts,agreement_baselines}.csv  count-based baselines of every prepared corpus
      tables/{comparison,crossover,matched_parameters,matched_time}.csv  our runs beside the published rows
      tables/learning_curves.csv         those runs' validation perplexity epoch by epoch (reference runs too)
      tables/findings.csv                each claim of the seeds: its evidence (by role), statistic, rule, verdict
      figures/<name>.{png,pdf}           figures the book shows beside a worked table
      figures/crossover.{png,pdf}        test perplexity against parameter count, both families
      figures/learning_curves.{png,pdf}  validation perplexity against tokens seen, the comparison's runs
      report/_book/                      the book of these results (index.html, rnnbench-report.pdf)
      benchmarks/train/<run_id>.tsv      Snakemake's time and memory record of each training job
      benchmarks/analyses/<name>.tsv     and of each analysis's job
      benchmarks/dynamic/<run_id>.tsv    and of each dynamic evaluation's job
      logs/<rule>/<name>.log             every job's log
    (each table and figure has a <name>.provenance.json beside it)

Every function takes the results folder first (``config.results_dir``), so one checkout can hold the
results of several configurations side by side. The names work with Snakemake wildcards too:
``study_summary(results, "{study}")`` is the rule's output pattern.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # paths.py is imported by the report, which must not need the config machinery at runtime
    from rnnbench.config.settings import Config

FIGURE_FORMATS = ("png", "pdf")


def run_dir(results: str, run_id: str) -> str:
    return f"{results}/runs/{run_id}"


def run_metrics(results: str, run_id: str) -> str:
    return f"{run_dir(results, run_id)}/metrics.json"


def beside_run_metrics(run_folder: str | Path, run_id: str) -> str:
    """The metrics.json of run ``run_id`` in the folder beside ``run_folder`` (runs/<a>/ -> runs/<run_id>/): where a run
    whose clipping threshold is relative to a measured norm reads its reference, in a results folder or not."""
    return str(Path(run_folder).parent / run_id / "metrics.json")


def run_epochs(results: str, run_id: str) -> str:
    return f"{run_dir(results, run_id)}/epochs.csv"


def run_steps(results: str, run_id: str) -> str:
    return f"{run_dir(results, run_id)}/steps.csv"


def run_config(results: str, run_id: str) -> str:
    return f"{run_dir(results, run_id)}/config.json"


def run_agreement(results: str, run_id: str) -> str:
    """Agreement accuracy per head-verb distance (agreement corpus, runs that did not diverge)."""
    return f"{run_dir(results, run_id)}/agreement.csv"


def run_model(results: str, run_id: str) -> str:
    return f"{run_dir(results, run_id)}/model.pt"


def run_dynamic(results: str, run_id: str) -> str:
    """The run's test split scored statically and under dynamic evaluation (rnnbench.results.dynamic_record)."""
    return f"{run_dir(results, run_id)}/dynamic.json"


def snapshot_in(run: str | Path, epoch: int) -> str:
    """The weights of a run after ``epoch`` epochs (0: the initialisation), inside its run directory."""
    return f"{run}/snapshots/epoch-{epoch:03d}.pt"


def run_snapshot(results: str, run_id: str, epoch: int) -> str:
    return snapshot_in(run_dir(results, run_id), epoch)


def corpus_key(corpus: str, options: Mapping) -> str:
    """Names one prepared corpus, ``<corpus>-<8 hex digits of its options>``: runs that read the same corpus with
    the same options share it (its record under corpora/, its row in the baseline tables)."""
    digest = hashlib.sha1(json.dumps(dict(options), sort_keys=True).encode()).hexdigest()[:8]
    return f"{corpus}-{digest}"


def corpus_stats(results: str, corpus_key: str) -> str:
    return f"{results}/corpora/{corpus_key}.json"


def study_dir(results: str, study: str) -> str:
    return f"{results}/studies/{study}"


def study_summary(results: str, study: str) -> str:
    return f"{study_dir(results, study)}/summary.csv"


def study_record(results: str, study: str) -> str:
    """The study's metadata (rnnbench.results.summary.study_record), read by its figure and by the book."""
    return f"{study_dir(results, study)}/study.json"


def study_figure(results: str, study: str, fmt: str) -> str:
    return f"{study_dir(results, study)}/figure.{fmt}"


def study_extra_table(results: str, study: str, kind: str) -> str:
    """A study's table beyond its summary: ``kind`` is one of EXTRA_TABLES (rnnbench.results.ablations.study_extras)."""
    return f"{study_dir(results, study)}/{kind}.csv"


def study_extra_figure(results: str, study: str, name: str, fmt: str) -> str:
    """A figure of a study's extra table (EXTRA_FIGURES names them)."""
    return f"{study_dir(results, study)}/{name}.{fmt}"


# The kinds of a study's extra tables (rnnbench.results.ablations.study_extras decides which a study gets), each with
# the file of every run it reads.
EXTRA_TABLES = {
    "distance": run_agreement,
    "trace": run_steps,
    "learning": run_epochs,
    "cuts": run_model,
    "reach": run_model,
    "units": run_model,
    "speed": run_steps,
    "update": run_steps,
}
# The kinds that read each run's weights (and so its corpus) again.
MODEL_EXTRAS = frozenset(kind for kind, run_file in EXTRA_TABLES.items() if run_file is run_model)

# Each figure drawn from a study's extra table: name -> (the kind of table it draws, the function of
# rnnbench.plots.ablation_figures that draws it, named here so that this module needs no matplotlib). The one list:
# the workflow's outputs, its wildcard and the drawing job all read it.
EXTRA_FIGURES = {
    "distance-heatmap": ("distance", "distance_heatmap"),
    "distance-curves": ("distance", "distance_curves"),
    "norm-trace": ("trace", "norm_trace"),
    "learning-curves": ("learning", "learning_curves"),
    "cut-contrast": ("cuts", "cut_contrast"),
    "update-cosine": ("update", "update_cosine"),
}


def extra_figure_names(kind: str) -> list[str]:
    """The figures drawn from a study's extra table of ``kind``."""
    return [name for name, (table, _) in EXTRA_FIGURES.items() if table == kind]


def study_extra_outputs(results: str, study: str, extras: list[str]) -> list[str]:
    """The extra tables and figures of a study with the extras ``extras`` (without provenance records)."""
    outputs = []
    for kind in extras:
        outputs.append(study_extra_table(results, study, kind))
        outputs += [
            study_extra_figure(results, study, name, fmt) for name in extra_figure_names(kind) for fmt in FIGURE_FORMATS
        ]
    return outputs


# kind -> its tables
ANALYSIS_TABLES = {"gradient_decay": ("curves", "rates"), "passage": ("passage",), "probe": ("probe",)}
ANALYSIS_FIGURES = {"gradient_decay": "curves", "probe": "probe"}  # kind -> the table its figure is drawn from


def analysis_dir(results: str, analysis: str) -> str:
    return f"{results}/analyses/{analysis}"


def analysis_table(results: str, analysis: str, table: str) -> str:
    """One of the analysis's tables: curves, rates (gradient_decay), passage or probe."""
    return f"{analysis_dir(results, analysis)}/{table}.csv"


def analysis_record(results: str, analysis: str) -> str:
    """The analysis's metadata (rnnbench.config.analyses.Analysis.record), read by its figure and by the book."""
    return f"{analysis_dir(results, analysis)}/analysis.json"


def analysis_figure(results: str, analysis: str, fmt: str) -> str:
    return f"{analysis_dir(results, analysis)}/figure.{fmt}"


def book_figure(results: str, name: str, fmt: str) -> str:
    """A figure the book shows beside the worked table ``name``."""
    return f"{results}/figures/{name}.{fmt}"


def report_dir(results: str) -> str:
    """The book of these results: a copy of reports/ and, under _book/, its HTML and PDF."""
    return f"{results}/report"


def report_book(results: str) -> list[str]:
    """The rendered book: its HTML home page and its PDF."""
    return [f"{report_dir(results)}/_book/index.html", f"{report_dir(results)}/_book/rnnbench-report.pdf"]


def table(results: str, name: str) -> str:
    return f"{results}/tables/{name}.csv"


def train_benchmark(results: str, run_id: str) -> str:
    return f"{results}/benchmarks/train/{run_id}.tsv"


def dynamic_benchmark(results: str, run_id: str) -> str:
    return f"{results}/benchmarks/dynamic/{run_id}.tsv"


def analysis_benchmark(results: str, analysis: str) -> str:
    return f"{results}/benchmarks/analyses/{analysis}.tsv"


def log(results: str, rule: str, name: str) -> str:
    return f"{results}/logs/{rule}/{name}.log"


def provenance(path: str) -> str:
    """The provenance record that sits beside a table or figure (a figure's formats share one)."""
    p = Path(path)
    return str(p.with_name(p.stem + ".provenance.json"))


# The count-based baselines of every prepared corpus (rule baseline_tables, rnnbench.baselines.tables):
# perplexities of the unigram and Kneser-Ney models, the Kneser-Ney discounts per order, and the agreement
# probe's chance and nearest-noun heuristic per head-verb distance.
BASELINE_TABLES = ("baselines", "kn_discounts", "agreement_baselines")


def baseline_outputs(results: str) -> list[str]:
    return [table(results, name) for name in BASELINE_TABLES]


# The comparison with the published rows (rule comparison): its tables, then the figure drawn from `crossover`.
COMPARISON_TABLES = (
    "comparison",
    "crossover",
    "matched_parameters",
    "matched_time",
    "learning_curves",
    "ranking_by_epoch",
)
CROSSOVER_FIGURE = "crossover"
LEARNING_CURVES_FIGURE = "learning_curves"

# Whether clipping stops divergence and what it costs (rule clipping_figure, rnnbench.plots.clipping_figure), drawn
# from the studies with the clipping role (rnnbench.findings.clipping.ROLE) that set their norm threshold as a
# multiple of a measured median norm, there a threshold means the same thing at every rate, and train with plain SGD,
# the step Equation (12.7) clips (Adam's per-parameter scaling bounds its step already; its clipping studies are
# read by the claims and their sections).
CLIPPING_FIGURE = "clipping_outcomes"
CLIPPING_ROLE = "clipping"
CLIPPING_FIGURE_OPTIMIZER = "sgd"


def clipping_figure_studies(config: Config) -> list[str]:
    """The studies the clipping figure is drawn from, in config order; none, and there is no figure."""
    return [
        name
        for name, study in config.studies.items()
        if CLIPPING_ROLE in study.roles
        and "clip_times_median" in {*study.vary, *study.fixed}
        and study.fixed.get("optimizer", config.run.get("optimizer")) == CLIPPING_FIGURE_OPTIMIZER
    ]


# The activation studies side by side (rule activation_figure, rnnbench.results.activation): every study with the role
# whose extra tables count silent units and steps to a common loss, a row per run, and the figure drawn from it.
ACTIVATION_ROLE = "activation_training"
ACTIVATION = "activation"  # tables/activation.csv and figures/activation.{png,pdf}


def activation_studies(config: Config) -> list[str]:
    """The studies the activation table reads: each with ACTIVATION_ROLE and both a units and a speed table."""
    return [
        name
        for name, study in config.studies.items()
        if ACTIVATION_ROLE in study.roles and {"units", "speed"} <= set(study_extra_kinds(config, name))
    ]


def activation_study_files(results: str, study: str) -> dict[str, str]:
    """The files of ``study`` the activation table reads, by name (rnnbench.results.activation.STUDY_FILES)."""
    return {
        "summary": study_summary(results, study),
        "record": study_record(results, study),
        "speed": study_extra_table(results, study, "speed"),
        "units": study_extra_table(results, study, "units"),
    }


def activation_outputs(config: Config) -> list[str]:
    """The activation table and its figure, where the config has an activation study (activation_studies)."""
    if not activation_studies(config):
        return []
    results = config.results_dir
    return [table(results, ACTIVATION), *(book_figure(results, ACTIVATION, fmt) for fmt in FIGURE_FORMATS)]


# Each claim of the seeds judged on these results (rule findings_table, rnnbench.findings).
FINDINGS_TABLE = "findings"
FINDINGS_PARTS_TABLE = "findings_parts"  # every part of every claim, decided


# The extra tables of a study the findings read beside its summary: units.csv, for the dead ReLU units, speed.csv,
# for which activation trains faster, and reach.csv, for truncation's cost within reach and beyond it.
FINDINGS_EXTRAS = ("units", "speed", "reach")


def study_extra_kinds(config: Config, name: str) -> list[str]:
    """The kinds of extra table study ``name`` gets (rnnbench.results.ablations.study_extras)."""
    from rnnbench.results.ablations import study_extras

    spec = config.studies[name]
    runs = [cfg for _, cfg in config.study_runs(name)]
    cut = any(cfg.segments == "sentence" and cfg.bptt > 0 for cfg in runs)
    updates = any(cfg.measures_update_cosine for cfg in runs)
    return study_extras(spec.corpus, list(spec.vary), spec.metric, cut, spec.family, updates)


def findings_inputs(config: Config, worked_tables: list[str]) -> list[str]:
    """What the findings read, for the rule's inputs: the summary and record of every study with a role and the
    extra tables of it that FINDINGS_EXTRAS names, the tables and record of every analysis with one, the training benchmarks, the comparison's ranking by epoch
    (when there is a comparison), and the lesson's worked table of the gradient reaching token 1 (when the worked
    tables are built). A run's own files (agreement.csv,
    config.json) come with its metrics.json, which its study's summary already waits for."""
    results = config.results_dir
    inputs = []
    for name, study in config.studies.items():
        if study.roles:
            inputs += [study_summary(results, name), study_record(results, name)]
            kinds = [kind for kind in study_extra_kinds(config, name) if kind in FINDINGS_EXTRAS]
            inputs += [study_extra_table(results, name, kind) for kind in kinds]
    for name, analysis in config.analyses.items():
        if analysis.roles:
            inputs += [analysis_table(results, name, t) for t in ANALYSIS_TABLES[analysis.kind]]
            inputs.append(analysis_record(results, name))
    inputs.append(table(results, "benchmarks"))
    if config.comparison:  # the families' ranking epoch by epoch, at matched size
        inputs.append(table(results, "ranking_by_epoch"))
    if "lesson_gradient_reach" in worked_tables:
        inputs.append(table(results, "lesson_gradient_reach"))
    return inputs


def comparison_outputs(config: Config) -> list[str]:
    """The comparison's tables and figure (none when the config's `comparison` names no study)."""
    if not config.comparison:
        return []
    results = config.results_dir
    outputs = [table(results, name) for name in COMPARISON_TABLES]
    if config.comparison.crossover:
        outputs += [book_figure(results, CROSSOVER_FIGURE, fmt) for fmt in FIGURE_FORMATS]
    outputs += [book_figure(results, LEARNING_CURVES_FIGURE, fmt) for fmt in FIGURE_FORMATS]
    return outputs


def dynamic_outputs(config: Config) -> list[str]:
    """The dynamic-evaluation records the config's comparison asks for (rnnbench.config.settings.Config.dynamic_run_ids)."""
    return [run_dynamic(config.results_dir, run_id) for run_id in config.dynamic_run_ids()]


def run_outputs(results: str, run_id: str) -> list[str]:
    """What a training job declares (rule train): its records, weights and Snakemake's benchmark of it."""
    files = (run_metrics, run_epochs, run_steps, run_config, run_model)
    return [path(results, run_id) for path in files] + [train_benchmark(results, run_id)]


def expected_outputs(config: Config, worked_tables: list[str]) -> list[str]:
    """Every file a complete run of ``config`` produces, the book aside: `run_records` then `tables_and_figures`.
    The workflow's `results` target is this list, so a file deleted by hand is made again by the same command,
    and `rnnbench outputs --check` checks it (tests/test_workflow.py checks that it is every output the rules
    declare; their logs are not outputs)."""
    return run_records(config) + tables_and_figures(config, worked_tables)


def run_records(config: Config) -> list[str]:
    """The corpus records, each run's outputs and Snakemake's benchmark of each training, dynamic-evaluation and
    analysis job."""
    results = config.results_dir
    runs = config.all_runs()
    outputs = [corpus_stats(results, key) for key in sorted({cfg.corpus_key for cfg in runs.values()})]
    outputs += [path for run_id in sorted(runs) for path in run_outputs(results, run_id)]
    outputs += [dynamic_benchmark(results, run_id) for run_id in config.dynamic_run_ids()]
    return outputs + [analysis_benchmark(results, name) for name in config.analyses]


def tables_and_figures(config: Config, worked_tables: list[str]) -> list[str]:
    """Every table, figure, provenance record and study or analysis record of ``config``: what the book reads."""
    results = config.results_dir
    outputs = [table(results, "corpora"), table(results, "benchmarks"), *baseline_outputs(results)]
    if config.tables.get("worked", True):
        outputs += [table(results, name) for name in worked_tables]
    for study in config.studies:
        outputs.append(study_summary(results, study))
        outputs += [study_figure(results, study, fmt) for fmt in FIGURE_FORMATS]
        outputs += study_extra_outputs(results, study, study_extra_kinds(config, study))
    for name, analysis in config.analyses.items():
        outputs += [analysis_table(results, name, t) for t in ANALYSIS_TABLES[analysis.kind]]
        if analysis.kind in ANALYSIS_FIGURES:
            outputs += [analysis_figure(results, name, fmt) for fmt in FIGURE_FORMATS]
    outputs += comparison_outputs(config)
    if clipping_figure_studies(config):
        outputs += [book_figure(results, CLIPPING_FIGURE, fmt) for fmt in FIGURE_FORMATS]
    outputs += activation_outputs(config)
    outputs += [table(results, FINDINGS_TABLE), table(results, FINDINGS_PARTS_TABLE)]
    records = dict.fromkeys(provenance(p) for p in outputs)  # a figure's formats share one
    return (
        outputs
        + list(records)
        + [study_record(results, study) for study in config.studies]
        + [analysis_record(results, name) for name in config.analyses]
        + dynamic_outputs(config)  # run records, like metrics.json: no provenance beside them
    )
