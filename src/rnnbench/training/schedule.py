"""The learning-rate schedule, one of the three small mechanisms the chapter names (with truncation,
``rnnbench.training.reading.detach_state``, and clipping, ``rnnbench.training.clipping``): the rate an epoch trains
at, and when the run stops, decided from validation after each epoch."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Schedule:
    """Mikolov's rule: keep the rate while validation log-likelihood improves by at least a factor of
    ``min_improvement``; after the first epoch that does not, halve it every epoch; stop at the next
    epoch that does not. ``constant`` never changes the rate and stops only at max_epochs."""

    kind: str
    lr: float
    min_improvement: float
    decaying: bool = False
    done: bool = False

    def after_epoch(self, previous_nll: float, current_nll: float) -> Schedule:
        if self.kind == "constant":
            return self
        # Mikolov compares log-likelihoods: improvement = previous / current (both positive NLLs).
        improved = previous_nll / current_nll >= self.min_improvement if math.isfinite(previous_nll) else True
        if self.decaying and not improved:
            return replace(self, done=True)
        if self.decaying or not improved:
            return replace(self, lr=self.lr / 2, decaying=True)
        return self
