"""A run's records: one per optimiser step (loss, pre-clip gradient norm, clipped flag, clip and update cosines),
the divergence that ended a run (judged by ``rnnbench.training.divergence``), and what steps.csv and metrics.json
keep of them: the steps evenly thinned, the statistics over every step taken."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rnnbench.metrics import GRAD_NORM_QUANTILES


@dataclass(frozen=True)
class StepRecord:
    step: int
    epoch: int
    lr: float
    loss: float
    grad_norm: float
    clipped: bool
    clip_cosine: float = math.nan  # absent from checkpoints written before it was recorded
    # the optimiser's update turned by clipping (rnnbench.training.clipping); NaN where not measured: plain SGD, whose
    # update turns as its gradient does (clip_cosine), a step between two measured ones, a run without clipping
    update_cosine: float = math.nan


@dataclass(frozen=True)
class Divergence:
    step: int
    epoch: int
    reason: str


def thin_steps(records: list[StepRecord], max_rows: int, keep: int | None = None) -> list[StepRecord]:
    """At most ``max_rows`` evenly spaced records from the first, always including the last and the step ``keep``."""
    if len(records) <= max_rows:
        return records
    # Room is left for the last record and ``keep`` (the divergence step is usually the last one too),
    # so the evenly spaced rows plus those two never exceed max_rows.
    extra = {len(records) - 1} | {i for i, r in enumerate(records) if r.step == keep}
    stride = math.ceil(len(records) / (max_rows - len(extra)))
    return [records[i] for i in sorted(set(range(0, len(records), stride)) | extra)]


def step_statistics(steps: list[StepRecord], diverged_step: int | None) -> dict[str, float | None]:
    """Over every step taken but the diverged one: the share clipped, quantiles of the pre-clip gradient
    norm, the mean cosine between the clipped and the unclipped gradient over the steps clipped, and over the
    clipped steps whose update was measured the update cosine's mean and smallest value and their count (0, and no
    mean, where none was)."""
    steps = [s for s in steps if s.step != diverged_step]
    norms = np.array([s.grad_norm for s in steps])
    cosines = [s.clip_cosine for s in steps if s.clipped]
    turned = [s.update_cosine for s in steps if s.clipped and not math.isnan(s.update_cosine)]
    return {
        **{key: float(np.quantile(norms, q)) if len(norms) else None for key, q in GRAD_NORM_QUANTILES.items()},
        "clip_cosine_mean": float(np.mean(cosines)) if cosines else None,
        "update_cosine_mean": float(np.mean(turned)) if turned else None,
        "update_cosine_min": float(np.min(turned)) if turned else None,
        "update_cosine_steps": len(turned),
    }
