"""How a run reads its data, decided once from its settings: the training loop and evaluation ask here
and never which model family they train.

    StreamReading     recurrent, bptt >= 1: the split batchified into B contiguous columns, walked in
                      segments of bptt steps; the state is carried from one segment to the next, its graph
                      cut between them (truncated BPTT)
    SentenceReading   recurrent, bptt = 0: whole sentences, one per column, each read from h_0 = 0 (full
                      BPTT); the order of sentences is shuffled per epoch, seeded by (seed, epoch)
    SentenceCutReading  recurrent, bptt = k >= 1, segments 'sentence': SentenceReading's batches, each
                      sentence's gradient cut at its steps k, 2k, ... (the state's value carried on): the
                      only difference from full BPTT is where backward stops
    WindowReading     feed-forward: every (n-1)-word window and the word after it; the windows are
                      shuffled per epoch, seeded by (seed, epoch)

Each gives the batches of an epoch, the number of optimiser steps in one, the state a batch starts from,
the likelihood of a split, and the agreement probe per head-verb distance; a recurrent one also the batches
evaluation reads a split in (``eval_batches``, the state carried between them where ``carries_state``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from rnnbench.config import updates
from rnnbench.config.runs import RunConfig
from rnnbench.data.batching import batchify, bptt_segments, ngram_windows, sentence_batches
from rnnbench.data.corpora import Corpus
from rnnbench.models.base import detach_state
from rnnbench.training.evaluate import (
    Likelihood,
    sentence_agreement,
    sentence_likelihood,
    stream_likelihood,
    window_agreement,
    window_likelihood,
)


@dataclass(frozen=True)
class Batch:
    inputs: torch.Tensor  # (t, B) recurrent, (N, n-1) feed-forward
    targets: torch.Tensor  # (t, B) recurrent, (N,) feed-forward
    cut_every: int | None = None  # k: the gradient stops at steps k, 2k, ... of the batch (LanguageModel.nll)


def split_stream(corpus: Corpus, split: str, limit: int | None) -> np.ndarray:
    """A split's tokens, cut to ``limit`` (at a sentence boundary when the corpus has sentences)."""
    stream = getattr(corpus, split)
    if limit is None or limit >= len(stream):
        return stream
    cut = limit
    if corpus.sentence_starts is not None:
        starts = corpus.sentence_starts[split]
        cut = int(starts[starts <= cut].max()) or int(starts[1])  # keep at least one whole sentence
    return stream[:cut]


class Reading:
    """What the three ways of reading share: the run's settings, its corpus and its training tokens."""

    def __init__(self, cfg: RunConfig, corpus: Corpus):
        self.cfg = cfg
        self.corpus = corpus
        self.train = split_stream(corpus, "train", cfg.train_tokens)

    def steps_per_epoch(self) -> int:
        """Optimiser steps in one epoch, after ``max_steps_per_epoch`` (rnnbench.config.updates counts them; the
        loop takes fewer in the epoch that spends the run's ``max_steps``)."""
        steps = self._full_epoch_steps()
        return min(steps, self.cfg.max_steps_per_epoch) if self.cfg.max_steps_per_epoch else steps

    def eval_stream(self, split: str) -> np.ndarray:
        return split_stream(self.corpus, split, self.cfg.eval_tokens)

    def first_state(self, model):
        """The state the first batch of an epoch starts from (None: the model's h_0 = 0)."""
        return None

    def next_state(self, state):
        """The state the next batch starts from, given the state the last one ended in."""
        return None

    # Each mode defines these.
    carries_state = False  # whether an evaluation batch starts from the state the last one ended in

    def batches(self, epoch: int) -> Iterator[Batch]:
        raise NotImplementedError

    def eval_batches(self, split: str) -> Iterator[Batch]:
        """``split`` in the batches a recurrent model is evaluated in, in order (padding: IGNORE_INDEX targets)."""
        raise NotImplementedError(f"{type(self).__name__} reads no split as recurrent batches")

    def _full_epoch_steps(self) -> int:
        raise NotImplementedError

    def likelihood(self, model, split: str, *, by_column: bool = False) -> Likelihood:
        """The split's likelihood as this run reads it; ``by_column``: with each evaluation column's own, where the
        split is read in parallel columns (a stream; rnnbench.training.stuck_columns)."""
        raise NotImplementedError

    def agreement(self, model, split: str) -> pd.DataFrame:
        raise NotImplementedError


class StreamReading(Reading):
    carries_state = True

    def batches(self, epoch: int) -> Iterator[Batch]:
        data = batchify(self.train, self.cfg.batch_size)  # (T, B): B contiguous columns of the stream
        for inputs, targets in bptt_segments(data, self.cfg.bptt):
            yield Batch(inputs, targets)

    def eval_batches(self, split: str) -> Iterator[Batch]:
        data = batchify(self.eval_stream(split), self.cfg.eval_batch_size)  # (T, B)
        for inputs, targets in bptt_segments(data, self.cfg.bptt):
            yield Batch(inputs, targets)

    def _full_epoch_steps(self) -> int:
        return updates.stream_updates(len(self.train), self.cfg.batch_size, self.cfg.bptt)

    def first_state(self, model):
        return model.init_state(self.cfg.batch_size)

    def next_state(self, state):
        return detach_state(state)

    def likelihood(self, model, split: str, *, by_column: bool = False) -> Likelihood:
        return stream_likelihood(
            model,
            self.eval_stream(split),
            batch_size=self.cfg.eval_batch_size,
            bptt=self.cfg.bptt,
            by_column=by_column,
        )

    def agreement(self, model, split: str) -> pd.DataFrame:
        return sentence_agreement(model, self.corpus, split, batch_size=self.cfg.eval_batch_size)


class SentenceReading(Reading):
    def _starts(self, split: str, stream: np.ndarray) -> np.ndarray:
        starts = self.corpus.sentence_starts[split]
        return starts[starts < len(stream)]

    def batches(self, epoch: int) -> Iterator[Batch]:
        starts = self._starts("train", self.train)
        shuffle = self.cfg.seed * 1000 + epoch
        for inputs, targets, _ in sentence_batches(self.train, starts, self.cfg.batch_size, shuffle_seed=shuffle):
            yield Batch(inputs, targets)

    def eval_batches(self, split: str) -> Iterator[Batch]:
        stream = self.eval_stream(split)
        for inputs, targets, _ in sentence_batches(stream, self._starts(split, stream), self.cfg.eval_batch_size):
            yield Batch(inputs, targets)

    def _full_epoch_steps(self) -> int:
        return updates.sentence_updates(len(self._starts("train", self.train)), self.cfg.batch_size)

    def likelihood(self, model, split: str, *, by_column: bool = False) -> Likelihood:
        stream = self.eval_stream(split)
        return sentence_likelihood(model, stream, self._starts(split, stream), batch_size=self.cfg.eval_batch_size)

    def agreement(self, model, split: str) -> pd.DataFrame:
        return sentence_agreement(model, self.corpus, split, batch_size=self.cfg.eval_batch_size)


class SentenceCutReading(SentenceReading):
    """Every sentence starts at step 0 of its column, so the batch's steps k, 2k, ... are each sentence's."""

    def batches(self, epoch: int) -> Iterator[Batch]:
        for batch in super().batches(epoch):
            yield Batch(batch.inputs, batch.targets, cut_every=self.cfg.bptt)


class WindowReading(Reading):
    def batches(self, epoch: int) -> Iterator[Batch]:
        contexts, targets = ngram_windows(self.train, self.cfg.context)  # (N, n-1), (N,)
        order = torch.as_tensor(np.random.default_rng([self.cfg.seed, epoch]).permutation(len(targets)))
        for start in range(0, len(order), self.cfg.batch_size):
            index = order[start : start + self.cfg.batch_size]
            yield Batch(contexts[index], targets[index])

    def _full_epoch_steps(self) -> int:
        return updates.window_updates(len(self.train), self.cfg.context, self.cfg.batch_size)

    def likelihood(self, model, split: str, *, by_column: bool = False) -> Likelihood:
        return window_likelihood(model, self.eval_stream(split), context=self.cfg.context)

    def agreement(self, model, split: str) -> pd.DataFrame:
        return window_agreement(model, self.corpus, split, context=self.cfg.context)


def reading_for(cfg: RunConfig, corpus: Corpus) -> Reading:
    """The one place a run's settings choose how it reads its data."""
    if cfg.family == "ff":
        return WindowReading(cfg, corpus)
    if cfg.bptt == 0:
        return SentenceReading(cfg, corpus)
    if cfg.segments == "sentence":
        return SentenceCutReading(cfg, corpus)
    return StreamReading(cfg, corpus)
