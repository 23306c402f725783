"""When a run counts as diverged: judged by what the model does, each reason a short snake_case name.

non_finite_loss        the loss (training step or validation) is NaN or infinite
non_finite_grad_norm   the pre-clip gradient norm is NaN or infinite
grad_norm_above_limit  the pre-clip gradient norm is above the run's divergence_norm
loss_above_uniform     the loss is above UNIFORM_MARGIN times the uniform model's log |V|
loss_rising            validation NLL above RISING_FACTOR times its best so far
"""

from __future__ import annotations

import math

# Divergence is judged against the uniform model, whose NLL is log |V| nats per token, as is an untrained
# net's (small weights, near-uniform outputs). A loss above UNIFORM_MARGIN * log |V| means the model gives
# the words it sees on average less than 1 / |V|^2 of probability: it is not learning slowly, it is
# confidently wrong, which only saturated units (a blown-up run) produce. Validation NLL rising to
# RISING_FACTOR times its best is a run that unlearned what it knew, not one overfitting a little.
UNIFORM_MARGIN = 2.0
RISING_FACTOR = 1.5


def step_divergence(loss: float, grad_norm: float, *, norm_limit: float, uniform_nll: float) -> str | None:
    """Why a training step counts as diverged (a snake_case reason), or None."""
    if not math.isfinite(loss):
        return "non_finite_loss"
    if not math.isfinite(grad_norm):
        return "non_finite_grad_norm"
    if grad_norm > norm_limit:
        return "grad_norm_above_limit"
    if loss > UNIFORM_MARGIN * uniform_nll:
        return "loss_above_uniform"
    return None


def validation_divergence(valid_nll: float, best_nll: float, *, uniform_nll: float) -> str | None:
    """Why an epoch's validation NLL counts as diverged, or None."""
    if not math.isfinite(valid_nll):
        return "non_finite_loss"
    if valid_nll > UNIFORM_MARGIN * uniform_nll:
        return "loss_above_uniform"
    if math.isfinite(best_nll) and valid_nll > RISING_FACTOR * best_nll:
        return "loss_rising"
    return None
