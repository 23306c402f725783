"""Gradient clipping, the chapter's 12.7 and Mikolov's element-wise rule, measured as it acts.

The loop calls ``clip_gradients_``, which reads nothing back to Python (its results stay tensors until the
loop reads a block of steps at once); ``clip_gradients`` gives the same as Python numbers.
"""

from __future__ import annotations

from typing import NamedTuple

import torch


class Clipped(NamedTuple):
    """One step's clipping, as tensors (read back later, not per step)."""

    norm: torch.Tensor  # () global gradient norm before clipping
    clipped: torch.Tensor  # () bool: did clipping change the gradient
    cosine: torch.Tensor  # () float64: cos(update after clipping, update before); 1 when nothing changed


def clip_gradients_(parameters, mode: str, threshold: float) -> Clipped:
    """Clip in place without reading anything back to Python.

    ``norm``: if ||g|| > threshold, g <- threshold / ||g|| * g (the chapter's 12.7): a positive rescaling,
    so the direction is kept and the cosine is exactly 1. ``value``: every component clamped to
    [-threshold, threshold] (Mikolov's +-15); the direction may turn, and the cosine measures by how much:
    cos = <g, clamp(g)> / (||g|| ||clamp(g)||). ``none``: measured, never changed.
    """
    grads = _gradient_tensors(parameters)
    norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))  # () same as a norm per tensor
    one = torch.ones((), dtype=torch.float64)
    if mode == "norm":
        clipped = norm > threshold
        # threshold / norm in float64, as a Python float would be; times 1 (exact) when not clipped
        torch._foreach_mul_(grads, torch.where(clipped, threshold / norm.double(), one))
        return Clipped(norm, clipped, one)
    if mode == "value":
        clipped = torch.stack(torch._foreach_norm(grads, float("inf"))).max() > threshold  # any |g_i| > threshold
        clamped = [g.clamp(-threshold, threshold) for g in grads]
        dot = sum((g.double() * c).sum() for g, c in zip(grads, clamped, strict=True))
        clamped_norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(clamped))).double()
        torch._foreach_copy_(grads, clamped)
        return Clipped(norm, clipped, torch.where(clipped, dot / (norm.double() * clamped_norm), one))
    return Clipped(norm, torch.zeros((), dtype=torch.bool), one)


def _gradient_tensors(parameters) -> list[torch.Tensor]:
    """Every gradient as a dense tensor the rules above act on in place. A sparse gradient (an embedding's under
    SGD: only the rows a step's tokens used) is coalesced first, a row a token repeats summed into one, so its
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
