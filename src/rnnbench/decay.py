"""Gradient decay measured on real recurrent networks, backward and forward, beside the rates theory predicts.

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

Rates. A curve decaying geometrically is a straight line log ||g_d|| = c + r d; its slope r is the measured
rate (r = log of the per-step factor). Beside it, the rates the chapter and Pascanu et al. (2013) predict:
    jacobian        log mean_t ||diag(f'(a_t)) U||_2   along the measured trajectory (mean over steps, sequences)
    jacobian_log    mean_t log ||diag(f'(a_t)) U||_2   (the log of the product of per-step norms, per step)
    pascanu_bound   log(sigma_max(U) max f')           the bound no trajectory can exceed
    spectral_radius log rho(U)                         the chapter's eigenvalue story (tanh' = 1 everywhere)
Each is an upper bound or an estimate of r, not r itself: the gradient lives in the few directions that
survive, and tanh' < 1 on a saturated trajectory shrinks every step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from rnnbench.models import ElmanLM, LSTMLM, ModelConfig, RecurrentLM, build_model
from rnnbench.models.base import unroll

# Largest slope of each activation (tanh'(0) = 1, sigmoid'(0) = 1/4, relu' = 1): Pascanu's bound uses it.
# "linear" is the identity, the chapter's scalar picture and the tests' exact case (see `make_linear`).
MAX_SLOPE = {"tanh": 1.0, "sigmoid": 0.25, "relu": 1.0, "linear": 1.0}
QUANTILES = (0.1, 0.9)
FIT_SKIP = 5  # the first steps from the loss carry the output layer's transient, not the recurrence's rate
FIT_MAX = 100
UNDERFLOW_MARGIN = 1e6  # norms below this many times the dtype's smallest normal number have lost precision


# --------------------------------------------------------------------------------------------------------------
# Networks: untrained Elman RNNs built through the project's constructors, U rescaled to a spectral radius.


def spectral_radius(matrix: torch.Tensor) -> float:
    return float(torch.linalg.eigvals(matrix.detach().double()).abs().max())


def set_spectral_radius(model: ElmanLM, radius: float) -> ElmanLM:
    """Rescale U in place so that rho(U) = radius (the eigenvalues' directions are kept)."""
    if radius <= 0:
        raise ValueError(f"spectral radius must be > 0, got {radius}")
    with torch.no_grad():
        model.cell.U.mul_(radius / spectral_radius(model.cell.U))
    return model


def untrained_rnn(
    *,
    vocab_size: int,
    radius: float,
    activation: str = "tanh",
    hidden: int = 200,
    embed_dim: int = 200,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> ElmanLM:
    """A freshly initialised Elman LM (the project's own init, seeded) with U rescaled to spectral radius `radius`."""
    cfg = ModelConfig(
        family="rnn", vocab_size=vocab_size, embed_dim=embed_dim, hidden=hidden, activation=activation, impl="reference"
    )
    torch.manual_seed(seed)
    model = build_model(cfg).to(dtype)
    return set_spectral_radius(model, radius)


def make_linear(model: ElmanLM, a: float | None = None) -> ElmanLM:
    """Turn the cell's activation into the identity (h_t = W x_t + U h_{t-1} + b), and U into a*I if a is given.

    The linear RNN is the chapter's scalar picture made exact: every Jacobian is U, so with U = a I every
    gradient norm is a^distance times the last step's.
    """
    model.cell.act = lambda pre: pre
    model.cell.activation = "linear"
    if a is not None:
        with torch.no_grad():
            model.cell.U.copy_(a * torch.eye(model.cfg.hidden, dtype=model.cell.U.dtype))
    return model


def sequences(ids: np.ndarray, length: int, count: int, *, seed: int = 0) -> torch.Tensor:
    """`count` windows of `length` + 1 consecutive tokens (inputs and the last target) at seeded random offsets.

    Returns (length + 1, count) int64, time first as the models take it.
    """
    ids = np.asarray(ids)
    if ids.size < length + 1:
        raise ValueError(f"a window of {length} + 1 tokens needs a split of at least {length + 1}, got {ids.size}")
    starts = np.random.default_rng(seed).integers(0, ids.size - length, size=count)
    windows = np.stack([ids[s : s + length + 1] for s in starts], axis=1)  # (T + 1, N)
    return torch.as_tensor(windows, dtype=torch.int64)


# --------------------------------------------------------------------------------------------------------------
# Backward: the gradient of the last step's loss at every earlier state, in one backward pass.


def _check_recurrent(model) -> RecurrentLM:
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
    model = _check_recurrent(model)
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
    model = _check_recurrent(model)
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
        for name, g in zip(names, grads):
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


def _states_from(model: RecurrentLM, x: torch.Tensor) -> torch.Tensor:
    outputs, _ = unroll(model.cell, x, model.init_state(x.shape[1]))
    return outputs  # (T, N, H)


def direction(dim: int, *, seed: int = 0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The fixed, seeded unit vector x_1 is moved along: (dim,)."""
    v = torch.randn(dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (v / v.norm()).to(dtype)


def forward_decay(
    model: RecurrentLM, tokens: torch.Tensor, *, eps: float = 1e-6, seed: int = 0, chunk: int = 50
) -> pd.DataFrame:
    """How far h_{1+d} and log p_{1+d} move per unit move of x_1 along a fixed seeded unit direction v.

    Columns: sequence, quantity ("h" or "log_probs"), distance d (0 .. T-1), finite (||f(x_1 + eps v) -
    f(x_1)|| / eps) and jvp (||J v||, exact, forward-mode autograd). Use float64 for a small eps. Output
    distributions are computed `chunk` steps at a time, so a 10,000-word softmax over T steps never sits in
    memory whole; the JVP through them is exact by the chain rule (the tangent of h_t carried to log p_t).
    """
    model = _check_recurrent(model)
    inputs = tokens[:-1]  # (T, N)
    with torch.no_grad():
        x = model.embedding(inputs)  # (T, N, d)
    v = direction(x.shape[-1], seed=seed, dtype=x.dtype)  # (d,)
    tangent = torch.zeros_like(x)
    tangent[0] = v  # only x_1 moves, the same way in every sequence

    with torch.no_grad():
        hs = _states_from(model, x)  # (T, N, H)
        moved = x.clone()
        moved[0] += eps * v
        hs_moved = _states_from(model, moved)  # (T, N, H)
    with torch.no_grad():
        _, dhs = torch.func.jvp(lambda inp: _states_from(model, inp), (x,), (tangent,))  # (T, N, H)

    h_finite = (hs_moved - hs).norm(dim=-1) / eps  # (T, N)
    h_jvp = dhs.norm(dim=-1)  # (T, N)
    p_finite, p_jvp = [], []
    with torch.no_grad():
        for start in range(0, hs.shape[0], chunk):
            part = slice(start, start + chunk)
            base, dlogp = torch.func.jvp(model.output.log_probs, (hs[part],), (dhs[part],))  # (c, N, V) each
            p_finite.append((model.output.log_probs(hs_moved[part]) - base).norm(dim=-1) / eps)  # (c, N)
            p_jvp.append(dlogp.norm(dim=-1))  # (c, N)
    frames = []
    T, N = h_jvp.shape
    for quantity, finite, jvp in (
        ("h", h_finite, h_jvp),
        ("log_probs", torch.cat(p_finite), torch.cat(p_jvp)),
    ):
        frames.append(
            pd.DataFrame(
                {
                    "sequence": np.tile(np.arange(N), T),
                    "quantity": quantity,
                    "distance": np.repeat(np.arange(T), N),  # step 1 + d
                    "finite": finite.double().cpu().numpy().ravel(),
                    "jvp": jvp.double().cpu().numpy().ravel(),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------------------------
# Rates: the measured slope of log-norm against distance beside the predicted ones.


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


def step_jacobian_norms(model: ElmanLM, tokens: torch.Tensor, distances: Sequence[int]) -> torch.Tensor:
    """||diag(f'(a_t)) U||_2 along the trajectory at the steps t = T - d + 1 that carry the gradient from
    distance d - 1 to d, for each given d: (len(distances), N)."""
    cell = model.cell
    inputs = tokens[:-1]  # (T, N)
    T = inputs.shape[0]
    with torch.no_grad():
        x = model.embedding(inputs)  # (T, N, d)
        hs = _states_from(model, x)  # (T, N, H)
        h0 = model.init_state(inputs.shape[1])  # (N, H)
        steps = torch.as_tensor([T - d for d in distances])  # 0-based index of step t = T - d + 1
        h_prev = torch.stack([hs[s - 1] if s > 0 else h0 for s in steps.tolist()])  # (D, N, H)
        pre = x[steps] @ cell.W.T + h_prev @ cell.U.T + cell.b_h  # (D, N, H): a_t
    pre = pre.requires_grad_()
    (slope,) = torch.autograd.grad(cell.act(pre).sum(), pre)  # (D, N, H): f'(a_t), elementwise
    jac = slope[..., :, None] * cell.U.detach()  # (D, N, H, H): diag(f'(a_t)) U
    return torch.linalg.matrix_norm(jac, ord=2)  # (D, N)


def rates(model: RecurrentLM, tokens: torch.Tensor, curves: pd.DataFrame, *, fit: tuple[int, int] | None = None) -> pd.DataFrame:
    """Measured vs predicted rates (log of the per-step factor), one row per measured quantity.

    `curves` is `backward_decay(model, tokens)` (or a forward table with `value` columns: see `forward_rates`).
    The predicted columns are for the Elman cell; for the LSTM, whose per-step Jacobian is not diag(f') U,
    they are NaN.
    """
    dtype = next(model.parameters()).dtype
    rows = []
    for quantity, table in curves.groupby("quantity", sort=False):
        row = {"quantity": quantity, **fit_rate(table, fit=fit, dtype=dtype)}
        row.update(predicted_rates(model, tokens, row["fit_from"], row["fit_to"]))
        rows.append(row)
    return pd.DataFrame(rows)


def predicted_rates(model: RecurrentLM, tokens: torch.Tensor, fit_from: int, fit_to: int) -> dict:
    """The four predictions over the steps between distances fit_from and fit_to (NaN for the LSTM)."""
    names = ("jacobian_rate", "jacobian_log_rate", "pascanu_rate", "radius_rate", "sigma_max", "rho", "max_slope")
    if not isinstance(model, ElmanLM):
        return dict.fromkeys(names, float("nan"))
    U = model.cell.U.detach()
    sigma = float(torch.linalg.matrix_norm(U.double(), ord=2))
    rho = spectral_radius(U)
    max_slope = MAX_SLOPE[model.cell.activation]
    if fit_to > fit_from:
        jac = step_jacobian_norms(model, tokens, range(fit_from + 1, fit_to + 1)).double()  # (D, N)
        jacobian, jacobian_log = float(torch.log(jac.mean())), float(torch.log(jac).mean())
    else:
        jacobian = jacobian_log = float("nan")
    return dict(
        zip(names, (jacobian, jacobian_log, float(np.log(sigma * max_slope)), float(np.log(rho)), sigma, rho, max_slope))
    )


def forward_rates(model: RecurrentLM, tokens: torch.Tensor, forward: pd.DataFrame, *, fit: tuple[int, int] | None = None) -> pd.DataFrame:
    """Measured forward rates (finite and JVP) per quantity; the predictions are those of the backward pass."""
    dtype = next(model.parameters()).dtype
    rows = []
    for quantity, table in forward.groupby("quantity", sort=False):
        for method in ("finite", "jvp"):
            rows.append({"quantity": quantity, "method": method, **fit_rate(table, value=method, fit=fit, dtype=dtype)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------
# The chapter's 47-word passage: how much of the blame for the last word reaches "partner".

# Quoted from the chapter; the blank after "his" is the word to predict, PASSAGE_TARGET.
PASSAGE = (
    "Raj entered CoffeeDay to meet his partner Dru. Raj said \u201cHi Dru\u201d. In the next few hours they "
    "discussed their start-up and devised a plan to develop a product on knowledge management. After a long and "
    "fruitful discussion, Raj said goodbye to his"
)
PASSAGE_TARGET = "partner"
EOS = "<eos>"
_NUMBER = re.compile(r"^[+-]?\d[\d,.:/-]*$")
_CLITIC = re.compile(r"(?<=[a-z])(n't|'(?:s|re|ve|m|ll|d))\b")  # PTB splits "don't" -> "do n't", "it's" -> "it 's"
_WORD = re.compile(r"n't|'(?:s|re|ve|m|ll|d)\b|[$&]|[a-z0-9]+(?:[-.,/:][a-z0-9]+)*|[.!?]")


def ptb_words(text: str) -> list[str]:
    """Text -> words as in Mikolov's PTB: lowercase, clitics split off, punctuation dropped but $ and & kept,
    numbers as N, <eos> after each sentence. The text's last sentence, unfinished, gets no <eos>.
    """
    words: list[str] = []
    for token in _WORD.findall(_CLITIC.sub(r" \1", text.lower())):
        if token in ".!?":
            if words and words[-1] != EOS:
                words.append(EOS)
        else:
            words.append("N" if _NUMBER.match(token) else token)
    return words


def passage_decay(model: RecurrentLM, vocab, *, text: str = PASSAGE, target: str = PASSAGE_TARGET) -> pd.DataFrame:
    """The gradient of -log p(target | text) at every position of the text, in one backward pass.

    One row per input position: word (as read), token (after the vocabulary: <unk> for words it lacks),
    distance back from the last position, h_norm, x_norm (and c_norm for the LSTM), their values relative to
    distance 0, and `evidence`: whether the word is the target (the position the answer must be learned from).
    """
    words = ptb_words(text)
    ids = vocab.encode([*words, target])  # unknown words become the vocabulary's <unk>
    tokens = torch.as_tensor(ids, dtype=torch.int64)[:, None]  # (T + 1, 1)
    curves = backward_decay(model, tokens)
    wide = curves.pivot(index="distance", columns="quantity", values=["norm", "relative"])
    T = len(words)
    table = pd.DataFrame({"position": np.arange(1, T + 1), "word": words, "token": vocab.decode(ids[:-1])})
    table["distance"] = T - table["position"]
    for quantity in curves["quantity"].unique():
        table[f"{quantity}_norm"] = wide[("norm", quantity)].reindex(table["distance"]).to_numpy()
        table[f"{quantity}_relative"] = wide[("relative", quantity)].reindex(table["distance"]).to_numpy()
    table["evidence"] = table["word"] == target
    return table
