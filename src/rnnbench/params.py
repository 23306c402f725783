"""Analytic parameter shapes and counts of the language models, shape by shape.

Every `*_shapes` function returns an ordered dict `name -> shape tuple`; `count` sums their products.
Matrices are written (out, in), the convention of `torch.nn.Linear`, so `W` of the Elman cell is
(H, d) and the feed-forward hidden matrix `W_h` is (H, (n-1)d); the chapter's (n-1)d x H is its transpose
and has the same count. Pure Python: no torch, so tables can be built without it.

Names (shared with the models, whose parameters carry the same shapes):
  embedding          (|V|, d)          word embeddings, one row per word
  W, U, b_h          (H, d), (H, H), (H,)      Elman cell: h_t = act(W x_t + U h_{t-1} + b_h)
  W_h, b_h           (H, (n-1)d), (H,)         feed-forward hidden layer over the concatenated context
  W_direct           (|V|, (n-1)d)     feed-forward direct input-to-output connections (Bengio 2003)
  V, b_y             (|V|, H), (|V|,)  full softmax output layer
  out.head, out.head_bias, out.tail.<i>.proj, out.tail.<i>.out   adaptive softmax (replaces V, b_y)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from rnnbench.config.constraints import adaptive_problem, broken_model_rule

Shape = tuple[int, ...]
Shapes = dict[str, Shape]


def _check_positive(**sizes: int) -> None:
    for name, value in sizes.items():
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def adaptive_softmax_shapes(
    hidden: int,
    vocab_size: int,
    cutoffs: Sequence[int],
    div_value: float = 4.0,
    *,
    head_bias: bool = True,
) -> Shapes:
    """Shapes of `nn.AdaptiveLogSoftmaxWithLoss(hidden, vocab_size, cutoffs, div_value, head_bias)`.

    The head scores the shortlist `[0, cutoffs[0])` plus one entry per tail cluster; tail cluster i
    projects H down to `H // div_value**(i+1)` units (no bias) and scores its words from there (no bias).
    Our models use `head_bias=True`, the counterpart of the full softmax's b_y.
    """
    _check_positive(hidden=hidden, vocab_size=vocab_size)
    if problem := adaptive_problem(hidden, vocab_size, cutoffs, div_value):
        raise ValueError(problem)
    bounds = [*cutoffs, vocab_size]
    n_clusters = len(bounds) - 1
    head_size = bounds[0] + n_clusters
    shapes: Shapes = {"out.head": (head_size, hidden)}
    if head_bias:
        shapes["out.head_bias"] = (head_size,)
    for i in range(n_clusters):
        # Same integer division as torch: int(in_features // div_value ** (i + 1)).
        proj = int(hidden // (div_value ** (i + 1)))  # >= 1: checked by adaptive_problem
        shapes[f"out.tail.{i}.proj"] = (proj, hidden)
        shapes[f"out.tail.{i}.out"] = (bounds[i + 1] - bounds[i], proj)
    return shapes


def _output_shapes(vocab_size: int, in_features: int, cutoffs: Sequence[int] | None, div_value: float) -> Shapes:
    if cutoffs is None:
        return {"V": (vocab_size, in_features), "b_y": (vocab_size,)}
    return adaptive_softmax_shapes(in_features, vocab_size, cutoffs, div_value)


def ff_lm_shapes(
    vocab_size: int,
    embed_dim: int,
    context: int,
    hidden: int,
    direct: bool = False,
    *,
    cutoffs: Sequence[int] | None = None,
    div_value: float = 4.0,
) -> Shapes:
    """Bengio et al. (2003) n-gram LM: y = b_y + W_direct x + V tanh(W_h x + b_h), x = n-1 embeddings concatenated.

    `context` is n-1. `hidden=0` means no hidden layer: the softmax reads x itself (V is then (|V|, (n-1)d)),
    which already is the direct connection, so `direct=True` with `hidden=0` is refused.
    `cutoffs` replaces the full softmax (V, b_y) by an adaptive softmax over the same input.
    """
    _check_positive(vocab_size=vocab_size, embed_dim=embed_dim, context=context)
    if int(hidden) != hidden or hidden < 0:
        raise ValueError(f"hidden must be a non-negative integer, got {hidden!r}")
    settings = {
        "family": "ff",
        "hidden": hidden,
        "direct": direct,
        "context": context,
        "embed_dim": embed_dim,
        "output": "full" if cutoffs is None else "adaptive",
        "adaptive_cutoffs": cutoffs,
        "adaptive_div_value": div_value,
    }
    if broken := broken_model_rule(settings, vocab_size):
        raise ValueError(f"{broken.keys[0]}: {broken.message}")
    x_dim = context * embed_dim
    shapes: Shapes = {"embedding": (vocab_size, embed_dim)}
    if hidden == 0:
        shapes.update(_output_shapes(vocab_size, x_dim, cutoffs, div_value))
        return shapes
    shapes["W_h"] = (hidden, x_dim)
    shapes["b_h"] = (hidden,)
    shapes.update(_output_shapes(vocab_size, hidden, cutoffs, div_value))
    if direct:
        shapes["W_direct"] = (vocab_size, x_dim)
    return shapes


def rnn_lm_shapes(
    vocab_size: int,
    embed_dim: int,
    hidden: int,
    *,
    cutoffs: Sequence[int] | None = None,
    div_value: float = 4.0,
    tied: bool = False,
) -> Shapes:
    """Elman RNN LM with the chapter's parameter set: embedding, W (H, d), U (H, H), b_h, V (|V|, H), b_y.

    One recurrent bias b_h, as in the chapter (torch's nn.RNN has two, b_ih and b_hh). ``tied``: V is the
    embedding table (d = H), counted once.
    """
    return _recurrent_lm_shapes(
        vocab_size, embed_dim, hidden, gates=1, bias="b_h", cutoffs=cutoffs, div_value=div_value, tied=tied
    )


def lstm_lm_shapes(
    vocab_size: int,
    embed_dim: int,
    hidden: int,
    *,
    cutoffs: Sequence[int] | None = None,
    div_value: float = 4.0,
    tied: bool = False,
) -> Shapes:
    """LSTM LM of the same size: the four gates (input, forget, cell, output) stacked as rows of W, U, b.

    W (4H, d), U (4H, H), one bias b (4H) as for the Elman cell; the output layer reads h_t as before.
    """
    return _recurrent_lm_shapes(
        vocab_size, embed_dim, hidden, gates=4, bias="b", cutoffs=cutoffs, div_value=div_value, tied=tied
    )


def _recurrent_lm_shapes(
    vocab_size: int,
    embed_dim: int,
    hidden: int,
    *,
    gates: int,
    bias: str,
    cutoffs: Sequence[int] | None,
    div_value: float,
    tied: bool = False,
) -> Shapes:
    """Embedding, then `gates` stacked blocks of W (H, d), U (H, H) and one bias, then the output layer; ``tied``
    (a full softmax, d = H): V is the embedding table, so only b_y is the output layer's own."""
    _check_positive(vocab_size=vocab_size, embed_dim=embed_dim, hidden=hidden)
    if tied and (cutoffs is not None or embed_dim != hidden):
        raise ValueError(f"tied weights need a full softmax and embed_dim == hidden; got d = {embed_dim}, H = {hidden}")
    shapes: Shapes = {
        "embedding": (vocab_size, embed_dim),
        "W": (gates * hidden, embed_dim),
        "U": (gates * hidden, hidden),
        bias: (gates * hidden,),
    }
    shapes.update(_output_shapes(vocab_size, hidden, cutoffs, div_value))
    if tied:
        del shapes["V"]
    return shapes


def count(shapes: Mapping[str, Shape]) -> int:
    """Total number of scalars: the sum over shapes of the product of each shape."""
    return sum(math.prod(shape) for shape in shapes.values())


def ff_minus_rnn(context: int, embed_dim: int, hidden: int) -> int:
    """count(FF) - count(RNN) for the same |V|, d, H and full softmax: d*H*(n-1) - d*H - H*H.

    Embedding, V, b_y and b_h appear in both and cancel, so |V| drops out.
    """
    _check_positive(context=context, embed_dim=embed_dim, hidden=hidden)
    return embed_dim * hidden * (context - 1) - hidden * hidden


def crossover_context(embed_dim: int, hidden: int) -> int:
    """Smallest context n-1 at which the FF LM has strictly more parameters than the RNN LM.

    Both share the embedding (|V| d), the output layer (|V| H + |V|) and a hidden bias b_h (H), so these
    cancel and |V| drops out. What remains is the FF hidden matrix, (n-1) d H, against the RNN's W and U,
    d H + H^2:

        count(FF) - count(RNN) = (n-1) d H - d H - H^2 = H (d (n-2) - H)   > 0   <=>   n-1 > 1 + H/d.

    The smallest integer n-1 above 1 + H/d is floor(H/d) + 2. When d divides H the two models tie exactly
    at n-1 = 1 + H/d. For the chapter's d=100, H=500: a tie at n-1 = 6 (n = 7), FF larger from n-1 = 7 (n = 8).
    The chapter's "cross over at five" matches only a comparison of W_h with U alone (5 d H = H^2 at n-1 = H/d = 5),
    i.e. one that leaves out the RNN's input matrix W.
    """
    _check_positive(embed_dim=embed_dim, hidden=hidden)
    return hidden // embed_dim + 2


# Training holds each parameter as a float32 (4 bytes) in several copies at once: the weights, their gradients,
# the best epoch's weights (train.py keeps a copy), and Adam's two moments (SGD keeps none). Activations, the
# corpus and torch itself come on top, so this is a lower bound of what a run needs.
FLOAT_BYTES = 4
TRAINING_COPIES = {"sgd": 3, "adam": 5}


def run_parameters(settings: Mapping[str, object], vocab_size: int) -> int:
    """The parameter count of a run's model (``settings``: a run's settings, family to output layer)."""
    family, d, h = settings["family"], int(settings["embed_dim"]), int(settings["hidden"])
    cutoffs = list(settings["adaptive_cutoffs"]) if settings.get("output") == "adaptive" else None
    if family == "ff":
        shapes = ff_lm_shapes(vocab_size, d, int(settings["context"]), h, bool(settings["direct"]), cutoffs=cutoffs)
    else:
        shapes = (rnn_lm_shapes if family == "rnn" else lstm_lm_shapes)(
            vocab_size, d, h, cutoffs=cutoffs, tied=bool(settings.get("tie_weights"))
        )
    return count(shapes)


def training_bytes(settings: Mapping[str, object], vocab_size: int) -> int:
    """At least this many bytes to train the run: parameters x FLOAT_BYTES x its optimiser's TRAINING_COPIES."""
    return run_parameters(settings, vocab_size) * FLOAT_BYTES * TRAINING_COPIES[str(settings["optimizer"])]
