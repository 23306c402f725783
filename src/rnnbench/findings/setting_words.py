"""A run's settings in the words a reader of the field uses: what a claim's part is labelled by.

    word(key, value)          one setting: ("bptt", 0) -> "full BPTT", ("recurrent_init", "identity") -> "U = I start"
    words(setting)            a setting dict as words, in its order, joined by commas
    corpus(name)              a corpus by its name in the book ("ptb" -> "PTB")
    study(record, among)      a study by its corpus, and by the fixed settings that set it apart from the studies
                              ``among`` of the same corpus (a label names no study or analysis key)

A key this module does not know reads as "key value": a new setting is shown, never dropped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

CORPORA = {"ptb": "PTB", "agreement": "agreement corpus", "brown": "Brown", "wikitext2": "WikiText-2"}
FAMILIES = {"rnn": "Elman RNN", "lstm": "LSTM", "gru": "GRU", "ff": "feed-forward"}
ACTIVATIONS = {"tanh": "tanh", "sigmoid": "sigmoid", "relu": "ReLU"}
OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "adagrad": "Adagrad", "rmsprop": "RMSprop"}
STARTS = {"identity": "U = I start", "default": "default start", "orthogonal": "orthogonal start"}
CLIP_MODES = {"norm": "norm clipping", "value": "element-wise clipping", "none": "unclipped"}
SEGMENTS = {"sentence": "cut within sentences", "stream": "stream segments"}


def _number(value: Any) -> str:
    """A number as a label writes it: 0.002, 2, 1.1 (an integral float without its point); else as given."""
    if isinstance(value, bool):
        return str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return str(value)
    return f"{int(number):,}" if number.is_integer() and abs(number) >= 1000 else f"{number:g}"


def _snapshot(value: Any) -> str:
    text = str(value)
    if text == "final":
        return "trained"
    if text in ("0", "0.0"):
        return "untrained"
    return f"after {_number(value)} steps"


def _bptt(value: Any) -> str:
    k = _number(value)
    return "full BPTT" if k == "0" else f"truncated at k = {k}"


def _clip_times(value: Any) -> str:
    times = _number(value)
    return "unclipped" if times == "inf" else f"threshold {times}× the median norm"


def _clip(value: Any) -> str:
    clip = _number(value)
    return "unclipped" if clip == "inf" else f"threshold {clip}"


# key -> its words; a key not here reads "key value".
WORDS = {
    "family": lambda v: FAMILIES.get(str(v), str(v)),
    "corpus": lambda v: corpus(str(v)),
    "activation": lambda v: ACTIVATIONS.get(str(v), str(v)),
    "optimizer": lambda v: OPTIMIZERS.get(str(v), str(v)),
    "recurrent_init": lambda v: STARTS.get(str(v), f"{v} start"),
    "clip_mode": lambda v: CLIP_MODES.get(str(v), f"{v} clipping"),
    "segments": lambda v: SEGMENTS.get(str(v), f"{v} segments"),
    "snapshot": _snapshot,
    "bptt": _bptt,
    "clip_times_median": _clip_times,
    "clip": _clip,
    "lr": lambda v: f"rate {_number(v)}",
    "hidden": lambda v: f"H = {_number(v)}",
    "embed_dim": lambda v: f"d = {_number(v)}",
    "context": lambda v: f"n−1 = {_number(v)}",
    "radius": lambda v: f"spectral radius {_number(v)}",
    "batch_size": lambda v: f"batch {_number(v)}",
    "max_epochs": lambda v: f"at most {_number(v)} epoch{'' if _number(v) == '1' else 's'}",
    "max_steps": lambda v: f"at most {_number(v)} updates",
    "train_tokens": lambda v: f"{_number(v)} training tokens",
    "schedule": lambda v: f"{v} rate schedule",
    "seed": lambda v: f"seed {_number(v)}",
}


def corpus(name: str) -> str:
    return CORPORA.get(name, name)


def word(key: str, value: Any) -> str:
    """One setting in words; an unknown key as "key value"."""
    said = WORDS.get(key)
    return said(value) if said else f"{key} {_number(value)}"


def words(setting: Mapping[str, Any]) -> str:
    """Every setting of ``setting``, in its order, as words joined by commas."""
    return ", ".join(word(k, v) for k, v in setting.items())


def study(record: Mapping[str, Any], among: Iterable[Mapping[str, Any]] = ()) -> str:
    """A study (its record: corpus, fixed) by its corpus's name and, where another of ``among`` has the same corpus,
    the plain fixed settings in which it differs from them (a setting the other leaves out differs too)."""
    name = corpus(str(record.get("corpus", "")))
    fixed = {k: v for k, v in (record.get("fixed") or {}).items() if not isinstance(v, (dict, list))}
    others = [r for r in among if r is not record and r.get("corpus") == record.get("corpus")]
    apart: dict[str, Any] = {}
    for other in others:
        theirs = other.get("fixed") or {}
        apart |= {k: v for k, v in fixed.items() if k not in apart and theirs.get(k) != v}
    return ", ".join(filter(None, (name, words(apart))))
