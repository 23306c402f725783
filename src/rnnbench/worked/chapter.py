"""The chapter's ("Recurrent Networks") worked examples as tables: unrolling, parameter counts and their
crossover, the decay arithmetic, and gradient clipping by the function training uses.

Each table is a pure function returning a tidy DataFrame; rnnbench.worked.TABLES names them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from rnnbench import params
from rnnbench.training.clipping import clip_gradients
from rnnbench.worked import bptt

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


def unroll_weights() -> pd.DataFrame:
    """The chapter's W, U and b_h as printed, one row per entry (row and column from 1, as unroll's units are);
    b_h is a vector, so its column is empty. The book's explorable starts from these and recomputes the trace."""
    rows = [
        {"tensor": name, "row": i + 1, "column": j + 1, "value": matrix[i, j]}
        for name, matrix in (("W", UNROLL_W), ("U", UNROLL_U))
        for i in range(matrix.shape[0])
        for j in range(matrix.shape[1])
    ]
    rows += [{"tensor": "b_h", "row": i + 1, "column": None, "value": v} for i, v in enumerate(UNROLL_B)]
    return pd.DataFrame(rows).astype({"column": "Int64"})


# --------------------------------------------------------------------------------------------------------------
# Parameter tables (chapter: |V| = 10,000, d = 100, H = 500).

LECTURE_SIZES = {"vocab_size": 10_000, "embed_dim": 100, "hidden": 500}
CONTEXTS = tuple(range(1, 21))


def shape_str(shape: tuple[int, ...]) -> str:
    """A tensor shape as the tables print it: (500, 100) -> "500x100"."""
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
                        "shape": shape_str(shape),
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
# Clipping demonstration (chapter, eq. 12.7), by the function every training step calls.

CLIP_NORMS = (0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1000.0)
CLIP_THRESHOLD = 5.0


def clipping(
    norms: Sequence[float] = CLIP_NORMS, threshold: float = CLIP_THRESHOLD, dim: int = 1000, seed: int = 0
) -> pd.DataFrame:
    """Seeded random gradients rescaled to the given norms, clipped by rnnbench.training.clipping.clip_gradients (mode
    "norm", the chapter's 12.7: the very call each training step makes) and by torch's clip_grad_norm_.

    `norm_before` and `clipped` are what clip_gradients returns (and training records per step); `cosine`
    between the gradient before and after is 1 (direction kept). torch divides by (norm + 1e-6), so its
    clipped norm sits a hair under the threshold: `torch_norm_after`.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for norm in norms:
        g = rng.standard_normal(dim)  # (dim,)
        g *= norm / np.linalg.norm(g)
        ours, theirs = (torch.nn.Parameter(torch.zeros(dim, dtype=torch.float64)) for _ in range(2))
        ours.grad, theirs.grad = torch.tensor(g), torch.tensor(g)
        with bptt.one_thread():
            norm_before, clipped = clip_gradients([ours], "norm", threshold)
            torch.nn.utils.clip_grad_norm_([theirs], max_norm=threshold)
        after = ours.grad.numpy()  # (dim,)
        rows.append(
            {
                "norm_before": norm_before,
                "threshold": threshold,
                "clipped": clipped,
                "scale": float(np.linalg.norm(after) / np.linalg.norm(g)),
                "norm_after": float(np.linalg.norm(after)),
                "cosine": float(g @ after / (np.linalg.norm(g) * np.linalg.norm(after))),
                "torch_norm_after": float(theirs.grad.norm()),
            }
        )
    return pd.DataFrame(rows)
