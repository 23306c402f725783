"""The chapter's and lessons' worked examples, regenerated as tidy tables, and every seed claim checked.

Each table is a pure function returning a DataFrame; `TABLES` names them, `write_tables` writes them as CSV,
`print_tables` prints the CLI sections (`rnnbench worked --unroll --params --vanish --clip`).
Seeds: the chapter ("Recurrent Networks"), lesson 001 ("The vanilla RNN") and lesson 003 ("Recurrent Neural
Networks", with runnable code). Where a seed's claim and the computation disagree, the computation wins and
`seed_discrepancies()` lists both.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd
import torch

from rnnbench import gradients, params
from rnnbench.io import write_csv

# --------------------------------------------------------------------------------------------------------------
# Unrolling, worked (chapter): W, U, b_h as printed; the chapter prints no embeddings, so these are ours.

UNROLL_W = np.array([[0.6, -0.3], [0.2, 0.5]])  # (H=2, d=2)
UNROLL_U = np.array([[0.4, 0.1], [-0.2, 0.7]])  # (H, H)
UNROLL_B = np.array([0.05, -0.05])  # (H,)
# Our choice: the three words of the 3-word vocabulary as the two unit vectors and their sum, so each input
# term is a column of W (or their sum) and the trace can be checked by hand.
UNROLL_EMBEDDINGS = {"the": (1.0, 0.0), "dog": (0.0, 1.0), "ran": (1.0, 1.0)}
UNROLL_SENTENCE = ("the", "dog", "ran")


def unroll() -> pd.DataFrame:
    """Three-step trace of h_t = tanh(W x_t + U h_{t-1} + b_h) from h_0 = 0; one row per (step, unit)."""
    h = np.zeros(2)  # (H,)
    rows = []
    for t, word in enumerate(UNROLL_SENTENCE, start=1):
        x = np.array(UNROLL_EMBEDDINGS[word])  # (d,)
        input_term = UNROLL_W @ x  # (H,)
        recurrent_term = UNROLL_U @ h  # (H,)
        pre = input_term + recurrent_term + UNROLL_B  # (H,)
        h_prev, h = h, np.tanh(pre)
        for unit in range(2):
            rows.append(
                {
                    "step": t,
                    "word": word,
                    "unit": unit + 1,
                    "x": x[unit],
                    "h_prev": h_prev[unit],
                    "input_term": input_term[unit],
                    "recurrent_term": recurrent_term[unit],
                    "bias": UNROLL_B[unit],
                    "pre_activation": pre[unit],
                    "h": h[unit],
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------
# Parameter tables (chapter: |V| = 10,000, d = 100, H = 500; lesson 001: d_model = 100, d_h = 128).

LECTURE_SIZES = {"vocab_size": 10_000, "embed_dim": 100, "hidden": 500}
CONTEXTS = tuple(range(1, 21))


def _shape_str(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def params_ff_vs_rnn(
    vocab_size: int = 10_000, embed_dim: int = 100, hidden: int = 500, contexts: Sequence[int] = CONTEXTS
) -> pd.DataFrame:
    """Shape by shape: one row per (context, model, tensor); shapes (out, in) as torch stores them.

    The RNN's rows repeat at every context (they do not depend on it), so the two models sit side by side.
    """
    rows = []
    for context in contexts:
        for model, shapes in (
            ("ff", params.ff_lm_shapes(vocab_size, embed_dim, context, hidden)),
            ("rnn", params.rnn_lm_shapes(vocab_size, embed_dim, hidden)),
        ):
            for tensor, shape in shapes.items():
                rows.append(
                    {
                        "context": context,
                        "model": model,
                        "tensor": tensor,
                        "shape": _shape_str(shape),
                        "count": math.prod(shape),
                    }
                )
    return pd.DataFrame(rows)


def params_totals(
    vocab_size: int = 10_000, embed_dim: int = 100, hidden: int = 500, contexts: Sequence[int] = CONTEXTS
) -> pd.DataFrame:
    """Totals per context: ff, rnn, ff - rnn (by count and by the closed form), and which model is larger."""
    shapes = params_ff_vs_rnn(vocab_size, embed_dim, hidden, contexts)
    wide = shapes.pivot_table(index="context", columns="model", values="count", aggfunc="sum").reset_index()
    wide.columns.name = None
    wide["ff_minus_rnn"] = wide["ff"] - wide["rnn"]
    wide["ff_minus_rnn_closed_form"] = [params.ff_minus_rnn(c, embed_dim, hidden) for c in wide["context"]]
    wide["larger"] = np.select([wide["ff_minus_rnn"] > 0, wide["ff_minus_rnn"] < 0], ["ff", "rnn"], "tie")
    return wide[["context", "ff", "rnn", "ff_minus_rnn", "ff_minus_rnn_closed_form", "larger"]]


def _crossover_by_scan(vocab_size: int, embed_dim: int, hidden: int, limit: int = 10_000) -> int:
    """Smallest context at which count(FF) > count(RNN), found by counting shapes."""
    rnn = params.count(params.rnn_lm_shapes(vocab_size, embed_dim, hidden))
    for context in range(1, limit + 1):
        if params.count(params.ff_lm_shapes(vocab_size, embed_dim, context, hidden)) > rnn:
            return context
    raise ValueError(f"no crossover below context {limit} for d={embed_dim}, H={hidden}")


def crossover_grid(
    embed_dims: Sequence[int] = (25, 50, 100, 200, 300, 500),
    hiddens: Sequence[int] = (100, 250, 500, 1000, 2000),
    vocab_size: int = 10_000,
) -> pd.DataFrame:
    """Crossover context over d and H: tie at n-1 = 1 + H/d, FF strictly larger from floor(H/d) + 2.

    `crossover_closed_form` is params.crossover_context; `crossover_by_count` scans the shape counts; `agrees`.
    """
    rows = []
    for d in embed_dims:
        for H in hiddens:
            closed = params.crossover_context(d, H)
            scanned = _crossover_by_scan(vocab_size, d, H)
            rows.append(
                {
                    "embed_dim": d,
                    "hidden": H,
                    "tie_context": 1 + H / d,
                    "crossover_closed_form": closed,
                    "crossover_by_count": scanned,
                    "agrees": closed == scanned,
                }
            )
    return pd.DataFrame(rows)


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

    rows = [row(name, math.prod(s), _shape_str(s)) for name, s in recurrence.items()]
    rows.append(row("recurrence", total))
    first_layer = {}
    for T in tokens:
        mlp = params.ff_lm_shapes(1, d_model, T, d_h)
        first_layer[T] = params.count({"W_h": mlp["W_h"]})
        rows.append(row("mlp_first_layer", first_layer[T], _shape_str(mlp["W_h"]), T))
        with_bias = params.count({"W_h": mlp["W_h"], "b_h": mlp["b_h"]})
        rows.append(row("mlp_first_layer_with_bias", with_bias, f"{_shape_str(mlp['W_h'])} + {d_h}", T))
        rows.append(row("mlp_first_layer_minus_recurrence", first_layer[T] - total, "", T))
    longest, shortest = max(tokens), min(tokens)
    ratio = first_layer[longest] // first_layer[shortest]
    rows.append(row(f"mlp_first_layer_ratio_vs_{shortest}", ratio, "", longest))
    table = pd.DataFrame(rows)
    table["tokens"] = table["tokens"].astype("Int64")
    return table


# --------------------------------------------------------------------------------------------------------------
# Decay arithmetic (chapter): a per-step factor raised to the distance.

DECAY_FACTORS = (0.01, 0.25, 0.5, 0.9, 1.0, 1.2)
DECAY_DISTANCES = tuple(range(1, 101))


def decay(factors: Sequence[float] = DECAY_FACTORS, distances: Sequence[int] = DECAY_DISTANCES) -> pd.DataFrame:
    """factor ** distance, one row per (factor, distance)."""
    rows = [
        {"factor": f, "distance": k, "value": f**k, "log10_value": k * math.log10(f)}
        for f in factors
        for k in distances
    ]
    return pd.DataFrame(rows)


def decay_47_words() -> pd.DataFrame:
    """The chapter's 47-word passage (0.01, 0.5, 1.2 to the 47th) and 0.9 over 50 steps, with its printed claims.

    `claimed` is the chapter's number; `computed_as_printed` is ours in the same form; `matches` compares them
    (equal when printed to the chapter's digits; for 0.9, the removed share against the chapter's bound).
    """
    rows = []
    for example, factor, distance, claimed in _DECAY_CLAIMS:
        value = factor**distance
        removed = 100 * (1 - value) if value <= 1 else float("nan")  # a growing factor removes nothing
        if claimed.startswith(">"):  # "> 99% removed": a bound on the removed share
            printed = f"{removed:.2f}% removed"
            matches = removed > float(claimed.split("%")[0].lstrip("> "))
        else:  # a number printed to some digits: print ours the same way
            digits = len(claimed.split("e")[0].split(".")[1])
            printed = f"{value:.{digits}e}" if "e" in claimed else f"{value:.{digits}f}"
            matches = printed == claimed
        rows.append(
            {
                "example": example,
                "factor": factor,
                "distance": distance,
                "computed": value,
                "remaining_percent": 100 * value,
                "removed_percent": removed,
                "claimed": claimed,
                "computed_as_printed": printed,
                "matches": matches,
            }
        )
    return pd.DataFrame(rows)


# The chapter's own numbers, quoted: "0.01^47 = 1.0 x 10^-94, 0.5^47 = 7.1 x 10^-15, 1.2^47 = 5266.46" and
# "after fifty steps it has removed more than 99 per cent of the signal".
_DECAY_CLAIMS = (
    ("47-word passage", 0.01, 47, "1.0e-94"),
    ("47-word passage", 0.5, 47, "7.1e-15"),
    ("47-word passage", 1.2, 47, "5266.46"),
    ("0.9 over fifty steps", 0.9, 50, "> 99% removed"),
)


# --------------------------------------------------------------------------------------------------------------
# Clipping demonstration (chapter, eq. 12.7).

CLIP_NORMS = (0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1000.0)
CLIP_THRESHOLD = 5.0


def clipping(
    norms: Sequence[float] = CLIP_NORMS, threshold: float = CLIP_THRESHOLD, dim: int = 1000, seed: int = 0
) -> pd.DataFrame:
    """Seeded random gradients rescaled to the given norms, clipped by (12.7) and by torch's clip_grad_norm_.

    `cosine` between original and clipped is 1 (direction kept). torch divides by (norm + 1e-6), so its
    clipped norm sits a hair under the threshold: `torch_norm_after`.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for norm in norms:
        g = rng.standard_normal(dim)  # (dim,)
        g *= norm / np.linalg.norm(g)
        clipped = gradients.clip_by_norm(g, threshold)
        p = torch.nn.Parameter(torch.zeros(dim, dtype=torch.float64))
        p.grad = torch.tensor(g)
        with gradients.one_thread():
            torch.nn.utils.clip_grad_norm_([p], max_norm=threshold)
        rows.append(
            {
                "norm_before": float(np.linalg.norm(g)),
                "threshold": threshold,
                "clipped": bool(np.linalg.norm(g) > threshold),
                "scale": float(np.linalg.norm(clipped) / np.linalg.norm(g)),
                "norm_after": float(np.linalg.norm(clipped)),
                "cosine": float(g @ clipped / (np.linalg.norm(g) * np.linalg.norm(clipped))),
                "torch_norm_after": float(p.grad.norm()),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------
# Lesson 003: nn.RNN shapes and the numpy trace, transcribed from the lesson's code.


def lesson_rnn_shapes() -> pd.DataFrame:
    """The lesson's uni- and bidirectional nn.RNN(8, 16) on a (2, 6, 8) batch; shapes of outputs and h_n."""
    with gradients.one_thread():  # as the lesson
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
                        "shape": _shape_str(tuple(value.shape)),
                        "expected": _shape_str(expected),
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
    for t, (word, h) in enumerate(zip(NUMPY_TRACE_WORDS, trace.states), start=1):
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
    "the", "script", "is", "really", "good", "acting", "but", "honestly",  # first cell: 8 entries
    "film", "not", "boring", "fun",  # the word-order cell's 4 new entries
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
        for i, (tok, h) in enumerate(zip(tokens, states), start=1)
    ]


def lesson_two_sentences() -> pd.DataFrame:
    """Both sentences through one TinyRNN; `dist_to_other_script` is, on each "script" row, the distance to the
    other sentence's "script" state (the lesson's "almost identical" pair)."""
    rnn = TinyRNN.seeded()
    rows = []
    script_states = []
    for n, tokens in enumerate(LESSON001_SENTENCES, start=1):
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


# --------------------------------------------------------------------------------------------------------------
# Seed claims: every checkable number or property, the seed's words against the code's result.


@dataclass(frozen=True)
class Claim:
    seed: str  # "chapter" | "lesson001" | "lesson003"
    where: str  # section of the seed
    claim: str  # the seed's words, quoted or closely paraphrased
    claimed: str
    check: Callable[[], tuple[str, bool, str]]  # -> (computed, matches, note)


def _agreement_distance() -> tuple[str, bool, str]:
    words = "the book that the committee rejected was short".split()
    distance = words.index("was") - words.index("book")
    note = f"'was' is word {words.index('was') + 1}, 'book' word 2; the whole sentence has {len(words)} words"
    return str(distance), distance == 8, note


def _ff_smaller_at_three() -> tuple[str, bool, str]:
    t = params_totals(contexts=(3,)).iloc[0]
    return f"ff {t.ff:,} vs rnn {t.rnn:,}", bool(t.ff < t.rnn), ""


def _crossover_at_five() -> tuple[str, bool, str]:
    d, H = LECTURE_SIZES["embed_dim"], LECTURE_SIZES["hidden"]
    totals = params_totals(contexts=CONTEXTS).set_index("context")
    ties = totals.index[totals["larger"] == "tie"].tolist()
    first = params.crossover_context(d, H)
    return (
        f"tie at context {ties}, ff larger from context {first} (n = {first + 1})",
        first == 5 or ties == [5],
        "5 is H/d, where (n-1) d H = H^2: a comparison of W_h with U alone that leaves out the RNN's W (d x H)",
    )


def _power_claim(factor: float, distance: int) -> Callable[[], tuple[str, bool, str]]:
    def check() -> tuple[str, bool, str]:
        row = decay_47_words().set_index(["factor", "distance"]).loc[(factor, distance)]
        return row.computed_as_printed, bool(row.matches), f"{factor}^{distance} = {row.computed:.10g}"

    return check


def _bptt_per_step() -> tuple[str, bool, str]:
    check = gradients.gradient_check()
    per_step = check[(check.variant == "chapter_per_step") & (check.reference == "autograd")].set_index("parameter")
    errs = ", ".join(f"{p} {per_step.loc[p, 'rel_error']:.2f}" for p in ("U", "W", "b_h"))
    return (
        f"summed over t, rel. error vs autograd: {errs} (V, b_y exact)",
        bool(per_step.loc[["U", "W", "b_h"], "passes"].all()),
        "the bracket V^T(yhat_t - y_t) is dE_t/dh_t only; dL/dh_t also needs U^T delta_{t+1}. "
        "Summed, (12.3)/(12.4) give one-step truncated BPTT",
    )


def _explode_above_one() -> tuple[str, bool, str]:
    table = gradients.jacobian_decay(radii=(1.5,))
    last = table.iloc[-1]
    return (
        f"rho(U) = {last.spectral_radius:.2f}: ||dh_{int(last.distance)}/dh_0|| = {last.jacobian_norm:.2g} "
        f"while ||U^{int(last.distance)}|| = {last.u_power_norm:.2g}",
        bool(last.jacobian_norm > 1),
        "our seeded run (gradients.random_problem): |lambda| > 1 is needed for explosion, not enough; "
        "tanh' < 1 (saturation) can still make the product vanish. True of U^tau alone",
    )


def _recurrence_29312() -> tuple[str, bool, str]:
    t = lesson_params().set_index("quantity")["count"]
    n = int(t["recurrence"])
    return f"{n:,}", n == 29_312, f"W_hh {t['W_hh']:,} + W_xh {t['W_xh']:,} + b_h {t['b_h']}"


def _difference_3810688() -> tuple[str, bool, str]:
    t = lesson_params()
    row = t[(t.quantity == "mlp_first_layer_minus_recurrence") & (t.tokens == max(LESSON_TOKENS))].iloc[0]
    n = int(row["count"])
    return f"{n:,}", n == 3_810_688, "MLP first layer at 300 tokens, weights only (128 x 30,000), minus the recurrence"


def _ratio_ten() -> tuple[str, bool, str]:
    quantity = f"mlp_first_layer_ratio_vs_{min(LESSON_TOKENS)}"
    ratio = int(lesson_params().set_index("quantity").loc[quantity, "count"])
    return str(ratio), ratio == 10, ""


def _relu_million() -> tuple[str, bool, str]:
    return f"2^20 = {2**20:,}", 2**20 > 1_000_000, ""


def _slopes() -> tuple[str, bool, str]:
    z = torch.zeros(1, requires_grad=True)
    (d_tanh,) = torch.autograd.grad(torch.tanh(z).sum(), z)
    (d_sig,) = torch.autograd.grad(torch.sigmoid(z).sum(), z)
    slopes = (d_tanh.item(), d_sig.item())
    return f"tanh'(0) = {slopes[0]:g}, sigmoid'(0) = {slopes[1]:g}", slopes == (1.0, 0.25), ""


def _order_pair() -> tuple[str, bool, str]:
    t = lesson_word_order()
    first = t[t.sentence == t.sentence.iloc[0]]
    identical = first[first.identical].position.tolist()
    diverge = int(first[~first.identical].position.min())
    ok = bool(first.same_bag.all()) and identical == [1, 2, 3, 4] and diverge == 5
    computed = f"same bag: {bool(first.same_bag.all())}; identical rows {identical}; first difference at {diverge}"
    return computed, ok, "with our vocabulary, sentences and seeded weights"


# The lesson's two printed states for "script", quoted.
LESSON001_SCRIPT_STATES = ((-0.602, -0.098, -0.527), (-0.632, -0.026, -0.540))


def _script_states() -> tuple[str, bool, str]:
    t = lesson_two_sentences()
    gap = float(t.dist_to_other_script.dropna().iloc[0])
    norm = float(np.linalg.norm(t[t.token == "script"][["h1", "h2", "h3"]].iloc[0]))
    theirs = np.array(LESSON001_SCRIPT_STATES)
    their_gap = float(np.linalg.norm(theirs[0] - theirs[1]))
    return (
        f"ours {gap:.3f} apart (state norm {norm:.3f}); the lesson's pair {their_gap:.3f} apart",
        gap < 0.25 * norm,
        "the lesson prints states, not the code that made them, so its numbers cannot be reproduced; ours use "
        "our own seed. 'almost identical' taken as: distance under a quarter of the state's norm",
    )


def _params_24() -> tuple[str, bool, str]:
    n = numpy_trace_run().n_parameters
    return str(n), n == 24, "Wx 4x3 = 12, Wh 3x3 = 9, b 3"


def _bi_32() -> tuple[str, bool, str]:
    shape = lesson_rnn_shapes().set_index(["model", "tensor"]).loc[("bi", "outputs"), "shape"]
    return f"bi outputs {shape}", shape.endswith("x32"), ""


def _reach_shrinks() -> tuple[str, bool, str]:
    t = gradients.gradient_reach()
    values = t.grad_token1_mean_abs.tolist()
    shrinks = all(a > b for a, b in zip(values, values[1:]))
    computed = ", ".join(f"T={n}: {p}" for n, p in zip(t.length, t.printed))
    return computed, shrinks, "the lesson prints the code, not its output: these are its numbers on this torch"


_PARAMS = "The parameter count stops growing"
_47 = "The forty-seven word example"
_RUN = "Running the recurrence on two sentences"
_STATE = "A state rewritten at every position"
CLAIMS: tuple[Claim, ...] = (
    Claim("chapter", "A window that will not close", "The verb agrees with book, eight words back", "8",
          _agreement_distance),
    Claim("chapter", _PARAMS, "At a context of three the feed-forward model is actually smaller", "ff < rnn",
          _ff_smaller_at_three),
    Claim("chapter", _PARAMS, "The two cross over at five", "5", _crossover_at_five),
    Claim("chapter", _47, "0.01^47 = 1.0 x 10^-94", "1.0e-94", _power_claim(0.01, 47)),
    Claim("chapter", _47, "0.5^47 = 7.1 x 10^-15", "7.1e-15", _power_claim(0.5, 47)),
    Claim("chapter", _47, "1.2^47 = 5266.46", "5266.46", _power_claim(1.2, 47)),
    Claim("chapter", "How fast, in numbers", "0.9 after fifty steps has removed more than 99 per cent of the signal",
          "> 99% removed", _power_claim(0.9, 50)),
    Claim("chapter", "Backpropagation through time",
          "(12.3)/(12.4) give dE_t/dU, dE_t/dW; the gradient is their sum over time steps", "the gradient",
          _bptt_per_step),
    Claim("chapter", "Why the memory fades", "If any eigenvalue satisfies |lambda| > 1, the product grows without "
          "bound. Gradients explode.", "explodes", _explode_above_one),
    Claim("lesson001", _RUN, "the recurrence stays at 29 312 weights (d_model = 100, d_h = 128)", "29312",
          _recurrence_29312),
    Claim("lesson001", _RUN, "The 3 810 688 extra weights the MLP carries", "3810688", _difference_3810688),
    Claim("lesson001", _RUN, "reading paragraphs multiplies the concatenated MLP's first layer by ten", "10",
          _ratio_ten),
    Claim("lesson001", _STATE, "twenty iterations multiply it by more than a million", "> 1,000,000",
          _relu_million),
    Claim("lesson001", _STATE, "the slope at the origin: 1 for the tanh, 0.25 for the sigmoid", "1, 0.25", _slopes),
    Claim("lesson001", _RUN, "identical bag of words; the first four rows match; they diverge at the fifth",
          "rows 1-4 equal, 5 differs", _order_pair),
    Claim("lesson001", _RUN, "'the script' at positions 1-2 and 7-8 gives almost identical states",
          " vs ".join(map(str, LESSON001_SCRIPT_STATES)), _script_states),
    Claim("lesson003", "The hidden state and unrolling", "there are only 24 parameters", "24", _params_24),
    Claim("lesson003", "RNNs in PyTorch", "Bidirectional doubles the output size (16 + 16 = 32)", "32", _bi_32),
    Claim("lesson003", "Backpropagation Through Time", "the gradient reaching token 1 shrinks as the sequence grows",
          "shrinks", _reach_shrinks),
)


def seed_claims() -> pd.DataFrame:
    """Every checked claim: seed, where, claim, claimed, computed, matches, note."""
    rows = []
    for c in CLAIMS:
        computed, matches, note = c.check()
        rows.append(
            {
                "seed": c.seed,
                "where": c.where,
                "claim": c.claim,
                "claimed": c.claimed,
                "computed": computed,
                "matches": bool(matches),
                "note": note,
            }
        )
    return pd.DataFrame(rows)


def seed_discrepancies() -> pd.DataFrame:
    """The claims the computation contradicts."""
    claims = seed_claims()
    return claims[~claims.matches].reset_index(drop=True)


# --------------------------------------------------------------------------------------------------------------
# Tables, files and the terminal.

TABLES: dict[str, Callable[[], pd.DataFrame]] = {
    "unroll": unroll,
    "params_ff_vs_rnn": params_ff_vs_rnn,
    "params_totals": params_totals,
    "crossover_grid": crossover_grid,
    "lesson_params": lesson_params,
    "decay": decay,
    "decay_47_words": decay_47_words,
    "clipping": clipping,
    "lesson_rnn_shapes": lesson_rnn_shapes,
    "lesson_gradient_reach": gradients.gradient_reach,
    "lesson_numpy_trace": lesson_numpy_trace,
    "lesson_two_sentences": lesson_two_sentences,
    "lesson_word_order": lesson_word_order,
    "bptt_gradient_check": gradients.gradient_check,
    "jacobian_product": gradients.jacobian_decay,
    "seed_claims": seed_claims,
    "seed_discrepancies": seed_discrepancies,
}


def write_table(name: str, out_dir: str | Path) -> Path:
    """Write TABLES[name] to out_dir/name.csv atomically."""
    path = Path(out_dir) / f"{name}.csv"
    write_csv(path, TABLES[name]())
    return path


def write_tables(out_dir: str | Path, names: Sequence[str] | None = None) -> list[Path]:
    """Write the named tables (default: all of TABLES) as CSV under out_dir; returns the paths."""
    chosen = list(TABLES) if names is None else list(names)
    unknown = sorted(set(chosen) - set(TABLES))
    if unknown:
        raise KeyError(f"unknown table(s) {unknown}; known: {sorted(TABLES)}")
    return [write_table(name, out_dir) for name in chosen]


SECTIONS = ("unroll", "params", "vanish", "clip")


def _section_tables(section: str) -> list[tuple[str, pd.DataFrame]]:
    if section == "unroll":
        emb = ", ".join(f"{w} = {v}" for w, v in UNROLL_EMBEDDINGS.items())
        return [(f"Unrolling 'the dog ran' from h_0 = 0 (embeddings ours: {emb})", unroll())]
    if section == "params":
        sizes = ", ".join(f"{k} = {v:,}" for k, v in LECTURE_SIZES.items())
        shapes = params_ff_vs_rnn(contexts=(3,))
        return [
            (f"Shapes at context 3 ({sizes})", shapes),
            ("Totals by context", params_totals()),
            ("Crossover context over d and H", crossover_grid()),
            ("Lesson 001: recurrence vs concatenated MLP", lesson_params()),
        ]
    if section == "vanish":
        table = decay(distances=(1, 5, 10, 20, 47, 50, 100))
        wide = table.pivot(index="distance", columns="factor", values="value")
        return [
            ("factor ** distance", wide.reset_index()),
            ("The 47-word example", decay_47_words()),
        ]
    if section == "clip":
        return [(f"Clipping at threshold {CLIP_THRESHOLD:g} (eq. 12.7)", clipping())]
    raise ValueError(f"unknown section {section!r}; choose from {SECTIONS}")


def print_tables(sections: Sequence[str], file: TextIO | None = None) -> None:
    """Print the CLI sections ("unroll", "params", "vanish", "clip") as terminal tables; file defaults to stdout."""
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown section(s) {unknown}; choose from {SECTIONS}")
    out = file if file is not None else sys.stdout
    for section in sections:
        for title, table in _section_tables(section):
            print(f"\n== {title}", file=out)
            print(table.to_string(index=False, float_format=lambda v: f"{v:.6g}"), file=out)
