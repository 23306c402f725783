"""Baselines of the agreement probe: a coin, and the verb that takes the number of the nearest noun.

    the author near the tables  clearly  [is | are]
        ^^^^^^ head (sg)   ^^^^^^ nearest noun before the verb (pl): the heuristic says "are", and is wrong

The probe asks which of the verb's two forms a model prefers (rnnbench.training.evaluate). Chance is 0.5 at every
distance. The nearest-noun heuristic reads the sentence back from the verb to the first noun it meets and
gives the verb that noun's number; with no filler noun between them that noun is the head, and it is right.
Each filler noun has the head's opposite number with probability ``attractor_prob``, so with attractors
at p the heuristic scores about 1 - p where a filler noun stands between head and verb, and 1 where none
does. Which word is a noun, and of which number, is the generator's lexicon (synthetic.NOUNS).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rnnbench.data.synthetic import NOUNS
from rnnbench.data.vocab import Vocab

NUMBERS = ("sg", "pl")  # the probes' spelling of a noun's number: index 0 singular, 1 plural
HEURISTICS = ("chance", "nearest_noun")
COLUMNS = ("distance", "heuristic", "accuracy", "n")


def noun_numbers(vocab: Vocab) -> np.ndarray:
    """(V,) int8: 0 for a singular noun of the lexicon, 1 for a plural one, -1 for every other word."""
    numbers = np.full(len(vocab), -1, dtype=np.int8)
    for pair in NOUNS:
        for number, word in enumerate(pair):
            if word in vocab.stoi:
                numbers[vocab.stoi[word]] = number
    return numbers


def nearest_noun(ids: np.ndarray, probes: pd.DataFrame, numbers: np.ndarray) -> np.ndarray:
    """(P,) str: the number of the noun nearest before each probe's verb, "sg" or "pl"."""
    ids = np.asarray(ids, dtype=np.int64)
    positions = np.arange(ids.size)
    # last_noun[i]: the position of the last noun at or before i (-1 before the first noun of the stream)
    last_noun = np.maximum.accumulate(np.where(numbers[ids] >= 0, positions, -1))
    verbs = probes["position"].to_numpy()
    heads = probes["head_position"].to_numpy()
    if np.any(numbers[ids[heads]] < 0):
        bad = probes.index[numbers[ids[heads]] < 0][0]
        raise ValueError(f"probe {bad}: the word at head_position {heads[bad]} is not a noun of the lexicon")
    nearest = last_noun[verbs - 1]  # (P,) never before the head, which is a noun
    return np.asarray(NUMBERS)[numbers[ids[nearest]]]


def agreement_baselines(ids: np.ndarray, probes: pd.DataFrame, vocab: Vocab) -> pd.DataFrame:
    """Accuracy of each heuristic per head-verb distance: distance, heuristic, accuracy, n.

    Chance is the expected accuracy of a coin, 0.5, not one throw of it."""
    predicted = nearest_noun(ids, probes, noun_numbers(vocab))
    right = pd.DataFrame(
        {"distance": probes["distance"].to_numpy(), "correct": predicted == probes["number"].to_numpy()}
    )
    by_distance = right.groupby("distance", as_index=False).agg(n=("correct", "size"), accuracy=("correct", "mean"))
    chance = by_distance.assign(heuristic="chance", accuracy=0.5)
    nearest = by_distance.assign(heuristic="nearest_noun")
    table = pd.concat([chance, nearest], ignore_index=True)
    return table.sort_values(["distance", "heuristic"], kind="stable").reset_index(drop=True)[list(COLUMNS)]
