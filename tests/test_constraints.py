"""Rules between settings: each written once, returning the settings involved and what is allowed."""

import pytest

from rnnbench.config import constraints


@pytest.mark.parametrize(
    ("in_features", "vocab", "cutoffs", "problem"),
    [
        (20, 30, [5, 15], None),  # tails project 20 -> 20 // 4 = 5 and 20 // 16 = 1 unit
        (15, 30, [5, 15], "tail cluster 1 of cutoffs [5, 15] gets no units: 15 input features // 4**2 = 0"),
        (20, 15, [5, 15], "cutoffs must be below the vocabulary size (15): allowed in [1, 14], got [5, 15]"),
        (20, None, [5, 15], None),  # vocabulary not known yet: only the order is checked
        (20, 30, [15, 5], "cutoffs must be strictly increasing integers >= 1, got [15, 5]"),
        (20, 30, [5, 5], "strictly increasing"),
        (20, 30, [0, 5], "strictly increasing integers >= 1"),
        (20, 30, [], "strictly increasing"),
    ],
)
def test_adaptive_softmax_bounds(in_features, vocab, cutoffs, problem):
    found = constraints.adaptive_problem(in_features, vocab, cutoffs, 4.0)
    assert (found is None) if problem is None else (problem in found)


@pytest.mark.parametrize(
    ("settings", "keys"),
    [
        ({"family": "rnn", "hidden": 0}, ("hidden", "family")),
        ({"family": "ff", "hidden": 0}, None),
        ({"family": "rnn", "hidden": 5, "impl": "fast", "activation": "sigmoid"}, None),
        ({"family": "rnn", "hidden": 5, "impl": "reference", "activation": "sigmoid"}, None),
        ({"family": "lstm", "hidden": 5, "activation": "relu"}, ("activation", "family")),
        ({"family": "ff", "hidden": 0, "direct": True, "output": "full"}, ("direct", "family", "hidden", "output")),
        ({"family": "ff", "hidden": 5, "direct": True, "output": "full"}, None),
        (
            {"family": "rnn", "hidden": 5, "output": "adaptive", "adaptive_cutoffs": [5, 15]},
            ("adaptive_cutoffs", "output", "hidden"),
        ),
    ],
)
def test_model_rules_name_the_settings_involved(settings, keys):
    broken = constraints.broken_model_rule(settings, vocab_size=30)  # hidden 5 // 4**2 = 0 units for the second tail
    assert (broken is None) if keys is None else (broken.keys == keys)


@pytest.mark.parametrize(
    ("batch", "tokens", "broken"),
    # 10 tokens in 5 columns: 2 rows, one input and its target per column; in 6 columns: 1 row, no step
    [(5, 10, False), (6, 10, True), (10, 10, True)],
)
def test_a_stream_needs_two_tokens_per_batch_column(batch, tokens, broken):
    s = {
        "family": "rnn",
        "bptt": 35,
        "corpus": "ptb",
        "batch_size": batch,
        "train_tokens": None,
        "eval_batch_size": 1,
        "eval_tokens": None,
    }
    found = constraints.broken_batch_rule(s, {"train": tokens, "valid": 100})
    assert (found is not None) == broken
    assert constraints.broken_batch_rule({**s, "bptt": 0}, {"train": tokens}) is None  # whole sentences: by count
    assert constraints.broken_batch_rule({**s, "family": "ff"}, {"train": tokens}) is None  # windows: by count
    # whole sentences cut every k steps are batched as bptt 0 batches them
    assert constraints.broken_batch_rule({**s, "segments": "sentence"}, {"train": tokens}) is None


@pytest.mark.parametrize(
    ("settings", "has_sentences", "keys"),
    [
        ({"family": "rnn", "corpus": "agreement"}, True, None),
        ({"family": "lstm", "corpus": "agreement"}, True, None),
        ({"family": "ff", "corpus": "agreement"}, True, ("segments", "family")),
        ({"family": "rnn", "corpus": "ptb"}, False, ("segments", "corpus")),
    ],
)
def test_sentence_segments_need_a_recurrence_and_sentence_boundaries(settings, has_sentences, keys):
    s = {**settings, "bptt": 5, "segments": "sentence"}
    broken = constraints.broken_run_rule(s, has_sentences)
    assert (broken is None) if keys is None else (broken.keys == keys)
    assert constraints.broken_run_rule({**s, "segments": "stream"}, has_sentences) is None  # a stream: any corpus
