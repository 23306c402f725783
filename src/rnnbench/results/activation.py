"""The activation studies side by side: one row per run of every study that trains the recurrence with each
activation (role activation_training), with what answers "which activation": how many optimiser steps it took to
the study's common training loss, the metric it ended at, the share of its hidden units that pass no gradient, its
outcome, and how often the recipe's clipping threshold acted on it (a threshold that acts on every step of one
activation's runs and on half of another's makes their comparison one of clipping too).

    speed_metric          what a study's speed is read on: validation perplexity for a language model
    activation_table      the table, from each study's summary (summary.csv), record, speed.csv and units.csv
    read_activation_table the same, from their files

Pure pandas, no torch: the workflow's job and the book both import this.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from rnnbench.metrics import PERPLEXITY_METRICS
from rnnbench.results.ablations import per_run

DEFAULT_START = "default"  # recurrent_init: the default draw of U, beside the identity start Le et al. (2015) use
ACTIVATIONS = ("tanh", "sigmoid", "relu")  # the order every table and figure lists them in: the chapter's
# What each study gives for each run, in this order (a study without one of them reads NaN there).
COLUMNS = (
    "study",
    "corpus",
    "run_id",
    "activation",
    "start",
    "seed",
    "outcome",
    "metric",
    "value",
    "target_ppl",
    "steps_to_target",
    "silent_fraction",
    "units",
    "clipped_fraction",
    "clip_threshold",
    "diverged_step",
)
# The files of one study the table reads (rule activation_figure's inputs, by name).
STUDY_FILES = ("summary", "record", "speed", "units")


def speed_metric(metric: str) -> str:
    """What an activation study's training speed is read on: validation perplexity for a language model (its test
    perplexity is the study's metric, and no finding chooses on test), else the study's metric."""
    return "valid_ppl" if metric in PERPLEXITY_METRICS else metric


def activation_table(
    studies: Mapping[str, tuple[pd.DataFrame, Mapping, pd.DataFrame, pd.DataFrame]],
) -> pd.DataFrame:
    """One row per run of each study (name -> its summary, record, speed table and units table), in COLUMNS.

    ``value`` is the run's speed_metric (``metric`` names it), NaN where the run diverged; ``start`` its
    recurrent_init (DEFAULT_START where the study does not vary it); ``steps_to_target`` and ``silent_fraction``
    are the study's speed and units tables' (NaN where the run did not learn, or diverged); ``clipped_fraction``
    the share of the steps it took that the threshold rescaled, whatever its outcome."""
    frames = []
    for name, (summary, record, speed, units) in studies.items():
        metric = speed_metric(str(record["metric"]))
        keys = ["seed", "activation", "outcome", *(["recurrent_init"] if "recurrent_init" in summary else [])]
        wide = per_run(summary, keys)
        for column in (metric, "clipped_fraction", "clip_threshold", "diverged_step"):
            if column not in wide:
                wide[column] = math.nan
        start = wide["recurrent_init"].fillna(DEFAULT_START) if "recurrent_init" in wide else DEFAULT_START
        frame = wide.assign(study=name, corpus=record["corpus"], start=start, metric=metric)
        frame["value"] = frame[metric].where(frame["outcome"] != "diverged")
        frame = frame.merge(speed[["run_id", "target_ppl", "steps_to_target"]], on="run_id", how="left")
        frame = frame.merge(units[["run_id", "silent_fraction", "units"]], on="run_id", how="left")
        # the chapter's order: its activations first (another after them), the default start before the others
        rank = frame["activation"].map({a: i for i, a in enumerate(ACTIVATIONS)}).fillna(len(ACTIVATIONS))
        frame = frame.assign(_rank=rank, _other=frame["start"] != DEFAULT_START)
        frame = frame.sort_values(["_rank", "activation", "_other", "start", "seed"], kind="stable")
        frames.append(frame[list(COLUMNS)])
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    return pd.concat(frames, ignore_index=True)


def read_activation_table(studies: Mapping[str, Mapping[str, str | Path]]) -> pd.DataFrame:
    """activation_table from files: ``studies`` maps each study to its files by STUDY_FILES name."""
    return activation_table(
        {
            name: (
                pd.read_csv(files["summary"]),
                json.loads(Path(files["record"]).read_text(encoding="utf-8")),
                pd.read_csv(files["speed"]),
                pd.read_csv(files["units"]),
            )
            for name, files in studies.items()
        }
    )
