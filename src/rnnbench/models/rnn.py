"""Elman RNN language model (the chapter's equations 12.8-12.9):

    h_t = act(W x_t + U h_{t-1} + b_h),   y_t = softmax(V h_t + b_y),   h_0 = 0.

        x_1        x_2        x_3             one cell, the same W, U, b_h at every step
         │W         │W         │W
    h_0 ─U─► h_1 ─U─► h_2 ─U─► h_3 ─► ...
              │V        │V        │V
             y_1       y_2       y_3

Two paths, one set of parameters (`cell.W`, `cell.U`, `cell.b_h`; one state_dict serves both):
- reference: `ElmanCell` stepped by `base.unroll` in a Python loop; every h_t is a graph node.
- fast: torch.nn.RNN's fused kernel, handed W, U, b_h through `torch.func.functional_call`. nn.RNN adds two
  biases (b_ih + b_hh); the second is supplied as zeros, so the model keeps the chapter's single b_h.
  nn.RNN implements tanh and relu only: `ModelConfig` refuses impl='fast' with activation='sigmoid' (no silent
  fallback; the rule is `rnnbench.rules`'), and a model built with impl='reference' and the sigmoid has no
  fused module, so `fast` cannot be called on it.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.func import functional_call

from rnnbench.models.base import ACTIVATION_FUNCTIONS, ModelConfig, RecurrentLM
from rnnbench.params import Shapes, rnn_lm_shapes
from rnnbench.rules import FAST_ACTIVATIONS


class ElmanCell(nn.Module):
    """One step: h_t = act(W x_t + U h_{t-1} + b_h). Returns (h_t, h_t): the output is the state."""

    def __init__(self, embed_dim: int, hidden: int, activation: str = "tanh"):
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

    def forward(self, x_t: torch.Tensor, h_prev: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pre = x_t @ self.W.T + h_prev @ self.U.T + self.b_h  # (B, H)
        h_t = self.act(pre)  # (B, H)
        return h_t, h_t


class ElmanLM(RecurrentLM):
    cell: ElmanCell

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg, ElmanCell(cfg.embed_dim, cfg.hidden, cfg.activation))
        # The fused kernel's module holds no parameters of its own (its weights are replaced at every call),
        # so it is kept out of the module tree: not in parameters(), not in the state_dict.
        fused = None
        if cfg.activation in FAST_ACTIVATIONS:
            fused = nn.RNN(cfg.embed_dim, cfg.hidden, nonlinearity=cfg.activation)
            for name in list(fused._parameters):
                fused._parameters[name] = None
        object.__setattr__(self, "_fused", fused)

    def init_state(self, batch_size: int) -> torch.Tensor:
        w = self.cell.W
        return torch.zeros(batch_size, self.cfg.hidden, dtype=w.dtype, device=w.device)  # (B, H)

    def fast(self, x_emb: torch.Tensor, state0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self._fused is None:  # built for impl='reference' with an activation nn.RNN lacks
            raise ValueError(f"activation={self.cfg.activation!r} has no fused path; this model runs with impl='reference'")
        c = self.cell
        weights = {
            "weight_ih_l0": c.W,
            "weight_hh_l0": c.U,
            "bias_ih_l0": c.b_h,
            "bias_hh_l0": torch.zeros_like(c.b_h),  # the chapter has one bias; this one stays zero
        }
        out, h_n = functional_call(self._fused, weights, (x_emb, state0.unsqueeze(0)))  # (T, B, H), (1, B, H)
        return out, h_n.squeeze(0)

    def shapes(self) -> Shapes:
        cfg = self.cfg
        cutoffs = cfg.adaptive_cutoffs if cfg.output == "adaptive" else None
        return rnn_lm_shapes(
            cfg.vocab_size, cfg.embed_dim, cfg.hidden, cutoffs=cutoffs, div_value=cfg.adaptive_div_value
        )
