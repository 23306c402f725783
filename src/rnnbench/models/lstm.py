"""LSTM language model of the same size, for contrast (chapter 13's gated cell), behind the same interface.

    i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (W x_t + U h_{t-1} + b), split in four row blocks
    c_t = f * c_{t-1} + i * g,   h_t = o * tanh(c_t)

The additive path c_{t-1} -> c_t (scaled by f, not multiplied by U) is what lets gradients survive.
Gate order i, f, g, o is torch's, so the fast path hands W, U, b to nn.LSTM unchanged (second bias zero).
State is the pair (h, c), each (B, H); `unroll` returns the list of (h_t, c_t).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.func import functional_call

from rnnbench.models.base import ModelConfig, RecurrentLM
from rnnbench.params import lstm_lm_shapes

LSTMState = tuple[torch.Tensor, torch.Tensor]


class LSTMCell(nn.Module):
    """One step: returns (h_t, (h_t, c_t))."""

    def __init__(self, embed_dim: int, hidden: int):
        super().__init__()
        self.W = nn.Parameter(torch.empty(4 * hidden, embed_dim))
        self.U = nn.Parameter(torch.empty(4 * hidden, hidden))
        self.b = nn.Parameter(torch.empty(4 * hidden))
        bound = 1.0 / math.sqrt(hidden)
        for p in (self.W, self.U, self.b):
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x_t: torch.Tensor, state: LSTMState) -> tuple[torch.Tensor, LSTMState]:
        h_prev, c_prev = state  # (B, H) each
        gates = x_t @ self.W.T + h_prev @ self.U.T + self.b  # (B, 4H)
        i, f, g, o = gates.chunk(4, dim=-1)  # (B, H) each
        c_t = torch.sigmoid(f) * c_prev + torch.sigmoid(i) * torch.tanh(g)  # (B, H)
        h_t = torch.sigmoid(o) * torch.tanh(c_t)  # (B, H)
        return h_t, (h_t, c_t)


class LSTMLM(RecurrentLM):
    cell: LSTMCell
    family_shapes = staticmethod(lstm_lm_shapes)

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg, LSTMCell(cfg.embed_dim, cfg.hidden))
        # Parameterless fused module, outside the module tree (see rnn.ElmanLM).
        fused = nn.LSTM(cfg.embed_dim, cfg.hidden)
        for name in list(fused._parameters):
            fused._parameters[name] = None
        object.__setattr__(self, "_fused", fused)

    def init_state(self, batch_size: int) -> LSTMState:
        w = self.cell.W
        zeros = torch.zeros(batch_size, self.cfg.hidden, dtype=w.dtype, device=w.device)  # (B, H)
        return zeros, zeros.clone()

    def fast(self, x_emb: torch.Tensor, state0: LSTMState) -> tuple[torch.Tensor, LSTMState]:
        c = self.cell
        weights = {
            "weight_ih_l0": c.W,
            "weight_hh_l0": c.U,
            "bias_ih_l0": c.b,
            "bias_hh_l0": torch.zeros_like(c.b),
        }
        h0, c0 = state0
        out, (h_n, c_n) = functional_call(self._fused, weights, (x_emb, (h0.unsqueeze(0), c0.unsqueeze(0))))
        return out, (h_n.squeeze(0), c_n.squeeze(0))  # (T, B, H), ((B, H), (B, H))
