"""The lessons' worked examples as tables: lesson 001 ("The vanilla RNN": parameter counts, one recurrence
over sentences of different length and order) and lesson 003 ("Recurrent Neural Networks": its nn.RNN
shapes and its numpy trace, transcribed from the lesson's code).

Each table is a pure function returning a tidy DataFrame; rnnbench.worked.TABLES names them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from rnnbench import params
from rnnbench.worked import bptt
from rnnbench.worked.chapter import shape_str

# --------------------------------------------------------------------------------------------------------------
# Lesson 001: the recurrence's parameters against a network that reads the tokens concatenated.

LESSON_D_MODEL = 100
LESSON_D_H = 128
LESSON_TOKENS = (30, 300)


def lesson_params(
    d_model: int = LESSON_D_MODEL, d_h: int = LESSON_D_H, tokens: Sequence[int] = LESSON_TOKENS
) -> pd.DataFrame:
    """Lesson 001's counts: the recurrence (W_hh, W_xh, b_h) against the concatenated MLP's first layer.

    The MLP's first layer reads T tokens concatenated: the FF hidden matrix W_h of shape (d_h, T d_model),
    the lesson's d_1 T_max d_model (weights only; `mlp_first_layer_with_bias` adds b). Counts from params.py.
    One row per quantity; `tokens` is empty for the recurrence, which does not depend on it.
    `mlp_first_layer_ratio_vs_<T>`: the first layer at `tokens` divided by the first layer at T tokens.
    """
    rnn = params.rnn_lm_shapes(1, d_model, d_h)  # |V| does not enter the recurrence
    recurrence = {"W_hh": rnn["U"], "W_xh": rnn["W"], "b_h": rnn["b_h"]}
    total = params.count(recurrence)

    def row(quantity: str, n: int, shape: str = "", tokens_: object = pd.NA) -> dict:
        return {"quantity": quantity, "d_model": d_model, "d_h": d_h, "tokens": tokens_, "shape": shape, "count": n}

    rows = [row(name, math.prod(s), shape_str(s)) for name, s in recurrence.items()]
    rows.append(row("recurrence", total))
    first_layer = {}
    for T in tokens:
        mlp = params.ff_lm_shapes(1, d_model, T, d_h)
        first_layer[T] = params.count({"W_h": mlp["W_h"]})
        rows.append(row("mlp_first_layer", first_layer[T], shape_str(mlp["W_h"]), T))
        with_bias = params.count({"W_h": mlp["W_h"], "b_h": mlp["b_h"]})
        rows.append(row("mlp_first_layer_with_bias", with_bias, f"{shape_str(mlp['W_h'])} + {d_h}", T))
        rows.append(row("mlp_first_layer_minus_recurrence", first_layer[T] - total, "", T))
    longest, shortest = max(tokens), min(tokens)
    ratio = first_layer[longest] // first_layer[shortest]
    rows.append(row(f"mlp_first_layer_ratio_vs_{shortest}", ratio, "", longest))
    table = pd.DataFrame(rows)
    table["tokens"] = table["tokens"].astype("Int64")
    return table


# --------------------------------------------------------------------------------------------------------------
# Lesson 003: nn.RNN shapes and the numpy trace, transcribed from the lesson's code.


def lesson_rnn_shapes() -> pd.DataFrame:
    """The lesson's uni- and bidirectional nn.RNN(8, 16) on a (2, 6, 8) batch; shapes of outputs and h_n."""
    with bptt.one_thread():  # as the lesson
        torch.manual_seed(0)
        x = torch.randn(2, 6, 8)  # (B=2, T=6, 8), batch-first as in the lesson
        rows = []
        for model, bidirectional in (("uni", False), ("bi", True)):
            rnn = torch.nn.RNN(input_size=8, hidden_size=16, batch_first=True, bidirectional=bidirectional)
            out, h_n = rnn(x)  # (B, T, dirs * 16), (dirs, B, 16)
            dirs = 2 if bidirectional else 1
            for tensor, value, expected in (
                ("outputs", out, (2, 6, dirs * 16)),
                ("h_n", h_n, (dirs, 2, 16)),
            ):
                rows.append(
                    {
                        "model": model,
                        "tensor": tensor,
                        "shape": shape_str(tuple(value.shape)),
                        "expected": shape_str(expected),
                        "n_parameters": sum(p.numel() for p in rnn.parameters()),
                    }
                )
    return pd.DataFrame(rows)


NUMPY_TRACE_WORDS = ("my", "upi", "payment", "failed")


@dataclass(frozen=True)
class NumpyTrace:
    states: np.ndarray  # (T, H)
    n_parameters: int  # Wx.size + Wh.size + b.size, as the lesson prints it


def numpy_trace_run() -> NumpyTrace:
    """The lesson's numpy cell line for line; RandomState(0) draws exactly what np.random.seed(0) would."""
    rs = np.random.RandomState(0)
    emb = {w: rs.randn(4) * 0.5 for w in NUMPY_TRACE_WORDS}  # 4-number word vectors
    H = 3
    Wx, Wh, b = rs.randn(4, H) * 0.5, rs.randn(H, H) * 0.5, np.zeros(H)  # (4, H), (H, H), (H,)
    h = np.zeros(H)
    states = []
    for w in NUMPY_TRACE_WORDS:
        h = np.tanh(emb[w] @ Wx + h @ Wh + b)  # (H,): same weights at every step
        states.append(h)
    return NumpyTrace(np.stack(states), Wx.size + Wh.size + b.size)


def lesson_numpy_trace() -> pd.DataFrame:
    """Hidden state after each word of "my upi payment failed"; `printed` is the lesson's print line."""
    trace = numpy_trace_run()
    rows = []
    for t, (word, h) in enumerate(zip(NUMPY_TRACE_WORDS, trace.states, strict=True), start=1):
        rows.append(
            {
                "t": t,
                "word": word,
                "h1": h[0],
                "h2": h[1],
                "h3": h[2],
                "printed": f"t={t} read {word!r:10s} -> hidden state {h.round(2)}",
                "n_parameters": trace.n_parameters,
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------
# Lesson 001: one set of weights over sentences of different length and order. The lesson prints states but not
# its code; this is the experiment's structure (12-entry vocabulary, d_model = 4, d_h = 3, fixed-seed untrained
# weights) with our own vocabulary, sentences and seed, so the numbers are ours, not the lesson's.

LESSON001_VOCAB = (
    "the",
    "script",
    "is",
    "really",
    "good",
    "acting",
    "but",
    "honestly",  # first cell: 8 entries
    "film",
    "not",
    "boring",
    "fun",  # the word-order cell's 4 new entries
)
LESSON001_SENTENCES = (
    ("the", "script", "is", "really", "good"),  # "the script" at positions 1, 2
    ("the", "acting", "is", "good", "but", "honestly", "the", "script", "is", "good"),  # ... at 7, 8
)
LESSON001_ORDER_PAIR = (
    ("the", "film", "is", "not", "boring", "but", "fun"),
    ("the", "film", "is", "not", "fun", "but", "boring"),
)
LESSON001_SEED = 0


@dataclass(frozen=True)
class TinyRNN:
    """Untrained weights for lesson 001's cells: E (12, 4), W_xh (3, 4), W_hh (3, 3), b_h (3)."""

    E: np.ndarray
    W_xh: np.ndarray
    W_hh: np.ndarray
    b_h: np.ndarray

    @classmethod
    def seeded(cls, seed: int = LESSON001_SEED, vocab_size: int = 12, d_model: int = 4, d_h: int = 3) -> TinyRNN:
        rng = np.random.default_rng(seed)
        bound = 1 / math.sqrt(d_h)  # nn.RNN's default range
        return cls(
            E=rng.standard_normal((vocab_size, d_model)),
            W_xh=rng.uniform(-bound, bound, (d_h, d_model)),
            W_hh=rng.uniform(-bound, bound, (d_h, d_h)),
            b_h=rng.uniform(-bound, bound, d_h),
        )

    def step(self, h: np.ndarray, x: np.ndarray) -> np.ndarray:
        return np.tanh(self.W_hh @ h + self.W_xh @ x + self.b_h)  # (d_h,)

    def read(self, tokens: Sequence[str]) -> np.ndarray:
        """States h_1..h_T, (T, d_h), from h_0 = 0."""
        h = np.zeros(len(self.b_h))
        states = []
        for token in tokens:
            h = self.step(h, self.E[LESSON001_VOCAB.index(token)])
            states.append(h)
        return np.stack(states)


def _state_rows(label: str, tokens: Sequence[str], states: np.ndarray) -> list[dict]:
    return [
        {"sentence": label, "position": i, "token": tok, "h1": h[0], "h2": h[1], "h3": h[2]}
        for i, (tok, h) in enumerate(zip(tokens, states, strict=True), start=1)
    ]


def lesson_two_sentences() -> pd.DataFrame:
    """Both sentences through one TinyRNN; `dist_to_other_script` is, on each "script" row, the distance to the
    other sentence's "script" state (the lesson's "almost identical" pair)."""
    rnn = TinyRNN.seeded()
    rows = []
    script_states = []
    for tokens in LESSON001_SENTENCES:
        states = rnn.read(tokens)
        rows += _state_rows(" ".join(tokens), tokens, states)
        script_states.append(states[list(tokens).index("script")])
    table = pd.DataFrame(rows)
    gap = float(np.linalg.norm(script_states[0] - script_states[1]))
    table["dist_to_other_script"] = np.where(table["token"] == "script", gap, np.nan)
    return table


def lesson_word_order() -> pd.DataFrame:
    """Same tokens, different order: states side by side with the distance between them at each position.

    `same_bag` is True on every row when both sentences have the same token counts (their bag of words).
    """
    rnn = TinyRNN.seeded()
    a, b = LESSON001_ORDER_PAIR
    states_a, states_b = rnn.read(a), rnn.read(b)
    rows = _state_rows(" ".join(a), a, states_a) + _state_rows(" ".join(b), b, states_b)
    table = pd.DataFrame(rows)
    dist = np.linalg.norm(states_a - states_b, axis=1)  # (T,)
    table["dist_between"] = np.concatenate([dist, dist])
    table["identical"] = np.concatenate([dist == 0, dist == 0])
    table["same_bag"] = _bag(a) == _bag(b)
    return table


def _bag(tokens: Sequence[str]) -> tuple[int, ...]:
    return tuple(tokens.count(w) for w in LESSON001_VOCAB)
