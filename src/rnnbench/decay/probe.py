"""A linear decoding probe: does the state carry the head noun's number, however little gradient reaches it?

    <eos> the old book that the committee rejected near the tables was short <eos>
                  ^^^^ head (sg)                                   ^^^ verb, k = 8 tokens after the head
                  h_{head+d}, d = 0 .. k - 1: the states between the head and the verb; h_{head+k-1} predicts it

Each sentence is read from h_0 = 0, as full-sentence BPTT trains and the agreement probe scores it. Only the
states before the verb are read: from the verb on, the verb's own form gives the number away.

    collect_states  per (sentence, d): h_{head+d}, the head's number, the number of the nearest noun at or before
                    head + d, and g_d = ||dL_verb/dh_{head+k-1-d}||, the gradient of the verb's loss
                    L_verb = -log p(correct form | prefix) d steps back from the state that predicts the verb
                    (the blame that has to cross d steps; where k = d + 1 it reaches the head's own state)
    fit_logistic    L2-regularised logistic regression by Newton's method, on standardised features (float64)
    cross_validated every example scored by a probe fit on the other folds (folds of sentences, stratified by
                    label, seeded)
    probe_table     per d: held-out accuracy and its Wilson interval beside chance (the majority rate of the
                    scored examples), on every example and on those whose nearest noun has the other number
                    (there the nearest noun's number is always wrong), with the labels true and shuffled
                    (the shuffled control, pooled over seeded permutations, must score at chance), and the
                    geometric mean of g_d

The interval is the binomial one of the scored examples. Cross-validated predictions share their fits, so it is
somewhat narrower than their spread: on noise, about 0.8 of it at 150 examples in 64 dimensions, nearer 1 with more.

Nothing here reads or writes files.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from rnnbench.baselines.agreement import NUMBERS, noun_numbers
from rnnbench.data.batching import sentence_batches
from rnnbench.decay.measure import check_recurrent
from rnnbench.models import RecurrentLM
from rnnbench.models.base import unroll

Z = 1.959963984540054  # the normal quantile of a two-sided 95% interval
LABELS = ("true", "shuffled")
SUBSETS = ("all", "attractor")  # attractor: the nearest noun at or before the state has the head's other number
COLUMNS = (
    "labels",
    "subset",
    "distance",
    "n_fit",
    "n_scored",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "chance",
    "nearest_noun",
    "gradient_norm",
    "gradient_relative",
)


@dataclass(frozen=True)
class States:
    """One row per (sentence, d): what collect_states measured, as aligned arrays."""

    sentence: np.ndarray  # (n,) int64, the sentence's index over every split read
    distance: np.ndarray  # (n,) int64, d
    label: np.ndarray  # (n,) int64, the head's number: 0 singular, 1 plural
    nearest: np.ndarray  # (n,) int64, the number of the nearest noun at or before head + d
    state: np.ndarray  # (n, H) float64, h_{head+d}
    gradient: np.ndarray  # (n,) float64, ||dL_verb/dh|| d steps back from the state that predicts the verb
    relative: np.ndarray  # (n,) float64, gradient / the same sentence's gradient at d = 0

    @staticmethod
    def concat(parts: Sequence[States]) -> States:
        """Parts read one after another (e.g. two splits), their sentences numbered on."""
        offset, renumbered = 0, []
        for part in parts:
            renumbered.append(part.sentence + offset)
            offset += int(part.sentence.max()) + 1 if part.sentence.size else 0
        fields = {
            name: np.concatenate([getattr(p, name) for p in parts])
            for name in ("distance", "label", "nearest", "state", "gradient", "relative")
        }
        return States(sentence=np.concatenate(renumbered), **fields)


def collect_states(
    model: RecurrentLM,
    stream: np.ndarray,
    sentence_starts: np.ndarray,
    probes: pd.DataFrame,
    numbers: np.ndarray,
    *,
    batch_size: int = 500,
) -> States:
    """The states of every probe sentence of a split between its head and its verb (see the module docstring).

    ``probes``: the corpus's probe table of the split (position of the verb, head_position, distance k,
    correct_id, number "sg" | "pl"), one per sentence; ``numbers``: (V,) 0 singular noun, 1 plural, -1 other
    (rnnbench.baselines.agreement.noun_numbers)."""
    model = check_recurrent(model).eval()
    stream = np.asarray(stream, dtype=np.int64)
    where = np.arange(stream.size)
    last_noun = np.maximum.accumulate(np.where(numbers[stream] >= 0, where, -1))  # (N,) last noun at or before i
    row_of_verb = {int(p): i for i, p in enumerate(probes["position"])}
    parts = []
    for inputs, _, positions in sentence_batches(stream, sentence_starts, batch_size):  # (T, B) each
        # the verb's prediction: the step whose target is the verb; the head's state: k - 1 steps before it
        t_verb, b = np.nonzero(np.isin(positions.numpy(), probes["position"].to_numpy()))
        order = np.argsort(positions.numpy()[t_verb, b], kind="stable")  # the sentences in stream order
        t_verb, b = t_verb[order], b[order]
        rows = probes.iloc[[row_of_verb[int(p)] for p in positions.numpy()[t_verb, b]]]
        k = rows["distance"].to_numpy()
        t_head = t_verb - (k - 1)
        if np.any(positions.numpy()[t_head, b] != rows["head_position"].to_numpy() + 1):
            raise ValueError("a probe's head is not k steps before its verb in the sentence batch")
        x = model.embedding(inputs).detach()  # (T, B, d)
        outputs, states = unroll(model.cell, x, model.init_state(inputs.shape[1]))  # (T, B, H), [state_t]
        hs = [s[0] if isinstance(s, tuple) else s for s in states]  # h_t, (B, H) each
        log_probs = model.output.log_probs(outputs[t_verb, b])  # (P, V)
        loss = -log_probs.gather(1, torch.as_tensor(rows["correct_id"].to_numpy(copy=True))[:, None]).sum()
        grads = torch.autograd.grad(loss, hs, allow_unused=True)  # a state after every verb has none
        grads = torch.stack([torch.zeros_like(h) if g is None else g for h, g in zip(hs, grads, strict=True)])
        # (T, B, H): each sentence's gradient is its own verb's loss's (the columns never interact)
        # one row per (probe, d), d = 0 .. k - 1
        probe = np.repeat(np.arange(len(rows)), k)
        d = np.concatenate([np.arange(n) for n in k])
        gradient = grads[t_verb[probe] - d, b[probe]].norm(dim=-1).double().numpy()  # (n,)
        at_verb = grads[t_verb, b].norm(dim=-1).double().numpy()  # (P,): d = 0
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = gradient / at_verb[probe]
        head = rows["head_position"].to_numpy()[probe]
        parts.append(
            States(
                sentence=rows.index.to_numpy()[probe],
                distance=d,
                label=(rows["number"].to_numpy()[probe] == NUMBERS[1]).astype(np.int64),
                nearest=numbers[stream[last_noun[head + d]]].astype(np.int64),
                state=outputs[t_head[probe] + d, b[probe]].detach().double().numpy(),
                gradient=gradient,
                relative=relative,
            )
        )
    return _concat_rows(parts)


def _concat_rows(parts: Sequence[States]) -> States:
    return States(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in States.__dataclass_fields__})


# --------------------------------------------------------------------------------------------------------------
# The probe: logistic regression, cross-validated over sentences


@dataclass(frozen=True)
class Logistic:
    mean: np.ndarray  # (H,) of the fit set, subtracted
    scale: np.ndarray  # (H,) its standard deviation (1 where a feature is constant), divided by
    weights: np.ndarray  # (H,)
    bias: float

    def predict(self, states: np.ndarray) -> np.ndarray:
        """(n,) int64: 1 where p(label 1 | h) > 1/2."""
        return (((states - self.mean) / self.scale) @ self.weights + self.bias > 0).astype(np.int64)


def fit_logistic(states: np.ndarray, labels: np.ndarray, l2: float, *, steps: int = 100) -> Logistic:
    """Minimise mean(log(1 + e^z) - y z) + l2/2 ||w||^2 over (w, b), z = w . standardised(h) + b, by Newton's
    method with a halving step (strictly convex for l2 > 0, so one minimum; deterministic). A fit set of one
    class gives the constant predictor of that class."""
    X = np.asarray(states, dtype=np.float64)  # (n, H)
    y = np.asarray(labels, dtype=np.float64)  # (n,)
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    if y.min() == y.max():
        return Logistic(mean, scale, np.zeros(X.shape[1]), math.inf if y[0] == 1 else -math.inf)
    A = np.hstack([(X - mean) / scale, np.ones((len(y), 1))])  # (n, H + 1): the bias last, unpenalised
    penalty = np.full(A.shape[1], l2)
    penalty[-1] = 0.0
    theta = np.zeros(A.shape[1])

    def objective(t: np.ndarray) -> float:
        z = A @ t
        return float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(penalty * t * t))

    value = objective(theta)
    for _ in range(steps):
        p = 0.5 * (1.0 + np.tanh(0.5 * (A @ theta)))  # the sigmoid, without overflow
        gradient = A.T @ (p - y) / len(y) + penalty * theta
        hessian = (A * (p * (1 - p))[:, None]).T @ A / len(y) + np.diag(penalty)
        move = np.linalg.solve(hessian + 1e-12 * np.eye(len(theta)), gradient)
        rate = 1.0
        while rate > 1e-10 and objective(theta - rate * move) > value - 1e-4 * rate * float(gradient @ move):
            rate *= 0.5
        theta = theta - rate * move
        value = objective(theta)
        if float(np.abs(gradient).max()) < 1e-10 or rate <= 1e-10:
            break
    return Logistic(mean, scale, theta[:-1], float(theta[-1]))


def folds_of(sentences: np.ndarray, labels: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """(n,) the fold of each row: every sentence in one fold, and each label's sentences dealt round the folds in a
    seeded order, so that every fold holds the labels in the same proportion (stratified). Unstratified, a fold
    with more of one label leaves the others with fewer of it, and a probe that learned nothing but the base rate
    scores below chance on it."""
    unique, first = np.unique(sentences, return_index=True)
    order = np.random.default_rng(seed).permutation(unique.size)
    order = order[np.argsort(labels[first][order], kind="stable")]  # by label, seeded within each
    fold = np.empty(unique.size, dtype=np.int64)
    fold[order] = np.arange(unique.size) % folds
    return fold[np.searchsorted(unique, sentences)]


def cross_validated(states: np.ndarray, labels: np.ndarray, fold: np.ndarray, l2: float) -> tuple[np.ndarray, int]:
    """(each row's prediction by the probe fit on the other folds, the fewest rows any of those probes was fit on)."""
    predicted = np.empty(len(labels), dtype=np.int64)
    fewest = len(labels)
    for k in np.unique(fold):
        held = fold == k
        fewest = min(fewest, int((~held).sum()))
        predicted[held] = fit_logistic(states[~held], labels[~held], l2).predict(states[held])
    return predicted, fewest


def wilson(correct: int, n: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of a binomial rate correct / n (95% by default)."""
    if n == 0:
        return math.nan, math.nan
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def geometric_mean(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    with np.errstate(divide="ignore"):
        return float(np.exp(np.mean(np.log(values)))) if values.size else math.nan


def probe_table(collected: States, *, folds: int, l2: float, seed: int, permutations: int = 1) -> pd.DataFrame:
    """One row per (labels, subset, distance) with the columns COLUMNS (see the module docstring). A distance
    with fewer sentences than folds is left out, and a subset with no example. The shuffled labels' row pools
    ``permutations`` seeded permutations at each distance: its accuracy and chance are their means, its interval
    the Wilson one of the pooled counts (the permutations share their states, so it is narrower than their spread)."""
    rows = []
    for d in np.unique(collected.distance):
        at = collected.distance == d
        if at.sum() < folds:
            continue
        states, true = collected.state[at], collected.label[at]
        attracted = collected.nearest[at] != true
        # the subsets are set by the true labels: the shuffled control is scored on the same examples
        subsets = dict(zip(SUBSETS, (np.ones_like(attracted), attracted), strict=True))
        shuffles = [np.random.default_rng([seed, int(d), k]).permutation(true) for k in range(permutations)]
        for labels, draws in zip(LABELS, ([true], shuffles), strict=True):
            predictions = []
            for y in draws:
                predicted, n_fit = cross_validated(states, y, folds_of(collected.sentence[at], y, folds, seed), l2)
                predictions.append(predicted)
            for subset, scored in subsets.items():
                n = int(scored.sum())
                if n == 0:  # no attractor yet: the first filler noun is three tokens after the head
                    continue
                correct = sum(int((p[scored] == y[scored]).sum()) for p, y in zip(predictions, draws, strict=True))
                shares = [float(y[scored].mean()) for y in draws]
                low, high = wilson(correct, n * len(draws))
                rows.append(
                    {
                        "labels": labels,
                        "subset": subset,
                        "distance": int(d),
                        "n_fit": n_fit,
                        "n_scored": n,
                        "accuracy": correct / (n * len(draws)),
                        "accuracy_low": low,
                        "accuracy_high": high,
                        "chance": float(np.mean([max(share, 1 - share) for share in shares])),
                        "nearest_noun": float(
                            np.mean([(collected.nearest[at][scored] == y[scored]).mean() for y in draws])
                        ),
                        "gradient_norm": geometric_mean(collected.gradient[at][scored]),
                        "gradient_relative": geometric_mean(collected.relative[at][scored]),
                    }
                )
    return pd.DataFrame(rows, columns=list(COLUMNS))


HELD_OUT = ("valid", "test")  # the splits the probe reads: no training step ever read them


def probe_point(
    model: RecurrentLM,
    corpus,
    *,
    folds: int,
    l2: float,
    seed: int,
    permutations: int = 1,
    keys: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """probe_table of one network on the held-out sentences of its agreement corpus (HELD_OUT, pooled), keyed."""
    if corpus.probes is None or corpus.sentence_starts is None:
        raise ValueError(f"corpus {corpus.name!r} has no agreement probes; the probe reads the 'agreement' corpus")
    numbers = noun_numbers(corpus.vocab)
    collected = States.concat(
        [collect_states(model, corpus.split(s), corpus.sentence_starts[s], corpus.probes[s], numbers) for s in HELD_OUT]
    )
    table = probe_table(collected, folds=folds, l2=l2, seed=seed, permutations=permutations)
    for position, (name, value) in enumerate((keys or {}).items()):
        table.insert(position, name, value)
    return table
