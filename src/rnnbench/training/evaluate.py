"""Perplexity and the agreement probe, both from exact normalised probabilities.

Perplexity is exp of the mean negative log-likelihood per predicted token. A split is read the way the
run was trained to read it (``rnnbench.training.reading`` decides which, once per run): as one stream, the state
carried across truncation segments, so every token but the first is predicted from its whole history;
as whole sentences, each from h_0 = 0; or, feed-forward, every token that has a full window of
``context`` tokens before it.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from rnnbench.data.batching import batchify, bptt_segments, ngram_windows, sentence_batches
from rnnbench.data.corpora import Corpus

# Large enough to keep the matmuls efficient, small enough that a 10k-way softmax fits in memory.
FF_EVAL_BATCH = 2048


def perplexity(mean_nll: float) -> float:
    """exp(mean NLL), saturating to inf: a diverging run's finite loss can exceed e^709, the float limit,
    and that must end up in its records as data rather than raise OverflowError."""
    return math.inf if mean_nll > math.log(sys.float_info.max) else math.exp(mean_nll)  # NaN stays NaN


@dataclass(frozen=True)
class Likelihood:
    nll_sum: float
    n_tokens: int
    # A stream's, read in parallel columns: each column's own (they add up to the whole, up to float rounding).
    columns: tuple[Likelihood, ...] = ()

    @property
    def mean_nll(self) -> float:
        return self.nll_sum / self.n_tokens if self.n_tokens else math.nan

    @property
    def perplexity(self) -> float:
        return perplexity(self.mean_nll) if self.n_tokens else math.nan


@torch.no_grad()
def stream_likelihood(model, stream: np.ndarray, *, batch_size: int, bptt: int, by_column: bool = False) -> Likelihood:
    """Total NLL of a token stream read by a recurrent model in columns and segments, the state carried
    from each segment to the next, as truncated-BPTT training reads it; ``by_column``: with each column's own.

    Each column is read from h_0 = 0 at its first token (batchify cuts the stream into ``batch_size`` of them),
    so a model that falls into a state it never leaves from one of those starts has one column far worse than the
    rest: its columns tell (rnnbench.training.stuck_columns). Scoring them apart takes about three times as long (ten columns of
    a 10k-word adaptive softmax, on one thread), so training's validation passes do without."""
    model.eval()
    data = batchify(stream, batch_size)  # (T, B)
    state = model.init_state(batch_size)
    # Summed on the tensor side, in float64: no sync per batch. Without columns, this is the sum dynamic
    # evaluation takes at B = 1 (rnnbench.training.dynamic), to the last bit.
    width = batch_size if by_column else 1
    nll_sums, counts = torch.zeros(width, dtype=torch.float64), np.zeros(width, dtype=np.int64)
    for inputs, targets in bptt_segments(data, bptt):  # (t, B), (t, B)
        if by_column:
            means, n, state = model.nll_by_column(inputs, targets, state)
        else:
            mean, k, state = model.nll(inputs, targets, state)
            means, n = [mean], [k]
        nll_sums += torch.stack([mean.double() * k for mean, k in zip(means, n, strict=True)])
        counts += n
    columns = tuple(Likelihood(total, int(k)) for total, k in zip(nll_sums.tolist(), counts, strict=True))
    return Likelihood(float(nll_sums.sum()), int(counts.sum()), columns if by_column else ())


@torch.no_grad()
def window_likelihood(model, stream: np.ndarray, *, context: int) -> Likelihood:
    """Total NLL of every token of a stream that has a full window of ``context`` tokens before it."""
    model.eval()
    contexts, targets = ngram_windows(stream, context)  # (N, n-1), (N,)
    nll_sum, n_tokens = torch.zeros((), dtype=torch.float64), 0
    for start in range(0, len(targets), FF_EVAL_BATCH):
        stop = start + FF_EVAL_BATCH
        mean, n, _ = model.nll(contexts[start:stop], targets[start:stop])
        nll_sum += mean.double() * n
        n_tokens += n
    return Likelihood(float(nll_sum), n_tokens)


@torch.no_grad()
def sentence_likelihood(model, stream: np.ndarray, sentence_starts: np.ndarray, *, batch_size: int) -> Likelihood:
    """Total NLL with the state reset to h_0 = 0 at every sentence (full-BPTT training's view)."""
    model.eval()
    nll_sum, n_tokens = torch.zeros((), dtype=torch.float64), 0
    for inputs, targets, _ in sentence_batches(stream, sentence_starts, batch_size):  # (T, B) each
        mean, n, _ = model.nll(inputs, targets, None)
        nll_sum += mean.double() * n
        n_tokens += n
    return Likelihood(float(nll_sum), n_tokens)


# The agreement probe compares two exact probabilities at the verb's position, p(correct form) > p(other
# number's form), which isolates agreement from how likely the verb itself is.


def sentence_agreement(model, corpus: Corpus, split: str, *, batch_size: int) -> pd.DataFrame:
    """Per head-verb distance: how often a recurrent model, reading each sentence from h_0 = 0, prefers
    the verb form that agrees with its head."""
    probes = sentence_margins(model, corpus, split, batch_size=batch_size)
    return _accuracy_by_distance(probes, probes["margin"].to_numpy(), split)


@torch.no_grad()
def sentence_margins(model, corpus: Corpus, split: str, *, batch_size: int) -> pd.DataFrame:
    """Every agreement probe of ``split`` (the corpus's probe table) with its ``margin``, log p(correct form) -
    log p(other form) at the verb, for a recurrent model reading each sentence from h_0 = 0."""
    probes, stream = _probes(corpus, split)
    model.eval()
    margin = np.full(len(probes), np.nan)
    row_of_position = {int(p): i for i, p in enumerate(probes["position"])}
    for inputs, _, positions in sentence_batches(stream, corpus.sentence_starts[split], batch_size):
        log_probs, _ = model(inputs, None)  # (T, B, V)
        t_idx, b_idx = np.nonzero(np.isin(positions.numpy(), probes["position"].to_numpy()))
        if len(t_idx) == 0:
            continue
        rows = [row_of_position[int(positions[t, b])] for t, b in zip(t_idx, b_idx, strict=True)]
        margin[rows] = _margins(log_probs[t_idx, b_idx], probes.iloc[rows])
    return probes.assign(margin=margin)


@torch.no_grad()
def window_agreement(model, corpus: Corpus, split: str, *, context: int) -> pd.DataFrame:
    """The same probe for the feed-forward model, which sees only its window: beyond ``context`` words
    it is at chance by construction."""
    probes, stream = _probes(corpus, split)
    model.eval()
    margin = np.full(len(probes), np.nan)
    positions = probes["position"].to_numpy()
    # Left-pad with <eos>, what precedes the first sentence, so early probes get a full window.
    padded = np.concatenate([np.full(context, corpus.vocab.stoi["<eos>"]), stream])
    for start in range(0, len(positions), FF_EVAL_BATCH):
        chunk = positions[start : start + FF_EVAL_BATCH]
        windows = np.stack([padded[p : p + context] for p in chunk])  # (n, context): stream[p-context:p]
        log_probs, _ = model(torch.as_tensor(windows, dtype=torch.long))  # (n, V)
        margin[start : start + len(chunk)] = _margins(log_probs, probes.iloc[start : start + len(chunk)])
    return _accuracy_by_distance(probes, margin, split)


def _probes(corpus: Corpus, split: str) -> tuple[pd.DataFrame, np.ndarray]:
    if corpus.probes is None or corpus.sentence_starts is None:
        raise ValueError(f"corpus {corpus.name!r} has no agreement probes; only the synthetic 'agreement' corpus does")
    return corpus.probes[split], getattr(corpus, split)


def _accuracy_by_distance(probes: pd.DataFrame, margin: np.ndarray, split: str) -> pd.DataFrame:
    table = probes.assign(correct=margin > 0)
    return (
        table.groupby("distance", as_index=False)
        .agg(n=("correct", "size"), accuracy=("correct", "mean"))
        .assign(split=split)
    )


def _margins(log_probs: torch.Tensor, probes: pd.DataFrame) -> np.ndarray:
    """log p(correct) - log p(wrong) for each probe row; log_probs is (n, V), aligned with the rows."""
    rows = torch.arange(len(probes))
    correct = log_probs[rows, torch.as_tensor(probes["correct_id"].to_numpy(copy=True))]
    wrong = log_probs[rows, torch.as_tensor(probes["wrong_id"].to_numpy(copy=True))]
    return (correct - wrong).double().numpy()
