"""The networks decay is measured on: untrained Elman RNNs built through the project's constructors with U
rescaled to a spectral radius, the linear RNN of the exact cases, and windows of corpus tokens to feed them."""

from __future__ import annotations

import numpy as np
import torch

from rnnbench.models import LSTMLM, ElmanLM, ModelConfig, build_model


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
        family="rnn",
        vocab_size=vocab_size,
        embed_dim=embed_dim,
        hidden=hidden,
        activation=activation,
        impl="reference",
        output="full",  # the exact softmax: the output layer is not what is measured, and it fits any vocabulary
    )
    torch.manual_seed(seed)
    model = build_model(cfg).to(dtype)
    return set_spectral_radius(model, radius)


def untrained_lstm(
    *, vocab_size: int, hidden: int = 200, embed_dim: int = 200, seed: int = 0, dtype: torch.dtype = torch.float64
) -> LSTMLM:
    """A freshly initialised LSTM LM (the project's own init, seeded): the gated contrast to `untrained_rnn`.
    Its U stacks four gates' matrices, so there is no one spectral radius to set."""
    cfg = ModelConfig(
        family="lstm", vocab_size=vocab_size, embed_dim=embed_dim, hidden=hidden, impl="reference", output="full"
    )
    torch.manual_seed(seed)
    return build_model(cfg).to(dtype)


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
