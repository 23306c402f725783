"""A setting's words, from hand-written settings: what a reader of a claim's part sees instead of config keys."""

import math

import pytest

from rnnbench.findings.setting_words import study, word, words

WORDS = [
    # key, value, words
    ("family", "rnn", "Elman RNN"),
    ("family", "lstm", "LSTM"),
    ("family", "ff", "feed-forward"),
    ("bptt", 0, "full BPTT"),
    ("bptt", 10, "truncated at k = 10"),
    ("bptt", 10.0, "truncated at k = 10"),
    ("activation", "tanh", "tanh"),
    ("activation", "relu", "ReLU"),
    ("recurrent_init", "identity", "U = I start"),
    ("recurrent_init", "default", "default start"),
    ("clip_times_median", 2, "threshold 2× the median norm"),
    ("clip_times_median", 0.5, "threshold 0.5× the median norm"),
    ("clip_times_median", math.inf, "unclipped"),
    ("clip", 0.1, "threshold 0.1"),
    ("clip_mode", "value", "element-wise clipping"),
    ("lr", 0.002, "rate 0.002"),
    ("lr", 5.0, "rate 5"),
    ("snapshot", "final", "trained"),
    ("snapshot", "0", "untrained"),
    ("corpus", "ptb", "PTB"),
    ("corpus", "agreement", "agreement corpus"),
    ("optimizer", "adam", "Adam"),
    ("hidden", 200, "H = 200"),
    ("context", 4, "n−1 = 4"),
    ("radius", 1.1, "spectral radius 1.1"),
    ("segments", "sentence", "cut within sentences"),
    ("max_epochs", 1, "at most 1 epoch"),
    ("max_steps", 665, "at most 665 updates"),
    ("train_tokens", 465000, "465,000 training tokens"),
    ("dropout", 0.5, "dropout 0.5"),  # a key no table knows: "key value"
    ("new_setting", "on", "new_setting on"),
]


@pytest.mark.parametrize(("key", "value", "expected"), WORDS)
def test_word(key, value, expected):
    assert word(key, value) == expected


def test_words_keep_the_settings_order():
    setting = {"family": "rnn", "bptt": 0, "hidden": 64, "snapshot": "final"}
    assert words(setting) == "Elman RNN, full BPTT, H = 64, trained"


def test_a_study_is_its_corpus_and_what_sets_it_apart():
    tokens = {"corpus": "ptb", "fixed": {"hidden": 100, "max_epochs": 1}}
    updates = {"corpus": "ptb", "fixed": {"hidden": 100, "max_epochs": 2, "max_steps": 665}}
    agreement = {"corpus": "agreement", "fixed": {"hidden": 64, "corpus_options": {"max_distance": 12}}}
    among = (tokens, updates, agreement)
    assert study(tokens, among) == "PTB, at most 1 epoch"
    assert study(updates, among) == "PTB, at most 2 epochs, at most 665 updates"
    assert study(agreement, among) == "agreement corpus"  # alone on its corpus: nothing more to say
