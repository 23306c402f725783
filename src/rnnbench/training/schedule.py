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
    epoch that does not. ``plateau`` halves only after an epoch that does not improve and keeps the halved rate
    while it improves again (Mikolov's halves on, whatever the gains, and so stops a run still gaining about six
    epochs after its first plateau); it stops at the second such epoch in a row. ``constant`` never changes the
    rate and stops only at max_epochs. ``decaying``: Mikolov's halving has begun; under plateau, the last epoch
    did not improve."""

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
        if self.kind == "plateau":
            if improved:
                return replace(self, decaying=False)
            return replace(self, done=True) if self.decaying else replace(self, lr=self.lr / 2, decaying=True)
        if self.decaying and not improved:
            return replace(self, done=True)
        if self.decaying or not improved:
            return replace(self, lr=self.lr / 2, decaying=True)
        return self
