"""The run outcome rule on made-up metrics: learned, did not learn, diverged."""

from __future__ import annotations

import math

import pytest

from rnnbench.results.outcome import (
    CHANCE_Z,
    LEARNED_FRACTION,
    UNKNOWN,
    chance_threshold,
    learned,
    outcome,
    seed_counts,
)


def test_a_language_model_learned_only_clearly_below_the_unigram_perplexity():
    # unigram 700: the line is 0.75 x 700 = 525
    assert LEARNED_FRACTION == 0.75
    assert outcome({"test_ppl": 150.0}, unigram_ppl=700.0) == "learned"
    assert outcome({"test_ppl": 524.9}, unigram_ppl=700.0) == "learned"
    assert outcome({"test_ppl": 525.0}, unigram_ppl=700.0) == "did not learn"  # not clearly below
    assert outcome({"test_ppl": 636.0}, unigram_ppl=700.0) == "did not learn"
    # blew up, never recovered, yet not caught as diverged: a failure, not a result
    assert outcome({"test_ppl": 6055.0, "diverged": False}, unigram_ppl=700.0) == "did not learn"
    assert outcome({"test_ppl": math.inf}, unigram_ppl=700.0) == "did not learn"


def test_divergence_comes_first():
    assert outcome({"test_ppl": None, "diverged": True}, unigram_ppl=700.0) == "diverged"
    assert outcome({"agreement_accuracy": None, "diverged": True}) == "diverged"


def test_an_agreement_model_learned_only_past_the_noise_of_chance():
    # 2,000 probes: standard error sqrt(0.25 / 2000) = 0.01118, three of them: 0.5 + 0.03354 = 0.53354
    assert CHANCE_Z == 3.0
    assert chance_threshold(2000) == pytest.approx(0.533541, abs=1e-6)
    assert outcome({"agreement_accuracy": 0.54, "test_ppl": 3.1}, agreement_probes=2000) == "learned"
    assert outcome({"agreement_accuracy": 0.53, "test_ppl": 3.1}, agreement_probes=2000) == "did not learn"
    # 100 probes: 0.5 + 3 x 0.05 = 0.65, so 0.60 of 100 is still noise
    assert outcome({"agreement_accuracy": 0.60}, agreement_probes=100) == "did not learn"


def test_a_run_cannot_be_judged_without_its_baseline():
    with pytest.raises(ValueError, match="unigram"):
        outcome({"test_ppl": 150.0})
    with pytest.raises(ValueError, match="agreement_probes"):
        outcome({"agreement_accuracy": 0.9})


def test_a_settings_seeds_are_counted_once_and_only_learned_counts_as_learned():
    # three seeds: one learned, one diverged, one did not learn
    assert seed_counts(["learned", "diverged", "did not learn"]) == {
        "runs": 3,
        "seeds_learned": 1,
        "seeds_failed": 2,
        "diverged_runs": 1,
    }
    # a run that could not be judged (no baseline) is not counted as learned
    assert seed_counts(["learned", UNKNOWN])["seeds_failed"] == 1
    assert learned(["learned", "did not learn", "diverged", UNKNOWN]) == [True, False, False, False]
    with pytest.raises(ValueError, match="'learnt' is not one of"):
        seed_counts(["learnt"])
