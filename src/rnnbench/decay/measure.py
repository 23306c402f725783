"""Gradient decay measured on real recurrent networks: blame flowing back, information flowing forward.

Backward (blame). For sequences of T inputs and the loss at the last step only, L_T = -log p(y_T | x_1..x_T),
the error reaching step t = T - d (d = distance) is

    dL_T/dh_t = J_{t+1}^T ... J_T^T dL_T/dh_T,      J_t = dh_t/dh_{t-1} = diag(f'(a_t)) U      (12.5, 12.6)
    dL_T/dx_t = W^T diag(f'(a_t)) dL_T/dh_t

All T of them come out of ONE backward pass: the reference cell is stepped by hand (`models.base.unroll`), so
every h_t (and the LSTM's c_t) is a node of the graph, and `torch.autograd.grad` is asked for the loss's
gradient at all of them at once. The N sequences of a batch never interact, so the gradient of the summed
loss at sequence n's states is that sequence's own gradient.

Forward (information). x_1 is moved by eps along a fixed unit direction v, and the move of h_{1+d} and of
log p_{1+d} (the output distribution) is measured per distance d, both as a finite difference divided by eps
and exactly as the Jacobian-vector product J_{1+d} ... J_2 diag(f'(a_1)) W v (forward-mode autograd).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from rnnbench.models import LSTMLM, ElmanLM, RecurrentLM
from rnnbench.models.base import unroll

QUANTILES = (0.1, 0.9)
OUTPUT_DISTANCES = 100  # the forward move of the output distribution is measured this far (see forward_decay)
OUTPUT_EVERY = 5  # ... at every 5th distance: one |V|-word softmax per point is the forward measurement's cost
ROUNDING_MARGIN = 1e3  # a finite move smaller than this many rounding errors of its values is not reported

# --------------------------------------------------------------------------------------------------------------
# Backward: the gradient of the last step's loss at every earlier state, in one backward pass.


def check_recurrent(model) -> RecurrentLM:
    if not isinstance(model, (ElmanLM, LSTMLM)):
        raise ValueError(f"gradient decay needs a recurrent model (rnn or lstm), got {type(model).__name__}")
    return model


def _last_step_loss(model: RecurrentLM, h_last: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Sum over sequences of -log p(y_T): each sequence's gradient is its own loss's."""
    log_probs = model.output.log_probs(h_last)  # (N, V)
    return -log_probs.gather(1, targets[:, None]).sum()


def _embed(model: RecurrentLM, tokens: torch.Tensor) -> torch.Tensor:
    """Input vectors as a leaf of their own (no dropout: a measurement, not training)."""
    return model.embedding(tokens).detach().requires_grad_()  # (T, N, d)


def _norms_table(norms: dict[str, torch.Tensor]) -> pd.DataFrame:
    """{quantity: (T, N) norms indexed by step t - 1} -> tidy rows (sequence, quantity, distance, norm, relative)."""
    frames = []
    for quantity, by_step in norms.items():
        by_distance = by_step.flip(0).detach().double().cpu().numpy()  # (T, N): row d is step T - d
        T, N = by_distance.shape
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = by_distance / by_distance[0]  # (T, N): norm / the same sequence's norm at distance 0
        frames.append(
            pd.DataFrame(
                {
                    "sequence": np.tile(np.arange(N), T),
                    "quantity": quantity,
                    "distance": np.repeat(np.arange(T), N),
                    "norm": by_distance.ravel(),
                    "relative": relative.ravel(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def backward_decay(model: RecurrentLM, tokens: torch.Tensor) -> pd.DataFrame:
    """||dL_T/dh_t||, ||dL_T/dx_t|| (and ||dL_T/dc_t|| for the LSTM) for every t, in one backward pass.

    tokens: (T + 1, N): inputs x_1..x_T and the target of the last step. One row per (quantity, sequence,
    distance), distance = T - t from 0 to T - 1; `relative` divides by the same sequence's norm at distance 0.
    """
    model = check_recurrent(model)
    inputs, targets = tokens[:-1], tokens[-1]  # (T, N), (N,)
    x = _embed(model, inputs)  # (T, N, d)
    outputs, states = unroll(model.cell, x, model.init_state(inputs.shape[1]))  # (T, N, H), [state_t]
    loss = _last_step_loss(model, outputs[-1], targets)
    hs = [s[0] if isinstance(s, tuple) else s for s in states]  # h_t, (N, H) each
    cs = [s[1] for s in states] if isinstance(states[0], tuple) else []  # c_t for the LSTM
    grads = torch.autograd.grad(loss, [x, *hs, *cs])  # the one backward pass
    T = len(hs)
    norms = {
        "h": torch.stack([g.norm(dim=-1) for g in grads[1 : 1 + T]]),  # (T, N)
        "x": grads[0].norm(dim=-1),  # (T, N)
    }
    if cs:
        norms["c"] = torch.stack([g.norm(dim=-1) for g in grads[1 + T :]])  # (T, N)
    return _norms_table(norms)


def naive_backward_decay(model: RecurrentLM, tokens: torch.Tensor, steps: Sequence[int] | None = None) -> pd.DataFrame:
    """The same norms the slow way, as an oracle: one forward and one backward pass per step t (1-based).

    Each pass makes x_t its own leaf and asks autograd for the gradient at x_t and at state t only.
    Only the steps given are measured (all T by default); `relative` is left empty.
    """
    model = check_recurrent(model)
    inputs, targets = tokens[:-1], tokens[-1]
    T, N = inputs.shape
    rows = []
    for t in steps if steps is not None else range(1, T + 1):
        x = model.embedding(inputs).detach()  # (T, N, d)
        x_t = x[t - 1].clone().requires_grad_()  # (N, d)
        state = model.init_state(N)
        watched = None
        for s in range(T):
            h, state = model.cell(x_t if s == t - 1 else x[s], state)  # (N, H)
            if s == t - 1:
                watched = state
        loss = _last_step_loss(model, h, targets)
        leaves = [x_t, *(watched if isinstance(watched, tuple) else (watched,))]
        grads = torch.autograd.grad(loss, leaves)
        names = ["x", "h", "c"][: len(grads)]
        for name, g in zip(names, grads, strict=True):
            for n, value in enumerate(g.norm(dim=-1).tolist()):
                rows.append({"sequence": n, "quantity": name, "distance": T - t, "norm": value})
    return pd.DataFrame(rows)


def summarise(table: pd.DataFrame, value: str = "norm", by: Sequence[str] = ("quantity", "distance")) -> pd.DataFrame:
    """Spread over sequences per distance: mean, geometric mean, median, quantiles, min, max, count.

    The geometric mean (exp of the mean log) is the centre the rates are fitted to; zero norms (underflow)
    make it 0.
    """
    grouped = table.groupby(list(by), sort=True)[value]
    with np.errstate(divide="ignore"):
        logs = np.log(table[value].astype(float))
    out = grouped.agg(["mean", "median", "min", "max", "count"])
    out.insert(1, "geo_mean", np.exp(logs.groupby([table[k] for k in by]).mean()))
    for q in QUANTILES:
        out.insert(len(out.columns) - 2, f"q{int(round(q * 100)):02d}", grouped.quantile(q))
    return out.reset_index()


# --------------------------------------------------------------------------------------------------------------
# Forward: move x_1 and measure how far every later state and output distribution moves.


def states_from(model: RecurrentLM, x: torch.Tensor) -> torch.Tensor:
    outputs, _ = unroll(model.cell, x, model.init_state(x.shape[1]))
    return outputs  # (T, N, H)


def direction(dim: int, *, seed: int = 0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The fixed, seeded unit vector x_1 is moved along: (dim,)."""
    v = torch.randn(dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (v / v.norm()).to(dtype)


def _resolved(move: torch.Tensor, size: torch.Tensor, eps: float) -> torch.Tensor:
    """move / eps, or NaN where the move is within ROUNDING_MARGIN rounding errors of the values it moves:
    there the finite difference measures rounding, not the network (the JVP has no such floor)."""
    floor = ROUNDING_MARGIN * torch.finfo(move.dtype).eps * size
    return torch.where(move > floor, move / eps, torch.full_like(move, float("nan")))


def forward_decay(
    model: RecurrentLM,
    tokens: torch.Tensor,
    *,
    eps: float = 1e-6,
    seed: int = 0,
    output_distances: int = OUTPUT_DISTANCES,
    output_every: int = OUTPUT_EVERY,
    chunk: int = 50,
) -> pd.DataFrame:
    """How far h_{1+d} and log p_{1+d} move per unit move of x_1 along a fixed seeded unit direction v.

    Columns: sequence, quantity ("h" or "log_probs"), distance d, finite (||f(x_1 + eps v) - f(x_1)|| / eps)
    and jvp (||J v||, exact, forward-mode autograd). Use float64 for a small eps; `finite` is NaN once the move
    is lost in rounding (see `_resolved`), which for a fast decay is well before the JVP's end.
    h is measured at every distance 0..T-1. The output distribution, a |V|-word softmax per step and sequence
    and most of the cost, at every `output_every`-th distance up to `output_distances`, `chunk` steps at a
    time so that it never sits in memory whole. The JVP through it is exact by the chain rule (the tangent of
    h_t carried on to log p_t).
    """
    model = check_recurrent(model)
    inputs = tokens[:-1]  # (T, N)
    with torch.no_grad():
        x = model.embedding(inputs)  # (T, N, d)
    v = direction(x.shape[-1], seed=seed, dtype=x.dtype)  # (d,)
    tangent = torch.zeros_like(x)
    tangent[0] = v  # only x_1 moves, the same way in every sequence
    moved = x.clone()
    moved[0] += eps * v
    with torch.no_grad():
        hs, dhs = torch.func.jvp(lambda inp: states_from(model, inp), (x,), (tangent,))  # (T, N, H) each
        hs_moved = states_from(model, moved)  # (T, N, H)
        picked = torch.arange(0, min(hs.shape[0], output_distances + 1), output_every)  # (D,): distances
        p_finite, p_jvp, p_size = [], [], []
        for part in picked.split(chunk):
            base, dlogp = torch.func.jvp(model.output.log_probs, (hs[part],), (dhs[part],))  # (c, N, V) each
            p_finite.append((model.output.log_probs(hs_moved[part]) - base).norm(dim=-1))  # (c, N): the move
            p_jvp.append(dlogp.norm(dim=-1))  # (c, N)
            p_size.append(base.norm(dim=-1))  # (c, N)
    frames = []
    h_finite = _resolved((hs_moved - hs).norm(dim=-1), hs.norm(dim=-1), eps)  # (T, N)
    p_finite = _resolved(torch.cat(p_finite), torch.cat(p_size), eps)  # (D, N)
    for quantity, distances, finite, jvp in (
        ("h", torch.arange(hs.shape[0]), h_finite, dhs.norm(dim=-1)),
        ("log_probs", picked, p_finite, torch.cat(p_jvp)),
    ):
        D, N = jvp.shape
        frames.append(
            pd.DataFrame(
                {
                    "sequence": np.tile(np.arange(N), D),
                    "quantity": quantity,
                    "distance": np.repeat(distances.numpy(), N),  # step 1 + d
                    "finite": finite.double().cpu().numpy().ravel(),
                    "jvp": jvp.double().cpu().numpy().ravel(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
