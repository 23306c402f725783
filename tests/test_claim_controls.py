"""One negative control per claim: for every claim of the catalog, a results folder written by hand in which the
claim is true and its rule says "holds", and one in which it is false and its rule says "fails". A rule that cannot
say both is not a test of its claim; a claim added to the catalog without a control fails test_every_claim_has_a_control.

Seeds are planted three a side at x + d, x - d, x (tests/planted.py: mean x, sd d, se 0.57735 d, one-sided
t_{0.95, 2} = 2.92, interval half-width 4.303 x 0.57735 d = 2.484 d) unless a comment says otherwise; the margins are
rnnbench.findings.policy.MARGINS (accuracy 0.02, perplexity 2%, decay rate 0.01, update cosine 0.01, share of
units 0.01, optimiser steps, tokens a second and peak memory 5%).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from planted import (
    UNCLIPPED,
    activation_folder,
    claim,
    clipping_folder,
    cost_folder,
    divergence_folder,
    lm_size_folder,
    matched_agreement_folder,
    probe_folder,
    radius_folder,
    reach_table,
    recurrence_folder,
    sentence_cut_folder,
    spread,
    trained_decay_folder,
    truncation_folder,
    widths_folder,
    window_folder,
)

from rnnbench.findings.catalog import CLAIMS
from rnnbench.findings.clipping import AFTER_BACKWARD, RESCALING
from rnnbench.findings.evidence import Evidence
from rnnbench.findings.registry import BY_CONSTRUCTION, FAILS, HOLDS, INCONCLUSIVE, NOT_SHOWN, judge

# --------------------------------------------------------------------------------------------------------------
# The window and the recurrence


def window_blind_true(root):
    # n-1 = 2: accuracy 0.9 at distance 2 and 0.6 + (0.01, -0.01, 0) at 3: drops 0.3 -+ 0.01, t = 0.3 / 0.00577 = 52
    return window_folder(root, [{1: 0.95, 2: 0.9, 3: a} for a in spread(0.6, 0.01)])


def window_blind_false(root):
    # the window reads on past its width: distance 3 at 0.9 + (0.001, -0.001, 0), drops 0 +- 0.001; short of the 0.02
    # margin: t = -0.02 / 0.000577 = -34.6, p = 0.0004
    return window_folder(root, [{1: 0.95, 2: 0.9, 3: a} for a in spread(0.9, 0.001)])


def no_cliff_true(root):
    # 0.9 at distances 1 and 3, 0.9 + a at 2 and 4, a = (0.002, -0.002, 0): each adjacent drop 0 +- 0.002, below the
    # 0.02 margin at t = -0.02 / 0.001155 = -17.3 (p = 0.0017, 0.005 after Holm over the three pairs)
    return recurrence_folder(root, [{1: 0.9, 2: 0.9 + a, 3: 0.9, 4: 0.9 + a} for a in spread(0.0, 0.002)])


def no_cliff_false(root):
    # flat to distance 3, then 0.6 + a at 4: a drop of 0.3 -+ 0.002, measurably above 0 (t = 0.3 / 0.001155 = 260,
    # p = 7e-6; 2e-5 after Holm over the three pairs)
    return recurrence_folder(root, [{1: 0.9, 2: 0.9, 3: 0.9, 4: 0.6 + a} for a in spread(0.0, 0.002)])


def widening_true(root):
    # n-1 = 1, 2, 3 (+15,000 parameters a word); the widest at perplexity 150 + (0.5, -0.5, 0) as the next: the
    # difference 0, se sqrt(0.25/3 + 0.25/3) = 0.408, margin 2% of 150 = 3: t = -3 / 0.408 = -7.3, p = 0.001
    return widths_folder(root, {1: spread(170, 0.5), 2: spread(150, 0.5), 3: spread(150, 0.5)})


def widening_false(root):
    # the widest window 20 perplexity below the next (130 against 150, sd 0.5 each): measurably better
    return widths_folder(root, {1: spread(170, 0.5), 2: spread(150, 0.5), 3: spread(130, 0.5)})


def beats_true(root):
    # H = 200 (1.03 times the window's parameters) at 150 + (2, -2, 0) against the window's 160 + (1, -1, 0): -10,
    # se sqrt(4/3 + 1/3) = 1.29, t = -7.7 on Welch's 2.9 degrees of freedom
    return lm_size_folder(root, spread(150, 2), spread(160, 1))


def beats_false(root):
    # the recurrence level with the window (160 + (1, -1, 0) each): difference 0, short of the margin 2% of 160 = 3.2
    # (t = 3.2 / 0.816 = 3.9 on 4 degrees of freedom, p = 0.009)
    return lm_size_folder(root, spread(160, 1), spread(160, 1))


# --------------------------------------------------------------------------------------------------------------
# Gradient decay


def geometric_true(root):
    # three trained networks whose log-norm falls in a straight line (R² 1) at rates -0.1 + (0.01, -0.01, 0): below 0
    # at t = -0.1 / 0.00577 = -17.3
    return trained_decay_folder(root, spread(-0.1, 0.01))


def geometric_false(root):
    # no decay: rates 0 +- 0.001 (short of the -0.01 margin, t = 17.3) and log-norms that zigzag by +-0.05 about a
    # flat line over the fitted distances 5 to 29 (a line explains none of it: R² 0, below 0.9): both halves fail
    return trained_decay_folder(root, spread(0.0, 0.001), wobble=0.05)


def vanish_true(root):
    # untrained tanh networks at ρ(U) 0.5: rates -0.7 + (0.01, -0.01, 0)
    return radius_folder(root, {0.5: spread(-0.7, 0.01)})


def vanish_false(root):
    # the same networks with no decay: rates 0 +- 0.001, measurably above -0.01
    return radius_folder(root, {0.5: spread(0.0, 0.001)})


def explode_true(root):
    # untrained tanh networks at ρ(U) 1.5: rates +0.3 + (0.01, -0.01, 0)
    return radius_folder(root, {1.5: spread(0.3, 0.01)})


def explode_false(root):
    # at ρ(U) 1.5 the gradient neither grows nor falls: rates 0 +- 0.001, measurably below +0.01
    return radius_folder(root, {1.5: spread(0.0, 0.001)})


def not_held_true(root):
    # trained rates -0.1 + (0.01, -0.01, 0): measurably away from 0 (two-sided p = 2 x 0.0017)
    return trained_decay_folder(root, spread(-0.1, 0.01))


def not_held_false(root):
    # training held |λ| at 1: rates 0 +- 0.001, within +-0.01 of 0 by both one-sided tests (p = 0.0017 each)
    return trained_decay_folder(root, spread(0.0, 0.001))


def carries_true(root):
    # where the gradient has fallen 100000-fold (distance 10) the probe reads 0.8 + (0.01, -0.01, 0) against chance
    # 0.5: 0.3 above chance
    return probe_folder(root, spread(0.8, 0.01))


def carries_false(root):
    # the probe at chance there: 0.5 +- 0.001, measurably short of the 0.02 margin
    return probe_folder(root, spread(0.5, 0.001))


QUARTER = math.log(0.25)  # -1.386


def quarter_true(root):
    # untrained sigmoid networks: rates -2 + (0.01, -0.01, 0), a per-step factor 0.135, below log(1/4) + 0.01 = -1.376
    return radius_folder(root, {1.0: spread(-2.0, 0.01)}, activation="sigmoid", role="activation")


def quarter_false(root):
    # a per-step factor of 0.61 (rate -0.5 +- 0.01): measurably above log(1/4)
    return radius_folder(root, {1.0: spread(-0.5, 0.01)}, activation="sigmoid", role="activation")


# --------------------------------------------------------------------------------------------------------------
# Activations


SILENT = {"tanh": [0.0] * 3, "sigmoid": [0.0] * 3, "relu": [0.0] * 3}


def zero_centred_true(root):
    # sigmoid 300 + (1, -1, 0) against tanh 250 + (1, -1, 0) on validation (+50, margin 5), and 600 against 400 steps
    # + (2, -2, 0) to the target (+200, margin 20)
    valid = {"tanh": spread(250, 1), "sigmoid": spread(300, 1), "relu": spread(260, 1)}
    steps = {"tanh": spread(400, 2), "sigmoid": spread(600, 2), "relu": spread(300, 2)}
    return activation_folder(root, valid, SILENT, steps=steps)


def zero_centred_false(root):
    # the sigmoid level with tanh on both: 250 +- 1 against 250 +- 1 (t = -5 / 0.816 = -6.1) and 400 +- 2 against
    # 400 +- 2 steps (margin 20, t = -20 / 1.63 = -12.2): each short of its margin
    valid = {"tanh": spread(250, 1), "sigmoid": spread(250, 1), "relu": spread(260, 1)}
    steps = {"tanh": spread(400, 2), "sigmoid": spread(400, 2), "relu": spread(300, 2)}
    return activation_folder(root, valid, SILENT, steps=steps)


VALID = {"tanh": spread(250, 1), "sigmoid": spread(300, 1), "relu": spread(260, 1)}


def relu_dies_true(root):
    # 10% + (2%, -2%, 0) of the ReLU units silent: above 0 at t = 0.1 / 0.01155 = 8.7 (p = 0.0065)
    return activation_folder(root, VALID, {**SILENT, "relu": spread(0.1, 0.02)})


def relu_dies_false(root):
    # 0.1% + (0.1%, -0.1%, 0) silent: short of the 1% margin at t = -0.009 / 0.000577 = -15.6
    return activation_folder(root, VALID, {**SILENT, "relu": spread(0.001, 0.001)})


FOUR = {act: [*values, values[-1]] for act, values in VALID.items()}
SILENT_FOUR = {act: [0.0] * 4 for act in FOUR}


def no_ceiling_true(root):
    # every one of 4 ReLU runs diverged, none of 4 tanh runs: Fisher's p = 1/70
    return activation_folder(root, FOUR, SILENT_FOUR, diverged=("relu",))


def no_ceiling_false(root):
    # the other way round: all 4 tanh runs diverged, no ReLU run: ReLU diverges measurably less often (p = 1/70)
    return activation_folder(root, FOUR, SILENT_FOUR, diverged=("tanh",))


# --------------------------------------------------------------------------------------------------------------
# Clipping


ADAM_KEEPS = spread(0.999, 0.0001)  # Adam's update from the clipped gradient turned by 0.001 of a cosine: t = 156


def direction_true(root):
    return clipping_folder(root, list(UNCLIPPED), cosines=ADAM_KEEPS)


def direction_false(root):
    # Adam's update turned: cosines 0.9 + (0.01, -0.01, 0), measurably below 1 and nowhere near 0.99
    return clipping_folder(root, list(UNCLIPPED), cosines=spread(0.9, 0.01))


def divergence_true(root):
    # at rate 1 all 4 unclipped runs diverged, none of 4 norm-clipped at 1: Fisher's p = 1/70
    return divergence_folder(root, {None: (4, 4), 1.0: (0, 4)})


def divergence_false(root):
    # clipping made it worse: 1 of 6 unclipped runs diverged, all 6 clipped ones: P(at most 1 of the 7 failures on
    # the unclipped side) = C(7, 1) C(5, 5) / C(12, 6) = 7/924 = 0.0076
    return divergence_folder(root, {None: (1, 6), 1.0: (6, 6)})


def quality_true(root):
    # clipped at the unclipped perplexities, 100 +- 0.5 each: 0 within the 2-perplexity margin at t = -4.9 (p = 0.004)
    return clipping_folder(root, list(UNCLIPPED))


def quality_false(root):
    # clipped 20% worse: 120 +- 0.6
    return clipping_folder(root, [p * 1.2 for p in UNCLIPPED])


# Clipped at twice the reference's median norm (the chapter's regime, a priori), 5% of steps clipped; unclipped: none.
CLIPPED_RUNS = [
    {"clip_mode": "none", "clip": math.inf, "clip_times_median": math.inf, "lr": 0.5},
] * 3 + [
    {"clip_mode": "norm", "clip": 1.0, "clip_times_median": 2.0, "lr": 0.5, "metrics": {"clipped_fraction": 0.05}},
] * 3


def vanishing_true(root):
    # a clipping study's runs measured by an analysis of role clipping_decay: unclipped and clipped both at rate
    # -0.2 + (0.001, -0.001, 0): difference 0, se 0.000816, margin 0.01: t = -12.2 on 4 degrees of freedom
    rates = [*spread(-0.2, 0.001), *spread(-0.2, 0.001)]
    return trained_decay_folder(root, rates, role="clipping_decay", settings=CLIPPED_RUNS)


def vanishing_false(root):
    # the clipped runs' gradient decays more slowly: -0.05 against -0.2, measurably above
    rates = [*spread(-0.2, 0.001), *spread(-0.05, 0.001)]
    return trained_decay_folder(root, rates, role="clipping_decay", settings=CLIPPED_RUNS)


# --------------------------------------------------------------------------------------------------------------
# Truncation


def invisible_true(root):
    # stream segments at k = 2: gap within − beyond 0.35 + (0.01, -0.01, 0) cut, 0.05 + the same full: +0.3
    return truncation_folder(root, spread(0.05, 0.01), spread(0.35, 0.01))


def invisible_false(root):
    # truncation loses nothing more beyond k than full BPTT: both gaps 0.05 +- 0.001, interaction 0 +- 0.0023,
    # short of the 0.02 margin (Welch: t = -0.02 / 0.000816 = -24.5)
    return truncation_folder(root, spread(0.05, 0.001), spread(0.05, 0.001))


def sentence_cuts_true(root):
    # gaps at k = 2: full 0, stream 0.35, sentence 0.15 + (0.002, -0.002, 0): interactions stream 0.35 against
    # sentence 0.15 (reduces, +0.2) and sentence 0.15 above 0 (remains)
    return sentence_cut_folder(root, spread(0.15, 0.002))


def sentence_cuts_false(root):
    # truncation costs nothing, whatever the cut: every gap 0 (sentence +- 0.002): both interactions 0, short of the
    # 0.02 margin
    return sentence_cut_folder(root, spread(0.0, 0.002), gap_stream=0.0)


def cost_true(root):
    # full BPTT at 1000 + (10, -10, 0) tokens a second and 800 + (5, -5, 0) MB against bptt 5's 2000 and 400
    return cost_folder(root, {5: spread(2000, 10), 0: spread(1000, 10)}, {5: spread(400, 5), 0: spread(800, 5)})


def cost_false(root):
    # as fast and as small: 2000 +- 10 and 400 +- 5 both; margins 100 tokens/s (t = 100 / 8.16 = 12.2) and 20 MB
    # (t = 20 / 4.08 = 4.9)
    return cost_folder(root, {5: spread(2000, 10), 0: spread(2000, 10)}, {5: spread(400, 5), 0: spread(400, 5)})


# --------------------------------------------------------------------------------------------------------------
# The lesson's own demonstration (one network, a check rather than a test: holds or fails without statistics)


def reach_true(root):
    return reach_table(root, (1e-2, 1e-6, 1e-14))


def reach_false(root):
    return reach_table(root, (1e-2, 1e-6, 1e-5))


# --------------------------------------------------------------------------------------------------------------
# The table, and the tests over it


CONTROLS = {
    "window_blind": (window_blind_true, window_blind_false),
    "recurrence_no_cliff": (no_cliff_true, no_cliff_false),
    "widening_not_fix": (widening_true, widening_false),
    "gradient_geometric": (geometric_true, geometric_false),
    "vanish_below_one": (vanish_true, vanish_false),
    "explode_above_one": (explode_true, explode_false),
    "lambda_not_held": (not_held_true, not_held_false),
    "forward_carries": (carries_true, carries_false),
    "sigmoid_quarter": (quarter_true, quarter_false),
    "zero_centred_faster": (zero_centred_true, zero_centred_false),
    "relu_dies": (relu_dies_true, relu_dies_false),
    "relu_no_ceiling": (no_ceiling_true, no_ceiling_false),
    "clip_direction": (direction_true, direction_false),
    "clip_divergence": (divergence_true, divergence_false),
    "clip_quality": (quality_true, quality_false),
    "clip_vanishing": (vanishing_true, vanishing_false),
    "truncation_invisible": (invisible_true, invisible_false),
    "sentence_cuts_reduce": (sentence_cuts_true, sentence_cuts_false),
    "truncation_cost": (cost_true, cost_false),
    "recurrence_beats_window": (beats_true, beats_false),
    "lesson_gradient_reach": (reach_true, reach_false),
}


def test_every_claim_has_a_control():
    assert set(CONTROLS) == {c.id for c in CLAIMS}


def _judge(claim_id, plant, root):
    return judge(claim(claim_id), Evidence(root, plant(root)))


@pytest.mark.parametrize("claim_id", list(CONTROLS))
def test_the_rule_holds_where_the_claim_is_true(claim_id, tmp_path):
    finding = _judge(claim_id, CONTROLS[claim_id][0], tmp_path)
    assert finding.verdict == HOLDS, (finding.value, finding.reason)


@pytest.mark.parametrize("claim_id", list(CONTROLS))
def test_the_rule_fails_where_the_claim_is_false(claim_id, tmp_path):
    finding = _judge(claim_id, CONTROLS[claim_id][1], tmp_path)
    assert finding.verdict == FAILS, (finding.value, finding.reason)


# --------------------------------------------------------------------------------------------------------------
# One test per verdict beyond holds and fails


def test_an_interval_that_crosses_the_margin_is_inconclusive(tmp_path):
    # unclipped and clipped both at 100 + (2, -2, 0): difference 0, se sqrt(4/3 + 4/3) = 1.633 on 4 degrees of
    # freedom, t_{0.975, 4} = 2.776: 0 +- 4.53, which reaches past the margin of 2 on the side of harm: not within it
    # (t = -2 / 1.633 = -1.22, p = 0.14) and not measurably worse either (p = 0.5)
    wide = spread(100, 2)
    finding = _judge("clip_quality", lambda root: clipping_folder(root, wide, unclipped=wide), tmp_path)
    assert finding.verdict == INCONCLUSIVE
    assert "+0% [−4.53%, +4.53%] (margin 2%)" in finding.value
    assert finding.reason == (
        "inconclusive for PTB, rate 0.5, threshold 2× the median norm (0.25) "
        "(not decided at 95% (p = 0.14 that it holds, 0.5 that it fails; Holm))"
    )


def test_the_gradients_direction_is_true_by_construction_where_no_stateful_optimiser_was_measured(tmp_path):
    finding = _judge("clip_direction", lambda root: clipping_folder(root, list(UNCLIPPED)), tmp_path)
    assert finding.verdict == BY_CONSTRUCTION
    assert finding.value == "PTB, the gradient" and finding.reason == f"PTB, the gradient ({RESCALING})"


def test_one_steps_clipping_leaves_the_decay_by_construction_and_the_trained_networks_decide(tmp_path):
    # clipping comes after the backward pass: named as an identity beside the measured parts, which decide the claim
    for folder, verdict in ((vanishing_true, "holds"), (vanishing_false, "fails")):
        finding = _judge("clip_vanishing", folder, tmp_path / verdict)
        assert finding.verdict == verdict
        assert f"true by construction: agreement corpus, one step ({AFTER_BACKWARD})" in finding.reason


def test_a_wider_window_that_only_adds_parameters_is_true_by_construction_where_its_gain_is_not_shown(tmp_path):
    # one seed a width: the size half follows from W_h's shape; the gain has no seeds to be measured on
    finding = _judge(
        "widening_not_fix", lambda root: widths_folder(root, {1: [170.0], 2: [150.0], 3: [150.0]}), tmp_path
    )
    assert finding.verdict == BY_CONSTRUCTION
    assert finding.value == "PTB, size: +15,000 parameters per word admitted"
    assert finding.reason == (
        "PTB, size (W_h has (n−1)d × H weights: each word admitted adds d × H); "
        "not shown for PTB, n−1 = 2 → 3: 1 and 1 runs learned; needs two each"
    )


def test_clipping_within_two_percent_on_tight_seeds_holds_by_the_equivalence_test(tmp_path):
    # clipped at 101 + (0.5, -0.5, 0) against 100 + (0.5, -0.5, 0): 1% worse, inside the 2% margin: the one-sided
    # test against +2 gives t = (1 - 2) / 0.408 = -2.45 on 4 degrees of freedom, p = 0.035
    finding = _judge("clip_quality", lambda root: clipping_folder(root, spread(101, 0.5)), tmp_path)
    assert finding.verdict == HOLDS
    assert "test_ppl 101 against 100, +1% [" in finding.value and "(margin 2%)" in finding.value
    assert "(p = 0.035, Holm)" in finding.value


def test_the_recurrence_beats_a_window_on_agreement_where_both_learned_what_the_window_sees(tmp_path):
    # the recurrence at 0.9 + (0.01, -0.01, 0) against the window's 0.75 + (0.01, -0.01, 0): +0.15, se
    # sqrt(0.0001/3 + 0.0001/3) = 0.00816, t = 18; within n-1 = 2 the window scores (1.0 + 0.98) / 2 = 0.99, 0.01 below
    # the nearest-noun rule's 1.0, inside the 0.02 margin: trained to what it sees, so the pair is read
    def plant(root):
        return matched_agreement_folder(root, spread(0.9, 0.01), spread(0.75, 0.01), window_near=(1.0, 0.98))

    finding = _judge("recurrence_beats_window", plant, tmp_path)
    assert finding.verdict == HOLDS, (finding.value, finding.reason)
    assert "agreement_accuracy, recurrence − window +0.15" in finding.value


@pytest.mark.parametrize("side", ["window", "recurrence"])
def test_a_matched_agreement_pair_with_a_side_under_the_nearest_noun_rule_is_not_read(tmp_path, side):
    # the same seeds, but one side scores (1.0 + 0.9) / 2 = 0.95 within n-1 = 2, 0.05 below the rule's 1.0: it has
    # not learned what the window sees, and the recurrence's +0.15 would measure training: the pair is not shown
    under = {"window_near": (1.0, 0.9)} if side == "window" else {"rnn_near": (0.9, 1.0)}

    def plant(root):
        return matched_agreement_folder(root, spread(0.9, 0.01), spread(0.75, 0.01), **under)

    finding = _judge("recurrence_beats_window", plant, tmp_path)
    assert finding.verdict == NOT_SHOWN, (finding.value, finding.reason)
    window, recurrence = ("0.95", "1") if side == "window" else ("1", "0.95")
    assert finding.reason == (
        "agreement corpus, n−1 = 2 (34,521) against H = 60 (34,689): "
        f"{side} below the nearest-noun rule within n−1 = 2 by more than 0.02: window {window}, recurrence "
        f"{recurrence}, rule 1; not trained to what it sees"
    )


# --------------------------------------------------------------------------------------------------------------
# The regime a threshold is in, set before training: its observed share of steps clipped is a check, never the rule


BELOW_MEDIAN = {  # each claim's planted false folder with its threshold at half the median, clipping 5% of steps
    "clip_direction": lambda root: clipping_folder(root, list(UNCLIPPED), cosines=spread(0.9, 0.01), times=0.5),
    "clip_divergence": lambda root: divergence_folder(root, {None: (1, 6), 1.0: (6, 6)}, reference=2.0),
    "clip_quality": lambda root: clipping_folder(root, [p * 1.2 for p in UNCLIPPED], times=0.5),
    "clip_vanishing": lambda root: trained_decay_folder(
        root,
        [*spread(-0.2, 0.001), *spread(-0.05, 0.001)],
        role="clipping_decay",
        settings=[{**run, "clip_times_median": 0.5} if run["clip_mode"] == "norm" else run for run in CLIPPED_RUNS],
    ),
}


@pytest.mark.parametrize("claim_id", sorted(BELOW_MEDIAN))
def test_a_threshold_below_the_median_is_not_read_whatever_its_share_of_steps_clipped(claim_id, tmp_path):
    # half the median clips ordinary steps, a priori; that it clipped only 5% of them (the rare-spike share) does not
    # put it in the chapter's regime: the false folder that fails at twice the median says nothing here
    finding = _judge(claim_id, BELOW_MEDIAN[claim_id], tmp_path)
    assert finding.verdict == "not shown", (finding.value, finding.reason)
    assert "0.5× the unclipped median norm: ordinary steps" in finding.reason or "chapter's regime" in finding.reason


def test_a_share_of_steps_clipped_that_contradicts_the_regime_is_flagged_and_the_setting_kept(tmp_path):
    # twice the median clipped 95% of steps: still read in the chapter's regime (the quality holds as at 5%), flagged
    plant = lambda root: clipping_folder(root, list(UNCLIPPED), clipped=0.95)  # noqa: E731
    finding = _judge("clip_quality", plant, tmp_path / "above")
    assert finding.verdict == HOLDS
    assert "95% of steps clipped, contradicting its regime (rare spikes)" in finding.value
    # half the median clipped 5%: not read, and its note says the share contradicts ordinary steps
    finding = _judge("clip_quality", lambda root: clipping_folder(root, list(UNCLIPPED), times=0.5), tmp_path / "below")
    assert "5% of steps clipped, contradicting its regime (ordinary steps)" in finding.reason


def test_a_threshold_given_as_a_number_is_set_against_its_studys_unclipped_median_at_its_rate(tmp_path):
    # unclipped median norms 0.4, 0.5, 0.6 at rate 1 (median 0.5) and 9.0 for one that diverged (not a typical norm):
    # 0.25 is 0.5× the median (ordinary steps, not read), 1.0 is 2× (the chapter's regime, read)
    def folder(root):
        roles = divergence_folder(root, {None: (1, 4), 0.25: (0, 3), 1.0: (0, 3)}, reference=None)
        summary = root / "studies" / "clips" / "summary.csv"
        table = pd.read_csv(summary)
        medians = {"none-1": 9.0, "none-2": 0.4, "none-3": 0.5, "none-4": 0.6}
        extra = [
            {**table[table["run_id"] == run].iloc[0].to_dict(), "metric": "grad_norm_median", "value": m}
            for run, m in medians.items()
        ]
        pd.concat([table, pd.DataFrame(extra)], ignore_index=True).to_csv(summary, index=False)
        return roles

    finding = _judge("clip_divergence", folder, tmp_path)
    assert "PTB, rate 1, norm threshold 0.25: 0.5× the unclipped median norm: ordinary steps" in finding.reason
    assert "PTB, rate 1, norm threshold 1: unclipped 1/4 diverged, clipped 0/3 (5% of steps clipped)" in finding.value
