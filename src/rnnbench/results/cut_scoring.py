"""A study's agreement probes scored again by each run's trained weights and split by the cuts of the study: the
per-run tables rnnbench.results.cut_accuracy.cut_table gathers (rule study_extra_table, kind "cuts").

    cut_accuracies_by_run   run_id -> its probes' accuracy per (cut_every, distance, crosses_cut), for every run
                            that did not diverge, its model.pt and its corpus read from their files

The tables themselves are pure numpy and pandas (rnnbench.results.cut_accuracy); this reads the models and corpora.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pandas as pd
import torch

from rnnbench.baselines.tables import AGREEMENT_SPLIT
from rnnbench.config.runs import RunConfig
from rnnbench.data.corpora import load_corpus
from rnnbench.decay.analysis import load_trained
from rnnbench.results import cut_accuracy
from rnnbench.training.evaluate import sentence_margins

log = logging.getLogger(__name__)


def cut_accuracies_by_run(
    runs: pd.DataFrame, model_files: Mapping[str, str], *, data_dir: str | None, cache_dir: str | None
) -> dict[str, pd.DataFrame]:
    """run_id -> rnnbench.results.cut_accuracy.cut_accuracy under each cut length its probes are split by
    (rnnbench.results.cut_accuracy.partitions), for every run of ``runs`` that did not diverge: its test probes
    scored by its model.pt (the best epoch's weights, which its agreement.csv scored), in batches of its
    eval_batch_size, as training scored them."""
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
