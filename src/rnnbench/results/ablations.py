"""Tables of the ablations, beside each study's summary: what a study's runs did per head-verb distance,
how their gradient norms moved step by step, and their measurements aggregated over seeds.

    distance_table    agreement studies: accuracy per (varied settings, head-verb distance), mean and
                      range over the seeds that learned, from each run's agreement.csv
    trace_table       clipping studies: the pre-clip gradient norm step by step (steps.csv) of the first
                      seed's runs, one per combination of varied settings, each with its outcome
                      (the update clipping turned, step by step: rnnbench.results.update_direction)
    learning_table    language-model studies: every run's validation perplexity epoch by epoch, against the
                      training tokens it had read and the seconds it had trained (epochs.csv)
    speed_table       activation studies: the optimiser steps each run took until its training loss first
                      reached a level every learned run of the study reaches (steps.csv)
    setting_table     any study: each measurement's mean, min and max over the seeds that learned, per
                      varied setting, with how many learned, failed and diverged
    reach_table       accuracy on the dependencies a setting can span (distance <= width) and beyond
    clipping_from_steps   share of steps clipped and the clipped updates' cosine, from step records

Every run's outcome is the one its study's summary holds (rnnbench.results.outcome, decided once there): a run that
did not learn or diverged is counted, never averaged in.

Pure pandas, no torch: the workflow's table jobs and the book both import this.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from rnnbench.metrics import PERPLEXITY_METRICS, RECORDED_SETTINGS
from rnnbench.results.outcome import COUNT_COLUMNS, learned, require_outcome, seed_counts
from rnnbench.results.progress import training_progress
from rnnbench.training.stuck_columns import stuck

# Which extra tables (and figures) a study gets, from what it is: per-distance accuracy where the corpus
# records every probe's distance and the study measures agreement, a norm trace where it varies clipping (and the
# update's turn where its runs measure it), learning curves where it ranks language models by perplexity (whether a
# ranking is settled or still moving).
DISTANCE_CORPORA = frozenset({"agreement"})
TRACE_SETTINGS = frozenset({"clip", "clip_mode", "clip_times_median"})


def study_extras(
    corpus: str,
    vary: Sequence[str],
    metric: str,
    sentence_cuts: bool = False,
    family: str = "rnn",
    updates: bool = False,
) -> list[str]:
    """The extra tables of a study: "distance" (agreement accuracy on the agreement corpus), "trace" (a study
    that varies clipping), "learning" (a study measured by perplexity), "cuts" (an agreement study with runs
    whose gradient is cut within sentences, ``sentence_cuts``: accuracy on the probes each cut separates from
    their head and on the others, rnnbench.results.cut_accuracy), "reach" (an agreement study of a recurrence that
    varies the truncation length: each run's accuracy within reach of k and beyond it, full-sentence BPTT's on the same
    probes, rnnbench.results.reach), "units" and "speed" (an Elman study that varies the activation:
    the hidden units that pass no gradient, rnnbench.results.silent_units; the steps to a common training loss, speed_table),
    "update" (a study that varies clipping and whose runs measure how far it turns the optimiser's update,
    ``updates``: RunConfig.measures_update_cosine; rnnbench.results.update_direction)."""
    extras = []
    if corpus in DISTANCE_CORPORA and metric == "agreement_accuracy":
        extras.append("distance")
        if sentence_cuts:
            extras.append("cuts")
        if "bptt" in vary and family != "ff":
            extras.append("reach")
    if TRACE_SETTINGS & set(vary):
        extras.append("trace")
        if updates:
            extras.append("update")
    if metric in PERPLEXITY_METRICS:
        extras.append("learning")
    if "activation" in vary and family == "rnn":
        extras += ["units", "speed"]
    return extras


def runs_frame(record: Mapping, points: Sequence[Mapping], outcomes: Mapping[str, str]) -> pd.DataFrame:
    """One row per run of a study: run_id, its varied settings and seed, its ``outcome`` (``outcomes``: run
    id -> the summary's outcome), and whether it ``diverged``."""
    rows = []
    for run_id, point in zip(record["run_ids"], points, strict=True):
        if run_id not in outcomes:
            raise ValueError(f"run {run_id} of study {record.get('name', '?')} has no outcome in the study's summary")
        rows.append(
            {"run_id": run_id, **point, "outcome": outcomes[run_id], "diverged": outcomes[run_id] == "diverged"}
        )
    return pd.DataFrame(rows)


def summary_outcomes(summary: pd.DataFrame) -> dict[str, str]:
    """run id -> outcome, from a study's summary (summary.csv)."""
    require_outcome(summary)
    runs = summary.drop_duplicates("run_id")
    return dict(zip(runs["run_id"], runs["outcome"], strict=True))


# --------------------------------------------------------------------------------------------------------------
# Accuracy per head-verb distance


def distance_table(runs: pd.DataFrame, agreement: Mapping[str, pd.DataFrame], vary: Sequence[str]) -> pd.DataFrame:
    """Accuracy per (varied settings, distance) over the seeds that learned.

        <vary...>, distance, runs, seeds_learned, seeds_failed, diverged_runs, probes,
        accuracy_mean, accuracy_min, accuracy_max, accuracy_sd

    ``runs``: runs_frame; ``agreement``: run_id -> its agreement.csv (distance, n, accuracy) for every run
    that did not diverge. The counts are the setting's (rnnbench.results.outcome.seed_counts); ``probes`` is the
    number of probes at that distance summed over the seeds that learned; the mean is over those seeds (each
    seed one measurement), the sd their sample standard deviation (NaN for one). A setting none of whose seeds
    learned keeps a row per distance, with no accuracy (NaN) and seeds_learned 0.
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
    columns = [
        *vary,
        "distance",
        *COUNT_COLUMNS,
        *("probes", "accuracy_mean", "accuracy_min", "accuracy_max", "accuracy_sd"),
    ]
    if not frames:
        return pd.DataFrame(columns=columns)
    per_run = pd.concat(frames, ignore_index=True)
    per_run = per_run[learned(per_run["run_id"].map(dict(zip(runs["run_id"], runs["outcome"], strict=True))))]
    distances = sorted(set().union(*(set(t["distance"]) for t in frames)))
    rows = []
    for values, group in runs.groupby(vary, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        setting = dict(zip(vary, values, strict=True))
        counts = seed_counts(group["outcome"])
        here = per_run[per_run["run_id"].isin(group["run_id"])]
        for distance in distances:
            at = here.loc[here["distance"] == distance, ["n", "accuracy"]]
            accuracy = at["accuracy"]
            rows.append(
                {
                    **setting,
                    "distance": distance,
                    **counts,
                    "probes": int(at["n"].sum()),
                    "accuracy_mean": float(accuracy.mean()) if len(at) else math.nan,
                    "accuracy_min": float(accuracy.min()) if len(at) else math.nan,
                    "accuracy_max": float(accuracy.max()) if len(at) else math.nan,
                    "accuracy_sd": float(accuracy.std()) if len(at) > 1 else math.nan,
                }
            )
    return pd.DataFrame(rows, columns=columns)


def reach_table(distances: pd.DataFrame, setting: str, width: Callable[[object], float] | None = None) -> pd.DataFrame:
    """Per value of ``setting``: mean accuracy on the dependencies it can span (distance <= width) and on
    those beyond, each a probe-weighted mean over distances of the seed-mean accuracy.

    ``width`` maps a setting's value to the longest distance it spans (default: the value itself; a
    window of n-1 words sees a head n-1 words back, a segment of k steps holds a dependency of k).
    A width of 0 or None means unlimited (bptt = 0, full-sentence BPTT). The setting's seed counts
    (runs, seeds_learned, ...) come along where ``distances`` has them; accuracies are NaN where no seed learned.
    """
    width = width or (lambda v: v)
    rows = []
    for value, group in distances.groupby(setting, sort=False):
        w = width(value)
        unlimited = w is None or w == 0
        inside = group if unlimited else group[group["distance"] <= w]
        beyond = group.iloc[0:0] if unlimited else group[group["distance"] > w]
        counts = {c: int(group[c].iloc[0]) for c in COUNT_COLUMNS if c in group}
        rows.append(
            {
                setting: value,
                **counts,
                "width": math.inf if unlimited else float(w),
                "within_accuracy": _weighted(inside),
                "within_probes": int(inside["probes"].sum()),
                "beyond_accuracy": _weighted(beyond),
                "beyond_probes": int(beyond["probes"].sum()),
            }
        )
    return pd.DataFrame(rows)


def _weighted(rows: pd.DataFrame) -> float:
    rows = rows[rows["accuracy_mean"].notna()]
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
    clip_cosine, outcome and diverged (the run's), last (its final recorded step: where a diverged run stopped)."""
    frames = []
    for run in trace_runs(runs).itertuples(index=False):
        records = steps[run.run_id]
        keys = {k: getattr(run, k) for k in [*vary, "seed"]}
        frame = records[["step", "loss", "grad_norm", "clipped", "clip_cosine"]].assign(
            run_id=run.run_id, **keys, outcome=run.outcome, diverged=run.diverged
        )
        frame["last"] = frame["step"] == frame["step"].max()
        frames.append(frame)
    columns = [
        *("run_id", *vary, "seed", "step", "loss", "grad_norm", "clipped", "clip_cosine"),
        *("outcome", "diverged", "last"),
    ]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


LEARNING_COLUMNS = ("epoch", "lr", "train_ppl", "valid_ppl", "tokens_seen", "seconds_trained")


def learning_table(runs: pd.DataFrame, epochs: Mapping[str, pd.DataFrame], vary: Sequence[str]) -> pd.DataFrame:
    """Every run's epochs, long: run_id, <vary...>, seed, epoch, lr, train_ppl, valid_ppl, tokens_seen and
    seconds_trained (cumulative: rnnbench.results.progress), outcome and diverged (the run's). A diverged run keeps the
    epochs it finished; the epoch it diverged in has no validation perplexity."""
    frames = []
    for run in runs.itertuples(index=False):
        keys = {k: getattr(run, k) for k in [*vary, "seed"]}
        progress = training_progress(epochs[run.run_id])
        frames.append(
            progress[list(LEARNING_COLUMNS)].assign(
                run_id=run.run_id, **keys, outcome=run.outcome, diverged=run.diverged
            )
        )
    columns = ["run_id", *vary, "seed", *LEARNING_COLUMNS, "outcome", "diverged"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


# How fast a run's training loss falls: a step's loss is over one batch and noisy, so the loss is read as its mean
# over the last SPEED_WINDOW steps. The target is the highest of the learned runs' lowest running losses: the
# level every learned run of the study reaches, so each has a count and the slowest reaches it last.
SPEED_WINDOW = 50


def running_loss(steps: pd.DataFrame, window: int = SPEED_WINDOW) -> pd.Series:
    """A run's training loss (steps.csv) as its mean over the last ``window`` steps, indexed by step; NaN before
    the first full window. The steps must be every step (steps.csv thinned past steps_max_rows is refused)."""
    ordered = steps.sort_values("step")
    step = ordered["step"].to_numpy()
    if len(step) and not (np.diff(step) == 1).all():
        raise ValueError(
            "steps.csv is thinned (its steps are not consecutive), so its loss has no running mean over steps: "
            "give the run a steps_max_rows of at least its number of steps"
        )
    return pd.Series(ordered["loss"].rolling(window).mean().to_numpy(), index=step)


def steps_to(running: pd.Series, target: float) -> float:
    """The first step whose running loss is at or below ``target``; NaN if none is."""
    reached = running.index[running.to_numpy() <= target]
    return float(reached[0]) if len(reached) else math.nan


SPEED_COLUMNS = ("lowest_loss", "target_loss", "target_ppl", "steps_to_target", "steps")


def speed_table(
    runs: pd.DataFrame, steps: Mapping[str, pd.DataFrame], vary: Sequence[str], window: int = SPEED_WINDOW
) -> pd.DataFrame:
    """Per run: run_id, <vary...>, seed, its lowest running training loss (running_loss), the study's target
    (the highest lowest loss of a learned run, and its perplexity), the steps the run took to reach it (NaN for
    a run that did not learn or diverged), its steps in all, outcome and diverged. The runs of a study train on
    the same data in batches of the same size, so their steps compare."""
    running = {}
    for run in runs["run_id"]:
        try:
            running[run] = running_loss(steps[run], window)
        except ValueError as error:
            raise ValueError(f"run {run}: {error}") from None
    lowest = {run: float(r.min()) if r.notna().any() else math.nan for run, r in running.items()}
    ok = learned(runs["outcome"])
    floors = [lowest[run] for run in runs.loc[ok, "run_id"] if not math.isnan(lowest[run])]
    target = max(floors) if floors else math.nan
    rows = []
    for run, good in zip(runs.itertuples(index=False), ok, strict=True):
        rows.append(
            {
                "run_id": run.run_id,
                **{k: getattr(run, k) for k in [*vary, "seed"]},
                "lowest_loss": lowest[run.run_id],
                "target_loss": target,
                "target_ppl": math.exp(target) if not math.isnan(target) else math.nan,
                "steps_to_target": steps_to(running[run.run_id], target) if good else math.nan,
                "steps": len(running[run.run_id]),
                "outcome": run.outcome,
                "diverged": run.diverged,
            }
        )
    columns = ["run_id", *vary, "seed", *SPEED_COLUMNS, "outcome", "diverged"]
    return pd.DataFrame(rows, columns=columns)


def speed_summary(speed: pd.DataFrame, vary: Sequence[str]) -> pd.DataFrame:
    """Per combination of varied settings, from a study's speed table (speed_table): runs and how many learned,
    and the steps to the study's target over the learned ones (steps_mean, _min, _max; NaN when none learned)."""
    return _spread_over_learned(speed, vary, "steps_to_target", "steps")


def unit_summary(units: pd.DataFrame, vary: Sequence[str]) -> pd.DataFrame:
    """Per combination of varied settings, from a study's units table (rnnbench.results.silent_units.unit_table): runs measured
    and how many learned, and the share of silent hidden units over the learned ones (silent_mean, _min, _max;
    NaN when none learned)."""
    return _spread_over_learned(units, vary, "silent_fraction", "silent")


def _spread_over_learned(table: pd.DataFrame, vary: Sequence[str], column: str, name: str) -> pd.DataFrame:
    """Per combination of ``vary``: runs, seeds_learned (the learned runs with a value of ``column``) and that
    column's <name>_mean, _min and _max over them."""
    stats = ("mean", "min", "max")
    rows = []
    for key, group in table.groupby(list(vary), sort=False):
        keys = dict(zip(vary, key if isinstance(key, tuple) else (key,), strict=True))
        values = group.loc[learned(group["outcome"]), column].dropna()
        spread = {f"{name}_{s}": float(getattr(values, s)()) if len(values) else math.nan for s in stats}
        rows.append({**keys, "runs": len(group), "seeds_learned": len(values), **spread})
    return pd.DataFrame(rows, columns=[*vary, "runs", "seeds_learned", *(f"{name}_{s}" for s in stats)])


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


def per_run(summary: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """One row per run of a study's long summary: run_id, the ``keys`` columns, every metric, ``learned``
    (rnnbench.results.outcome) and ``stuck`` (its test perplexity one evaluation column's doing, rnnbench.training.stuck_columns)."""
    values = summary.pivot_table(index="run_id", columns="metric", values="value", aggfunc="first", dropna=False)
    wide = summary.drop_duplicates("run_id")[["run_id", *keys]].merge(values.reset_index(), on="run_id", how="left")
    wide["learned"] = learned(wide["outcome"])
    unknown = pd.Series(math.nan, index=wide.index)
    worst, middle = (wide.get(c, unknown) for c in ("test_column_worst", "test_column_median"))
    wide["stuck"] = [stuck(w, m) for w, m in zip(worst, middle, strict=True)]
    return wide


def setting_table(
    summary: pd.DataFrame, vary: Sequence[str], metrics: Sequence[str], every_run: Collection[str] = ()
) -> pd.DataFrame:
    """Per combination of varied settings, from a study's summary (with its outcome column):

        <vary...>, runs, seeds_learned, seeds_failed, diverged_runs, seeds_stuck, <metric>_mean, _min, _max per metric

    Each metric's mean, min and max are over the seeds that learned (rnnbench.results.outcome): a run that did not
    learn or diverged is counted, not averaged in, and a setting none of whose seeds learned has NaN there.
    ``seeds_stuck`` counts the seeds that learned but whose test perplexity is one evaluation column's doing
    (rnnbench.training.stuck_columns); test perplexity's mean and range leave them out.
    ``diverged_step`` alone is taken over the runs that diverged (its earliest step is ``_min``): it measures
    the divergence itself. What a run records of its settings (metrics.RECORDED_SETTINGS: the threshold it clipped
    at) and the metrics named in ``every_run`` (the share of steps clipped, over the steps each run took) are taken
    over every run of the setting, whatever its outcome.
    """
    vary = list(vary)
    require_outcome(summary)
    wide = per_run(summary, [*vary, "seed", "outcome"])
    rows = []
    for values, group in wide.groupby(vary, sort=False, dropna=False):  # a setting left unset (NaN) is one too
        values = values if isinstance(values, tuple) else (values,)
        row = {**dict(zip(vary, values, strict=True)), **seed_counts(group["outcome"])}
        row["seeds_stuck"] = int((group["learned"] & group["stuck"]).sum())
        for metric in metrics:
            if metric == "diverged_step":
                taken = group[group["outcome"] == "diverged"]
            else:
                taken = group if metric in RECORDED_SETTINGS or metric in every_run else group[group["learned"]]
            if metric == "test_ppl":
                taken = taken[~taken["stuck"]]
            column = taken[metric].dropna() if metric in taken else pd.Series(dtype=float)
            for stat in ("mean", "min", "max"):
                row[f"{metric}_{stat}"] = float(getattr(column, stat)()) if len(column) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------
# Reading a study's runs (the workflow's job functions call these)


def read_runs(record: Mapping, points: Sequence[Mapping], summary: str | Path) -> pd.DataFrame:
    """runs_frame of a study, each run's outcome read from its summary.csv (rule study_summary)."""
    return runs_frame(record, points, summary_outcomes(pd.read_csv(summary)))


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
