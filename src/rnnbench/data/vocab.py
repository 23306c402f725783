"""Word vocabulary: ids ordered by descending train frequency, ties alphabetical.

Frequent words get small ids because an adaptive softmax puts its first cutoff on the id axis.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import numpy as np

from rnnbench.io import write_bytes


@dataclass(frozen=True)
class Vocab:
    itos: tuple[str, ...]
    unk_token: str | None = None
    stoi: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "itos", tuple(self.itos))
        stoi = {word: i for i, word in enumerate(self.itos)}
        if len(stoi) != len(self.itos):
            dupes = sorted(w for w, n in Counter(self.itos).items() if n > 1)
            raise ValueError(f"vocabulary has duplicate words: {dupes[:10]}")
        if self.unk_token is not None and self.unk_token not in stoi:
            raise ValueError(f"unk_token {self.unk_token!r} is not in the vocabulary")
        object.__setattr__(self, "stoi", MappingProxyType(stoi))

    @classmethod
    def build(
        cls,
        tokens: Iterable[str],
        *,
        min_count: int = 1,
        unk_token: str | None = None,
        extra: Iterable[str] = (),
    ) -> Vocab:
        """Vocabulary of `tokens` (the train split), most frequent first, ties alphabetical.

        Words seen fewer than `min_count` times are merged into `unk_token`, which then ranks by the
        summed count of the words it stands for. `extra` words join with count 0 (so they come last),
        e.g. the other number's form of a verb that never occurred in train.
        """
        counts = Counter(tokens)
        if min_count > 1:
            if unk_token is None:
                raise ValueError("min_count > 1 needs an unk_token to merge rare words into")
            if unk_token in counts:
                raise ValueError(f"unk_token {unk_token!r} already occurs as a word in the text")
            rare = [w for w, n in counts.items() if n < min_count]
            counts[unk_token] = sum(counts.pop(w) for w in rare)
        for word in extra:
            counts.setdefault(word, 0)
        if unk_token is not None:
            counts.setdefault(unk_token, 0)
        itos = sorted(counts, key=lambda w: (-counts[w], w))
        return cls(tuple(itos), unk_token)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, words: Sequence[str]) -> np.ndarray:
        """Word list -> int64 ids; unknown words map to unk_token, or raise KeyError if there is none."""
        if self.unk_token is None:
            try:
                ids = [self.stoi[w] for w in words]
            except KeyError as err:
                raise KeyError(f"word {err.args[0]!r} is not in the vocabulary (and it has no unk_token)") from None
        else:
            unk = self.stoi[self.unk_token]
            ids = [self.stoi.get(w, unk) for w in words]
        return np.asarray(ids, dtype=np.int64).reshape(len(ids))

    def decode(self, ids) -> list[str]:
        """Ids (list, numpy array or CPU tensor, any shape flattened) -> words."""
        return [self.itos[i] for i in np.asarray(ids, dtype=np.int64).ravel().tolist()]

    def to_json(self) -> str:
        return json.dumps({"itos": list(self.itos), "unk_token": self.unk_token}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Vocab:
        data = json.loads(text)
        return cls(tuple(data["itos"]), data["unk_token"])

    def save(self, path: str | os.PathLike) -> None:
        write_bytes(path, self.to_json().encode("utf-8"))

    @classmethod
    def load(cls, path: str | os.PathLike) -> Vocab:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))
