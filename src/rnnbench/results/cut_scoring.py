"""A study's agreement probes scored again by each run's trained weights and split by the truncation lengths of the
study: the per-run tables that rnnbench.results.cut_accuracy.cut_table and rnnbench.results.reach.reach_table
gather (rule study_extra_table, kinds "cuts" and "reach").

    cut_accuracies_by_run   run_id -> its probes' accuracy per (cut_every, distance, crosses_cut), at the cuts
                            within sentences of the study
    reach_by_run            run_id -> its accuracy within reach of each k and beyond it (rnnbench.results.reach)
    scored_table            the study's table of either, as rule study_extra_table writes it

each for every run that did not diverge, its model.pt and its corpus read from their files. The tables themselves are
pure numpy and pandas (rnnbench.results.cut_accuracy, rnnbench.results.reach); this reads the models and corpora.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence

import pandas as pd
import torch

from rnnbench.baselines.tables import AGREEMENT_SPLIT
from rnnbench.config.runs import RunConfig
from rnnbench.data.corpora import load_corpus
from rnnbench.decay.analysis import load_trained
from rnnbench.results import cut_accuracy, reach
from rnnbench.training.evaluate import sentence_margins

log = logging.getLogger(__name__)


def cut_accuracies_by_run(
    runs: pd.DataFrame, model_files: Mapping[str, str], *, data_dir: str | None, cache_dir: str | None
) -> dict[str, pd.DataFrame]:
    """run_id -> rnnbench.results.cut_accuracy.cut_accuracy under each cut length its probes are split by
    (rnnbench.results.cut_accuracy.partitions), for every run of ``runs`` that did not diverge: its test probes
    scored by its model.pt (the best epoch's weights, which its agreement.csv scored), in batches of its
    eval_batch_size, as training scored them."""
    configs = _configs(runs, model_files)
    study_cuts = {cfg.bptt for cfg in configs.values() if cfg.segments == "sentence" and cfg.bptt > 0}

    def lengths(cfg: RunConfig) -> list[int]:
        return cut_accuracy.partitions(cfg.bptt, cfg.segments, study_cuts)

    tables = {}
    for run_id, probes, every in _scored(runs, model_files, configs, lengths, data_dir=data_dir, cache_dir=cache_dir):
        tables[run_id] = pd.concat([cut_accuracy.cut_accuracy(probes, k) for k in every], ignore_index=True)
        log.info("%s: %d probes split by cuts every %s steps", run_id, len(probes), every)
    return tables


def reach_by_run(
    runs: pd.DataFrame, model_files: Mapping[str, str], *, data_dir: str | None, cache_dir: str | None
) -> dict[str, pd.DataFrame]:
    """run_id -> rnnbench.results.reach.reach_rows at each k its probes are split at
    (rnnbench.results.reach.reach_lengths), for every run of ``runs`` that did not diverge, scored as
    `cut_accuracies_by_run` scores them."""
    configs = _configs(runs, model_files)
    lengths = {cfg.bptt for cfg in configs.values() if cfg.bptt > 0}
    sentence = {cfg.bptt for cfg in configs.values() if cfg.bptt > 0 and cfg.segments == "sentence"}

    def split_at(cfg: RunConfig) -> list[tuple[int, bool]]:
        return reach.reach_lengths(cfg.bptt, cfg.segments, lengths, sentence)

    def ks(cfg: RunConfig) -> list[int]:
        return [k for k, _ in split_at(cfg)]

    tables = {}
    for run_id, probes, every in _scored(runs, model_files, configs, ks, data_dir=data_dir, cache_dir=cache_dir):
        rows = [
            reach.reach_rows(cut_accuracy.cut_accuracy(probes, k), k, block) for k, block in split_at(configs[run_id])
        ]
        tables[run_id] = pd.concat(rows, ignore_index=True)
        log.info("%s: %d probes split within and beyond k = %s", run_id, len(probes), every)
    return tables


def scored_table(
    kind: str,
    runs: pd.DataFrame,
    model_files: Mapping[str, str],
    vary: Sequence[str],
    *,
    data_dir: str | None,
    cache_dir: str | None,
) -> tuple[pd.DataFrame, str]:
    """A study's table of ``kind`` "cuts" (cut_accuracy.cut_table) or "reach" (reach.reach_table) from its runs'
    weights, and the name of the function that made it (the provenance record's producer)."""
    if kind == "cuts":
        per_run = cut_accuracies_by_run(runs, model_files, data_dir=data_dir, cache_dir=cache_dir)
        return cut_accuracy.cut_table(runs, per_run, vary), "rnnbench.results.cut_accuracy.cut_table"
    if kind == "reach":
        per_run = reach_by_run(runs, model_files, data_dir=data_dir, cache_dir=cache_dir)
        return reach.reach_table(runs, per_run, vary), "rnnbench.results.reach.reach_table"
    raise ValueError(f"no table of the probes scored again of kind {kind!r}; known: cuts, reach")


def _configs(runs: pd.DataFrame, model_files: Mapping[str, str]) -> dict[str, RunConfig]:
    """run_id -> the settings its model.pt was trained with."""
    configs = {}
    for run_id in runs["run_id"]:
        saved = torch.load(model_files[run_id], map_location="cpu", weights_only=True)["config"]
        configs[run_id] = RunConfig.from_settings(saved, where=model_files[run_id])
    return configs


def _scored(
    runs: pd.DataFrame,
    model_files: Mapping[str, str],
    configs: Mapping[str, RunConfig],
    lengths: Callable[[RunConfig], list[int]],
    *,
    data_dir: str | None,
    cache_dir: str | None,
) -> Iterator[tuple[str, pd.DataFrame, list[int]]]:
    """(run_id, its test probes with their margins and steps (cut_accuracy.probe_steps), the lengths it is split at)
    for every run that did not diverge and has a length to be split at; each corpus read once."""
    torch.set_num_threads(1)  # a table job: small models, one core, as the rule declares
    corpora = {}
    for run_id in runs.loc[~runs["diverged"], "run_id"]:
        cfg = configs[run_id]
        every = lengths(cfg)
        if not every:
            continue
        if cfg.corpus_key not in corpora:
            corpora[cfg.corpus_key] = load_corpus(
                cfg.corpus, data_dir=data_dir, cache_dir=cache_dir, **cfg.corpus_options
            )
        corpus = corpora[cfg.corpus_key]
        margins = sentence_margins(
            load_trained(model_files[run_id]), corpus, AGREEMENT_SPLIT, batch_size=cfg.eval_batch_size
        )
        yield run_id, cut_accuracy.probe_steps(margins, corpus.sentence_starts[AGREEMENT_SPLIT]), every
