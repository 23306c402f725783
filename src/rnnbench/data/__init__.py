"""Corpora (PTB, Brown, synthetic agreement), vocabularies and batching."""

from rnnbench.data.batching import (
    IGNORE_INDEX,
    SentenceBatch,
    batchify,
    bptt_segments,
    ngram_windows,
    sentence_batches,
)
from rnnbench.data.corpora import Corpus, CorpusError, load_corpus
from rnnbench.data.vocab import Vocab

__all__ = [
    "IGNORE_INDEX",
    "Corpus",
    "CorpusError",
    "SentenceBatch",
    "Vocab",
    "batchify",
    "bptt_segments",
    "load_corpus",
    "ngram_windows",
    "sentence_batches",
]
