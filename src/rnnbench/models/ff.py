"""Feed-forward n-gram language model (Bengio et al. 2003).

    w_{t-n+1} ... w_{t-1}  ──embedding──► x = [e_1; ...; e_{n-1}]          (N, (n-1)d)
    y = softmax(b_y + V act(W_h x + b_h) [+ W_direct x])                    (N, |V|)

The concatenation is the model's whole memory: a word outside the n-1 window cannot change y.
hidden = 0 drops the hidden layer (y = softmax(b_y + V x)). `direct` adds Bengio's input-to-output matrix.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from rnnbench.models.base import ACTIVATION_FUNCTIONS, LanguageModel, ModelConfig, build_dropout
from rnnbench.models.output import build_output
from rnnbench.params import Shapes, ff_lm_shapes


class FeedForwardLM(LanguageModel):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        x_dim = cfg.context * cfg.embed_dim
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embed_dim)
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        self.drop = build_dropout(cfg.dropout, cfg.dropout_mask)  # "step" only: a window has no steps to share a mask
        self.act = ACTIVATION_FUNCTIONS[cfg.activation]
        self.hidden_layer = nn.Linear(x_dim, cfg.hidden) if cfg.hidden > 0 else None
        self.W_direct = nn.Parameter(torch.zeros(cfg.vocab_size, x_dim)) if cfg.direct else None
        in_features = cfg.hidden if cfg.hidden > 0 else x_dim
        self.output = build_output(
            cfg.output, in_features, cfg.vocab_size, cfg.adaptive_cutoffs, cfg.adaptive_div_value
        )

    def features(
        self, tokens: torch.Tensor, state: None = None, cut_every: int | None = None
    ) -> tuple[torch.Tensor, None, torch.Tensor | None]:
        if cut_every is not None:
            raise ValueError(f"cut_every={cut_every}: a window has no recurrence whose gradient could be cut")
        if tokens.dim() != 2 or tokens.shape[1] != self.cfg.context:
            raise ValueError(f"ff contexts must be (N, {self.cfg.context}), got {tuple(tokens.shape)}")
        x = self.embedding(tokens).flatten(1)  # (N, (n-1)d)
        x = self.drop(x)
        h = x if self.hidden_layer is None else self.drop(self.act(self.hidden_layer(x)))  # (N, H)
        extra = None if self.W_direct is None else F.linear(x, self.W_direct)  # (N, V)
        return h, None, extra

    def shapes(self) -> Shapes:
        cfg = self.cfg
        cutoffs = cfg.adaptive_cutoffs if cfg.output == "adaptive" else None
        return ff_lm_shapes(
            cfg.vocab_size,
            cfg.embed_dim,
            cfg.context,
            cfg.hidden,
            cfg.direct,
            cutoffs=cutoffs,
            div_value=cfg.adaptive_div_value,
        )
