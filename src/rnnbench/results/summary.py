"""Tidy tables gathered from finished runs: one row per (run, metric), keys first, then the value.

    study, run_id, family, corpus, seed, <the study's varied settings...>, outcome, metric, value

Reading the table needs no knowledge of the run directories, and a figure or a report section can
select any metric of any study with one filter. Beside each study's table, its record (study.json)
says what the study is, so that its figure and the book need not read the config.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from rnnbench.config.runs import RunConfig
from rnnbench.config.schema import json_settings
from rnnbench.config.settings import Config
from rnnbench.metrics import RUN_METRICS, TOKENS_PER_CPU_SECOND, read_metrics, tokens_per_cpu_second
from rnnbench.results.outcome import BLEW_UP

# Snakemake's benchmark is trusted for a job's wall time only. Its CPU time and memory are those of the job's
# processes sampled every 30 s after the first 15 s, the last sample's: a 31-second job can show half its CPU
# time. The run counts both itself (metrics.json), and the table takes them from there.
BENCHMARK_WALL = {"s": "wall_seconds"}
RUN_COST = {"cpu_seconds": "cpu_seconds", "peak_rss_mb": "max_rss_mb"}


def study_record(config: Config, name: str) -> dict[str, object]:
    """What study ``name`` is, as its study.json holds it:

    name, description, family, corpus, metric,
    vary      the varied settings in config order (the first is the figure's x axis, the second its hue)
    fixed     each setting the study fixes or run_overrides sets, with the value its runs use
              (settings its model family does not read are left out)
    seeds, run_ids   the run ids in the summary's order (varied values, then seed)
    roles     what the study is evidence for (rnnbench.findings), by which the book's sections find it
    """
    study = config.studies[name]
    runs = [cfg for _, cfg in config.study_runs(name)]
    # The settings its model reads, as the study writes them: a run id keeps only the epochs and step cap a run
    # takes (rnnbench.config.updates.budget), which differ between the lengths of one study.
    used = {**runs[0].settings(), **{k: getattr(runs[0], k) for k in ("max_epochs", "max_steps")}}
    named = dict.fromkeys([*study.fixed, *config.run_overrides])
    return {
        "name": name,
        "description": study.description,
        "family": study.family,
        "corpus": study.corpus,
        "metric": study.metric,
        "vary": list(study.vary),
        "fixed": json_settings({key: used[key] for key in named if key in used and key not in study.vary}),
        "seeds": list(study.seeds),
        "run_ids": [cfg.run_id for cfg in runs],
        "roles": list(study.roles),
    }


def summarize_study(
    study: str,
    points: Sequence[Mapping[str, object]],
    configs: Sequence[RunConfig],
    metric_files: Sequence[str | Path],
    unigram_ppl: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Long table of one study; ``points`` are the varied values (and seed) of each run, in the same order.

    Each row carries its run's ``outcome`` (rnnbench.results.outcome: learned, did not learn, diverged), judged against
    ``unigram_ppl`` (corpus key -> the unigram model's test perplexity) for language models, against chance for
    agreement runs; "unknown" where the baseline is missing (a run cannot be called learned without one). Beside the
    run's metrics, a row BLEW_UP: 1 where its training blew up (rnnbench.results.outcome.blew_up), NaN unjudged;
    and its speed in tokens per CPU second (rnnbench.metrics.tokens_per_cpu_second)."""
    from rnnbench.results.outcome import UNKNOWN, blew_up, outcome

    rows = []
    for point, cfg, path in zip(points, configs, metric_files, strict=True):
        metrics = read_metrics(path, cfg.run_id)
        baseline = (unigram_ppl or {}).get(cfg.corpus_key)
        try:
            state = outcome(metrics, unigram_ppl=baseline, agreement_probes=metrics.get("agreement_probes"))
            blown = float(blew_up(metrics, unigram_ppl=baseline))
        except ValueError:
            state, blown = UNKNOWN, float("nan")
        keys = {
            "study": study,
            "run_id": cfg.run_id,
            "family": cfg.family,
            "corpus": cfg.corpus,
            "seed": cfg.seed,
            **point,
            "outcome": state,
        }
        for metric in RUN_METRICS:
            value = metrics.get(metric)
            rows.append({**keys, "metric": metric, "value": float(value) if value is not None else float("nan")})
        rows.append({**keys, "metric": BLEW_UP, "value": blown})
        rows.append({**keys, "metric": TOKENS_PER_CPU_SECOND, "value": tokens_per_cpu_second(metrics)})
    return pd.DataFrame(rows)


def unigram_perplexities(baselines: pd.DataFrame) -> dict[str, float]:
    """corpus key -> the unigram model's test perplexity, from tables/baselines.csv (rule baseline_tables)."""
    rows = baselines[(baselines["model"] == "unigram") & (baselines["split"] == "test")]
    return {str(k): float(v) for k, v in zip(rows["corpus_key"], rows["perplexity"], strict=True)}


def benchmark_table(
    run_ids: Sequence[str], benchmark_files: Sequence[str | Path], metric_files: Sequence[str | Path]
) -> pd.DataFrame:
    """Per training job: its wall seconds (Snakemake's benchmark record, one row per repeat) and the run's own
    CPU seconds and peak memory in MB (its metrics.json, on the last repeat's row: the metrics are that repeat's;
    NaN for a run trained before runs counted them)."""
    frames = []
    for run_id, bench_path, metrics_path in zip(run_ids, benchmark_files, metric_files, strict=True):
        record = pd.read_csv(bench_path, sep="\t")
        kept = record[[c for c in BENCHMARK_WALL if c in record.columns]].rename(columns=BENCHMARK_WALL)
        metrics = read_metrics(metrics_path, run_id)
        for key, column in RUN_COST.items():
            value = metrics.get(key)
            kept[column] = float("nan")
            if len(kept) and value is not None:
                kept.loc[kept.index[-1], column] = float(value)
        frames.append(kept.assign(rule="train", run_id=run_id, repeat=range(len(kept))))
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["rule", "run_id", "repeat"])
    return table[["rule", "run_id", "repeat", *[c for c in table.columns if c not in ("rule", "run_id", "repeat")]]]


def corpus_table(corpus_keys: Sequence[str], stats_files: Sequence[str | Path]) -> pd.DataFrame:
    """One row per prepared corpus and statistic."""
    rows = []
    for key, path in zip(corpus_keys, stats_files, strict=True):
        stats = json.loads(Path(path).read_text(encoding="utf-8"))
        rows += [{"corpus_key": key, "statistic": name, "value": value} for name, value in stats.items()]
    return pd.DataFrame(rows, columns=["corpus_key", "statistic", "value"])
