"""One analysis of the config's `analyses:` measured (rule decay_analysis): every point in turn, its network and
corpus read from their files, its tables gathered.

    analysis_tables   table name -> table, one per name of rnnbench.paths.ANALYSIS_TABLES for the analysis's kind

gradient_decay: curves and rates (rnnbench.decay.decay_point on N windows of the split); passage: passage
(rnnbench.decay.passage_decay); probe: probe (rnnbench.decay.probe.probe_point on the held-out sentences of the
run's agreement corpus). PRODUCERS names the function behind each table. Each point is {"keys", "untrained" (settings or None), "model" (a model file or
None), "corpus", "corpus_options"} (rnnbench.config.analyses).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench.config.analyses import check_window
from rnnbench.data.corpora import load_corpus
from rnnbench.decay import decay_point, network, passage_decay
from rnnbench.decay.analysis import DTYPES
from rnnbench.decay.probe import probe_point
from rnnbench.paths import ANALYSIS_TABLES

log = logging.getLogger(__name__)
PRODUCERS = {
    "curves": "rnnbench.decay.decay_point",
    "rates": "rnnbench.decay.decay_point",
    "passage": "rnnbench.decay.passage_decay",
    "probe": "rnnbench.decay.probe.probe_point",
}


def analysis_tables(
    record: Mapping[str, Any], points: Sequence[Mapping[str, Any]], *, data_dir: str | None, cache_dir: str
) -> dict[str, pd.DataFrame]:
    """The tables of the analysis ``record`` (analysis.json), its ``points`` measured in turn, each corpus read once."""
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
        elif record["kind"] == "probe":
            model = network(source, len(corpus.vocab), DTYPES[measure["dtype"]])
            settings = {key: measure[key] for key in ("folds", "l2", "permutations", "seed")}
            tables["probe"].append(probe_point(model, corpus, **settings, keys=point["keys"]))
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
    return {name: pd.concat(parts, ignore_index=True) for name, parts in tables.items()}


def _decay_inputs(point: Mapping[str, Any], measure: Mapping[str, Any], corpora: dict, *, data_dir, cache_dir):
    """(network source, corpus) of one analysis point: an untrained spec or a model file, and the corpus it
    reads (a study's run: its own corpus and options; an untrained network: the analysis's corpus)."""
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
