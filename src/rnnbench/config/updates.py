"""The optimiser steps (updates) a run's settings imply: each epoch's, and the run's, counted across epochs.

An epoch reads the training data once, one update per batch, and ``max_steps_per_epoch`` caps it; ``max_steps``
caps the run's updates in all, reading the data again as epochs until the budget is spent (or ``max_epochs`` is
reached first); the epoch that spends it stops there, part way through the data::

    a stream of N tokens in B columns of N // B tokens, walked in segments of k steps:
        updates an epoch  = ceil((N // B - 1) / k)      (the last row of a column is only a target)
        tokens an update  = B x k                       (the last segment of an epoch shorter)
    S whole sentences in batches of B:  ceil(S / B) updates an epoch
    W windows (N - (n-1) of them) in batches of B:  ceil(W / B)

    an epoch under the budget = min(updates an epoch, max_steps - updates taken before it)

Worked: 4,200 tokens, B = 20, k = 10: columns of 210 tokens, 209 input steps, 21 updates an epoch (20 of 200
tokens and one of 180). With max_steps 50 and max_epochs 5 the run takes 21, 21 and 8 updates and stops in its
third epoch; resumed after its first, it has taken 21 and takes 21 and 8 more.

Two runs that take the same updates in the same epochs are one run: where the corpus's sizes say how many updates
an epoch holds before it is read (`epoch_updates_known`), `budget` writes a run's max_epochs and max_steps as the
fewest epochs that hold its updates and a cap only where one falls inside an epoch, and the run id hashes that
(rnnbench.config.runs.RunConfig.settings). Pure arithmetic on the settings and rnnbench.data.corpus_facts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def tokens_per_update(batch_size: int, bptt: int) -> int:
    """The training tokens one update of a stream reads (and predicts): B columns of k steps."""
    return batch_size * bptt


def stream_updates(tokens: int, batch_size: int, bptt: int) -> int:
    """Updates in one epoch of a stream of ``tokens`` in ``batch_size`` columns, segments of ``bptt`` steps
    (rnnbench.data.batching.batchify and bptt_segments)."""
    return math.ceil((tokens // batch_size - 1) / bptt)


def sentence_updates(sentences: int, batch_size: int) -> int:
    """Updates in one epoch of ``sentences`` whole sentences, ``batch_size`` to a batch."""
    return math.ceil(sentences / batch_size)


def window_updates(tokens: int, context: int, batch_size: int) -> int:
    """Updates in one epoch of the (n-1)-word windows of a stream of ``tokens``, ``batch_size`` to a batch."""
    return math.ceil(max(tokens - context, 0) / batch_size)


def epoch_updates(per_epoch: int, taken: int, max_steps: int | None) -> int:
    """The updates the next epoch takes: all ``per_epoch`` of them (after max_steps_per_epoch), or what is left of
    the run's budget ``max_steps`` after the ``taken`` updates before it (0 once it is spent)."""
    if max_steps is None:
        return per_epoch
    return max(0, min(per_epoch, max_steps - taken))


def planned_updates(per_epoch: int, max_epochs: int, max_steps: int | None) -> tuple[int, ...]:
    """Each epoch's updates, in order, for a run none of whose epochs is cut short otherwise (no divergence, no
    schedule that stops it): epochs of ``per_epoch`` until ``max_epochs`` or until ``max_steps`` is spent."""
    epochs: list[int] = []
    taken = 0
    while len(epochs) < max_epochs:
        steps = epoch_updates(per_epoch, taken, max_steps)
        if steps == 0:
            break
        epochs.append(steps)
        taken += steps
    return tuple(epochs)


def epoch_updates_known(settings: Mapping[str, Any], known) -> int | None:
    """The updates one epoch of a run with ``settings`` takes (after max_steps_per_epoch), from the corpus's sizes
    known before it is read (rnnbench.data.corpus_facts.KnownSizes); None where they do not say it exactly (the
    agreement corpus read as a stream, or cut to train_tokens within its sentences)."""
    train = known.max_tokens.get("train")
    limit = settings.get("train_tokens")
    if settings["family"] == "ff" or settings["bptt"] == 0 or settings.get("segments") == "sentence":
        if settings["family"] == "ff":
            tokens = _exact_tokens(train, limit, known)
            full = window_updates(tokens, settings["context"], settings["batch_size"]) if tokens else None
        else:
            sentences = (known.sentences or {}).get("train")
            full = sentence_updates(sentences, settings["batch_size"]) if sentences and limit is None else None
    else:
        tokens = _exact_tokens(train, limit, known)
        full = stream_updates(tokens, settings["batch_size"], settings["bptt"]) if tokens else None
    if full is None:
        return None
    cap = settings.get("max_steps_per_epoch")
    return min(full, cap) if cap else full


def _exact_tokens(train: int | None, limit: int | None, known) -> int | None:
    """The training stream's length, where it is known exactly: a corpus whose sizes are exact (no sentences to cut
    at), cut to ``limit``."""
    if train is None or known.has_sentences:
        return None  # the agreement corpus's sizes are bounds, and a limit is cut at a sentence boundary
    return min(train, limit) if limit else train


def budget(settings: Mapping[str, Any], known) -> tuple[int, int | None]:
    """(max_epochs, max_steps) as the run takes them: where an epoch's updates are known and ``max_steps`` is set,
    the fewest epochs that hold the run's updates, and the cap only where it stops an epoch part way; otherwise the
    settings as given. So a cap the epochs never reach, or one that ends on an epoch's last update, changes nothing."""
    max_epochs, max_steps = settings["max_epochs"], settings.get("max_steps")
    if max_steps is None:
        return max_epochs, None
    per_epoch = epoch_updates_known(settings, known)
    if per_epoch is None:
        return max_epochs, max_steps
    plan = planned_updates(per_epoch, max_epochs, max_steps)
    cut = sum(plan) < len(plan) * per_epoch  # the last epoch stops part way
    return len(plan), (sum(plan) if cut else None)
