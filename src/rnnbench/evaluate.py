"""Perplexity and the agreement probe, both from exact normalised probabilities.

Perplexity is exp of the mean negative log-likelihood per predicted token. The recurrent models read a
split as one stream, carrying their state across truncation segments exactly as in training, so every
token but the first is predicted from its whole history; the feed-forward model predicts every token
that has a full window of ``context`` tokens before it.
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

    @property
    def mean_nll(self) -> float:
        return self.nll_sum / self.n_tokens if self.n_tokens else math.nan

    @property
    def perplexity(self) -> float:
        return perplexity(self.mean_nll) if self.n_tokens else math.nan


@torch.no_grad()
def stream_likelihood(model, stream: np.ndarray, *, family: str, batch_size: int, bptt: int, context: int) -> Likelihood:
    """Total NLL of a token stream, the way the model was trained to read it."""
    model.eval()
    nll_sum, n_tokens = 0.0, 0
    if family == "ff":
        contexts, targets = ngram_windows(stream, context)  # (N, n-1), (N,)
        for start in range(0, len(targets), FF_EVAL_BATCH):
            stop = start + FF_EVAL_BATCH
            mean, n, _ = model.nll(contexts[start:stop], targets[start:stop])
            nll_sum += float(mean) * n
            n_tokens += n
        return Likelihood(nll_sum, n_tokens)
    data = batchify(stream, batch_size)  # (T, B)
    state = model.init_state(batch_size)
    for inputs, targets in bptt_segments(data, bptt):  # (t, B), (t, B)
        mean, n, state = model.nll(inputs, targets, state)
        nll_sum += float(mean) * n
        n_tokens += n
    return Likelihood(nll_sum, n_tokens)


@torch.no_grad()
def sentence_likelihood(model, stream: np.ndarray, sentence_starts: np.ndarray, *, batch_size: int) -> Likelihood:
    """Total NLL with the state reset to h_0 = 0 at every sentence (full-BPTT training's view)."""
    model.eval()
    nll_sum, n_tokens = 0.0, 0
    for inputs, targets, _ in sentence_batches(stream, sentence_starts, batch_size):  # (T, B) each
        mean, n, _ = model.nll(inputs, targets, None)
        nll_sum += float(mean) * n
        n_tokens += n
    return Likelihood(nll_sum, n_tokens)


@torch.no_grad()
def agreement_by_distance(model, corpus: Corpus, split: str, *, family: str, context: int, batch_size: int) -> pd.DataFrame:
    """Per head-verb distance: how often the model prefers the verb form that agrees with its head.

    The probe compares two exact probabilities at the verb's position, p(correct form) > p(other number's
    form), which isolates agreement from how likely the verb itself is. Recurrent models read each
    sentence from h_0 = 0; the feed-forward model sees only its window, so beyond ``context`` words it
    is at chance by construction.
    """
    if corpus.probes is None or corpus.sentence_starts is None:
        raise ValueError(f"corpus {corpus.name!r} has no agreement probes; only the synthetic 'agreement' corpus does")
    model.eval()
    probes = corpus.probes[split]
    stream = getattr(corpus, split)
    margin = np.full(len(probes), np.nan)
    if family == "ff":
        positions = probes["position"].to_numpy()
        # Left-pad with <eos>, what precedes the first sentence, so early probes get a full window.
        padded = np.concatenate([np.full(context, corpus.vocab.stoi["<eos>"]), stream])
        for start in range(0, len(positions), FF_EVAL_BATCH):
            chunk = positions[start : start + FF_EVAL_BATCH]
            windows = np.stack([padded[p : p + context] for p in chunk])  # (n, context): stream[p-context:p]
            log_probs, _ = model(torch.as_tensor(windows, dtype=torch.long))  # (n, V)
            margin[start : start + len(chunk)] = _margins(log_probs, probes.iloc[start : start + len(chunk)])
    else:
        row_of_position = {int(p): i for i, p in enumerate(probes["position"])}
        for inputs, _, positions in sentence_batches(stream, corpus.sentence_starts[split], batch_size):
            log_probs, _ = model(inputs, None)  # (T, B, V)
            t_idx, b_idx = np.nonzero(np.isin(positions.numpy(), probes["position"].to_numpy()))
            if len(t_idx) == 0:
                continue
            rows = [row_of_position[int(positions[t, b])] for t, b in zip(t_idx, b_idx)]
            margin[rows] = _margins(log_probs[t_idx, b_idx], probes.iloc[rows])
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
