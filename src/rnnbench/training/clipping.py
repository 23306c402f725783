"""Gradient clipping, the chapter's 12.7 and Mikolov's element-wise rule, measured as it acts.

The loop calls ``clip_gradients_``, which reads nothing back to Python (its results stay tensors until the
loop reads a block of steps at once); ``clip_gradients`` gives the same as Python numbers.

Two cosines, two questions. ``cosine`` is the gradient's: cos(g clipped, g). Norm clipping multiplies g by
threshold / ||g|| > 0, a positive rescaling, so it is 1 by construction; value clipping can turn g. It is also the
update's for plain SGD, whose update -lr g points where the gradient does. ``update_cosine`` is the update's
for an optimiser that keeps state: Adam's step m_hat / (sqrt(v_hat) + eps) weighs the new gradient against its
moments coordinate by coordinate, so a clipped g (even one only rescaled) can turn the step. It is measured
from the optimiser's own state, the update from the clipped gradient against the one the unclipped gradient
would have given at the same m, v, step count, rate and weight decay (``Optimizer.trial_updates``), before
step() and without changing what step() does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import torch

from rnnbench.training.optim import RowUpdate

if TYPE_CHECKING:
    from rnnbench.training.optim import Optimizer


class Clipped(NamedTuple):
    """One step's clipping, as tensors (read back later, not per step)."""

    norm: torch.Tensor  # () global gradient norm before clipping
    clipped: torch.Tensor  # () bool: did clipping change the gradient
    cosine: torch.Tensor  # () float64: cos(gradient after clipping, gradient before); 1 when nothing changed
    # () float64: cos(update from the clipped gradient, update from the unclipped one) at the same optimiser state;
    # 1 when nothing changed, NaN where not measured (no optimiser given)
    update_cosine: torch.Tensor


NOT_MEASURED = torch.tensor(float("nan"), dtype=torch.float64)


def clip_gradients_(parameters, mode: str, threshold: float, optimizer: Optimizer | None = None) -> Clipped:
    """Clip in place without reading anything back to Python.

    ``norm``: if ||g|| > threshold, g <- threshold / ||g|| * g (the chapter's 12.7): a positive rescaling,
    so the direction is kept and the cosine is exactly 1. ``value``: every component clamped to
    [-threshold, threshold] (Mikolov's +-15); the direction may turn, and the cosine measures by how much:
    cos = <g, clamp(g)> / (||g|| ||clamp(g)||). ``none``: measured, never changed.
    With ``optimizer`` (the one about to step on these gradients), the update cosine is measured too: the
    optimiser's trial update before clipping and after, compared (its update rule over copies of its state, once
    for the whole model and once for the rows an embedding's gradient uses and the other parameters; dot products).
    """
    unclipped = optimizer.trial_updates() if optimizer is not None else None
    norm, clipped, cosine = _clip(_gradient_tensors(parameters), mode, threshold)
    if unclipped is None:
        return Clipped(norm, clipped, cosine, NOT_MEASURED)
    turned = _cosine(unclipped, optimizer.trial_updates(used_rows=True))
    return Clipped(norm, clipped, cosine, torch.where(clipped, turned, torch.ones((), dtype=torch.float64)))


def _clip(grads: list[torch.Tensor], mode: str, threshold: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(norm before, clipped, gradient cosine) of clipping ``grads`` in place (clip_gradients_)."""
    norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))  # () same as a norm per tensor
    one = torch.ones((), dtype=torch.float64)
    if mode == "norm":
        clipped = norm > threshold
        # threshold / norm in float64, as a Python float would be; times 1 (exact) when not clipped
        torch._foreach_mul_(grads, torch.where(clipped, threshold / norm.double(), one))
        return norm, clipped, one
    if mode == "value":
        clipped = torch.stack(torch._foreach_norm(grads, float("inf"))).max() > threshold  # any |g_i| > threshold
        clamped = [g.clamp(-threshold, threshold) for g in grads]
        dot = sum((g.double() * c).sum() for g, c in zip(grads, clamped, strict=True))
        clamped_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(clamped))).double()
        torch._foreach_copy_(grads, clamped)
        return norm, clipped, torch.where(clipped, dot / (norm.double() * clamped_norm), one)
    return norm, torch.zeros((), dtype=torch.bool), one


def _cosine(a: list[torch.Tensor], b: list[torch.Tensor | RowUpdate]) -> torch.Tensor:
    """() float64: <a, b> / (||a|| ||b||), each list taken as one vector, within [-1, 1] (rounding can put two
    equal vectors' a hair above 1). Where ``b`` holds a parameter's used rows alone (a RowUpdate), its other rows are
    ``a``'s: <a, b> = ||a||^2 - ||a_R||^2 + <a_R, b_R>, and ||b||^2 likewise. Each product by BLAS's dot (to about
    1e-6 in float32; torch's own float32 norm drifts by 1e-5 over a million entries), summed in float64."""

    def dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.dot(x.reshape(-1), y.reshape(-1)).double()

    ab, aa, bb = [], [], []
    for u, w in zip(a, b, strict=True):
        aa.append(dot(u, u))
        if isinstance(w, RowUpdate):
            rows = u.index_select(0, w.rows)
            outside = aa[-1] - dot(rows, rows)
            ab.append(outside + dot(rows, w.values))
            bb.append(outside + dot(w.values, w.values))
        else:
            ab.append(dot(u, w))
            bb.append(dot(w, w))
    total = [torch.stack(x).sum() for x in (ab, aa, bb)]
    return (total[0] / torch.sqrt(total[1] * total[2])).clamp(-1.0, 1.0)


def _gradient_tensors(parameters) -> list[torch.Tensor]:
    """Every gradient as a dense tensor the rules above act on in place. A sparse gradient (an embedding's, under
    either optimiser: only the rows a step's tokens used) is coalesced first, a row a token repeats summed into one, so its
    values are the nonzero rows of the dense gradient; they stand for the whole of it, since every other row is
    zero and stays zero under each rule (the norms, the rescaling, the clamp)."""
    tensors = []
    for p in parameters:
        if p.grad is None:
            continue
        if p.grad.is_sparse:
            p.grad = p.grad.coalesce()
            tensors.append(p.grad.values())  # a view: changed in place, the gradient changes
        else:
            tensors.append(p.grad)
    return tensors


def clip_gradients(parameters, mode: str, threshold: float) -> tuple[float, bool]:
    """Clip in place; return the global gradient norm *before* clipping and whether anything changed."""
    result = clip_gradients_(parameters, mode, threshold)
    return float(result.norm), bool(result.clipped)
