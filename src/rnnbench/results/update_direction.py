"""How far clipping turned the optimiser's update, step by step: a clipping study's steps whose update was measured
(rnnbench.training.clipping), gathered from its runs' steps.csv.

    update_table      every run's clipped steps with a measured update cosine, long, each with its run's outcome

A run measures the update only where clipping can turn it beyond what it does to the gradient (Adam; SGD with
weight decay: rnnbench.config.runs.RunConfig.measures_update_cosine), and only every UPDATE_COSINE_EVERY-th step
(rnnbench.metrics); steps.csv keeps its steps evenly thinned past steps_max_rows, so the table holds a sample of the
measured steps, while each run's metrics.json (update_cosine_mean, _min, _steps) holds their statistics over all of
them. Pure pandas, no torch: the table job and the book both import this.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

# What each row carries of its step (steps.csv's columns).
STEP_COLUMNS = ("step", "epoch", "grad_norm", "clip_cosine", "update_cosine")
# The run's clipping, varied or fixed by the study: what the step's norm is set against.
CLIP_SETTINGS = ("clip_mode", "clip")


def update_table(
    runs: pd.DataFrame,
    steps: Mapping[str, pd.DataFrame],
    vary: Sequence[str],
    fixed: Mapping[str, object],
    step_files: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Every clipped step whose update was measured, of every run of the study, long:

        run_id, <vary...>, seed, clip_mode, clip, step, epoch, grad_norm, clip_cosine, update_cosine,
        outcome, diverged

    ``runs``: rnnbench.results.ablations.runs_frame; ``steps``: run_id -> its steps.csv; ``fixed``: the study's
    fixed settings (study.json), where clip_mode and clip come from when the study does not vary them (NaN where
    neither says); ``step_files``: run_id -> the path of its steps.csv, beside which its config.json holds the
    threshold a multiple of the median norm resolved to (clip_times_median: no study varies or fixes that number). The step at which a diverged run stopped is left out, as its statistics leave it out: its update
    was never counted. A run that did not learn or diverged keeps its rows, marked by outcome and diverged.
    """
    vary = list(vary)
    keys = list(dict.fromkeys([*vary, "seed", *CLIP_SETTINGS]))
    columns = ["run_id", *keys, *STEP_COLUMNS, "outcome", "diverged"]
    frames = []
    for run in runs.itertuples(index=False):
        records = steps[run.run_id]
        if "update_cosine" not in records:  # a run trained before the update was measured
            continue
        if run.diverged and len(records):
            records = records[records["step"] != records["step"].max()]
        measured = records[_flag(records["clipped"]) & records["update_cosine"].notna()]
        if measured.empty:
            continue
        settings = {k: getattr(run, k) if k in vary or k == "seed" else fixed.get(k, math.nan) for k in keys}
        if "clip" not in vary and "clip" not in fixed and step_files is not None:
            settings["clip"] = _resolved_clip(step_files[run.run_id])
        frames.append(
            measured[list(STEP_COLUMNS)].assign(
                run_id=run.run_id, **settings, outcome=run.outcome, diverged=run.diverged
            )
        )
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def _resolved_clip(steps_file: str) -> float:
    """The threshold a run clipped at, from the config.json beside its steps.csv (NaN where there is none)."""
    path = Path(steps_file).parent / "config.json"
    if not path.is_file():
        return math.nan
    clip = json.loads(path.read_text(encoding="utf-8")).get("clip")
    return float(clip) if clip is not None else math.nan  # float("inf") reads JSON's "inf"


def _flag(column: pd.Series) -> pd.Series:
    """steps.csv's clipped column as booleans, whether pandas read it as bool, number or text."""
    return column.astype(str).str.lower().isin(["true", "1", "1.0"])
