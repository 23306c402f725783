"""Elman RNN language model (the chapter's equations 12.8-12.9):

    h_t = act(W x_t + U h_{t-1} + b_h),   y_t = softmax(V h_t + b_y),   h_0 = 0.

        x_1        x_2        x_3             one cell, the same W, U, b_h at every step
         │W         │W         │W
    h_0 ─U─► h_1 ─U─► h_2 ─U─► h_3 ─► ...
              │V        │V        │V
             y_1       y_2       y_3

Two paths, one set of parameters (`cell.W`, `cell.U`, `cell.b_h`):
- reference: `ElmanCell` stepped by `base.unroll` in a Python loop; every h_t is a graph node.
- fast: `recurrence.ElmanRecurrence`, the whole segment as one graph node with a hand-written backward through
  time; the same three activations.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import torch
from torch import nn

from rnnbench.models.base import ACTIVATION_FUNCTIONS, ModelConfig, RecurrentLM
from rnnbench.models.recurrence import ElmanRecurrence
from rnnbench.params import rnn_lm_shapes


class ElmanCell(nn.Module):
    """One step: h_t = act(W x_t + U h_{t-1} + b_h). Returns (h_t, h_t): the output is the state.

    ``recurrent_init`` says how U and b_h start (`init_recurrent`); W always starts as nn.RNN's."""

    def __init__(
        self,
        embed_dim: int,
        hidden: int,
        activation: str = "tanh",
        recurrent_init: str = "default",
        recurrent_scale: float = 1.0,
    ):
        super().__init__()
        self.activation = activation
        self.act = ACTIVATION_FUNCTIONS[activation]
        self.W = nn.Parameter(torch.empty(hidden, embed_dim))
        self.U = nn.Parameter(torch.empty(hidden, hidden))
        self.b_h = nn.Parameter(torch.empty(hidden))
        # nn.RNN's default: uniform in +-1/sqrt(H) for every recurrent parameter.
        bound = 1.0 / math.sqrt(hidden)
        for p in (self.W, self.U, self.b_h):
            nn.init.uniform_(p, -bound, bound)
        init_recurrent(self.U, self.b_h, recurrent_init, recurrent_scale)
        self.dropped_U: torch.Tensor | None = None  # U with some connections dropped, while a segment is read

    @property
    def recurrent_matrix(self) -> torch.Tensor:
        """The U the steps use: U itself, or U with connections dropped inside `dropped_connections`."""
        return self.U if self.dropped_U is None else self.dropped_U

    @contextlib.contextmanager
    def dropped_connections(self, p: float) -> Iterator[None]:
        """Inside, every step uses U with each entry dropped with probability ``p`` and the rest scaled by 1/(1-p):
        one mask, drawn on entry, for every step and every sequence (DropConnect; Merity et al. 2018). Gradients
        reach U through the mask. p = 0 leaves U as it is."""
        if p == 0:
            yield
            return
        keep = torch.empty_like(self.U).bernoulli_(1 - p)
        self.dropped_U = self.U * keep / (1 - p)
        try:
            yield
        finally:
            self.dropped_U = None

    def forward(self, x_t: torch.Tensor, h_prev: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pre = x_t @ self.W.T + h_prev @ self.recurrent_matrix.T + self.b_h  # (B, H)
        h_t = self.act(pre)  # (B, H)
        return h_t, h_t


@torch.no_grad()
def init_recurrent(U: torch.Tensor, b_h: torch.Tensor, how: str, scale: float = 1.0) -> None:
    """Set U (H, H) and b_h (H,) in place as ``how`` says, after the default draw (so that at the same seed an
    identity network's other parameters start as the default network's; orthogonal draws Q after them, and the
    parameters drawn later, the embedding and the output layer, differ):

        default      U, b_h as drawn: uniform in +-1/sqrt(H)
        identity     U = s I,  b_h = 0     Le et al. (2015)'s IRNN: with no input, relu(s h_{t-1}) = s h_{t-1}
                                           for h >= 0, so at s = 1 the state is carried unchanged, neither
                                           stretched nor shrunk
        orthogonal   U = s Q,  b_h = 0     Q Q^T = I (torch's QR of a Gaussian draw), so U U^T = s^2 I: every
                                           singular value s, no direction stretched more than another
    """
    if how == "default":
        return
    if how == "identity":
        U.copy_(scale * torch.eye(U.shape[0], dtype=U.dtype, device=U.device))
    elif how == "orthogonal":
        nn.init.orthogonal_(U, gain=scale)
    else:
        raise ValueError(f"recurrent_init must be one of default, identity, orthogonal; got {how!r}")
    b_h.zero_()


class ElmanLM(RecurrentLM):
    cell: ElmanCell
    family_shapes = staticmethod(rnn_lm_shapes)

    def __init__(self, cfg: ModelConfig):
        cell = ElmanCell(cfg.embed_dim, cfg.hidden, cfg.activation, cfg.recurrent_init, cfg.recurrent_scale)
        super().__init__(cfg, cell)

    def init_state(self, batch_size: int) -> torch.Tensor:
        w = self.cell.W
        return torch.zeros(batch_size, self.cfg.hidden, dtype=w.dtype, device=w.device)  # (B, H)

    def fast(self, x_emb: torch.Tensor, state0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.cell
        U = c.recurrent_matrix
        return ElmanRecurrence.apply(x_emb, state0, c.W, U, c.b_h, self.cfg.activation)  # (T, B, H), (B, H)

    def features(
        self, tokens: torch.Tensor, state: torch.Tensor | None, cut_every: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, None]:
        # One mask on U for the whole segment, its blocks too (cut_every): the steps share their connections.
        p = self.cfg.recurrent_dropout if self.training else 0.0
        with self.cell.dropped_connections(p):
            return super().features(tokens, state, cut_every)
