"""Tables of the ablations, beside each study's summary: what a study's runs did per head-verb distance,
how their gradient norms moved step by step, and their measurements aggregated over seeds.

    distance_table    agreement studies: accuracy per (varied settings, head-verb distance), mean and
                      range over seeds, from each run's agreement.csv
    trace_table       clipping studies: the pre-clip gradient norm step by step (steps.csv) of the first
                      seed's runs, one per combination of varied settings
    setting_table     any study: each measurement's mean, min and max over seeds, per varied setting
    reach_table       accuracy on the dependencies a setting can span (distance <= width) and beyond
    matched_pairs     each feed-forward window paired with the Elman RNN of the nearest parameter count
    clipping_from_steps   share of steps clipped and the clipped updates' cosine, from step records

Pure pandas, no torch: the workflow's table jobs and the book both import this.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

# Which extra tables (and figures) a study gets, from what it is: per-distance accuracy where the corpus
# records every probe's distance and the study measures agreement, a norm trace where it varies clipping.
DISTANCE_CORPORA = frozenset({"agreement"})
TRACE_SETTINGS = frozenset({"clip", "clip_mode"})


def study_extras(corpus: str, vary: Sequence[str], metric: str) -> list[str]:
    """The extra tables of a study: "distance" (agreement accuracy on the agreement corpus), "trace" (a study
    that varies clipping)."""
    extras = []
    if corpus in DISTANCE_CORPORA and metric == "agreement_accuracy":
        extras.append("distance")
    if TRACE_SETTINGS & set(vary):
        extras.append("trace")
    return extras


def runs_frame(record: Mapping, points: Sequence[Mapping], metrics: Sequence[Mapping]) -> pd.DataFrame:
    """One row per run of a study: run_id, its varied settings and seed, and whether it diverged."""
    rows = []
    for run_id, point, m in zip(record["run_ids"], points, metrics, strict=True):
        rows.append({"run_id": run_id, **point, "diverged": bool(m.get("diverged"))})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------
# Accuracy per head-verb distance


def distance_table(runs: pd.DataFrame, agreement: Mapping[str, pd.DataFrame], vary: Sequence[str]) -> pd.DataFrame:
    """Accuracy per (varied settings, distance) over the seeds that did not diverge.

        <vary...>, distance, seeds, probes, accuracy_mean, accuracy_min, accuracy_max, accuracy_sd

    ``runs``: runs_frame; ``agreement``: run_id -> its agreement.csv (distance, n, accuracy) for every run
    that did not diverge. ``probes`` is the number of probes at that distance summed over the seeds; the mean
    is over seeds (each seed one measurement), the sd the seeds' sample standard deviation (NaN for one).
    """
    vary = list(vary)
    frames = []
    for run in runs.itertuples(index=False):
        if run.diverged:
            continue
        if run.run_id not in agreement:
            raise ValueError(f"run {run.run_id} did not diverge but has no per-distance agreement table")
        table = agreement[run.run_id][["distance", "n", "accuracy"]]
        frames.append(table.assign(run_id=run.run_id, **{k: getattr(run, k) for k in vary}))
    columns = [*vary, "distance", "seeds", "probes", "accuracy_mean", "accuracy_min", "accuracy_max", "accuracy_sd"]
    if not frames:
        return pd.DataFrame(columns=columns)
    per_run = pd.concat(frames, ignore_index=True)
    grouped = per_run.groupby([*vary, "distance"], sort=False)
    out = grouped.agg(
        seeds=("run_id", "nunique"),
        probes=("n", "sum"),
        accuracy_mean=("accuracy", "mean"),
        accuracy_min=("accuracy", "min"),
        accuracy_max=("accuracy", "max"),
        accuracy_sd=("accuracy", "std"),
    ).reset_index()
    order = {k: list(dict.fromkeys(runs[k])) for k in vary}  # config order of each setting's values
    out = out.sort_values([*vary, "distance"], key=lambda c: c.map(order[c.name].index) if c.name in order else c)
    return out[columns].reset_index(drop=True)


def reach_table(distances: pd.DataFrame, setting: str, width: Callable[[object], float] | None = None) -> pd.DataFrame:
    """Per value of ``setting``: mean accuracy on the dependencies it can span (distance <= width) and on
    those beyond, each a probe-weighted mean over distances of the seed-mean accuracy.

    ``width`` maps a setting's value to the longest distance it spans (default: the value itself; a
    window of n-1 words sees a head n-1 words back, a segment of k steps holds a dependency of k).
    A width of 0 or None means unlimited (bptt = 0, full-sentence BPTT).
    """
    width = width or (lambda v: v)
    rows = []
    for value, group in distances.groupby(setting, sort=False):
        w = width(value)
        unlimited = w is None or w == 0
        inside = group if unlimited else group[group["distance"] <= w]
        beyond = group.iloc[0:0] if unlimited else group[group["distance"] > w]
        rows.append(
            {
                setting: value,
                "width": math.inf if unlimited else float(w),
                "within_accuracy": _weighted(inside),
                "within_probes": int(inside["probes"].sum()),
                "beyond_accuracy": _weighted(beyond),
                "beyond_probes": int(beyond["probes"].sum()),
            }
        )
    return pd.DataFrame(rows)


def _weighted(rows: pd.DataFrame) -> float:
    n = rows["probes"].sum()
    return float((rows["accuracy_mean"] * rows["probes"]).sum() / n) if n else math.nan


# --------------------------------------------------------------------------------------------------------------
# Gradient norms step by step


def trace_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs a norm trace draws: the first seed's, one per combination of varied settings."""
    if runs.empty:
        return runs
    return runs[runs["seed"] == runs["seed"].iloc[0]]


def trace_table(runs: pd.DataFrame, steps: Mapping[str, pd.DataFrame], vary: Sequence[str]) -> pd.DataFrame:
    """Step records of the traced runs, long: run_id, <vary...>, seed, step, loss, grad_norm, clipped,
    clip_cosine, diverged (the run's), last (its final recorded step: where a diverged run stopped)."""
    frames = []
    for run in trace_runs(runs).itertuples(index=False):
        records = steps[run.run_id]
        keys = {k: getattr(run, k) for k in [*vary, "seed"]}
        frame = records[["step", "loss", "grad_norm", "clipped", "clip_cosine"]].assign(
            run_id=run.run_id, **keys, diverged=run.diverged
        )
        frame["last"] = frame["step"] == frame["step"].max()
        frames.append(frame)
    columns = ["run_id", *vary, "seed", "step", "loss", "grad_norm", "clipped", "clip_cosine", "diverged", "last"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def clipping_from_steps(steps: pd.DataFrame) -> dict[str, float]:
    """From step records (steps.csv): the share of steps clipped, and over the clipped steps the mean and
    smallest cosine between the clipped and the unclipped update (NaN when no step was clipped)."""
    if steps.empty:
        return {"clipped_fraction": math.nan, "clip_cosine_mean": math.nan, "clip_cosine_min": math.nan}
    clipped = steps["clipped"].astype(str).str.lower().isin(["true", "1", "1.0"])
    cosines = steps.loc[clipped, "clip_cosine"].astype(float)
    return {
        "clipped_fraction": float(clipped.mean()),
        "clip_cosine_mean": float(cosines.mean()) if len(cosines) else math.nan,
        "clip_cosine_min": float(cosines.min()) if len(cosines) else math.nan,
    }


# --------------------------------------------------------------------------------------------------------------
# Measurements over seeds, and matched sizes


def setting_table(
    summary: pd.DataFrame, vary: Sequence[str], metrics: Sequence[str], *, every_run: Sequence[str] = ()
) -> pd.DataFrame:
    """Per combination of varied settings: runs, diverged runs, and for each metric its mean, min and max
    over the seeds that did not diverge (``<metric>_mean``, ``_min``, ``_max``), from a study's summary.

    ``diverged_step`` is taken over the runs that diverged (its earliest step is ``_min``); the metrics in
    ``every_run`` over every run that reports them (a diverged run's clipping statistics cover the steps
    before it diverged).
    """
    vary = list(vary)
    keys = summary.drop_duplicates("run_id")[["run_id", *vary, "seed"]]
    values = summary.pivot_table(index="run_id", columns="metric", values="value", aggfunc="first", dropna=False)
    wide = keys.merge(values.reset_index(), on="run_id", how="left")
    wide["diverged"] = wide.get("diverged", pd.Series(0, index=wide.index)).fillna(0) > 0
    rows = []
    for values, group in wide.groupby(vary, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        ok, bad = group[~group["diverged"]], group[group["diverged"]]
        row = {**dict(zip(vary, values)), "runs": len(group), "diverged_runs": len(bad)}
        for metric in metrics:
            taken = bad if metric == "diverged_step" else group if metric in every_run else ok
            column = taken[metric].dropna() if metric in taken else pd.Series(dtype=float)
            for stat in ("mean", "min", "max"):
                row[f"{metric}_{stat}"] = float(getattr(column, stat)()) if len(column) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def matched_pairs(ff: pd.DataFrame, rnn: pd.DataFrame) -> pd.DataFrame:
    """Each feed-forward run size (``context``, ``parameters``) paired with the Elman RNN size (``hidden``,
    ``parameters``) whose count is nearest on a log scale; ratio = RNN parameters / feed-forward parameters."""
    ff = ff[["context", "parameters"]].drop_duplicates("context")
    rnn = rnn[["hidden", "parameters"]].drop_duplicates("hidden")
    if rnn.empty:
        raise ValueError("no Elman RNN to pair the feed-forward windows with")
    rows = []
    for f in ff.itertuples(index=False):
        gap = np.abs(np.log(rnn["parameters"].to_numpy(dtype=float) / float(f.parameters)))
        r = rnn.iloc[int(np.argmin(gap))]
        rows.append(
            {
                "context": int(f.context),
                "ff_parameters": int(f.parameters),
                "hidden": int(r["hidden"]),
                "rnn_parameters": int(r["parameters"]),
                "ratio": float(r["parameters"]) / float(f.parameters),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------
# Reading a study's runs (the workflow's job functions call these)


def read_runs(record: Mapping, points: Sequence[Mapping], metric_files: Sequence[str | Path]) -> pd.DataFrame:
    import json

    metrics = [json.loads(Path(p).read_text(encoding="utf-8")) for p in metric_files]
    return runs_frame(record, points, metrics)


def read_agreement(runs: pd.DataFrame, agreement_files: Mapping[str, str | Path]) -> dict[str, pd.DataFrame]:
    """run_id -> agreement.csv of every run that did not diverge (a diverged run writes none)."""
    tables = {}
    for run in runs.itertuples(index=False):
        path = Path(agreement_files[run.run_id])
        if run.diverged:
            continue
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: run {run.run_id} finished without diverging, so it must have one"
            )
        tables[run.run_id] = pd.read_csv(path)
    return tables
