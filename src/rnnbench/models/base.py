"""The model config and the interface every language model shares (`build_model` is the package's).

tokens ──embedding──► x ──dropout──► core (ff hidden layer | recurrence) ──► h ──dropout──► output layer
                                                                                  │
                      forward: log-probs over the vocabulary ◄──────────────────────┤
                      nll:     mean -log p(target), targets == -100 skipped ◄─────────┘
                               (nll_by_column: the same, per column of a (T, B) batch)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import nn

from rnnbench.config import constraints
from rnnbench.config.constraints import ADAPTIVE_DIV_VALUE
from rnnbench.config.runs import RunConfig
from rnnbench.config.schema import check_settings, run_defaults
from rnnbench.models.output import build_output
from rnnbench.params import Shapes, count

ACTIVATION_FUNCTIONS = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu}

State = torch.Tensor | tuple[torch.Tensor, torch.Tensor] | None
_DEFAULTS = run_defaults()  # the schema's: the one home of every setting's default


@dataclass(frozen=True)
class ModelConfig:
    """Everything that defines a model's architecture. `context` is n-1 (ff only).

    Each field but `vocab_size` and `adaptive_div_value` is a run setting: its type, range and default are
    the schema's (config.schema.yaml), its rules with other settings are `rnnbench.config.constraints`'; `from_run` builds
    one from a run's config.
    """

    family: str  # "ff" | "rnn" | "lstm"
    vocab_size: int
    embed_dim: int = _DEFAULTS["embed_dim"]
    hidden: int = _DEFAULTS["hidden"]  # ff: 0 means no hidden layer
    context: int = _DEFAULTS["context"]  # ff: n-1 words of context
    activation: str = _DEFAULTS["activation"]  # rnn: tanh | sigmoid | relu; ff hidden layer likewise; lstm: tanh only
    recurrent_init: str = _DEFAULTS["recurrent_init"]  # rnn: how U and b_h start: default | identity | orthogonal
    recurrent_scale: float = _DEFAULTS["recurrent_scale"]  # rnn: the gain s of U = s I or U = s Q
    impl: str = _DEFAULTS[
        "impl"
    ]  # rnn/lstm: "reference" (explicit cell, Python loop) | "fast" (the segment as one graph node)
    output: str = _DEFAULTS["output"]  # "full" softmax | "adaptive" softmax
    adaptive_cutoffs: tuple[int, ...] = tuple(_DEFAULTS["adaptive_cutoffs"])
    adaptive_div_value: float = ADAPTIVE_DIV_VALUE
    direct: bool = _DEFAULTS["direct"]  # ff: direct input-to-output connections
    dropout: float = _DEFAULTS["dropout"]  # on the embeddings and on the hidden outputs fed to the softmax
    dropout_mask: str = _DEFAULTS["dropout_mask"]  # recurrent: a fresh mask at every "step", or one per "sequence"
    recurrent_dropout: float = _DEFAULTS["recurrent_dropout"]  # rnn: DropConnect on U, one mask per segment
    tie_weights: bool = _DEFAULTS["tie_weights"]  # rnn/lstm: the output matrix V is the embedding table

    def __post_init__(self) -> None:
        object.__setattr__(self, "adaptive_cutoffs", tuple(int(c) for c in self.adaptive_cutoffs))
        if not (isinstance(self.vocab_size, int) and self.vocab_size >= 1):
            raise ValueError(f"ModelConfig.vocab_size must be an integer >= 1, got {self.vocab_size!r}")
        settings = {k: v for k, v in self.to_dict().items() if k not in ("vocab_size", "adaptive_div_value")}
        check_settings(settings, where="ModelConfig")
        if broken := constraints.broken_model_rule(self.to_dict(), self.vocab_size):
            raise ValueError(f"ModelConfig.{broken.keys[0]}: {broken.message}")

    @classmethod
    def from_run(cls, run: RunConfig, vocab_size: int) -> ModelConfig:
        """The model of a training run: its architecture settings, with the vocabulary its corpus has."""
        names = {f.name for f in dataclasses.fields(cls)} - {"vocab_size", "adaptive_div_value"}
        return cls(vocab_size=vocab_size, **{name: getattr(run, name) for name in names})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class LanguageModel(nn.Module):
    """Shared interface. Subclasses define `features` (tokens -> hidden features) and `shapes`."""

    cfg: ModelConfig
    output: nn.Module

    def features(
        self, tokens: torch.Tensor, state: State, cut_every: int | None = None
    ) -> tuple[torch.Tensor, State, torch.Tensor | None]:
        """tokens -> (hidden features fed to the output layer, new state, extra logits or None). ``cut_every``
        k: a recurrence's gradient stops at steps k, 2k, ... of ``tokens`` (`RecurrentLM.recur`)."""
        raise NotImplementedError

    def shapes(self) -> Shapes:
        """Analytic parameter shapes (rnnbench.params) of this configuration."""
        raise NotImplementedError

    def init_state(self, batch_size: int) -> State:
        return None

    def forward(self, tokens: torch.Tensor, state: State = None) -> tuple[torch.Tensor, State]:
        h, state, extra = self.features(tokens, state)
        return self.output.log_probs(h, extra), state  # (T, B, V) or (N, V)

    def nll(
        self, tokens: torch.Tensor, targets: torch.Tensor, state: State = None, cut_every: int | None = None
    ) -> tuple[torch.Tensor, int, State]:
        """(mean -log p(target) over targets != -100, number of such targets, new state); ``cut_every`` as in
        `features`."""
        h, state, extra = self.features(tokens, state, cut_every)
        total, n = self.output.nll_sum(h, targets, extra)
        return total / max(n, 1), n, state

    def nll_by_column(
        self, tokens: torch.Tensor, targets: torch.Tensor, state: State = None
    ) -> tuple[list[torch.Tensor], list[int], State]:
        """`nll` of (t, B) ``tokens`` column by column: (each column's mean -log p(target), each column's number
        of targets, new state). The columns are read together, in one recurrence, and scored apart."""
        h, state, extra = self.features(tokens, state)  # (t, B, H)
        means, counts = [], []
        for b in range(tokens.shape[1]):
            total, n = self.output.nll_sum(h[:, b], targets[:, b], None if extra is None else extra[:, b])
            means.append(total / max(n, 1))
            counts.append(n)
        return means, counts, state

    def count_parameters(self) -> int:
        return count(self.shapes())


def detach_state(state: State) -> State:
    """Truncated BPTT: keep the state's values, drop the graph that made them (backward stops here)."""
    if state is None:
        return None
    if isinstance(state, torch.Tensor):
        return state.detach()
    return tuple(detach_state(s) for s in state)  # LSTM: (h, c)


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


class SequenceDropout(nn.Module):
    """Dropout of a (T, B, F) batch with one mask per sequence, the same at all T steps (Gal and Ghahramani 2016):
    a unit dropped at one step is dropped at every step of that sequence, so that the recurrence cannot read
    from the next step what dropout hid at this one."""

    def __init__(self, p: float):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        keep = x.new_empty(1, *x.shape[1:]).bernoulli_(1 - self.p)  # (1, B, F): broadcast over the steps
        return x * keep / (1 - self.p)


def build_dropout(p: float, mask: str) -> nn.Module:
    """The dropout of a recurrent network's inputs and outputs (``mask`` "step" or "sequence"); the identity at p = 0,
    where even a dropout of nothing would cost a pass over the tensor in training mode."""
    if p == 0:
        return nn.Identity()
    return SequenceDropout(p) if mask == "sequence" else nn.Dropout(p)


class RecurrentLM(LanguageModel):
    """Embedding -> recurrence (reference cell or fast path, same parameters) -> output layer.

    Subclasses give the cell (holding every recurrent parameter), `fast(x_emb, state0)` and the family's
    parameter shapes (`family_shapes`, one of rnnbench.params's *_lm_shapes).
    """

    family_shapes: ClassVar[Callable[..., Shapes]]

    def __init__(self, cfg: ModelConfig, cell: nn.Module):
        super().__init__()
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg.vocab_size, cfg.embed_dim)
        nn.init.uniform_(self.embedding.weight, -0.1, 0.1)
        self.cell = cell
        self.drop = build_dropout(cfg.dropout, cfg.dropout_mask)
        self.output = build_output(cfg.output, cfg.hidden, cfg.vocab_size, cfg.adaptive_cutoffs, cfg.adaptive_div_value)
        if cfg.tie_weights:
            # One Parameter in two places: its gradient sums the input's and the output's, one update moves both.
            self.output.V = self.embedding.weight

    def shapes(self) -> Shapes:
        cfg = self.cfg
        return self.family_shapes(
            cfg.vocab_size,
            cfg.embed_dim,
            cfg.hidden,
            cutoffs=cfg.adaptive_cutoffs if cfg.output == "adaptive" else None,
            div_value=cfg.adaptive_div_value,
            tied=cfg.tie_weights,
        )

    def unroll(self, x_emb: torch.Tensor, state0: State) -> tuple[torch.Tensor, list]:
        """Reference path: (outputs (T, B, H), [state_1, ..., state_T])."""
        return unroll(self.cell, x_emb, state0)

    def fast(self, x_emb: torch.Tensor, state0: State) -> tuple[torch.Tensor, State]:
        """Fast path, the whole segment as one graph node: (outputs (T, B, H), state_T)."""
        raise NotImplementedError

    def recur(self, x_emb: torch.Tensor, state0: State, cut_every: int | None = None) -> tuple[torch.Tensor, State]:
        """The recurrence over ``x_emb`` from ``state0``: (outputs (T, B, H), final state).

        ``cut_every`` k: run in blocks of k steps, each from the state the last one ended in with its graph
        detached, so that the values are those of one uncut run and only backward stops, at steps k, 2k, ...::

            steps     0 .. k-1 | k .. 2k-1 | 2k ..
            forward   h_0 ───────► h_k ─────────► h_2k ──►   (the same values as uncut)
            backward  ◄───────┤  ◄──────────┤  ◄───       (no gradient crosses a cut)

        The state passed in is detached too (a cut at step 0). The fast path runs each block as one graph node.
        """
        if cut_every is not None:
            if cut_every < 1:
                raise ValueError(f"cut_every must be >= 1 (steps per gradient block), got {cut_every}")
            outputs, state = [], state0
            for block in x_emb.split(cut_every):  # (k, B, d), the last one shorter
                out, state = self.recur(block, detach_state(state))
                outputs.append(out)
            return torch.cat(outputs), state  # (T, B, H)
        if self.cfg.impl == "fast":
            return self.fast(x_emb, state0)
        outputs, states = self.unroll(x_emb, state0)
        return outputs, (states[-1] if states else state0)

    def features(
        self, tokens: torch.Tensor, state: State, cut_every: int | None = None
    ) -> tuple[torch.Tensor, State, None]:
        # Dropout on the whole batch, outside the blocks: its masks are drawn as an uncut run draws them.
        x = self.drop(self.embedding(tokens))  # (T, B, d)
        if state is None:
            state = self.init_state(tokens.shape[1])
        out, state = self.recur(x, state, cut_every)  # (T, B, H)
        return self.drop(out), state, None
