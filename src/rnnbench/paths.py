"""The layout of ``results/``, written once: the workflow's rules, the CI check and the report all ask here.

    results/
      corpora/<corpus_key>.json          statistics of each prepared corpus
      runs/<run_id>/                     one training run (see rnnbench.train)
      runs/<run_id>/snapshots/epoch-<k>.pt  its weights after k epochs (0: the initialisation)
      studies/<study>/summary.csv        tidy: one row per run and metric
      studies/<study>/figure.{png,pdf}   the study's default figure
      tables/<name>.csv                  worked examples, parameter tables, corpora, benchmarks
      benchmarks/train/<run_id>.tsv      Snakemake's time and memory record of each training job
      logs/<rule>/<name>.log             every job's log
    (each table and figure has a <name>.provenance.json beside it)
"""

from __future__ import annotations

from pathlib import Path

from rnnbench.config import Config

FIGURE_FORMATS = ("png", "pdf")


def run_dir(results: str, run_id: str) -> str:
    return f"{results}/runs/{run_id}"


def run_metrics(results: str, run_id: str) -> str:
    return f"{run_dir(results, run_id)}/metrics.json"


def snapshot_in(run: str | Path, epoch: int) -> str:
    """The weights of a run after ``epoch`` epochs (0: the initialisation), inside its run directory."""
    return f"{run}/snapshots/epoch-{epoch:03d}.pt"


def run_snapshot(results: str, run_id: str, epoch: int) -> str:
    return snapshot_in(run_dir(results, run_id), epoch)


def corpus_stats(results: str, corpus_key: str) -> str:
    return f"{results}/corpora/{corpus_key}.json"


def study_summary(results: str, study: str) -> str:
    return f"{results}/studies/{study}/summary.csv"


def study_figure(results: str, study: str, fmt: str) -> str:
    return f"{results}/studies/{study}/figure.{fmt}"


def table(results: str, name: str) -> str:
    return f"{results}/tables/{name}.csv"


def provenance(path: str) -> str:
    """The provenance record that sits beside a table or figure (a figure's formats share one)."""
    p = Path(path)
    return str(p.with_name(p.stem + ".provenance.json"))


def expected_outputs(config: Config, worked_tables: list[str]) -> list[str]:
    """Every table and figure a complete run of ``config`` produces (the CI check reads this list)."""
    results = config.results_dir
    outputs = [table(results, "corpora"), table(results, "benchmarks")]
    if config.tables.get("worked", True):
        outputs += [table(results, name) for name in worked_tables]
    for study in config.studies:
        outputs.append(study_summary(results, study))
        outputs += [study_figure(results, study, fmt) for fmt in FIGURE_FORMATS]
    records = dict.fromkeys(provenance(p) for p in outputs)  # a figure's formats share one record
    return outputs + list(records)
