"""Count-based language models: the unigram and interpolated modified Kneser-Ney of order n.

Sentences. A split is one stream of token ids. Where the vocabulary has <eos>, each <eos> ends a sentence
(PTB's lines, the agreement corpus's sentences) and every sentence is read from a sentence-start context
<s>, as SRILM reads a line and as Mikolov's KN5 was estimated: no n-gram spans two sentences, and the first
word of a sentence is predicted from <s> alone. <s> is only ever a context, never predicted. A corpus
without <eos> (Brown as prepared here) is one sentence: <s> once, before its first token. Every token of
the split, <eos> included, is predicted, and perplexity is exp(mean NLL over them):

    split      the cat sat <eos> a dog ran <eos>
    read as    <s> the cat sat <eos> <s> a dog ran <eos>
    predicted      ^   ^   ^   ^         ^ ^   ^   ^          8 tokens, as many as the split has

Interpolated modified Kneser-Ney (Chen and Goodman 1998, eqs. 17-19), at each order m = 1..n:

    p_m(w | h) = max(c_m(hw) - D_m(c_m(hw)), 0) / c_m(h.)  +  gamma_m(h) p_{m-1}(w | h')
    gamma_m(h) = (D_m,1 N1(h.) + D_m,2 N2(h.) + D_m,3+ N3+(h.)) / c_m(h.)

h' is h without its first word; c_m(h.) sums c_m(hw) over w; N_k(h.) counts the words w with c_m(hw) = k.
c_m is the raw count at the top order n and the continuation count N1+(. g), the number of distinct words
seen before g, at every lower order, except for n-grams that begin with <s>: nothing precedes <s>, so they
keep their raw counts (SRILM's rule, utils/make-kn-counts). A context h never seen at order m passes
p_{m-1} through unchanged. The lowest order is interpolated with the uniform distribution over the
vocabulary, p_0(w) = 1/|V| (Chen and Goodman's choice), so a word never seen in training keeps a share.
No count cutoffs. The three discounts of each order come from that order's count-of-counts n1..n4 (of the
counts the order discounts):

    Y = n1 / (n1 + 2 n2),   D1 = 1 - 2Y n2/n1,   D2 = 2 - 3Y n3/n2,   D3+ = 3 - 4Y n4/n3

An order whose count-of-counts give no such discounts (no n-gram seen three times, or a D_k outside
[0, k]) is an error, unless ``fallback`` discounts are given: then that order uses them and says so
(``estimated`` False). Artificial text needs it: in the agreement corpus nearly every word follows many
distinct words, so the unigrams' continuation counts have n3 = 0. FALLBACK_DISCOUNTS are KenLM's
(lmplz --discount_fallback).

The unigram model is add-one (Laplace): (c(w) + 1) / (N + V) over the training stream's N tokens and the V
words of the vocabulary. A word the training stream never holds (Brown's vocabulary counts words over the
whole corpus) keeps a probability, so the unigram scores every token a network is scored on: a maximum-
likelihood unigram would have to leave those tokens out, and its perplexity would be over an easier text.
On PTB, whose vocabulary is its training text's, the added counts move the perplexity by a fraction of 1%.

Tables, vectorised with numpy: the m-grams of order m are numbered by np.unique over integer keys
``index of the (m-1)-gram context * (|V| + 1) + word``, so a 5-gram key stays far inside int64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


class DiscountError(ValueError):
    """An order's count-of-counts cannot give modified Kneser-Ney discounts (too little or too regular text)."""


FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)  # D1, D2, D3+ where the count-of-counts give none (KenLM's defaults)


@dataclass(frozen=True)
class Score:
    """Summed negative log-likelihood (nats) of the predicted tokens of a split."""

    nll_sum: float
    n_tokens: int  # tokens predicted, every one counted in the perplexity

    @property
    def perplexity(self) -> float:
        return math.exp(self.nll_sum / self.n_tokens) if self.n_tokens else math.nan


def with_sentence_starts(ids: np.ndarray, eos_id: int | None, bos_id: int) -> np.ndarray:
    """The stream with ``bos_id`` (<s>) before its first token and after every <eos> but a final one."""
    ids = np.asarray(ids, dtype=np.int64)
    starts = np.zeros(1, dtype=np.int64)
    if eos_id is not None:
        after = np.flatnonzero(ids == eos_id) + 1
        starts = np.concatenate([starts, after[after < ids.size]])
    return np.insert(ids, starts, bos_id)


def _check_ids(ids: np.ndarray, vocab_size: int, what: str) -> np.ndarray:
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D stream of token ids, got shape {ids.shape}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"{what}: token ids must lie in [0, {vocab_size}), found [{ids.min()}, {ids.max()}]")
    return ids


# ---------------------------------------------------------------------------------------------- unigram


@dataclass(frozen=True)
class Unigram:
    counts: np.ndarray  # (V,) int64: how often each word occurs in the training stream (before the added one)

    @classmethod
    def fit(cls, train: np.ndarray, vocab_size: int) -> Unigram:
        train = _check_ids(train, vocab_size, "unigram training stream")
        if not train.size:
            raise ValueError("unigram training stream: expected at least one token, got none")
        return cls(np.bincount(train, minlength=vocab_size))

    @property
    def probabilities(self) -> np.ndarray:
        return (self.counts + 1) / (self.counts.sum() + self.counts.size)  # (V,) add-one

    def score(self, ids: np.ndarray) -> Score:
        ids = _check_ids(ids, self.counts.size, "unigram scored stream")
        return Score(float(-np.log(self.probabilities[ids]).sum()), int(ids.size))


# ---------------------------------------------------------------------------------------------- Kneser-Ney


def discounts(n1: int, n2: int, n3: int, n4: int, *, order: int = 0) -> tuple[float, float, float]:
    """(D1, D2, D3+) from the count-of-counts n1..n4 of one order (Chen and Goodman 1998, eq. 26)."""
    if min(n1, n2, n3) <= 0 or n4 < 0:
        raise DiscountError(
            f"order {order}: modified Kneser-Ney needs n-grams seen once, twice and three times (n1, n2, n3 > 0), "
            f"found n1..n4 = {n1}, {n2}, {n3}, {n4}; the text is too small or too regular for this order"
        )
    y = n1 / (n1 + 2 * n2)
    d = (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
    if not all(0 <= dk <= k for k, dk in enumerate(d, start=1)):
        raise DiscountError(
            f"order {order}: discounts (D1, D2, D3+) = {d} from n1..n4 = {n1}, {n2}, {n3}, {n4}; each D_k must lie "
            f"in [0, k]: the count-of-counts are not those of natural text"
        )
    return d


@dataclass(frozen=True)
class KneserNeyOrder:
    """One order m of the model: its m-grams, the counts it discounts, and its contexts' totals.

    An m-gram is numbered by its position in ``keys``; its context is an index into order m-1's table
    (for m = 2, and for m = 1's single empty context, a token id), its key ``context * radix + word``.
    """

    order: int
    keys: np.ndarray  # (G,) int64, sorted
    counts: np.ndarray  # (G,) int64: raw at the top order or for <s>-initial n-grams, else continuation
    totals: np.ndarray  # (C,) float64: c_m(h.) of each context
    backoff: np.ndarray  # (C,) float64: D1 N1(h.) + D2 N2(h.) + D3+ N3+(h.), gamma_m(h) times c_m(h.)
    count_of_counts: tuple[int, int, int, int]  # n1..n4
    discounts: tuple[float, float, float]  # D1, D2, D3+
    estimated: bool = True  # False: the fallback discounts, the count-of-counts gave none

    def discount(self, counts: np.ndarray) -> np.ndarray:
        """D(c) for each count c: 0 for an unseen n-gram, D1, D2, D3+ for 1, 2, 3 and more."""
        table = np.array([0.0, *self.discounts])
        return table[np.minimum(counts, 3)]


@dataclass(frozen=True)
class KneserNey:
    """Interpolated modified Kneser-Ney of order ``len(orders)`` over a vocabulary of ``vocab_size`` ids."""

    vocab_size: int
    eos_id: int | None
    orders: tuple[KneserNeyOrder, ...]  # orders[m - 1] is order m

    @property
    def order(self) -> int:
        return len(self.orders)

    @property
    def bos_id(self) -> int:
        return self.vocab_size  # <s>: one id past the vocabulary, a context only

    @classmethod
    def fit(
        cls,
        train: np.ndarray,
        vocab_size: int,
        order: int,
        *,
        eos_id: int | None,
        fallback: tuple[float, float, float] | None = None,
    ) -> KneserNey:
        """Count the n-grams of ``train`` (ids < ``vocab_size``; ``eos_id`` ends a sentence, None: one sentence)."""
        if order < 1:
            raise ValueError(f"Kneser-Ney order must be at least 1, got {order}")
        train = _check_ids(train, vocab_size, "Kneser-Ney training stream")
        if eos_id is not None and not 0 <= eos_id < vocab_size:
            raise ValueError(f"eos_id {eos_id} is not an id of the vocabulary of {vocab_size} words")
        bos, radix = vocab_size, vocab_size + 1
        seq = with_sentence_starts(train, eos_id, bos)  # (L,)
        # index[m-1][i]: the number of the m-gram ending at position i (for m = 1, the token id), -1 if there is none
        index = [seq]
        raw = [np.bincount(seq, minlength=radix)]  # order 1: token counts (the <s> entry never predicted)
        keys, suffix, initial = [np.arange(radix)], [None], [np.arange(radix) == bos]
        for _ in range(2, order + 1):
            context = np.concatenate([[-1], index[-1][:-1]])  # the (m-1)-gram ending one step earlier
            ok = (context >= 0) & (seq != bos)
            where = np.flatnonzero(ok)
            table, first, inverse, count = np.unique(
                context[where] * radix + seq[where], return_index=True, return_inverse=True, return_counts=True
            )
            numbers = np.full(seq.size, -1, dtype=np.int64)
            numbers[where] = inverse
            keys.append(table)
            raw.append(count)
            suffix.append(index[-1][where[first]])  # the m-gram's last m-1 words: its number in order m-1
            initial.append(initial[-1][table // radix])  # begins with <s> iff its context does
            index.append(numbers)
        orders = []
        for m in range(1, order + 1):
            counts = raw[m - 1]
            if m < order:  # continuation counts: distinct words before the n-gram, one per (m+1)-gram it ends
                continuation = np.bincount(suffix[m], minlength=counts.size)
                counts = np.where(initial[m - 1], counts, continuation)
            if m == 1:
                counts, contexts, n_contexts = counts[:vocab_size], np.zeros(vocab_size, dtype=np.int64), 1
            else:
                contexts, n_contexts = keys[m - 1] // radix, keys[m - 2].size
            orders.append(_order(m, keys[m - 1][: counts.size], counts, contexts, n_contexts, fallback))
        return cls(vocab_size, eos_id, tuple(orders))

    def log_probabilities(self, ids: np.ndarray) -> np.ndarray:
        """ln p(token | its history) of every token of the stream ``ids``, read as the module says."""
        ids = _check_ids(ids, self.vocab_size, "Kneser-Ney scored stream")
        return np.log(self._probabilities(with_sentence_starts(ids, self.eos_id, self.bos_id)))

    def distribution(self, history: np.ndarray | list[int]) -> np.ndarray:
        """p(w | <s> history) for every word w of the vocabulary, (V,): ``history`` is the sentence so far."""
        history = _check_ids(np.asarray(history, dtype=np.int64), self.vocab_size, "Kneser-Ney history")
        if self.eos_id is not None and np.any(history == self.eos_id):
            raise ValueError(f"Kneser-Ney history: <eos> (id {self.eos_id}) ends a sentence; a history lies within one")
        words = np.arange(self.vocab_size)
        # one sentence per word, side by side: <s> history w
        block = np.concatenate([[self.bos_id], history])
        seq = np.column_stack([np.tile(block, (self.vocab_size, 1)), words]).ravel()
        return self._probabilities(seq)[history.size :: history.size + 1]  # (V,) the w, not the history

    def _probabilities(self, seq: np.ndarray) -> np.ndarray:
        """p of every token of ``seq`` (ids with <s> in place) but the <s>, from the words before it in its sentence."""
        bos, radix = self.bos_id, self.vocab_size + 1
        index = [seq]
        for level in self.orders[1:]:
            if not level.keys.size:  # no sentence of the training text is that long
                index.append(np.full(seq.size, -1, dtype=np.int64))
                continue
            context = np.concatenate([[-1], index[-1][:-1]])
            keys = np.where((context >= 0) & (seq != bos), context * radix + seq, -1)
            at = np.minimum(np.searchsorted(level.keys, keys), level.keys.size - 1)
            index.append(np.where((keys >= 0) & (level.keys[at] == keys), at, -1))
        predicted = np.flatnonzero(seq != bos)  # (N,) every token of the split
        unigrams = self.orders[0]
        words = seq[predicted]
        c = unigrams.counts[words]
        p = (np.maximum(c - unigrams.discount(c), 0) + unigrams.backoff[0] / self.vocab_size) / unigrams.totals[0]
        for m, level in enumerate(self.orders[1:], start=2):
            context = index[m - 2][predicted - 1]  # the m-1 words before the token, -1 if not all in one sentence
            seen = context >= 0
            seen[seen] = level.totals[context[seen]] > 0
            ngram = index[m - 1][predicted[seen]]
            c = np.where(ngram >= 0, level.counts[np.maximum(ngram, 0)], 0)
            h = context[seen]
            p[seen] = (np.maximum(c - level.discount(c), 0) + level.backoff[h] * p[seen]) / level.totals[h]
        return p

    def score(self, ids: np.ndarray) -> Score:
        return Score(float(-self.log_probabilities(ids).sum()), int(np.asarray(ids).size))


def _order(
    m: int, keys: np.ndarray, counts: np.ndarray, contexts: np.ndarray, n_contexts: int, fallback
) -> KneserNeyOrder:
    """Discounts from the count-of-counts (or the fallback), then each context's total and discounted mass."""
    n = tuple(int(np.count_nonzero(counts == k)) for k in (1, 2, 3, 4))
    try:
        d, estimated = discounts(*n, order=m), True
    except DiscountError:
        if fallback is None:
            raise
        d, estimated = tuple(float(x) for x in fallback), False
    held = np.array([0.0, *d])[np.minimum(counts, 3)]  # (G,) the discount each n-gram gives up
    return KneserNeyOrder(
        order=m,
        keys=keys,
        counts=counts,
        totals=np.bincount(contexts, weights=counts, minlength=n_contexts).astype(np.float64),
        backoff=np.bincount(contexts, weights=held, minlength=n_contexts),
        count_of_counts=n,
        discounts=d,
        estimated=estimated,
    )
