"""A prepared corpus (token ids, vocabulary, sentence starts, agreement probes) and its cache entry.

    <cache_dir>/<corpus>-<key>.vocab.json   the vocabulary, written first
    <cache_dir>/<corpus>-<key>.npz          every array; written last, so it marks the entry complete

An entry that cannot be read (empty, truncated, bit-flipped) or whose ids do not fit its vocabulary is
reported, by file, and rebuilt rather than trusted; `corpora.load_corpus` decides what the key is.
"""

from __future__ import annotations

import io
import json
import logging
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from rnnbench.data.synthetic import EOS, SPLITS
from rnnbench.data.vocab import Vocab
from rnnbench.io import write_bytes

log = logging.getLogger(__name__)

PROBE_COLUMNS = ("position", "head_position", "distance", "correct_id", "wrong_id", "number", "attractors")


@dataclass(frozen=True, eq=False)
class Corpus:
    name: str
    vocab: Vocab
    train: np.ndarray  # (N_train,) int64, one stream in document order
    valid: np.ndarray  # (N_valid,) int64
    test: np.ndarray  # (N_test,) int64
    sentence_starts: dict[str, np.ndarray] | None = None  # split -> (n_sentences,) int64 (agreement only)
    probes: dict[str, pd.DataFrame] | None = None  # split -> one row per dependent verb (agreement only)
    from_cache: bool = field(default=False, compare=False)

    def split(self, name: str) -> np.ndarray:
        if name not in SPLITS:
            raise KeyError(f"unknown split {name!r}; choose one of {', '.join(SPLITS)}")
        return getattr(self, name)

    def statistics(self) -> dict:
        """Flat dict for printing and tables: sizes per split, vocabulary, <unk> rate, sentences, probes."""
        stats: dict = {"corpus": self.name, "vocab_size": len(self.vocab), "unk_token": self.vocab.unk_token}
        unk = self.vocab.stoi[self.vocab.unk_token] if self.vocab.unk_token is not None else None
        eos = self.vocab.stoi.get(EOS)
        for split in SPLITS:
            ids = self.split(split)
            stats[f"{split}_tokens"] = int(ids.size)
            stats[f"{split}_unk_rate"] = float(np.mean(ids == unk)) if unk is not None and ids.size else 0.0
            if self.sentence_starts is not None:
                stats[f"{split}_sentences"] = int(self.sentence_starts[split].size)
            elif eos is not None:
                stats[f"{split}_sentences"] = int(np.count_nonzero(ids == eos))
            if self.probes is not None:
                stats[f"{split}_probes"] = len(self.probes[split])
                stats[f"{split}_mean_distance"] = float(self.probes[split]["distance"].mean())
        return stats


def write_cache(stem: Path, corpus: Corpus) -> None:
    """Vocab json first, npz last: the npz is what marks an entry complete; each write is atomic."""
    arrays: dict[str, np.ndarray] = {s: corpus.split(s) for s in SPLITS}
    arrays["name"] = np.array(corpus.name)
    for split in SPLITS:
        if corpus.sentence_starts is not None:
            arrays[f"starts__{split}"] = corpus.sentence_starts[split]
        if corpus.probes is not None:
            for col in PROBE_COLUMNS:
                values = corpus.probes[split][col].to_numpy()
                arrays[f"probes__{split}__{col}"] = values.astype(str) if col == "number" else values
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    vocab_json = stem.parent / f"{stem.name}.vocab.json"
    corpus.vocab.save(vocab_json)
    try:
        write_bytes(stem.parent / f"{stem.name}.npz", buffer.getvalue())
    except BaseException:
        vocab_json.unlink(missing_ok=True)  # no orphan half of an entry
        raise


def read_cache(stem: Path, name: str) -> Corpus | None:
    npz, vocab_json = stem.parent / f"{stem.name}.npz", stem.parent / f"{stem.name}.vocab.json"
    if not (npz.is_file() and vocab_json.is_file()):
        return None
    try:
        vocab = Vocab.load(vocab_json)
        with np.load(npz, allow_pickle=False) as f:
            arrays = {key: f[key] for key in f.files}
        if str(arrays["name"]) != name:
            return None
        starts = probes = None
        if "starts__train" in arrays:
            starts = {s: arrays[f"starts__{s}"] for s in SPLITS}
        if "probes__train__position" in arrays:
            probes = {s: pd.DataFrame({c: arrays[f"probes__{s}__{c}"] for c in PROBE_COLUMNS}) for s in SPLITS}
        if problem := _ids_problem(vocab, arrays):
            log.warning("ignoring cache entry %s: %s does not match it: %s; rebuilding it", npz, vocab_json, problem)
            return None
        return Corpus(name, vocab, *(arrays[s] for s in SPLITS), sentence_starts=starts, probes=probes, from_cache=True)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as err:
        # a damaged entry (empty, truncated, bit-flipped: writes are atomic, so only outside interference)
        # is rebuilt, not trusted
        log.warning("ignoring unreadable cache entry %s (%s); rebuilding it", npz, err or type(err).__name__)
        return None


def _ids_problem(vocab: Vocab, arrays: dict[str, np.ndarray]) -> str | None:
    """Every token id of the cached arrays must name a word of the cached vocabulary."""
    for key in (*SPLITS, *(f"probes__{s}__{c}" for s in SPLITS for c in ("correct_id", "wrong_id"))):
        ids = arrays.get(key)
        if ids is not None and ids.size and (ids.min() < 0 or ids.max() >= len(vocab)):
            return f"{key} holds ids in [{ids.min()}, {ids.max()}], the vocabulary has {len(vocab):,} words"
    return None
