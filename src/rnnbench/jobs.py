"""One function per workflow rule: what a Snakemake job does, importable and testable without Snakemake.

Each function takes plain paths and values, writes its outputs atomically, and writes the provenance
record (config hash, git commit, package versions, command) beside every table and figure it makes.
The shims in ``workflow/scripts/`` only unpack the ``snakemake`` object and call one of these.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from rnnbench.config import RunConfig
from rnnbench.io import write_csv, write_json
from rnnbench.provenance import write_provenance

log = logging.getLogger("rnnbench.jobs")


def log_to(path: str | Path) -> None:
    """Send this job's log lines (and warnings, tracebacks) to its Snakemake log file."""
    stream = open(path, "a", encoding="utf-8", buffering=1)  # line-buffered: a crash leaves every line
    sys.stderr = stream
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=stream, force=True)


def prepare_corpus(corpus: str, options: Mapping[str, Any], out: str, *, data_dir: str | None, cache_dir: str) -> None:
    from rnnbench.data.corpora import load_corpus

    stats = load_corpus(corpus, data_dir=data_dir, cache_dir=cache_dir, **options).statistics()
    write_json(out, stats)


def train(run: Mapping[str, Any], out_dir: str, *, threads: int, data_dir: str | None, cache_dir: str) -> None:
    from rnnbench.train import train_run

    cfg = RunConfig.from_settings({**run, "threads": threads})
    train_run(cfg, out_dir, data_dir=data_dir, cache_dir=cache_dir)


def study_summary(
    study: str, points, runs, metric_files, out: str, *, about: Mapping[str, Any], provenance: Mapping[str, Any]
) -> None:
    """``about``: the study's description, metric and varied settings, kept with the table for the report."""
    from rnnbench.summary import summarize_study

    configs = [RunConfig.from_settings(run) for run in runs]
    write_csv(out, summarize_study(study, points, configs, metric_files))
    write_json(str(Path(out).with_name("study.json")), dict(about))
    write_provenance(
        out, producer="rnnbench.summary.summarize_study", inputs=list(metric_files), study=dict(about), **provenance
    )


def study_figure(summary: str, study: str, outs: Sequence[str], *, provenance: Mapping[str, Any]) -> None:
    """The study's figure (every format in ``outs``) from its summary table and its study.json."""
    import json

    from rnnbench.plots import save, study_figure as draw

    table = pd.read_csv(summary)
    about = json.loads(Path(study).read_text(encoding="utf-8"))
    for out in outs:
        save(draw(table, about, source=f"data: {summary} (rule study_figure)"), out)
    write_provenance(outs[0], producer="rnnbench.plots.study_figure", inputs=[summary, study], **provenance)


def book_figure(name: str, table: str, outs: Sequence[str], *, provenance: Mapping[str, Any]) -> None:
    """A figure the book shows beside a worked table (``name`` is a plots.BOOK_FIGURES key)."""
    from rnnbench.plots import BOOK_FIGURES, save

    frame = pd.read_csv(table)
    for out in outs:
        save(BOOK_FIGURES[name](frame, source=f"data: {table} (rule book_figure)"), out)
    write_provenance(outs[0], producer=f"rnnbench.plots.BOOK_FIGURES[{name!r}]", inputs=[table], **provenance)


def benchmark_table(run_ids: Sequence[str], benchmark_files: Sequence[str], out: str, *, provenance: Mapping[str, Any]) -> None:
    from rnnbench.summary import benchmark_table as gather

    write_csv(out, gather(run_ids, benchmark_files))
    write_provenance(out, producer="rnnbench.summary.benchmark_table", inputs=list(benchmark_files), **provenance)


def corpus_table(corpus_keys: Sequence[str], stats_files: Sequence[str], out: str, *, provenance: Mapping[str, Any]) -> None:
    from rnnbench.summary import corpus_table as gather

    write_csv(out, gather(corpus_keys, stats_files))
    write_provenance(out, producer="rnnbench.summary.corpus_table", inputs=list(stats_files), **provenance)


def worked_table(name: str, out: str, *, provenance: Mapping[str, Any]) -> None:
    from rnnbench.worked import TABLES

    write_csv(out, TABLES[name]())
    write_provenance(out, producer=f"rnnbench.worked.TABLES[{name!r}]", **provenance)


def render_report(book_dir: str, *, results_dir: str, log: str | None = None) -> None:
    """Render the Quarto book (HTML + Typst PDF) of ``results_dir`` into <results_dir>/report/_book/."""
    from rnnbench.book import render

    render(book_dir, results_dir=results_dir, log=log)
