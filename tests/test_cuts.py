"""Reach by the cuts a run trains with: which probes a cut every k steps separates from their head, on sentences
worked by hand, checked against the model's own gradient, and the study's table over the seeds that learned."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from test_train import SMALL_AGREEMENT

from rnnbench.data import load_corpus
from rnnbench.data.batching import sentence_batches
from rnnbench.models import ModelConfig, build_model
from rnnbench.results.ablations import runs_frame
from rnnbench.results.cut_accuracy import contrast, crosses_cut, cut_accuracy, cut_table, partitions, probe_steps

# Two sentences of one stream, starts [0, 10]:
#   0   1   2    3    4   5         6        7   8     9        head "book" (2), verb "was" (7): distance 5
#   the old book that the committee rejected was short <eos>
#   10  11      12   13  14    15  16   17                    head "authors" (11), verb "are" (15): distance 4
#   the authors near the table are tall <eos>
# A sentence's step t reads the token at s + t - 1 and predicts the one at s + t, so "book" enters at step 3 and
# "was" is predicted at step 7; "authors" enters at step 2 and "are" is predicted at step 5 (s = 10).
STARTS = np.array([0, 10])
PROBES = pd.DataFrame({"position": [7, 15], "head_position": [2, 11], "distance": [5, 4]})


def test_the_steps_of_head_and_verb_hand_worked():
    steps = probe_steps(PROBES, STARTS)
    assert steps["head_step"].tolist() == [3, 2]
    assert steps["verb_step"].tolist() == [7, 5]
    assert (steps["verb_step"] - steps["head_step"]).tolist() == [4, 3]  # distance - 1 steps apart


@pytest.mark.parametrize(
    ("every", "crossing"),
    [
        # blocks of k steps: 0..k-1, k..2k-1, ...
        (2, [True, True]),  # book 3 (block 1) / was 7 (block 3); authors 2 (1) / are 5 (2)
        (4, [True, True]),  # 3 (0) / 7 (1); 2 (0) / 5 (1): distance 4 <= k and still across a cut
        (5, [True, True]),  # 3 (0) / 7 (1); 2 (0) / 5 (1)
        (6, [True, False]),  # 3 (0) / 7 (1); 2 (0) / 5 (0)
        (8, [False, False]),  # both in block 0
    ],
)
def test_which_probes_a_cut_separates_hand_worked(every, crossing):
    steps = probe_steps(PROBES, STARTS)
    assert crosses_cut(steps["head_step"], steps["verb_step"], every).tolist() == crossing


def test_a_verb_right_after_its_head_is_never_cut_and_one_beyond_k_always_is():
    heads = np.arange(0, 30)
    assert not crosses_cut(heads, heads, 3).any()  # distance 1: the head's step predicts the verb
    assert crosses_cut(heads, heads + 3, 3).all()  # distance 4 > k = 3: 3 steps apart, a cut between
    assert crosses_cut(heads, heads + 2, 3).tolist() == [h % 3 != 0 for h in heads]  # distance 3 = k


def test_accuracy_per_distance_and_side_hand_worked():
    probes = pd.DataFrame(
        {
            "position": [7, 15, 17, 27],
            "head_position": [2, 11, 16, 22],
            "distance": [5, 4, 1, 5],
            "margin": [0.3, -0.1, 0.2, 0.4],
        }
    )
    steps = probe_steps(probes, np.array([0, 10, 20]))  # heads at steps 3, 2, 7, 3; verbs at 7, 5, 7, 7
    table = cut_accuracy(steps, 6)  # blocks 0-5, 6-11
    assert table.to_dict("records") == [
        {"cut_every": 6, "distance": 1, "crosses_cut": False, "n": 1, "accuracy": 1.0},
        {"cut_every": 6, "distance": 4, "crosses_cut": False, "n": 1, "accuracy": 0.0},
        {"cut_every": 6, "distance": 5, "crosses_cut": True, "n": 2, "accuracy": 1.0},
    ]


def test_a_probe_outside_its_sentence_or_a_bad_length_is_refused():
    with pytest.raises(ValueError, match="in the verb's sentence"):
        probe_steps(pd.DataFrame({"position": [12], "head_position": [8], "distance": [4]}), STARTS)
    with pytest.raises(ValueError, match="a cut length must be >= 1"):
        crosses_cut([1], [2], 0)


def test_each_run_is_split_by_its_own_cuts_and_full_bptt_by_every_one():
    assert partitions(5, "sentence", [2, 5, 10]) == [5]
    assert partitions(0, "stream", [10, 2, 5]) == [2, 5, 10]
    assert partitions(5, "stream", [2, 5]) == []  # a stream's cuts ignore sentences


@pytest.mark.parametrize("impl", ["reference", "fast"])
def test_the_gradient_reaches_a_head_exactly_when_no_cut_separates_it(impl, cache_dir):
    # The model's own cut (rnnbench.models.base) against this module's arithmetic, on real sentences: the
    # gradient of the verb's output with respect to the head's input is zero across a cut, non-zero within.
    corpus = load_corpus("agreement", cache_dir=cache_dir, **SMALL_AGREEMENT)
    probes = probe_steps(corpus.probes["test"], corpus.sentence_starts["test"])
    torch.manual_seed(0)
    model = build_model(ModelConfig("rnn", len(corpus.vocab), embed_dim=4, hidden=6, output="full", impl=impl))
    inputs, _, positions = sentence_batches(corpus.test, corpus.sentence_starts["test"], 16)[0]
    x = model.embedding(inputs).detach().requires_grad_()  # (T, B, d)
    out, _ = model.recur(x, model.init_state(inputs.shape[1]), 4)
    seen = {True: 0, False: 0}
    for probe in probes.itertuples():
        at = (positions == probe.position).nonzero()
        if len(at) == 0:
            continue
        b = int(at[0, 1])
        (grad,) = torch.autograd.grad(out[probe.verb_step, b].sum(), x, retain_graph=True)
        across = bool(crosses_cut([probe.head_step], [probe.verb_step], 4)[0])
        assert (grad[probe.head_step, b].abs().max() == 0) == across
        seen[across] += 1
    assert seen[True] > 0 and seen[False] > 0


def test_the_study_table_averages_the_seeds_that_learned():
    record = {"name": "cuts", "run_ids": ["f1", "f2", "k1", "k2"], "vary": ["bptt"]}
    points = [{"bptt": k, "seed": s} for k in (0, 5) for s in (1, 2)]
    runs = runs_frame(record, points, {"f1": "learned", "f2": "learned", "k1": "learned", "k2": "did not learn"})

    def cut(rows):
        return pd.DataFrame(rows, columns=["cut_every", "distance", "crosses_cut", "n", "accuracy"])

    per_run = {
        "f1": cut([(5, 3, False, 90, 0.9), (5, 3, True, 40, 0.8)]),
        "f2": cut([(5, 3, False, 90, 0.7), (5, 3, True, 40, 0.6)]),
        "k1": cut([(5, 3, False, 90, 0.8), (5, 3, True, 40, 0.5)]),
        "k2": cut([(5, 3, False, 90, 0.5), (5, 3, True, 40, 0.5)]),
    }
    table = cut_table(runs, per_run, ["bptt"])
    full = table[table["bptt"] == 0].set_index("crosses_cut")
    assert full["accuracy_mean"].to_dict() == pytest.approx({False: 0.8, True: 0.7})
    assert full.loc[False, "accuracy_sd"] == pytest.approx(math.sqrt(0.02))  # (0.9, 0.7): sd sqrt(0.1^2 * 2)
    assert full["probes"].to_dict() == {False: 180, True: 80}
    cut5 = table[table["bptt"] == 5].set_index("crosses_cut")
    assert cut5["accuracy_mean"].to_dict() == {False: 0.8, True: 0.5}  # k2 did not learn: counted, not averaged
    assert cut5["probes"].to_dict() == {False: 90, True: 40}
    assert cut5["seeds_learned"].tolist() == [1, 1] and cut5["seeds_failed"].tolist() == [1, 1]
    assert math.isnan(cut5.loc[False, "accuracy_sd"])
    # the control: within minus across at the same distance, cut at 5 (0.3) against uncut (0.1)
    contrast = table.pivot_table(index="bptt", columns="crosses_cut", values="accuracy_mean")
    assert (contrast[False] - contrast[True]).to_dict() == pytest.approx({0: 0.1, 5: 0.3})


def test_a_run_that_did_not_diverge_needs_its_table():
    runs = runs_frame({"name": "c", "run_ids": ["a"], "vary": ["bptt"]}, [{"bptt": 5, "seed": 1}], {"a": "learned"})
    with pytest.raises(ValueError, match=r"runs \['a'\] did not diverge but have no accuracy per cut"):
        cut_table(runs, {}, ["bptt"])


def test_a_runs_probes_scored_again_by_cut_are_its_agreement_table_split(tmp_path, cache_dir):
    # rule study_extra_table ("cuts") scores each run's probes from its model.pt: summed over the two sides of
    # every cut, that is the agreement.csv its training wrote, distance by distance
    from test_train import tiny

    from rnnbench.results.cut_scoring import cut_accuracies_by_run
    from rnnbench.training.loop import train_run

    configs = [tiny(bptt=0, max_epochs=1), tiny(bptt=3, segments="sentence", max_epochs=1)]
    for cfg in configs:
        train_run(cfg, tmp_path / cfg.run_id, cache_dir=cache_dir)
    runs = pd.DataFrame({"run_id": [c.run_id for c in configs], "diverged": False})
    models = {c.run_id: str(tmp_path / c.run_id / "model.pt") for c in configs}
    tables = cut_accuracies_by_run(runs, models, data_dir=None, cache_dir=str(cache_dir))
    full, cut = (tables[c.run_id] for c in configs)
    assert set(full["cut_every"]) == {3} and set(cut["cut_every"]) == {3}  # full BPTT split by the study's k
    for cfg, table in zip(configs, (full, cut), strict=True):
        written = pd.read_csv(tmp_path / cfg.run_id / "agreement.csv").set_index("distance")
        correct = (table["n"] * table["accuracy"]).groupby(table["distance"]).sum()
        n = table.groupby("distance")["n"].sum()
        assert n.to_dict() == written["n"].to_dict()
        assert (correct / n).to_dict() == pytest.approx(written["accuracy"].to_dict(), abs=1e-12)
        assert not table.loc[table["distance"] == 1, "crosses_cut"].any()
        assert table.loc[table["distance"] > 3, "crosses_cut"].all()


def test_the_contrast_is_within_minus_across_where_both_sides_were_measured():
    table = pd.DataFrame(
        [
            (0, 5, 3, False, 180, 0.8),
            (0, 5, 3, True, 80, 0.7),
            (5, 5, 3, False, 90, 0.8),
            (5, 5, 3, True, 40, 0.5),
            (5, 5, 4, True, 40, 0.5),  # across only: no contrast
            (2, 2, 2, False, 0, math.nan),  # no seed learned
            (2, 2, 2, True, 0, math.nan),
        ],
        columns=["bptt", "cut_every", "distance", "crosses_cut", "probes", "accuracy_mean"],
    )
    rows = contrast(table, ["bptt"])
    assert rows[["bptt", "cut_every", "distance"]].values.tolist() == [[0, 5, 3], [5, 5, 3]]
    assert rows["gap"].tolist() == pytest.approx([0.1, 0.3])
    assert rows[["within_probes", "across_probes"]].values.tolist() == [[180, 80], [90, 40]]
