"""Corpora (PTB, Brown, synthetic agreement), vocabularies and batching.

Names are imported on first use, so that `rnnbench.data.corpora` and `rnnbench.data.synthetic` (what
a configuration check needs) load without torch, which only batching needs.
"""

from importlib import import_module

_HOME = {
    "IGNORE_INDEX": "batching",
    "SentenceBatch": "batching",
    "batchify": "batching",
    "bptt_segments": "batching",
    "ngram_windows": "batching",
    "sentence_batches": "batching",
    "Corpus": "corpora",
    "CorpusError": "corpus_facts",
    "load_corpus": "corpora",
    "Vocab": "vocab",
}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
