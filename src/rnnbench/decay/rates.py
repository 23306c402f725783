"""Rates: the measured slope of log-norm against distance, beside three bounds on it and the chapter's prediction.

    measured            slope r of mean_n log ||g_d^(n)|| = c + r d, least squares over a stated distance range
    jacobian_bound      log mean_t ||diag(f'(a_t)) U||_2   along the measured trajectory (mean over steps, sequences)
    jacobian_log_bound  mean_t log ||diag(f'(a_t)) U||_2   (the log of the product of per-step norms, per step)
    pascanu_bound       log(sigma_max(U) max f')           the bound no trajectory can exceed (Pascanu et al. 2013)
    radius_rate         log rho(U)                         the chapter's eigenvalue story: the rate of a linear
                                                           network (f' = 1), whose gradient follows U^d
    mean_slope          mean_t f'(a_t)                     the activation's slope along the trajectory (steps,
                                                           sequences and units averaged)

All but mean_slope are logs of a per-step factor: 0 is the edge, below 0 vanishing, above 0 exploding. The
gradient crosses one step as g_{d+1} = J_t^T g_d, so ||g_{d+1}|| <= ||J_t|| ||g_d||: on every window the mean of
log ||J_t|| over the steps crossed bounds the gradient's growth per step from above (here estimated on a sample
of those steps), the log of the mean ||J_t|| (Jensen) and Pascanu's sigma_max(U) max f' (>= every ||J_t||) more
loosely. log rho(U) bounds nothing: it is the rate the gradient would have were every unit linear.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from rnnbench.decay.measure import states_from
from rnnbench.decay.networks import spectral_radius
from rnnbench.models import ElmanLM, RecurrentLM

# Largest slope of each activation (tanh'(0) = 1, sigmoid'(0) = 1/4, relu' = 1): Pascanu's bound uses it.
# "linear" is the identity, the chapter's scalar picture and the tests' exact case (see `make_linear`).
MAX_SLOPE = {"tanh": 1.0, "sigmoid": 0.25, "relu": 1.0, "linear": 1.0}
FIT_SKIP = 5  # the first steps from the loss carry the output layer's transient, not the recurrence's rate
FIT_MAX = 100
UNDERFLOW_MARGIN = 1e6  # norms below this many times the dtype's smallest normal number have lost precision
# The Jacobian bounds and the mean slope average over this many steps spread evenly over the fitted range (times
# all N sequences): one SVD per step and sequence is most of the cost of a rates table, and the mean of a few
# hundred samples is already steady.
JACOBIAN_STEPS = 10


def _usable(norms: pd.Series, dtype: torch.dtype) -> bool:
    floor = UNDERFLOW_MARGIN * torch.finfo(dtype).tiny
    return bool(np.all(np.isfinite(norms)) and np.all(norms > floor))


def fit_rate(
    table: pd.DataFrame,
    *,
    value: str = "norm",
    fit: tuple[int, int] | None = None,
    dtype: torch.dtype = torch.float32,
) -> dict:
    """Least-squares slope of mean log-norm (over sequences) against distance, for one quantity's rows.

    Fit range: distances fit[0]..fit[1] (default FIT_SKIP..min(FIT_MAX, T-1)), cut short at the first
    distance where any sequence's norm is not finite or has underflowed (below UNDERFLOW_MARGIN times the
    dtype's smallest normal number). Sequences with no usable norm at distance 0 are left out. Returns rate,
    intercept, the distances used, how many, and how many sequences.
    """
    d_max_seen = int(table["distance"].max())
    lo, hi = fit if fit is not None else (FIT_SKIP, min(FIT_MAX, d_max_seen))
    # A sequence whose loss has no gradient at all (a saturated softmax, p(y_T) = 1 in floating point) has
    # nothing to decay: it is left out rather than cutting every sequence's fit at distance 0.
    start = table[table["distance"] == 0].set_index("sequence")[value]
    alive = [n for n, norm in start.items() if _usable(np.asarray([norm]), dtype)]
    table = table[table["sequence"].isin(alive)]
    distances, centres = [], []
    for d, group in table[(table["distance"] >= lo) & (table["distance"] <= hi)].groupby("distance", sort=True):
        if not _usable(group[value].to_numpy(), dtype):
            break  # beyond an underflow every later norm is lost as well
        distances.append(d)
        centres.append(float(np.mean(np.log(group[value].to_numpy()))))
    if len(distances) < 2:
        return {
            "rate": float("nan"), "intercept": float("nan"), "fit_from": lo, "fit_to": lo, "fit_points": 0,
            "fit_sequences": len(alive),
        }  # fmt: skip
    slope, intercept = np.polyfit(np.asarray(distances, dtype=float), np.asarray(centres), 1)
    return {
        "rate": float(slope),
        "intercept": float(intercept),
        "fit_from": int(distances[0]),
        "fit_to": int(distances[-1]),
        "fit_points": len(distances),
        "fit_sequences": len(alive),
    }


def step_slopes(model: ElmanLM, tokens: torch.Tensor, steps: Sequence[int]) -> torch.Tensor:
    """f'(a_t), the activation's slope at each unit, along the trajectory of `tokens` at the given steps t
    (1-based): (len(steps), N, H)."""
    cell = model.cell
    inputs = tokens[:-1]  # (T, N)
    with torch.no_grad():
        x = model.embedding(inputs)  # (T, N, d)
        hs = states_from(model, x)  # (T, N, H)
        h0 = model.init_state(inputs.shape[1])  # (N, H)
        index = torch.as_tensor(list(steps)) - 1  # (D,): 0-based
        h_prev = torch.stack([hs[i - 1] if i > 0 else h0 for i in index.tolist()])  # (D, N, H): h_{t-1}
        pre = x[index] @ cell.W.T + h_prev @ cell.U.T + cell.b_h  # (D, N, H): a_t
    pre = pre.requires_grad_()
    (slope,) = torch.autograd.grad(cell.act(pre).sum(), pre)  # (D, N, H): f'(a_t), elementwise
    return slope


def step_jacobian_norms(model: ElmanLM, tokens: torch.Tensor, steps: Sequence[int]) -> torch.Tensor:
    """||J_t||_2 = ||diag(f'(a_t)) U||_2 along the trajectory of `tokens`, at the given steps t (1-based):
    (len(steps), N). The backward gradient crosses J_t going from distance T - t to T - t + 1; a move of x_1
    crosses it going from distance t - 2 to t - 1."""
    return _jacobian_norms(model, step_slopes(model, tokens, steps))


def _jacobian_norms(model: ElmanLM, slope: torch.Tensor) -> torch.Tensor:
    jac = slope[..., :, None] * model.cell.U.detach()  # (D, N, H, H): diag(f'(a_t)) U
    return torch.linalg.matrix_norm(jac, ord=2)  # (D, N)


BESIDE = (
    "jacobian_bound", "jacobian_log_bound", "pascanu_bound", "radius_rate", "mean_slope", "sigma_max", "rho",
    "max_slope",
)  # fmt: skip


def bounds_and_prediction(model: RecurrentLM, tokens: torch.Tensor, steps: Sequence[int]) -> dict:
    """What stands beside a measured rate (the module docstring): the three bounds, log rho(U), and the mean slope
    f'(a_t); the Jacobian bounds and the slope over JACOBIAN_STEPS of the given steps t, spread evenly. NaN for
    the LSTM, whose per-step Jacobian is not diag(f') U, and for the trajectory's values when no step is given."""
    if not isinstance(model, ElmanLM):
        return dict.fromkeys(BESIDE, float("nan"))
    U = model.cell.U.detach()
    sigma = float(torch.linalg.matrix_norm(U.double(), ord=2))
    rho = spectral_radius(U)
    max_slope = MAX_SLOPE[model.cell.activation]
    if len(steps):
        picks = np.linspace(0, len(steps) - 1, min(JACOBIAN_STEPS, len(steps))).round().astype(int)
        slope = step_slopes(model, tokens, sorted({steps[i] for i in picks}))  # (D, N, H)
        jac = _jacobian_norms(model, slope).double()  # (D, N)
        jacobian, jacobian_log = float(torch.log(jac.mean())), float(torch.log(jac).mean())
        mean_slope = float(slope.double().mean())
    else:
        jacobian = jacobian_log = mean_slope = float("nan")
    values = (
        jacobian, jacobian_log, float(np.log(sigma * max_slope)), float(np.log(rho)), mean_slope, sigma, rho,
        max_slope,
    )  # fmt: skip
    return dict(zip(BESIDE, values, strict=True))


def rates(
    model: RecurrentLM, tokens: torch.Tensor, curves: pd.DataFrame, *, fit: tuple[int, int] | None = None
) -> pd.DataFrame:
    """Measured rates (logs of the per-step factor) of a `backward_decay(model, tokens)` table beside their bounds
    and log rho(U), one row per quantity. The Jacobian bounds average over the steps the fitted distances cross."""
    dtype = next(model.parameters()).dtype
    T = int(tokens.shape[0]) - 1
    rows, beside = [], {}
    for quantity, table in curves.groupby("quantity", sort=False):
        row = {"quantity": quantity, **fit_rate(table, fit=fit, dtype=dtype)}
        crossed = tuple(T - d + 1 for d in range(row["fit_from"] + 1, row["fit_to"] + 1)) if row["fit_points"] else ()
        if crossed not in beside:  # h and x usually share their fitted range
            beside[crossed] = bounds_and_prediction(model, tokens, crossed)
        rows.append({**row, **beside[crossed]})
    return pd.DataFrame(rows)


def forward_rates(
    model: RecurrentLM, tokens: torch.Tensor, forward: pd.DataFrame, *, fit: tuple[int, int] | None = None
) -> pd.DataFrame:
    """Measured rates of a `forward_decay(model, tokens)` table beside their bounds and log rho(U), one row per
    quantity and method (finite, jvp). The Jacobian bounds average over the steps the fitted distances cross
    going forward."""
    dtype = next(model.parameters()).dtype
    rows, beside = [], {}
    for quantity, table in forward.groupby("quantity", sort=False):
        for method in ("finite", "jvp"):
            row = {"quantity": quantity, "method": method, **fit_rate(table, value=method, fit=fit, dtype=dtype)}
            crossed = tuple(d + 1 for d in range(row["fit_from"] + 1, row["fit_to"] + 1)) if row["fit_points"] else ()
            if crossed not in beside:
                beside[crossed] = bounds_and_prediction(model, tokens, crossed)
            rows.append({**row, **beside[crossed]})
    return pd.DataFrame(rows)
