"""Batching: contiguous streams for truncated BPTT, n-gram windows, padded sentence batches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import torch

IGNORE_INDEX = -100  # nn.functional.nll_loss / cross_entropy skip targets with this value


def _as_long(stream) -> torch.Tensor:
    """1-D int64 tensor; shares memory with an int64 numpy array or tensor (no copy)."""
    t = torch.as_tensor(np.asarray(stream) if not isinstance(stream, torch.Tensor) else stream)
    if t.dim() != 1:
        raise ValueError(f"expected a 1-D token stream, got shape {tuple(t.shape)}")
    return t.long()


def batchify(stream, batch_size: int) -> torch.Tensor:
    """Cut one token stream into `batch_size` contiguous columns, time-major (T, B).

    The tail that does not fill a whole row is dropped. With the stream a..x and B = 4,
    T = 24 // 4 = 6 and column b holds tokens b*T .. b*T+T-1:

        stream: a b c d e f | g h i j k l | m n o p q r | s t u v w x
                 column 0      column 1      column 2      column 3

                 B ->
            T  ┌ a g m s ┐
            |  │ b h n t │
            v  │ c i o u │
               │ d j p v │
               │ e k q w │
               └ f l r x ┘

    Each column is read top to bottom as one continuous text, so the hidden state at the
    bottom of one BPTT segment is the right start for the top of the next.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    data = _as_long(stream)  # (N,)
    steps = data.numel() // batch_size
    if steps == 0:
        raise ValueError(f"stream of {data.numel()} tokens is shorter than batch_size {batch_size}")
    return data[: steps * batch_size].view(batch_size, steps).t().contiguous()  # (T, B)


def bptt_segments(data: torch.Tensor, bptt: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Walk a (T, B) batch in windows of `bptt` steps; targets are the inputs shifted one step down.

        rows  0 1 2 3 4 5   (T = 6, bptt = 2)
        in    [0 1]         targets [1 2]
        in        [2 3]     targets     [3 4]
        in            [4]   targets         [5]    <- the last segment is shorter

    The last row is only ever a target, so T - 1 input rows are covered.
    """
    if bptt < 1:
        raise ValueError(f"bptt must be >= 1, got {bptt}")
    steps = data.size(0)
    for i in range(0, steps - 1, bptt):
        length = min(bptt, steps - 1 - i)
        yield data[i : i + length], data[i + 1 : i + 1 + length]  # (t, B), (t, B)


def ngram_windows(stream, context: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every (n-1)-word context and the word that follows it, for the feed-forward model.

    stream 0..5, context 2:  contexts [[0,1],[1,2],[2,3],[3,4]], targets [2,3,4,5].
    Contexts are a strided view of the stream (row i starts one element after row i-1), so no
    N x context copy is made; copy before writing into them.
    """
    if context < 0:
        raise ValueError(f"context must be >= 0, got {context}")
    data = _as_long(stream)  # (N_stream,)
    n = data.numel() - context
    if n < 1:
        raise ValueError(f"stream of {data.numel()} tokens has no target after a context of {context}")
    contexts = data.as_strided((n, context), (data.stride(0), data.stride(0)))  # (N, context)
    return contexts, data[context:]  # (N, context), (N,)


class SentenceBatch(NamedTuple):
    inputs: torch.Tensor  # (T, B) int64; padding = <eos> id
    targets: torch.Tensor  # (T, B) int64; padding = IGNORE_INDEX
    positions: torch.Tensor  # (T, B) int64; stream index of each target; padding = -1


def sentence_batches(
    stream, sentence_starts, batch_size: int, *, shuffle_seed: int | None = None, eos_id: int | None = None
) -> list[SentenceBatch]:
    """Whole sentences, one per column, padded to the longest sentence of their batch.

    Each sentence ends with <eos>; its inputs start with <eos> (the end of the previous sentence),
    so every token of the sentence, the first word included, is a target:

        stream  the dog ran <eos> a cat <eos>      (ids 5 6 7 0 8 9 0; starts [0, 4])
        inputs    targets   positions
        0 0       5  8      0  4
        5 8       6  9      1  5
        6 9       7  0      2  6
        7 0       0 -100    3 -1

    positions[t, b] is the stream index of targets[t, b], so a probe at stream position p can be
    read off the model output at the (t, b) where positions == p. `eos_id` defaults to the last
    token of the stream. With `shuffle_seed`, sentences are assigned to batches in a seeded random
    order; otherwise in stream order.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    data = _as_long(stream)  # (N,)
    starts = np.asarray(sentence_starts, dtype=np.int64)
    if (
        starts.ndim != 1
        or starts.size == 0
        or starts[0] != 0
        or np.any(np.diff(starts) <= 0)
        or starts[-1] >= data.numel()
    ):
        raise ValueError("sentence_starts must be increasing offsets into the stream, starting at 0")
    ends = np.append(starts[1:], data.numel())
    eos = int(data[-1]) if eos_id is None else int(eos_id)
    if not torch.all(data[torch.as_tensor(ends - 1)] == eos):
        raise ValueError(f"every sentence must end with the <eos> id {eos}")
    order = np.arange(starts.size)
    if shuffle_seed is not None:
        order = np.random.default_rng(shuffle_seed).permutation(starts.size)
    batches = []
    for first in range(0, order.size, batch_size):
        chosen = order[first : first + batch_size]
        lengths = ends[chosen] - starts[chosen]
        steps, width = int(lengths.max()), chosen.size
        inputs = torch.full((steps, width), eos, dtype=torch.long)  # (T, B)
        targets = torch.full((steps, width), IGNORE_INDEX, dtype=torch.long)  # (T, B)
        positions = torch.full((steps, width), -1, dtype=torch.long)  # (T, B)
        for b, (s, e) in enumerate(zip(starts[chosen].tolist(), ends[chosen].tolist(), strict=True)):
            length = e - s
            targets[:length, b] = data[s:e]
            inputs[1:length, b] = data[s : e - 1]
            positions[:length, b] = torch.arange(s, e)
        batches.append(SentenceBatch(inputs, targets, positions))
    return batches
