"""The model config, the interface every language model shares, and `build_model`.

tokens ──embedding──► x ──dropout──► core (ff hidden layer | recurrence) ──► h ──dropout──► output layer
                                                                                  │
                      forward: log-probs over the vocabulary ◄──────────────────────┤
                      nll:     mean -log p(target), targets == -100 skipped ◄─────────┘
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from rnnbench.models.output import build_output
from rnnbench.params import Shapes, adaptive_softmax_shapes, count

FAMILIES = ("ff", "rnn", "lstm")
ACTIVATIONS = ("tanh", "sigmoid", "relu")
IMPLS = ("reference", "fast")
OUTPUTS = ("full", "adaptive")
# nn.RNN implements only these two nonlinearities.
FAST_ACTIVATIONS = ("tanh", "relu")
ACTIVATION_FUNCTIONS = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu}

State = torch.Tensor | tuple[torch.Tensor, torch.Tensor] | None


def default_cutoffs(vocab_size: int) -> tuple[int, ...]:
    """Adaptive-softmax cluster bounds used when none are given: a head of the 10% most frequent words,
    a second cluster up to half the vocabulary, a third for the rest: (1000, 5000) for PTB's 10,000 words.

    On PTB-sized shapes that trains at about 5x the speed of a full softmax (benchmarks/bench_rnn_step.py),
    where (2000, 6000) reaches about 3.5x; after one epoch on PTB it was no worse in validation perplexity.
    """
    bounds = sorted({max(1, vocab_size // 10), max(1, vocab_size // 2)})
    return tuple(b for b in bounds if b < vocab_size)


@dataclass(frozen=True)
class ModelConfig:
    """Everything that defines a model's architecture. `context` is n-1 (ff only)."""

    family: str  # "ff" | "rnn" | "lstm"
    vocab_size: int
    embed_dim: int = 200
    hidden: int = 200  # ff: 0 means no hidden layer
    context: int = 4  # ff: n-1 words of context
    activation: str = "tanh"  # rnn: tanh | sigmoid | relu; ff hidden layer likewise; lstm: tanh only
    impl: str = "fast"  # rnn/lstm: "reference" (explicit cell, Python loop) | "fast" (torch's fused RNN)
    output: str = "full"  # "full" softmax | "adaptive" softmax
    adaptive_cutoffs: tuple[int, ...] = ()  # empty with output="adaptive": default_cutoffs(vocab_size)
    adaptive_div_value: float = 4.0
    direct: bool = False  # ff: direct input-to-output connections (needs output="full" and hidden > 0)
    dropout: float = 0.0  # on the embeddings and on the hidden outputs fed to the softmax

    def __post_init__(self) -> None:
        object.__setattr__(self, "adaptive_cutoffs", tuple(int(c) for c in self.adaptive_cutoffs))
        if self.output == "adaptive" and not self.adaptive_cutoffs:
            object.__setattr__(self, "adaptive_cutoffs", default_cutoffs(self.vocab_size))
        for name, allowed in (("family", FAMILIES), ("activation", ACTIVATIONS), ("impl", IMPLS), ("output", OUTPUTS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"ModelConfig.{name} must be one of {allowed}, got {getattr(self, name)!r}")
        for name in ("vocab_size", "embed_dim", "context"):
            if getattr(self, name) < 1:
                raise ValueError(f"ModelConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.hidden < (0 if self.family == "ff" else 1):
            raise ValueError(
                f"ModelConfig.hidden must be >= 1 for {self.family} (0 is allowed for ff), got {self.hidden}"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"ModelConfig.dropout must be in [0, 1), got {self.dropout}")
        if self.family == "rnn" and self.impl == "fast" and self.activation not in FAST_ACTIVATIONS:
            raise ValueError(
                f"activation={self.activation!r} has no fast path: torch.nn.RNN implements only {FAST_ACTIVATIONS}. "
                "Use impl='reference' (same parameters, Python loop) for it."
            )
        if self.family == "lstm" and self.activation != "tanh":
            raise ValueError(
                f"the LSTM's activations are fixed (sigmoid gates, tanh cell); got activation={self.activation!r}"
            )
        if self.direct and (self.family != "ff" or self.hidden == 0 or self.output != "full"):
            raise ValueError("direct=True needs family='ff', hidden > 0 and output='full'")
        if self.output == "adaptive":
            in_features = self.hidden if self.hidden > 0 else self.context * self.embed_dim
            try:
                adaptive_softmax_shapes(in_features, self.vocab_size, self.adaptive_cutoffs, self.adaptive_div_value)
            except ValueError as err:
                raise ValueError(f"ModelConfig.adaptive_cutoffs / adaptive_div_value: {err}") from None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ModelConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown ModelConfig keys {unknown}; allowed: {sorted(known)}")
        return cls(**values)


class LanguageModel(nn.Module):
    """Shared interface. Subclasses define `features` (tokens -> hidden features) and `shapes`."""

    cfg: ModelConfig
    output: nn.Module

    def features(self, tokens: torch.Tensor, state: State) -> tuple[torch.Tensor, State, torch.Tensor | None]:
        """tokens -> (hidden features fed to the output layer, new state, extra logits or None)."""
        raise NotImplementedError

    def shapes(self) -> Shapes:
        """Analytic parameter shapes (rnnbench.params) of this configuration."""
        raise NotImplementedError

    def init_state(self, batch_size: int) -> State:
        return None

    def forward(self, tokens: torch.Tensor, state: State = None) -> tuple[torch.Tensor, State]:
        h, state, extra = self.features(tokens, state)
        return self.output.log_probs(h, extra), state  # (T, B, V) or (N, V)

    def nll(self, tokens: torch.Tensor, targets: torch.Tensor, state: State = None) -> tuple[torch.Tensor, int, State]:
        """(mean -log p(target) over targets != -100, number of such targets, new state)."""
        h, state, extra = self.features(tokens, state)
        total, n = self.output.nll_sum(h, targets, extra)
        return total / max(n, 1), n, state

    def count_parameters(self) -> int:
        return count(self.shapes())


def build_model(cfg: ModelConfig) -> LanguageModel:
    # Imported here because the families import this module.
    from rnnbench.models.ff import FeedForwardLM
    from rnnbench.models.lstm import LSTMLM
    from rnnbench.models.rnn import ElmanLM

    families: dict[str, type[LanguageModel]] = {"ff": FeedForwardLM, "rnn": ElmanLM, "lstm": LSTMLM}
    return families[cfg.family](cfg)


def unroll(cell: nn.Module, x_emb: torch.Tensor, state0: State) -> tuple[torch.Tensor, list]:
    """Step `cell` along time in a Python loop: state_t = cell(x_t, state_{t-1}).

    `cell(x_t, state) -> (h_t, state_t)`; returns the stacked h_t (T, B, H) and the list of every
    state_t, each a node of the autograd graph at which gradients can be taken.
    """
    states = []
    outputs = []
    state = state0
    for x_t in x_emb.unbind(0):  # x_t: (B, d)
        h_t, state = cell(x_t, state)  # (B, H)
        outputs.append(h_t)
        states.append(state)
    return torch.stack(outputs), states  # (T, B, H)


class RecurrentLM(LanguageModel):
    """Embedding -> recurrence (reference cell or fused fast path, same parameters) -> output layer.

    Subclasses give the cell (holding every recurrent parameter) and `fast(x_emb, state0)`.
    """

    def __init__(self, cfg: ModelConfig, cell: nn.Module):
        super().__init__()
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embed_dim)
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        self.cell = cell
        # Identity when off: even p = 0 dropout costs a pass over the tensor in training mode.
        self.drop = nn.Dropout(cfg.dropout) if cfg.dropout > 0 else nn.Identity()
        self.output = build_output(cfg.output, cfg.hidden, cfg.vocab_size, cfg.adaptive_cutoffs, cfg.adaptive_div_value)

    def unroll(self, x_emb: torch.Tensor, state0: State) -> tuple[torch.Tensor, list]:
        """Reference path: (outputs (T, B, H), [state_1, ..., state_T])."""
        return unroll(self.cell, x_emb, state0)

    def fast(self, x_emb: torch.Tensor, state0: State) -> tuple[torch.Tensor, State]:
        """Fused path on torch's RNN kernels: (outputs (T, B, H), state_T)."""
        raise NotImplementedError

    def recur(self, x_emb: torch.Tensor, state0: State) -> tuple[torch.Tensor, State]:
        if self.cfg.impl == "fast":
            return self.fast(x_emb, state0)
        outputs, states = self.unroll(x_emb, state0)
        return outputs, (states[-1] if states else state0)

    def features(self, tokens: torch.Tensor, state: State) -> tuple[torch.Tensor, State, None]:
        x = self.drop(self.embedding(tokens))  # (T, B, d)
        if state is None:
            state = self.init_state(tokens.shape[1])
        out, state = self.recur(x, state)  # (T, B, H)
        return self.drop(out), state, None
