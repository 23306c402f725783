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
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench import paths
from rnnbench.config.runs import RunConfig
from rnnbench.io import write_csv, write_json
from rnnbench.paths import ANALYSIS_TABLES
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
    train_run(cfg, out_dir, data_dir=data_dir, cache_dir=cache_dir)


def dynamic_evaluation(
    run_dir: str, out: str, settings: Mapping[str, Any], *, threads: int, data_dir: str | None, cache_dir: str
) -> None:
    """A run's test split statically and under dynamic evaluation (rnnbench.training.dynamic.evaluate_run), as its record.

    ``settings``: the config's comparison.dynamic_evaluation (rates, valid_tokens, bptt)."""
    import torch

    from rnnbench.training.dynamic import evaluate_run

    torch.set_num_threads(threads)
    record = evaluate_run(run_dir, **settings, split="test", data_dir=data_dir, cache_dir=cache_dir)
    log.info(
        "%s: static %s, dynamic %s at lr %s (%.1f s)",
        record["run_id"],
        record.get("static_ppl"),
        record.get("dynamic_ppl"),
        record.get("lr"),
        record["seconds"],
    )
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
    from rnnbench.plots.figures import save
    from rnnbench.plots.figures import study_figure as draw

    table = pd.read_csv(summary)
    study = json.loads(Path(record).read_text(encoding="utf-8"))
    for out in outs:
        save(draw(table, study, source=f"data: {summary} (rule study_figure)"), out)
    write_provenance(
        provenance_file, producer="rnnbench.plots.figures.study_figure", inputs=[summary, record], **provenance
    )


def _decay_inputs(point: Mapping[str, Any], measure: Mapping[str, Any], corpora: dict, *, data_dir, cache_dir):
    """(network source, corpus) of one analysis point: an untrained spec or a model file, and the corpus it
    reads (a study's run: its own corpus and options; an untrained network: the analysis's corpus)."""
    from rnnbench.data.corpora import load_corpus

    name, options = point["corpus"], point["corpus_options"]
    key = (name, json.dumps(options, sort_keys=True))
    if key not in corpora:
        corpora[key] = load_corpus(name, data_dir=data_dir, cache_dir=cache_dir, **options)
    if point["untrained"] is None and not Path(point["model"]).is_file():
        raise FileNotFoundError(
            f"{point['model']}: no weights for {dict(point['keys'])}; a run whose schedule stopped it before that "
            "epoch has no snapshot there (its epochs.csv says how far it went): ask for an earlier one or 'final'"
        )
    return (point["untrained"] if point["untrained"] is not None else point["model"]), corpora[key]


def decay_analysis(
    record: Mapping[str, Any],
    points: Sequence[Mapping[str, Any]],
    outs: Mapping[str, str],
    *,
    data_dir: str | None,
    cache_dir: str,
    provenance: Mapping[str, Any],
) -> None:
    """One analysis: every point measured in turn, written as one table per output of ``outs``.

    gradient_decay: ``outs`` has curves and rates (rnnbench.decay.decay_point on N windows of the split);
    passage: ``outs`` has passage (rnnbench.decay.passage_decay). Either way also the record (analysis.json).
    Each point is {"keys", "untrained" (settings or None), "model" (a model file or None), "corpus", "corpus_options"}.
    """
    import time

    from rnnbench.config.analyses import check_window
    from rnnbench.decay import decay_point, network, passage_decay
    from rnnbench.decay.analysis import DTYPES

    measure, corpora = record["measure"], {}
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in ANALYSIS_TABLES[record["kind"]]}
    for point in points:
        started = time.perf_counter()
        source, corpus = _decay_inputs(point, measure, corpora, data_dir=data_dir, cache_dir=cache_dir)
        if record["kind"] == "passage":
            model = network(source, len(corpus.vocab), DTYPES[measure["dtype"]])
            table = passage_decay(model, corpus.vocab)
            for position, (name, value) in enumerate(point["keys"].items()):
                table.insert(position, name, value)
            tables["passage"].append(table)
        else:
            fit = tuple(measure["fit"]) if measure["fit"] is not None else None
            ids = getattr(corpus, measure["split"])
            # the config's check knew only a bound for a generated corpus; its real length is known now
            check_window(f"analyses.{record['name']}", measure["steps"], point["corpus"], measure["split"], len(ids))
            curves, rates = decay_point(
                source,
                ids,
                len(corpus.vocab),
                steps=measure["steps"],
                count=measure["sequences"],
                keys=point["keys"],
                seed=measure["seed"],
                dtype=measure["dtype"],
                fit=fit,
            )
            tables["curves"].append(curves)
            tables["rates"].append(rates)
        log.info("%s %s: %.1f s", record["name"], dict(point["keys"]), time.perf_counter() - started)
    models = [p["model"] for p in points if p["model"] is not None]
    for name, parts in tables.items():
        write_csv(outs[name], pd.concat(parts, ignore_index=True))
        producer = "rnnbench.decay.passage_decay" if name == "passage" else "rnnbench.decay.decay_point"
        write_provenance(outs[f"{name}_provenance"], producer=producer, inputs=models, **provenance)
    write_json(outs["record"], dict(record))


def analysis_figure(
    curves: str, record: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """An analysis's figure (rnnbench.plots.figures.decay_curves_figure), colour and panels as its record says."""
    from rnnbench.plots.figures import decay_curves_figure as draw
    from rnnbench.plots.figures import save

    table = pd.read_csv(curves, dtype={"snapshot": str})
    analysis = json.loads(Path(record).read_text(encoding="utf-8"))
    figure = analysis["figure"]
    for out in outs:
        drawn = draw(
            table,
            hue=figure["hue"],
            panel=figure["panel"],
            title=analysis["name"],  # the book's caption describes it
            source=f"data: {curves} (rule analysis_figure)",
        )
        save(drawn, out)
    write_provenance(
        provenance_file, producer="rnnbench.plots.figures.decay_curves_figure", inputs=[curves, record], **provenance
    )


def book_figure(
    name: str, table: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """A figure the book shows beside a worked table (``name`` is a plots.BOOK_FIGURES key)."""
    from rnnbench.plots.figures import BOOK_FIGURES, save

    frame = pd.read_csv(table)
    for out in outs:
        save(BOOK_FIGURES[name](frame, source=f"data: {table} (rule book_figure)"), out)
    write_provenance(
        provenance_file, producer=f"rnnbench.plots.figures.BOOK_FIGURES[{name!r}]", inputs=[table], **provenance
    )


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
    write_provenance(
        provenance_file,
        producer="rnnbench.results.summary.benchmark_table",
        inputs=[*benchmark_files, *metric_files],
        **provenance,
    )


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
    write_provenance(
        provenance_file, producer="rnnbench.results.summary.corpus_table", inputs=list(stats_files), **provenance
    )


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
    for name, frame in compute(loaded, order).items():
        write_csv(outs[name], frame)
        write_provenance(
            provenance_files[name],
            producer="rnnbench.baselines.tables.baseline_tables",
            inputs=list(stats_files),
            **provenance,
        )


def findings_table(
    results: str,
    roles: Mapping[str, Any],
    out: str,
    *,
    provenance_file: str,
    provenance: Mapping[str, Any],
) -> None:
    """Each claim of the seeds judged on the results folder ``results`` (rnnbench.findings); ``roles`` is
    rnnbench.findings.evidence.Roles.record() of the config: which studies and analyses carry each role. The
    provenance record names every file a claim read."""
    from rnnbench.findings import findings_table as judge
    from rnnbench.findings.evidence import Roles

    table, read = judge(results, Roles.from_record(roles))
    write_csv(out, table)
    for row in table.itertuples(index=False):
        log.info("%s: %s%s", row.id, row.verdict, f" ({row.reason})" if row.reason else "")
    write_provenance(provenance_file, producer="rnnbench.findings.findings_table", inputs=read, **provenance)


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
    scale: str,
    crossover_corpus: str | None,
    provenance_files: Mapping[str, str],
    provenance: Mapping[str, Any],
    reference_dir: str | None = None,
    repository: str = ".",
) -> None:
    """Our runs beside the published rows (rnnbench.results.comparison), the tables of paths.COMPARISON_TABLES in
    ``outs``: the comparison, perplexity against parameters on ``crossover_corpus``, the RNN against each
    feed-forward run at matched parameter count and at matched training time, and every run's learning curve.

    ``runs``: run id -> the studies it serves (each run once, however many studies share it), its folder
    under ``results``; ``benchmark_files``: each run's training-job record, in the same order. The published
    numbers are the package's table (rnnbench.published); ours are read from the run folders, and the
    reference runs (rnnbench.results.reference) from ``reference_dir``, each checked against the config files of
    ``repository`` it names (a stale one is marked, never compared). Nothing is typed here.
    """
    from rnnbench import paths
    from rnnbench.published import load_published, published_path
    from rnnbench.results import comparison as cmp
    from rnnbench.results.dynamic_record import dynamic_metrics
    from rnnbench.results.reference import read_reference, reference_files, stale_runs
    from rnnbench.results.summary import benchmark_table

    # A run's source is named inside the results folder, so the tables of two folders built from one config
    # (a local and a cluster build) are equal.
    records = [
        {
            **cmp.read_run(paths.run_dir(results, run_id), scale),
            "studies": list(studies),
            "source": os.path.relpath(paths.run_dir(results, run_id), results),
            "dynamic": dynamic_metrics(results, run_id),
        }
        for run_id, studies in runs.items()
    ]
    reference = read_reference(reference_dir) if reference_dir else []
    stale = stale_runs(reference, repository)
    records += [
        {
            "config": run.config,
            "metrics": run.metrics,
            "scale": "reference",
            "studies": [run.study],
            "source": os.path.relpath(run.folder, repository),
            "stale": stale.get(run.run_id, ""),
            "commit": run.provenance.get("commit", ""),
            "cpu_seconds": run.provenance.get("cpu_seconds"),
            "corpus_stats": run.provenance.get("corpus"),
            "dynamic": run.dynamic,
        }
        for run in reference
    ]
    epochs = {run_id: pd.read_csv(paths.run_epochs(results, run_id)) for run_id in runs}
    epochs |= {run.run_id: run.epochs for run in reference}
    run_metrics = [paths.run_metrics(results, run_id) for run_id in runs]
    ours = cmp.with_job_times(cmp.our_runs(records), benchmark_table(list(runs), benchmark_files, run_metrics))
    crossover = cmp.crossover_table(ours, crossover_corpus) if crossover_corpus else cmp.crossover_table(ours.iloc[0:0])
    tables = {
        "comparison": (
            cmp.comparison_table(load_published(), ours, cmp.read_corpus_stats(corpus_stats_files)),
            "rnnbench.results.comparison.comparison_table",
        ),
        "crossover": (crossover, "rnnbench.results.comparison.crossover_table"),
        "matched_parameters": (cmp.matched_cost(crossover, "parameters"), "rnnbench.results.comparison.matched_cost"),
        "matched_time": (cmp.matched_cost(crossover, "train_seconds"), "rnnbench.results.comparison.matched_cost"),
        "learning_curves": (cmp.learning_curves(ours, epochs), "rnnbench.results.comparison.learning_curves"),
    }
    tables["ranking_by_epoch"] = (
        cmp.ranking_by_epoch(tables["learning_curves"][0], crossover),
        "rnnbench.results.comparison.ranking_by_epoch",
    )
    run_files = [f(results, run_id) for run_id in runs for f in (paths.run_config, paths.run_metrics)]
    reference_inputs = reference_files(reference_dir) if reference_dir else []
    inputs = {
        "comparison": [str(published_path()), *run_files, *corpus_stats_files, *benchmark_files, *reference_inputs],
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
    """Test perplexity against parameter count, both families (rnnbench.plots.figures.crossover_figure)."""
    from rnnbench.plots.figures import crossover_figure, save

    # Counts stay integers where the Elman rows leave them blank (an n-1 of 4, not 4.0, beside each point).
    table = pd.read_csv(
        crossover, dtype={c: "Int64" for c in ("context", "crossover_context", "rnn_equivalent_parameters")}
    )
    for out in outs:
        save(crossover_figure(table, title=title, source=f"data: {crossover} (rule crossover_figure)"), out)
    write_provenance(
        provenance_file, producer="rnnbench.plots.figures.crossover_figure", inputs=[crossover], **provenance
    )


def learning_curves_figure(
    curves: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """Validation perplexity against training tokens, every run of the comparison (rnnbench.plots.figures)."""
    from rnnbench.plots.figures import learning_curves_figure as draw
    from rnnbench.plots.figures import save

    table = pd.read_csv(curves, dtype={"tokens_seen": "Int64"})
    for out in outs:
        save(draw(table, source=f"data: {curves} (rule learning_curves_figure)"), out)
    write_provenance(
        provenance_file, producer="rnnbench.plots.figures.learning_curves_figure", inputs=[curves], **provenance
    )


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
    """A study's table beyond its summary (rnnbench.results.ablations, rnnbench.results.cut_accuracy): ``kind`` "distance" reads each
    run's agreement.csv, "trace" each traced run's steps.csv, "learning" each run's epochs.csv, "speed" each run's
    steps.csv, "cuts" and "units" each run's model.pt (its probes scored again, or its units counted, on the corpus
    read from ``data_dir`` and ``cache_dir``); ``run_files`` maps
    run id -> that file (rnnbench.paths.EXTRA_TABLES). Each run's outcome is the one its ``summary`` (summary.csv)
    holds, so every table marks the same failed runs."""
    from rnnbench.results import ablations, cut_accuracy, silent_units

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
    elif kind == "cuts":
        table = cut_accuracy.cut_table(
            runs, _cut_accuracies(runs, run_files, data_dir=data_dir, cache_dir=cache_dir), vary
        )
        inputs, producer = (
            [run_files[r] for r in runs.loc[~runs["diverged"], "run_id"]],
            "rnnbench.results.cut_accuracy.cut_table",
        )
    elif kind == "speed":
        inputs = [run_files[r] for r in runs["run_id"]]
        table = ablations.speed_table(runs, {r: pd.read_csv(run_files[r]) for r in runs["run_id"]}, vary)
    elif kind == "units":
        table = silent_units.unit_table(
            runs, _silent_units(runs, run_files, data_dir=data_dir, cache_dir=cache_dir), vary
        )
        inputs, producer = (
            [run_files[r] for r in runs.loc[~runs["diverged"], "run_id"]],
            "rnnbench.results.silent_units.unit_table",
        )
    else:
        raise ValueError(f"no extra study table {kind!r}; known: {', '.join(paths.EXTRA_TABLES)}")
    write_csv(out, table)
    write_provenance(provenance_file, producer=producer, inputs=[summary, *inputs], **provenance)


def _cut_accuracies(
    runs: pd.DataFrame, model_files: Mapping[str, str], *, data_dir: str | None, cache_dir: str | None
) -> dict[str, pd.DataFrame]:
    """run_id -> rnnbench.results.cut_accuracy.cut_accuracy under each cut length its probes are split by (rnnbench.results.cut_accuracy.partitions),
    for every run of ``runs`` that did not diverge: its test probes scored by its model.pt (the best epoch's
    weights, which its agreement.csv scored), in batches of its eval_batch_size, as training scored them."""
    import torch

    from rnnbench.baselines.tables import AGREEMENT_SPLIT
    from rnnbench.data.corpora import load_corpus
    from rnnbench.decay.analysis import load_trained
    from rnnbench.results import cut_accuracy
    from rnnbench.training.evaluate import sentence_margins

    torch.set_num_threads(1)  # a table job: small models, one core, as the rule declares
    configs = {}
    for run_id in runs["run_id"]:
        saved = torch.load(model_files[run_id], map_location="cpu", weights_only=True)["config"]
        configs[run_id] = RunConfig.from_settings(saved, where=model_files[run_id])
    study_cuts = {cfg.bptt for cfg in configs.values() if cfg.segments == "sentence" and cfg.bptt > 0}
    corpora, tables = {}, {}
    for run_id in runs.loc[~runs["diverged"], "run_id"]:
        cfg = configs[run_id]
        every = cut_accuracy.partitions(cfg.bptt, cfg.segments, study_cuts)
        if not every:
            continue
        if cfg.corpus_key not in corpora:
            corpus = load_corpus(cfg.corpus, data_dir=data_dir, cache_dir=cache_dir, **cfg.corpus_options)
            corpora[cfg.corpus_key] = corpus
        corpus = corpora[cfg.corpus_key]
        model = load_trained(model_files[run_id])
        margins = sentence_margins(model, corpus, AGREEMENT_SPLIT, batch_size=cfg.eval_batch_size)
        probes = cut_accuracy.probe_steps(margins, corpus.sentence_starts[AGREEMENT_SPLIT])
        tables[run_id] = pd.concat([cut_accuracy.cut_accuracy(probes, k) for k in every], ignore_index=True)
        log.info("%s: %d probes split by cuts every %s steps", run_id, len(probes), every)
    return tables


def _silent_units(
    runs: pd.DataFrame, model_files: Mapping[str, str], *, data_dir: str | None, cache_dir: str | None
) -> dict[str, tuple[Any, int]]:
    """run_id -> rnnbench.results.silent_units.silent_units of its model.pt (the best epoch's weights) over its corpus's validation
    split, read as its evaluation reads it (rnnbench.training.reading), for every run of ``runs`` that did not diverge."""
    import torch

    from rnnbench.data.corpora import load_corpus
    from rnnbench.decay.analysis import load_run
    from rnnbench.results import silent_units
    from rnnbench.training.reading import reading_for

    torch.set_num_threads(1)  # a table job: one core, as the rule declares
    corpora, found = {}, {}
    for run_id in runs.loc[~runs["diverged"], "run_id"]:
        cfg, model = load_run(model_files[run_id])
        if cfg.corpus_key not in corpora:
            corpora[cfg.corpus_key] = load_corpus(
                cfg.corpus, data_dir=data_dir, cache_dir=cache_dir, **cfg.corpus_options
            )
        reading = reading_for(cfg, corpora[cfg.corpus_key])
        found[run_id] = silent_units.silent_units(
            model, reading.eval_batches("valid"), carry_state=reading.carries_state
        )
        log.info("%s: %d of %d units silent", run_id, int(found[run_id][0].sum()), found[run_id][0].size)
    return found


def study_extra_figure(
    name: str, table: str, record: str, outs: Sequence[str], *, provenance_file: str, provenance: Mapping[str, Any]
) -> None:
    """A figure of a study's extra table (``name`` is a rnnbench.paths.EXTRA_FIGURES key)."""
    from rnnbench.plots import ablation_figures
    from rnnbench.plots.figures import save

    frame = pd.read_csv(table)
    study = json.loads(Path(record).read_text(encoding="utf-8"))
    draw = getattr(ablation_figures, paths.EXTRA_FIGURES[name][1])
    for out in outs:
        save(draw(frame, study, source=f"data: {table} (rule study_extra_figure)"), out)
    write_provenance(
        provenance_file,
        producer=f"rnnbench.plots.ablation_figures.{paths.EXTRA_FIGURES[name][1]}",
        inputs=[table, record],
        **provenance,
    )
