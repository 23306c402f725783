"""One function per workflow rule: what a Snakemake job does, importable and testable without Snakemake.

Each function takes plain paths and values, writes its outputs atomically, and writes the provenance
record (config hash, git commit, package versions, command) of every table and figure it makes to the
path the rule declares. ``provenance`` is the record's fields: the merged ``config``, its
``config_files``, the ``command`` and the ``checkout`` of the workflow's code (rnnbench.provenance.record).
The shims in ``workflow/scripts/`` only unpack the ``snakemake`` object and call one of these.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench import paths
from rnnbench.config.runs import RunConfig
from rnnbench.io import write_csv, write_json
from rnnbench.provenance import write_provenance

log = logging.getLogger("rnnbench.jobs")


def log_to(path: str | Path) -> None:
    """Send this job's log lines (and warnings, tracebacks) to its Snakemake log file."""
    # Open for the job's whole life, not a with-block; line-buffered: a crash leaves every line.
    stream = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
    sys.stderr = stream
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=stream, force=True)


def prepare_corpus(corpus: str, options: Mapping[str, Any], out: str, *, data_dir: str | None, cache_dir: str) -> None:
    from rnnbench.data.corpora import load_corpus

    stats = load_corpus(corpus, data_dir=data_dir, cache_dir=cache_dir, **options).statistics()
    write_json(out, stats)


def train(run: Mapping[str, Any], out_dir: str, *, threads: int, data_dir: str | None, cache_dir: str) -> None:
    from rnnbench.training.loop import train_run

    cfg = RunConfig.from_settings({**run, "threads": threads})
    reference = cfg.clip_reference()  # trained first: its metrics.json is an input of this run's job
    reference_metrics = paths.beside_run_metrics(out_dir, reference.run_id) if reference is not None else None
    train_run(cfg, out_dir, data_dir=data_dir, cache_dir=cache_dir, clip_reference=reference_metrics)


def dynamic_evaluation(
    run_dir: str, out: str, settings: Mapping[str, Any], *, threads: int, data_dir: str | None, cache_dir: str
) -> None:
    """A run's test split statically and under dynamic evaluation (rnnbench.training.dynamic.evaluate_run), as its record;
    ``settings``: the config's comparison.dynamic_evaluation (rates, valid_tokens, bptt)."""
    import torch

    from rnnbench.training.dynamic import evaluate_run

    torch.set_num_threads(threads)
    record = evaluate_run(run_dir, **settings, split="test", data_dir=data_dir, cache_dir=cache_dir)
    shown = (record["run_id"], *(record.get(k) for k in ("static_ppl", "dynamic_ppl", "lr")), record["seconds"])
    log.info("%s: static %s, dynamic %s at lr %s (%.1f s)", *shown)
    write_json(out, record)


def study_summary(
    record: Mapping[str, Any],
    points: Sequence[Mapping[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    metric_files: Sequence[str],
    out: str,
    *,
    record_file: str,
    provenance_file: str,
    provenance: Mapping[str, Any],
    baselines: str | None = None,
) -> None:
    """The study's table and its record (rnnbench.results.summary.study_record), read by its figure and the book;
    ``baselines`` (tables/baselines.csv) gives each corpus's unigram perplexity, against which a run learned."""
    from rnnbench.results.summary import summarize_study, unigram_perplexities

    configs = [RunConfig.from_settings(run) for run in runs]
    unigram = unigram_perplexities(pd.read_csv(baselines)) if baselines else {}
    write_csv(out, summarize_study(record["name"], points, configs, metric_files, unigram))
    write_json(record_file, dict(record))
    write_provenance(
        provenance_file,
        producer="rnnbench.results.summary.summarize_study",
        inputs=[*metric_files, *([baselines] if baselines else [])],
        **provenance,
    )


def study_figure(
    summary: str, record: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """The study's figure, in every format of ``outs``; what to plot comes from the study's record."""
    from rnnbench.plots.study_figures import study_figure as draw
    from rnnbench.plots.style import save_all

    study = json.loads(Path(record).read_text(encoding="utf-8"))
    drawn = save_all(draw(pd.read_csv(summary), study), outs)
    producer = "rnnbench.plots.study_figures.study_figure"
    write_provenance(provenance_file, producer=producer, inputs=[summary, record], drawn=drawn, **provenance)


def decay_analysis(
    record: Mapping[str, Any],
    points: Sequence[Mapping[str, Any]],
    outs: Mapping[str, str],
    *,
    data_dir: str | None,
    cache_dir: str,
    provenance: Mapping[str, Any],
) -> None:
    """One analysis: every point measured in turn (rnnbench.results.analysis_tables), written as one table per
    output of ``outs`` (gradient_decay: curves and rates; passage: passage; probe: probe), and its record
    (analysis.json)."""
    from rnnbench.results.analysis_tables import PRODUCERS, analysis_tables

    tables = analysis_tables(record, points, data_dir=data_dir, cache_dir=cache_dir)
    models = [p["model"] for p in points if p["model"] is not None]
    for name, table in tables.items():
        write_csv(outs[name], table)
        write_provenance(outs[f"{name}_provenance"], producer=PRODUCERS[name], inputs=models, **provenance)
    write_json(outs["record"], dict(record))


def analysis_figure(
    table: str, record: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """An analysis's figure from its ``table`` (rnnbench.paths.ANALYSIS_FIGURES): a gradient-decay analysis's curves
    (rnnbench.plots.decay_figures.decay_curves_figure), colour and panels from its record, or a probe's accuracy
    and gradient against distance (rnnbench.plots.probe_figures.probe_figure), colour from its record."""
    from rnnbench.plots.decay_figures import decay_curves_figure
    from rnnbench.plots.probe_figures import probe_figure
    from rnnbench.plots.style import save_all

    frame = pd.read_csv(table, dtype={"snapshot": str})
    analysis = json.loads(Path(record).read_text(encoding="utf-8"))
    figure = analysis["figure"]
    probe = analysis["kind"] == "probe"
    if probe:
        fig = probe_figure(frame, hue=figure["hue"])  # its caption names the analysis
    else:  # the book's caption describes it: the analysis's name is its title
        fig = decay_curves_figure(frame, hue=figure["hue"], panel=figure["panel"])  # its caption names the analysis
    drawn = save_all(fig, outs)
    producer = "probe_figures.probe_figure" if probe else "decay_figures.decay_curves_figure"
    write_provenance(
        provenance_file, producer=f"rnnbench.plots.{producer}", inputs=[table, record], drawn=drawn, **provenance
    )


def book_figure(
    name: str, table: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """A figure the book shows beside a worked table (``name`` is a rnnbench.plots.decay_figures.BOOK_FIGURES key)."""
    from rnnbench.plots.decay_figures import BOOK_FIGURES
    from rnnbench.plots.style import save_all

    drawn = save_all(BOOK_FIGURES[name](pd.read_csv(table)), outs)
    producer = f"rnnbench.plots.decay_figures.BOOK_FIGURES[{name!r}]"
    write_provenance(provenance_file, producer=producer, inputs=[table], drawn=drawn, **provenance)


def benchmark_table(
    run_ids: Sequence[str],
    benchmark_files: Sequence[str],
    metric_files: Sequence[str],
    out: str,
    *,
    provenance_file: str,
    provenance: Mapping[str, Any],
) -> None:
    from rnnbench.results.summary import benchmark_table as gather

    write_csv(out, gather(run_ids, benchmark_files, metric_files))
    inputs = [*benchmark_files, *metric_files]
    write_provenance(provenance_file, producer="rnnbench.results.summary.benchmark_table", inputs=inputs, **provenance)


def corpus_table(
    corpus_keys: Sequence[str],
    stats_files: Sequence[str],
    out: str,
    *,
    provenance_file: str,
    provenance: Mapping[str, Any],
) -> None:
    from rnnbench.results.summary import corpus_table as gather

    write_csv(out, gather(corpus_keys, stats_files))
    producer = "rnnbench.results.summary.corpus_table"
    write_provenance(provenance_file, producer=producer, inputs=list(stats_files), **provenance)


def baseline_tables(
    corpora: Mapping[str, Mapping[str, Any]],
    stats_files: Sequence[str],
    outs: Mapping[str, str],
    *,
    order: int,
    data_dir: str | None,
    cache_dir: str,
    provenance_files: Mapping[str, str],
    provenance: Mapping[str, Any],
) -> None:
    """The count-based baselines of every prepared corpus (rnnbench.baselines.tables), one table per key of
    ``outs`` (paths.BASELINE_TABLES): ``corpora`` maps corpus key -> {"corpus": name, "options": {...}}, each
    read from the cache its prepare_corpus job filled; ``stats_files`` are those jobs' outputs."""
    from rnnbench.baselines.tables import baseline_tables as compute
    from rnnbench.data.corpora import load_corpus

    loaded = {
        key: load_corpus(spec["corpus"], data_dir=data_dir, cache_dir=cache_dir, **spec["options"])
        for key, spec in corpora.items()
    }
    producer = "rnnbench.baselines.tables.baseline_tables"
    for name, frame in compute(loaded, order).items():
        write_csv(outs[name], frame)
        producer = "rnnbench.baselines.tables.baseline_tables"
        write_provenance(provenance_files[name], producer=producer, inputs=list(stats_files), **provenance)


def findings_table(
    results: str,
    roles: Mapping[str, Any],
    out: str,
    *,
    provenance_file: str,
    provenance: Mapping[str, Any],
    parts_out: str | None = None,
    parts_provenance_file: str | None = None,
) -> None:
    """Each claim of the seeds judged on the results folder ``results`` (rnnbench.findings); ``roles`` is
    rnnbench.findings.evidence.Roles.record() of the config: which studies and analyses carry each role. With
    ``parts_out``, every part of every claim too (tables/findings_parts.csv). The provenance record names every
    file a claim read."""
    from rnnbench.findings import findings_tables as judge
    from rnnbench.findings.evidence import Roles

    table, parts, read = judge(results, Roles.from_record(roles))
    write_csv(out, table)
    if parts_out:
        write_csv(parts_out, parts)
    for row in table.itertuples(index=False):
        log.info("%s: %s%s", row.id, row.verdict, f" ({row.reason})" if row.reason else "")
    write_provenance(provenance_file, producer="rnnbench.findings.findings_table", inputs=read, **provenance)
    if parts_out and parts_provenance_file:
        write_provenance(parts_provenance_file, producer="rnnbench.findings.findings_tables", inputs=read, **provenance)


def worked_table(name: str, out: str, *, provenance_file: str, provenance: Mapping[str, Any]) -> None:
    from rnnbench.worked import TABLES

    write_csv(out, TABLES[name]())
    write_provenance(provenance_file, producer=f"rnnbench.worked.TABLES[{name!r}]", **provenance)


def render_report(book_dir: str, *, results_dir: str, log: str | None = None) -> None:
    """Render the Quarto book (HTML + Typst PDF) of ``results_dir`` into <results_dir>/report/_book/."""
    from rnnbench.book.quarto import render

    render(book_dir, results_dir=results_dir, log=log)


def comparison_tables(
    results: str,
    runs: Mapping[str, Sequence[str]],
    corpus_stats_files: Sequence[str],
    benchmark_files: Sequence[str],
    outs: Mapping[str, str],
    *,
    baselines_file: str,
    scale: str,
    crossover_corpus: str | None,
    provenance_files: Mapping[str, str],
    provenance: Mapping[str, Any],
    reference_dir: str | None = None,
    departs_from: Mapping[str, str] | None = None,
    repository: str = ".",
) -> None:
    """Our runs beside the published rows, the tables of paths.COMPARISON_TABLES in ``outs``: the comparison
    (rnnbench.results.beside_published), perplexity against parameters on ``crossover_corpus`` and the RNN against
    each feed-forward run at matched parameter count and at matched training time (rnnbench.results.crossover),
    every run's learning curve and the families' ranking epoch by epoch (rnnbench.results.learning_curves).

    ``runs``: run id -> the studies it serves (each run once, however many studies share it), its folder
    under ``results``; ``benchmark_files``: each run's training-job record, in the same order; ``baselines_file``:
    tables/baselines.csv (our Kneser-Ney perplexities). The published numbers are the package's table
    (rnnbench.published); ours are read from the run folders, and the reference runs (rnnbench.results.reference)
    from ``reference_dir``, each checked against the config files of ``repository`` it names (a stale one is
    marked, never compared). ``departs_from``: study -> the study whose recipe it changes (config.studies' key of
    that name), for the runs of this build. Nothing is typed here.
    """
    from rnnbench.published import load_published, published_path
    from rnnbench.results.beside_published import comparison_table, read_corpus_stats
    from rnnbench.results.crossover import crossover_table, matched_cost
    from rnnbench.results.learning_curves import learning_curves, ranking_by_epoch
    from rnnbench.results.reference import read_reference, reference_files, reference_records
    from rnnbench.results.runs import our_runs, run_records, with_job_times
    from rnnbench.results.summary import benchmark_table

    reference = read_reference(reference_dir) if reference_dir else []
    records = run_records(results, runs, scale, departs_from) + reference_records(reference, repository)
    epochs = {run_id: pd.read_csv(paths.run_epochs(results, run_id)) for run_id in runs}
    epochs |= {run.run_id: run.epochs for run in reference}
    run_metrics = [paths.run_metrics(results, run_id) for run_id in runs]
    ours = with_job_times(our_runs(records), benchmark_table(list(runs), benchmark_files, run_metrics))
    crossover = crossover_table(ours, crossover_corpus) if crossover_corpus else crossover_table(ours.iloc[0:0])
    tables = {
        "comparison": (
            comparison_table(
                load_published(), ours, read_corpus_stats(corpus_stats_files), pd.read_csv(baselines_file)
            ),
            "rnnbench.results.beside_published.comparison_table",
        ),
        "crossover": (crossover, "rnnbench.results.crossover.crossover_table"),
        "matched_parameters": (matched_cost(crossover, "parameters"), "rnnbench.results.crossover.matched_cost"),
        "matched_time": (matched_cost(crossover, "train_seconds"), "rnnbench.results.crossover.matched_cost"),
        "learning_curves": (learning_curves(ours, epochs), "rnnbench.results.learning_curves.learning_curves"),
    }
    tables["ranking_by_epoch"] = (
        ranking_by_epoch(tables["learning_curves"][0], crossover),
        "rnnbench.results.learning_curves.ranking_by_epoch",
    )
    run_files = [f(results, run_id) for run_id in runs for f in (paths.run_config, paths.run_metrics)]
    reference_inputs = reference_files(reference_dir) if reference_dir else []
    inputs = {
        "comparison": [str(published_path()), baselines_file, *run_files, *corpus_stats_files, *benchmark_files]
        + reference_inputs,
        "crossover": [*run_files, *benchmark_files, *reference_inputs],
        "learning_curves": [*(paths.run_epochs(results, run_id) for run_id in runs), *reference_inputs],
        "ranking_by_epoch": [outs["learning_curves"], outs["crossover"]],
    }
    for name, (frame, producer) in tables.items():
        write_csv(outs[name], frame)
        write_provenance(
            provenance_files[name], producer=producer, inputs=inputs.get(name, [outs["crossover"]]), **provenance
        )


def comparison_figure(
    crossover: str, outs: Sequence[str], *, title: str, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """Test perplexity against parameter count, both families (rnnbench.plots.comparison_figures.crossover_figure)."""
    from rnnbench.plots.comparison_figures import crossover_figure
    from rnnbench.plots.style import save_all

    # Counts stay integers where the Elman rows leave them blank (an n-1 of 4, not 4.0, beside each point).
    table = pd.read_csv(
        crossover, dtype={c: "Int64" for c in ("context", "crossover_context", "rnn_equivalent_parameters")}
    )
    drawn = save_all(crossover_figure(table, title=title), outs)
    producer = "rnnbench.plots.comparison_figures.crossover_figure"
    write_provenance(provenance_file, producer=producer, inputs=[crossover], drawn=drawn, **provenance)


def learning_curves_figure(
    curves: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """Validation perplexity against training tokens, every run of the comparison
    (rnnbench.plots.comparison_figures.learning_curves_figure)."""
    from rnnbench.plots.comparison_figures import learning_curves_figure as draw
    from rnnbench.plots.style import save_all

    drawn = save_all(draw(pd.read_csv(curves, dtype={"tokens_seen": "Int64"})), outs)
    producer = "rnnbench.plots.comparison_figures.learning_curves_figure"
    write_provenance(provenance_file, producer=producer, inputs=[curves], drawn=drawn, **provenance)


def study_extra_table(
    kind: str,
    record: Mapping[str, Any],
    points: Sequence[Mapping[str, Any]],
    summary: str,
    run_files: Mapping[str, str],
    out: str,
    *,
    provenance_file: str,
    provenance: Mapping[str, Any],
    data_dir: str | None = None,
    cache_dir: str | None = None,
) -> None:
    """A study's table beyond its summary (rnnbench.results.ablations, cut_accuracy, silent_units): ``kind``
    "distance" reads each run's agreement.csv, "trace" each traced run's steps.csv, "learning" each run's epochs.csv,
    "speed" and "update" each run's steps.csv, "cuts", "reach" and "units" each run's model.pt (its probes scored
    again, rnnbench.results.cut_scoring, or its units counted, on the corpus read from ``data_dir`` and
    ``cache_dir``); ``run_files`` maps run id -> that file (rnnbench.paths.EXTRA_TABLES). Each run's outcome is the
    one its ``summary`` (summary.csv) holds, so every table marks the same failed runs."""
    from rnnbench.results import ablations, silent_units, update_direction
    from rnnbench.results.cut_scoring import scored_table

    runs = ablations.read_runs(record, points, summary)
    vary = list(record["vary"])
    producer = f"rnnbench.results.ablations.{kind}_table"
    if kind == "distance":
        table = ablations.distance_table(runs, ablations.read_agreement(runs, run_files), vary)
        inputs = [run_files[r] for r in runs.loc[~runs["diverged"], "run_id"]]
    elif kind == "trace":
        traced = ablations.trace_runs(runs)["run_id"]
        table = ablations.trace_table(runs, {r: pd.read_csv(run_files[r]) for r in traced}, vary)
        inputs = [run_files[r] for r in traced]
    elif kind == "learning":
        inputs = [run_files[r] for r in runs["run_id"]]
        table = ablations.learning_table(runs, {r: pd.read_csv(run_files[r]) for r in runs["run_id"]}, vary)
    elif kind in ("cuts", "reach"):  # each run's probes scored again by its weights
        table, producer = scored_table(kind, runs, run_files, vary, data_dir=data_dir, cache_dir=cache_dir)
        inputs = [run_files[r] for r in runs.loc[~runs["diverged"], "run_id"]]
    elif kind == "speed":
        inputs = [run_files[r] for r in runs["run_id"]]
        table = ablations.speed_table(runs, {r: pd.read_csv(run_files[r]) for r in runs["run_id"]}, vary)
    elif kind == "update":
        inputs, producer = [run_files[r] for r in runs["run_id"]], "rnnbench.results.update_direction.update_table"
        steps = {r: pd.read_csv(run_files[r]) for r in runs["run_id"]}
        table = update_direction.update_table(runs, steps, vary, record.get("fixed", {}), run_files)
    elif kind == "units":
        table = silent_units.unit_table(
            runs, silent_units.silent_units_by_run(runs, run_files, data_dir=data_dir, cache_dir=cache_dir), vary
        )
        inputs, producer = (
            [run_files[r] for r in runs.loc[~runs["diverged"], "run_id"]],
            "rnnbench.results.silent_units.unit_table",
        )
    else:
        raise ValueError(f"no extra study table {kind!r}; known: {', '.join(paths.EXTRA_TABLES)}")
    write_csv(out, table)
    write_provenance(provenance_file, producer=producer, inputs=[summary, *inputs], **provenance)


def study_extra_figure(
    name: str, table: str, record: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """A figure of a study's extra table (``name`` is a rnnbench.paths.EXTRA_FIGURES key)."""
    from rnnbench.plots import ablation_figures
    from rnnbench.plots.style import save_all

    study = json.loads(Path(record).read_text(encoding="utf-8"))
    draw = getattr(ablation_figures, paths.EXTRA_FIGURES[name][1])
    drawn = save_all(draw(pd.read_csv(table), study), outs)
    producer = f"rnnbench.plots.ablation_figures.{paths.EXTRA_FIGURES[name][1]}"
    write_provenance(provenance_file, producer=producer, inputs=[table, record], drawn=drawn, **provenance)


def clipping_figure(
    studies: Mapping[str, str], outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """The clipping figure (rnnbench.plots.clipping_figure) of ``studies``: each summary.csv -> its study.json."""
    from rnnbench.plots import clipping_figure as figure
    from rnnbench.plots.style import save_all

    read = [(pd.read_csv(s), json.loads(Path(r).read_text(encoding="utf-8"))) for s, r in studies.items()]
    drawn = save_all(figure.clipping_figure(figure.relative_runs(read)), outs)
    producer = "rnnbench.plots.clipping_figure.clipping_figure"
    write_provenance(
        provenance_file, producer=producer, inputs=[*studies, *studies.values()], drawn=drawn, **provenance
    )


def activation_figure(studies: Mapping[str, Mapping], outs: Mapping[str, str], *, provenance: Mapping) -> None:
    """The activation studies' table (rnnbench.results.activation) and its figure; ``outs`` and each study's files by name."""
    from rnnbench.plots.activation_figures import activation_figure as draw
    from rnnbench.plots.style import save_all
    from rnnbench.results.activation import read_activation_table

    table = outs["table"]
    write_csv(table, read_activation_table(studies))
    inputs = [str(path) for files in studies.values() for path in files.values()]
    write_provenance(outs["table_provenance"], producer="rnnbench.results.activation", inputs=inputs, **provenance)
    drawn = save_all(draw(pd.read_csv(table)), [outs[fmt] for fmt in paths.FIGURE_FORMATS])
    producer = "rnnbench.plots.activation_figures"
    write_provenance(outs["figure_provenance"], producer=producer, inputs=[table], drawn=drawn, **provenance)
