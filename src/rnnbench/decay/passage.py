"""The chapter's 47-word passage: how much of the blame for the last word reaches "partner"."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import torch

from rnnbench.decay.measure import backward_decay
from rnnbench.models import RecurrentLM

# Quoted from the chapter; the blank after "his" is the word to predict, PASSAGE_TARGET.
PASSAGE = (
    "Raj entered CoffeeDay to meet his partner Dru. Raj said \u201cHi Dru\u201d. In the next few hours they "
    "discussed their start-up and devised a plan to develop a product on knowledge management. After a long and "
    "fruitful discussion, Raj said goodbye to his"
)
PASSAGE_TARGET = "partner"
EOS = "<eos>"
_NUMBER = re.compile(r"^[+-]?\d[\d,.:/-]*$")
_CLITIC = re.compile(r"(?<=[a-z])(n't|'(?:s|re|ve|m|ll|d))\b")  # PTB splits "don't" -> "do n't", "it's" -> "it 's"
_WORD = re.compile(r"n't|'(?:s|re|ve|m|ll|d)\b|[$&]|[a-z0-9]+(?:[-.,/:][a-z0-9]+)*|[.!?]")


def ptb_words(text: str) -> list[str]:
    """Text -> words as in Mikolov's PTB: lowercase, clitics split off, punctuation dropped but $ and & kept,
    numbers as N, <eos> after each sentence. The text's last sentence, unfinished, gets no <eos>.
    """
    words: list[str] = []
    for token in _WORD.findall(_CLITIC.sub(r" \1", text.lower())):
        if token in ".!?":
            if words and words[-1] != EOS:
                words.append(EOS)
        else:
            words.append("N" if _NUMBER.match(token) else token)
    return words


def passage_decay(model: RecurrentLM, vocab, *, text: str = PASSAGE, target: str = PASSAGE_TARGET) -> pd.DataFrame:
    """The gradient of -log p(target | text) at every position of the text, in one backward pass.

    One row per input position: word (as read), token (after the vocabulary: <unk> for words it lacks),
    distance back from the last position, h_norm, x_norm (and c_norm for the LSTM), their values relative to
    distance 0, and `evidence`: whether the word is the target (the position the answer must be learned from).
    """
    words = ptb_words(text)
    ids = vocab.encode([*words, target])  # unknown words become the vocabulary's <unk>
    tokens = torch.as_tensor(ids, dtype=torch.int64)[:, None]  # (T + 1, 1)
    curves = backward_decay(model, tokens)
    wide = curves.pivot(index="distance", columns="quantity", values=["norm", "relative"])
    T = len(words)
    table = pd.DataFrame({"position": np.arange(1, T + 1), "word": words, "token": vocab.decode(ids[:-1])})
    table["distance"] = T - table["position"]
    for quantity in curves["quantity"].unique():
        table[f"{quantity}_norm"] = wide[("norm", quantity)].reindex(table["distance"]).to_numpy()
        table[f"{quantity}_relative"] = wide[("relative", quantity)].reindex(table["distance"]).to_numpy()
    table["evidence"] = table["word"] == target
    return table
