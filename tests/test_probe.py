"""The decoding probe (rnnbench.decay.probe): a label that is linearly readable is read, noise is not, and every
state, label and gradient sits at the distance it belongs to in a sentence written out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from rnnbench.baselines.agreement import noun_numbers
from rnnbench.data.vocab import Vocab
from rnnbench.decay import make_linear, untrained_rnn
from rnnbench.decay.probe import (
    States,
    collect_states,
    cross_validated,
    fit_logistic,
    folds_of,
    probe_table,
    wilson,
)


def states_at_one_distance(state: np.ndarray, label: np.ndarray) -> States:
    """Hand-built rows, one sentence each, all at d = 0; the nearest noun is the head."""
    n = len(label)
    return States(
        sentence=np.arange(n),
        distance=np.zeros(n, dtype=np.int64),
        label=label,
        nearest=label,
        state=state,
        gradient=np.ones(n),
        relative=np.ones(n),
    )


def row(table: pd.DataFrame, labels: str = "true", subset: str = "all") -> pd.Series:
    return table[(table["labels"] == labels) & (table["subset"] == subset)].iloc[0]


def test_a_label_written_along_one_direction_of_the_state_is_read_without_error():
    rng = np.random.default_rng(0)
    label = rng.integers(0, 2, 400)
    state = rng.normal(size=(400, 8))
    state[:, 3] += np.where(label == 1, 3.0, -3.0)  # the number, one direction of h; the rest noise
    table = probe_table(states_at_one_distance(state, label), folds=5, l2=0.01, seed=0)
    read = row(table)
    assert read["accuracy"] == 1.0 and read["n_scored"] == 400 and read["n_fit"] == 320
    assert read["accuracy_low"] > 0.99
    # the same states with the labels shuffled: nothing to read, so chance
    control = row(table, "shuffled")
    assert control["accuracy_low"] <= control["chance"] <= control["accuracy_high"]


def test_a_label_independent_of_the_state_scores_at_chance_within_its_interval():
    rng = np.random.default_rng(1)
    label = rng.integers(0, 2, 600)
    state = rng.normal(size=(600, 16))
    read = row(probe_table(states_at_one_distance(state, label), folds=5, l2=0.01, seed=0))
    assert read["chance"] == max(label.mean(), 1 - label.mean())
    assert read["accuracy_low"] <= read["chance"] <= read["accuracy_high"]


def test_the_fit_is_the_minimum_of_its_objective_as_scipy_finds_it():
    from scipy.optimize import minimize

    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3)) * [1.0, 5.0, 0.2] + [0.0, 2.0, -1.0]
    y = (X @ [1.0, -0.3, 2.0] + rng.normal(size=60) > 0).astype(np.int64)
    fit = fit_logistic(X, y, l2=0.1)
    A = np.hstack([(X - X.mean(0)) / X.std(0), np.ones((60, 1))])

    def objective(t):
        z = A @ t
        return np.mean(np.logaddexp(0, z) - y * z) + 0.05 * np.sum(t[:-1] ** 2)

    oracle = minimize(objective, np.zeros(4), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose([*fit.weights, fit.bias], oracle, atol=1e-5)


def test_a_fit_set_of_one_class_predicts_that_class():
    assert list(fit_logistic(np.eye(3), np.ones(3, dtype=np.int64), 0.01).predict(np.zeros((2, 3)))) == [1, 1]


def test_folds_keep_each_sentence_whole_and_never_score_a_row_with_the_probe_fit_on_it():
    sentences = np.array([0, 0, 1, 2, 2, 2, 3, 4, 5])
    labels = np.array([1, 1, 0, 1, 1, 1, 0, 0, 1])  # one label per sentence: 1, 2 and 5 one way, 3 and 4 the other
    fold = folds_of(sentences, labels, 3, seed=0)
    for s in np.unique(sentences):
        assert len(set(fold[sentences == s])) == 1
    by_sentence = dict(zip(sentences, fold, strict=True))
    assert sorted(by_sentence[s] for s in (0, 2, 5)) == [0, 1, 2]  # each fold one of the three of label 1
    assert len({by_sentence[s] for s in (1, 3, 4)}) == 3  # and the label-0 sentences in three folds too
    # a probe fit with its scored rows would read these labels (each state is its label); fit without them, it
    # has only the other label to learn from, and errs on every row
    state = np.array([[0.0], [1.0], [0.0], [1.0]])
    predicted, fewest = cross_validated(state, np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1]), 0.01)
    assert fewest == 2 and list(predicted) == [0, 1, 0, 1]
    predicted, _ = cross_validated(state, np.array([0, 1, 1, 0]), np.array([0, 0, 1, 1]), 0.01)
    assert list(predicted) == [1, 0, 0, 1]


def test_the_wilson_interval_by_hand():
    # 8 of 10: centre (0.8 + 1.96^2/20) / (1 + 1.96^2/10) = 0.7167, half-width 0.2264
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 10)[0] == pytest.approx(0.0) and wilson(10, 10)[1] == pytest.approx(1.0)


# --------------------------------------------------------------------------------------------------------------
# Which state belongs to which d: a sentence written out, read by a network whose state is the word it just read

SENTENCES = ["the old book that the committees rejected was short <eos>", "the dogs are happy <eos>"]


@pytest.fixture
def written():
    tokens = " ".join(SENTENCES).split()
    vocab = Vocab(itos=tuple(dict.fromkeys(["<eos>", *tokens])))
    stream = vocab.encode(tokens)
    starts = np.array([0, len(SENTENCES[0].split())])
    # head "book" (2) and verb "was" (7): k = 5; head "dogs" (11) and verb "are" (12): k = 1
    probes = pd.DataFrame(
        {
            "position": [7, 12],
            "head_position": [2, 11],
            "distance": [5, 1],
            "correct_id": vocab.encode(["was", "are"]),
            "number": ["sg", "pl"],
        }
    )
    return vocab, stream, starts, probes


def reader(vocab: Vocab, a: float) -> torch.nn.Module:
    """h_t = one_hot(word_t) + a h_{t-1}: a linear Elman network whose embedding and W are the identity."""
    V = len(vocab)
    model = make_linear(untrained_rnn(vocab_size=V, radius=1.0, hidden=V, embed_dim=V, seed=0), a)
    with torch.no_grad():
        model.embedding.weight.copy_(torch.eye(V, dtype=torch.float64))
        model.cell.W.copy_(torch.eye(V, dtype=torch.float64))
        model.cell.b_h.zero_()
    return model


def test_each_state_is_the_one_d_words_after_the_head_and_stops_before_the_verb(written):
    vocab, stream, starts, probes = written
    got = collect_states(reader(vocab, 0.0), stream, starts, probes, noun_numbers(vocab))
    words = vocab.decode(got.state.argmax(axis=1))
    assert list(zip(got.sentence, got.distance, words, strict=True)) == [
        (0, 0, "book"),
        (0, 1, "that"),
        (0, 2, "the"),
        (0, 3, "committees"),
        (0, 4, "rejected"),  # d = k - 1: the state that predicts "was"
        (1, 0, "dogs"),  # k = 1: the head's state predicts the verb
    ]
    assert list(got.label) == [0, 0, 0, 0, 0, 1]  # the head's number: book singular, dogs plural
    assert list(got.nearest) == [0, 0, 0, 1, 1, 1]  # from d = 3 the nearest noun is "committees"


def test_the_gradient_at_d_has_crossed_d_steps_back_from_the_verbs_state(written):
    vocab, stream, starts, probes = written
    numbers = noun_numbers(vocab)
    # U = a I, linear: every step back multiplies the gradient by a, so the norm at d is a^d times the one at 0
    got = collect_states(reader(vocab, 0.5), stream, starts, probes, numbers)
    np.testing.assert_allclose(got.relative, [1, 0.5, 0.25, 0.125, 0.0625, 1], rtol=1e-12)
    # U = 0: the verb's loss reaches only the state that predicts it
    got = collect_states(reader(vocab, 0.0), stream, starts, probes, numbers)
    assert got.gradient[0] > 0 and got.gradient[5] > 0 and not got.gradient[1:5].any()


def test_the_shuffled_control_pools_its_permutations_and_the_true_labels_are_read_once():
    # A readable label: the true row does not depend on how many permutations the control draws; the control's
    # row counts every permutation's predictions (n x K of them) and its chance is the mean of theirs.
    rng = np.random.default_rng(3)
    label = rng.integers(0, 2, 200)
    state = rng.normal(size=(200, 8))
    state[:, 0] += np.where(label == 1, 3.0, -3.0)
    states = states_at_one_distance(state, label)
    one, pooled = (probe_table(states, folds=5, l2=0.01, seed=0, permutations=k) for k in (1, 8))
    pd.testing.assert_series_equal(row(one), row(pooled), check_names=False)
    control = row(pooled, "shuffled")
    assert control["n_scored"] == 200
    assert (control["accuracy"] * 200 * 8) == pytest.approx(round(control["accuracy"] * 200 * 8))
    # eight permutations of a label the state does not carry (its own shuffles): the pooled control sits within
    # a few points of chance, where single permutations spread wider
    singles = [row(probe_table(states, folds=5, l2=0.01, seed=s), "shuffled") for s in range(8)]
    spread = np.std([r["accuracy"] - r["chance"] for r in singles])
    assert abs(control["accuracy"] - control["chance"]) < 2 * spread / np.sqrt(8) + 0.02
