"""The vocabulary, written once: what every run reports, how each metric and each model family reads in a figure,
a table or the book, which way is better, and which are counts. The training loop, the summaries, the findings and the
book all read it here; nothing here imports torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# The pre-clip gradient norm's quantiles over a run's steps (metrics.json key -> quantile).
GRAD_NORM_QUANTILES = {"grad_norm_q05": 0.05, "grad_norm_median": 0.5, "grad_norm_q95": 0.95, "grad_norm_max": 1.0}

# The optimiser's update turned by clipping, over the clipped steps where it was measured (rnnbench.training.clipping):
# measured only where the update is not -lr times the gradient (Adam; SGD with weight decay), else left out (null, 0).
UPDATE_COSINE_METRICS = ("update_cosine_mean", "update_cosine_min", "update_cosine_steps")
# Steps between two measurements of it: a run's steps 1, 1 + UPDATE_COSINE_EVERY, ... (rnnbench.training.loop says why).
UPDATE_COSINE_EVERY = 16

# Metrics every run reports (metrics.json), in the order the summary lists them.
RUN_METRICS = (
    "test_ppl",
    "test_column_worst",
    "test_column_median",
    "valid_ppl",
    "agreement_accuracy",
    "valid_agreement_accuracy",
    "epochs",
    "steps",
    "diverged",
    "diverged_step",
    "parameters",
    "train_seconds",
    "tokens_per_second",
    "cpu_seconds",
    "peak_rss_mb",
    "clipped_fraction",
    *GRAD_NORM_QUANTILES,
    "clip_cosine_mean",
    "clip_threshold",
    "clip_reference_median",
    *UPDATE_COSINE_METRICS,
)

# Metrics a run records of its settings rather than measures in training (the threshold it clipped at, and the
# reference norm a relative threshold was resolved from): the same whether it learned or diverged, so a table over
# a setting's seeds takes them from every run.
RECORDED_SETTINGS = frozenset({"clip_threshold", "clip_reference_median"})

# A run's training speed in its own CPU time, derived in its study's summary (tokens_per_cpu_second): a busy machine
# stretches a run's wall time, not the CPU time it takes. Two runs of one config with identical results read 35,769
# and 14,477 tokens per wall second in one build, and took 16.1 and 17.5 CPU seconds.
TOKENS_PER_CPU_SECOND = "tokens_per_cpu_second"

# Metrics that measure the machine, not the model: two runs of one config differ in them, on one machine or two.
MACHINE_METRICS = frozenset({"train_seconds", "tokens_per_second", "cpu_seconds", "peak_rss_mb", TOKENS_PER_CPU_SECOND})


def tokens_per_cpu_second(metrics: dict[str, Any]) -> float:
    """The training tokens a run read (its wall speed times its wall seconds) over the CPU seconds it took, its
    evaluations included: NaN where either is missing or zero."""
    speed, seconds, cpu = (metrics.get(k) for k in ("tokens_per_second", "train_seconds", "cpu_seconds"))
    if not all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in (speed, seconds, cpu)):
        return math.nan
    return speed * seconds / cpu


# How a metric reads in a figure, a table or a sentence.
METRIC_LABELS = {
    "test_ppl": "test perplexity",
    "test_column_worst": "worst test column's perplexity",
    "test_column_median": "median test column's perplexity",
    "valid_ppl": "validation perplexity",
    "agreement_accuracy": "agreement accuracy",
    "valid_agreement_accuracy": "validation agreement accuracy",
    "epochs": "epochs",
    "steps": "optimiser steps",
    "diverged": "diverged",
    "diverged_step": "diverged at step",
    "parameters": "parameters",
    "train_seconds": "training seconds",
    "tokens_per_second": "training tokens per second",
    "cpu_seconds": "CPU seconds",
    "peak_rss_mb": "peak memory (MB)",
    "clipped_fraction": "fraction of steps clipped",
    "grad_norm_q05": f"pre-clip gradient norm, {GRAD_NORM_QUANTILES['grad_norm_q05']:.0%} quantile",
    "grad_norm_median": "median pre-clip gradient norm",
    "grad_norm_q95": f"pre-clip gradient norm, {GRAD_NORM_QUANTILES['grad_norm_q95']:.0%} quantile",
    "grad_norm_max": "largest pre-clip gradient norm",
    "clip_cosine_mean": "cosine of the clipped gradient",
    "update_cosine_mean": "cosine of the clipped update",
    "update_cosine_min": "smallest cosine of the clipped update",
    "update_cosine_steps": "clipped steps whose update was measured",
    "clip_threshold": "clipping threshold",
    "clip_reference_median": "reference's median pre-clip gradient norm",
}
# Lower is better for these; higher for the rest (words "best" and "worst" in the book's prose).
LOWER_IS_BETTER = frozenset({"test_ppl", "valid_ppl", "clipped_fraction"})
# Metrics that are counts: printed as whole numbers.
COUNT_METRICS = frozenset({"epochs", "steps", "diverged_step", "parameters", "update_cosine_steps"})
# Perplexities: a language model's metrics, set beside its corpus's baselines.
PERPLEXITY_METRICS = frozenset({"test_ppl", "valid_ppl"})

# How often a threshold acted, read off a run's clipped_fraction. Pascanu et al. (2013) clip the rare step whose
# gradient explodes: a threshold above the typical norm, which leaves the other steps alone (rare spikes, fewer
# than CLIP_SPIKES_BELOW of the steps). A threshold below the typical norm rescales nearly every step (at least
# CLIP_EVERY_STEP_FROM of them): normalised SGD, whose step length the threshold sets, not the rate.
CLIP_NEVER, CLIP_SPIKES, CLIP_OFTEN, CLIP_EVERY_STEP = "never", "rare spikes", "often", "every step"
CLIP_SPIKES_BELOW = 0.1
CLIP_EVERY_STEP_FROM = 0.9


def clip_regime(clipped_fraction: float) -> str:
    """Which regime a share of steps clipped is in: CLIP_NEVER (none), CLIP_SPIKES, CLIP_OFTEN or CLIP_EVERY_STEP."""
    if math.isnan(clipped_fraction):
        raise ValueError("no share of steps clipped was measured (no step taken): it is in no regime")
    if clipped_fraction <= 0:
        return CLIP_NEVER
    if clipped_fraction < CLIP_SPIKES_BELOW:
        return CLIP_SPIKES
    return CLIP_EVERY_STEP if clipped_fraction >= CLIP_EVERY_STEP_FROM else CLIP_OFTEN


# The regime a threshold is in, set before any run trains: the threshold against the median pre-clip norm of the
# unclipped runs of its study (its reference: for a multiple of the median, clip_times_median, the run that set it;
# for a threshold given as a number, the study's unclipped runs at the same rate that did not diverge). Above the
# median the ordinary step passes and only a larger one is rescaled: the rare exploding steps Pascanu et al. (2013)
# clip, the chapter's regime (CLIP_SPIKES). At or below it at least half the ordinary steps are rescaled
# (CLIP_ORDINARY), on the way to normalised SGD, another optimiser. The share of steps a setting clipped is the check
# beside it (regime_contradicted), never what puts it in a regime: read from the outcome, the regime would be post hoc.
CLIP_ORDINARY = "ordinary steps"
CLIP_SPIKES_ABOVE = 1.0  # the multiple of the reference's median norm a threshold must exceed to clip only spikes


def threshold_regime(
    threshold: float, times: float, unclipped_medians: Iterable[float] = ()
) -> tuple[str | None, float]:
    """A norm threshold's a-priori regime and its multiple of the reference's median norm: CLIP_NEVER for an infinite
    threshold, else CLIP_SPIKES above CLIP_SPIKES_ABOVE times the median, CLIP_ORDINARY at or below. ``times``: the
    setting's clip_times_median (NaN where the threshold is a number); ``unclipped_medians``: for such a number, the
    median norms (grad_norm_median) of its study's unclipped runs at its rate that did not diverge, whose median is the
    reference. None (and NaN) where there is no reference to set the threshold against."""
    if threshold == math.inf or times == math.inf:
        return CLIP_NEVER, math.inf
    if math.isnan(times):
        norms = sorted(m for m in unclipped_medians if math.isfinite(m) and m > 0)
        if not norms:
            return None, math.nan
        half = len(norms) // 2
        reference = norms[half] if len(norms) % 2 else (norms[half - 1] + norms[half]) / 2
        times = threshold / reference
    return (CLIP_SPIKES if times > CLIP_SPIKES_ABOVE else CLIP_ORDINARY), times


def regime_contradicted(regime: str | None, clipped_fraction: float) -> bool:
    """Whether a setting's share of steps clipped says otherwise than its a-priori regime: a threshold above the median
    that clipped CLIP_SPIKES_BELOW of the steps or more, or one at or below it that clipped fewer. Reported beside the
    setting, which stays in its regime; no step measured (NaN) contradicts nothing."""
    if math.isnan(clipped_fraction):
        return False
    rare = clipped_fraction < CLIP_SPIKES_BELOW
    return (regime == CLIP_SPIKES and not rare) or (regime == CLIP_ORDINARY and rare)


# How a model family reads: as a noun, in a table or a sentence ("a feed-forward n-gram network, n - 1 = 4"), and as
# a label before another noun or in a legend ("four feed-forward runs").
FAMILY_NAMES = {"ff": "feed-forward n-gram network", "rnn": "Elman RNN", "lstm": "LSTM"}
FAMILY_LABELS = {"ff": "feed-forward", "rnn": "Elman RNN", "lstm": "LSTM"}
# A corpus as a figure's title names it; a corpus not listed by its own name.
CORPUS_LABELS = {"ptb": "PTB", "brown": "Brown", "agreement": "the agreement corpus"}


class RunOutputError(ValueError):
    """A run's output that cannot be read as training wrote it; the message names the file, the run and the fix."""


def read_metrics(path: str | Path, run_id: str | None = None) -> dict[str, Any]:
    """A run's metrics.json, checked: a JSON object whose RUN_METRICS are each a finite number, true/false or null
    (training writes a value it could not measure, or an infinite one, as null; never NaN). Anything else is a
    damaged file, and a RunOutputError names it, its run (``run_id``, else the folder's name) and the fix."""
    path = Path(path)
    run_id = run_id or path.parent.name

    def damaged(problem: str) -> RunOutputError:
        return RunOutputError(
            f"{path}: the metrics of run {run_id} cannot be read ({problem}). Delete that file and the run "
            f"trains again (snakemake makes a missing output anew)"
        )

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RunOutputError(f"{path}: run {run_id} has no metrics.json; train it first") from None
    except (OSError, UnicodeDecodeError) as err:
        raise damaged(str(err)) from None
    try:
        metrics = json.loads(text)
    except json.JSONDecodeError as err:
        raise damaged(f"not JSON: {err.msg} at line {err.lineno} column {err.colno}") from None
    if not isinstance(metrics, dict):
        raise damaged(f"a JSON {type(metrics).__name__}, not an object")
    for key in RUN_METRICS:
        value = metrics.get(key)
        if value is None or isinstance(value, bool):
            continue
        if not isinstance(value, (int, float)):
            raise damaged(f"{key} is {str(value)[:40]!r}, not a number")
        if not math.isfinite(value):
            raise damaged(f"{key} is {value}, which training never writes")
    return metrics
