"""The findings: the statistical policy and intervals worked by hand, verdicts from results folders written by hand
(tests/planted.py), evidence found by role. Each claim's negative control is in tests/test_claim_controls.py."""

import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest
from planted import (
    CLIPPING_ABOUT,
    STEPS_TO_TARGET,
    UNCLIPPED,
    activation_folder,
    claim,
    clipping_folder,
    divergence_folder,
    lm_size_folder,
    probe_folder,
    radius_folder,
    recurrence_folder,
    sentence_cut_folder,
    spread,
    trained_decay_folder,
    truncation_folder,
    window_folder,
    write_rates,
    write_study,
)
from scipy import stats as scipy_stats

from rnnbench import jobs
from rnnbench.config.files import ConfigError, merge_config_files
from rnnbench.config.schema import schema
from rnnbench.config.settings import load_config
from rnnbench.findings import findings_table, window
from rnnbench.findings import policy as stats
from rnnbench.findings.catalog import CLAIMS, ROLES
from rnnbench.findings.evidence import Evidence, Roles
from rnnbench.findings.registry import (
    BY_CONSTRUCTION,
    COLUMNS,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_SHOWN,
    PARTLY,
    SEEDS,
    VERDICTS,
    Part,
    combine,
    judge,
    settle,
)
from rnnbench.findings.truncation import held_equal

REPO = Path(__file__).resolve().parents[1]
CONFIG_FILES = [REPO / "config" / "config.yaml", REPO / "config" / "smoke.yaml"]


# --------------------------------------------------------------------------------------------------------------
# Statistics, by hand


def test_the_mean_interval_is_students_t_worked_by_hand():
    # x = (1, 2, 3): mean 2, sd 1, se 1/sqrt(3) = 0.57735; t_{0.975, 2} = 4.302653; half-width 2.48414.
    iv = stats.mean_interval([1, 2, 3])
    assert (iv.estimate, iv.n) == (2, 3)
    assert iv.low == pytest.approx(2 - 2.48414, abs=1e-5) and iv.high == pytest.approx(2 + 2.48414, abs=1e-5)
    assert stats.direction(iv) == stats.NO_CHANGE  # -0.48 < 0 < 4.48: the interval reaches 0
    assert stats.mean_interval([5.0]) is None  # one seed has no spread to read a difference against


def test_welchs_difference_interval_worked_by_hand():
    # a = (2, 4), b = (1, 3): difference 1; each variance 2, se = sqrt(2/2 + 2/2) = sqrt(2); Welch's degrees of
    # freedom (1 + 1)^2 / (1/1 + 1/1) = 2, t = 4.302653: 1 +- 6.08487.
    iv = stats.difference([2, 4], [1, 3])
    assert iv.estimate == 1
    assert iv.low == pytest.approx(1 - 6.08487, abs=1e-5) and iv.high == pytest.approx(1 + 6.08487, abs=1e-5)
    # Seeds that agree exactly: the difference is known exactly.
    exact = stats.difference([120, 120], [100, 100])
    assert (exact.low, exact.high) == (20, 20) and stats.direction(exact) == "above"
    assert stats.direction(stats.difference([100, 100], [100, 100])) == stats.NO_CHANGE
    assert stats.difference([1, 2], [3]) is None


def test_the_fit_of_an_exact_geometric_decay_is_its_log_factor_with_r2_one():
    d = [5, 6, 7, 8]
    iv = stats.fit(d, [math.log(3.0) + k * math.log(0.5) for k in d])
    assert iv.slope.estimate == pytest.approx(math.log(0.5)) and iv.r_squared == pytest.approx(1.0)
    assert iv.slope.high == pytest.approx(math.log(0.5))  # no residual, no width
    assert stats.fit([1, 2], [0, 1]) is None


# --------------------------------------------------------------------------------------------------------------
# The policy's tests, by hand. With 2 degrees of freedom Student's t has a closed form, P(T > t) = 1/2 - t / (2
# sqrt(2 + t^2)), and several of the numbers below are worked with it.


def t2_sf(t):
    return 0.5 - t / (2 * math.sqrt(2 + t * t))


def test_welchs_one_sided_p_is_scipys_and_worked_by_hand():
    # a = (3, 4, 5): mean 4, variance 1; b = (0, 2, 4): mean 2, variance 4. se = sqrt(1/3 + 4/3) = 1.29099, t =
    # 2 / 1.29099 = 1.54919; Welch's degrees of freedom (5/3)^2 / ((1/3)^2 / 2 + (4/3)^2 / 2) = 50/17 = 2.941.
    test = stats.effect([3, 4, 5], [0, 2, 4], stats.ABOVE, 1.0)
    t = 2 / math.sqrt(5 / 3)
    assert test.p_supports == pytest.approx(scipy_stats.t.sf(t, 50 / 17), rel=1e-9)
    welch = scipy_stats.ttest_ind([3, 4, 5], [0, 2, 4], equal_var=False, alternative="greater")
    assert test.p_supports == pytest.approx(welch.pvalue, rel=1e-9) and test.p_supports == pytest.approx(
        0.11044, abs=1e-5
    )
    # refuted where the difference is measurably short of the margin 1: H1 diff < 1, t = (2 - 1) / 1.29099 = 0.7746
    assert test.p_refutes == pytest.approx(scipy_stats.t.cdf(1 / math.sqrt(5 / 3), 50 / 17), rel=1e-9)
    # b = (1, 1, 1) has no spread: se = sqrt(1/3) and Welch's degrees of freedom are a's, 2; t = 3 sqrt(3) = 5.196:
    # p = 1/2 - 3 sqrt(3) / (2 sqrt(29)) = 0.017544
    exact_b = stats.effect([3, 4, 5], [1, 1, 1], stats.ABOVE, 1.0)
    assert exact_b.p_supports == pytest.approx(0.5 - 3 * math.sqrt(3) / (2 * math.sqrt(29)), rel=1e-9)
    assert exact_b.p_supports == pytest.approx(t2_sf(3 * math.sqrt(3)), rel=1e-9)


def test_the_equivalence_p_is_the_larger_of_the_two_one_sided_tests_worked_by_hand():
    # x = (0.1, -0.1, 0): mean 0, sd 0.1, se 0.057735; bounds -0.2 and +0.2: t = 0.2 / 0.057735 = 2 sqrt(3) each way,
    # so both one-sided p-values are 1/2 - sqrt(3) / sqrt(14) = 0.037090, and so is their maximum.
    hand = 0.5 - math.sqrt(3) / math.sqrt(14)
    one = stats.no_effect([0.1, -0.1, 0.0], None, stats.EITHER, 0.2)
    assert one.p_supports == pytest.approx(hand, rel=1e-9) and one.p_supports == pytest.approx(0.037090, abs=1e-6)
    assert one.p_refutes == 1.0  # two-sided test of a mean of exactly 0: nothing refutes "no effect"
    # the same against a side without spread (Welch: se and degrees of freedom are x's), by statsmodels' ttost_ind
    two = stats.no_effect([0.3, 0.1, 0.2], [0.2, 0.2, 0.2], stats.EITHER, 0.2)
    assert two.p_supports == pytest.approx(hand, rel=1e-9)
    # one-sided: "no worse than +0.05" on x: H1 mean < 0.05, t = -0.05 / 0.057735 = -0.866: p = t2_sf(0.866) = 0.2389
    harm = stats.no_effect([0.1, -0.1, 0.0], None, stats.ABOVE, 0.05)
    assert harm.p_supports == pytest.approx(t2_sf(0.05 / (0.1 / math.sqrt(3))), rel=1e-9)
    assert harm.p_supports == pytest.approx(0.2389, abs=1e-4)


def test_an_interval_on_a_cosine_is_cut_at_1_worked_by_hand():
    # cosines 0.999 and 1.0: mean 0.9995, sd 0.001 / sqrt(2) = 0.00070711, se = sd / sqrt(2) = 0.0005; with one
    # degree of freedom t_{0.975, 1} = tan(0.475 pi) = 12.7062, half-width 0.0063531: Student's interval is
    # [0.9931469, 1.0058531], past 1, where no cosine can be. Cut to the range [-1, 1]: [0.9931469, 1].
    t975 = math.tan(0.475 * math.pi)
    whole = stats.mean_interval([0.999, 1.0])
    assert whole.high == pytest.approx(0.9995 + 0.0005 * t975, rel=1e-9) and whole.high > 1
    test = stats.no_effect([0.999, 1.0], None, stats.BELOW, 0.01, against=1.0, bounds=stats.RANGES["update cosine"])
    iv = test.interval
    assert iv.estimate == pytest.approx(0.9995) and iv.high == 1.0
    assert iv.low == pytest.approx(0.9995 - 0.0005 * t975, rel=1e-9) and iv.low == pytest.approx(0.9931469, abs=1e-7)
    assert iv.cut == "cut at 1, a cosine's largest value"
    # the test is the interval's, uncut: "no turn beyond 0.01", H1 mean > 0.99, t = 0.0095 / 0.0005 = 19 on one
    # degree of freedom, P(T > 19) = 1/2 - atan(19) / pi = 0.016738
    assert test.p_supports == pytest.approx(0.5 - math.atan(19) / math.pi, rel=1e-6)
    # inside the range (0.6 +- 0.248), nothing is cut; at the low end, the smallest value
    assert stats.mean_interval([0.5, 0.6, 0.7]).within(stats.RANGES["update cosine"]).cut == ""
    low = stats.mean_interval([-0.999, -1.0]).within(stats.RANGES["update cosine"])
    assert (low.low, low.cut) == (-1.0, "cut at -1, a cosine's smallest value")


def test_holms_adjustment_of_three_p_values_worked_by_hand():
    # sorted 0.01, 0.03, 0.04 times 3, 2, 1: 0.03, 0.06, 0.04; step-down keeps them rising: 0.03, 0.06, 0.06
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    # three tests at 0.02 each: alone each would hold; together each adjusts to 3 x 0.02 = 0.06 and none does
    assert stats.holm([0.02, 0.02, 0.02]) == pytest.approx([0.06, 0.06, 0.06])
    assert stats.holm([]) == []


def test_fishers_exact_test_on_failure_counts_worked_by_hand():
    # 3 of 3 against 0 of 3: of the C(6, 3) = 20 ways to place the 3 failures among the 6 runs one puts all 3 on
    # A's side: p = 1/20 = 0.05, which is not below 0.05: inconclusive.
    three = stats.more_often(3, 3, 0, 3)
    assert three.p_supports == pytest.approx(1 / 20) and three.p_refutes == 1.0
    assert three.interval.estimate == 1.0 and three.kind == "counts"
    assert [v for v, _, _ in stats.decide([three])] == [INCONCLUSIVE]
    # 4 of 4 against 0 of 4: 1 of C(8, 4) = 70: p = 1/70 = 0.0143: holds
    four = stats.more_often(4, 4, 0, 4)
    assert four.p_supports == pytest.approx(1 / 70)
    assert [v for v, _, _ in stats.decide([four])] == [HOLDS]
    # the other way round refutes "more often" at the same p
    assert stats.more_often(0, 4, 4, 4).p_refutes == pytest.approx(1 / 70)
    assert [v for v, _, _ in stats.decide([stats.more_often(0, 4, 4, 4)])] == [FAILS]


def test_a_p_value_at_the_level_up_to_rounding_is_not_below_it():
    assert stats.ALPHA == 0.05 and stats.LEVEL == 0.95
    assert not stats.significant(0.05) and not stats.significant(1 / 20 + 1e-17) and not stats.significant(3 * (1 / 60))
    assert stats.significant(0.0499) and not stats.significant(0.0501)


def test_seeds_that_agree_exactly_are_a_difference_exactly_known():
    # every seed's drop 0.3: the mean is 0.3, above 0 (p 0) and not short of the margin (p 1)
    exact = stats.effect([0.3, 0.3, 0.3], None, stats.ABOVE, 0.02)
    assert (exact.p_supports, exact.p_refutes) == (0.0, 1.0)
    assert (exact.interval.low, exact.interval.high) == (0.3, 0.3)
    # every seed's drop 0: short of the margin (fails), and within it (no effect holds)
    none = stats.effect([0.0, 0.0, 0.0], None, stats.ABOVE, 0.02)
    assert (none.p_supports, none.p_refutes) == (1.0, 0.0)
    same = stats.no_effect([120, 120], [120, 120], stats.EITHER, 2.4)
    assert (same.p_supports, same.p_refutes) == (0.0, 1.0)
    # exactly at the margin is not within it
    edge = stats.no_effect([2.4, 2.4], None, stats.ABOVE, 2.4)
    assert edge.p_supports == 1.0
    # one seed is no test
    assert stats.effect([0.3], None, stats.ABOVE, 0.02) is None
    assert stats.no_effect([1.0, 2.0], [1.0], stats.EITHER, 0.5) is None


def _test(p_supports, p_refutes):
    return stats.Test(p_supports, p_refutes, stats.Interval(0.0, -1.0, 1.0, 3), 0.1, "measurably worse", "effect")


def test_decide_reads_support_then_refutation_after_holms_correction():
    # supports (0.001, 0.9, 0.2) -> Holm 0.003, 0.9, 0.4; refutes (0.9, 0.001, 0.2) -> 0.9, 0.003, 0.4
    decided = stats.decide([_test(0.001, 0.9), _test(0.9, 0.001), _test(0.2, 0.2)])
    assert [v for v, _, _ in decided] == [HOLDS, FAILS, INCONCLUSIVE]
    assert [s for _, s, _ in decided] == pytest.approx([0.003, 0.9, 0.4])
    assert [r for _, _, r in decided] == pytest.approx([0.9, 0.003, 0.4])
    # 0.02 holds alone, and not as one of three tests of 0.02 (each adjusts to 0.06)
    assert [v for v, _, _ in stats.decide([_test(0.02, 0.9)])] == [HOLDS]
    assert [v for v, _, _ in stats.decide([_test(0.02, 0.9)] * 3)] == [INCONCLUSIVE] * 3
    # an effect measurably present and measurably smaller than its margin: support is read first
    assert [v for v, _, _ in stats.decide([_test(0.01, 0.01)])] == [HOLDS]


# --------------------------------------------------------------------------------------------------------------
# Verdicts from parts


def test_parts_combine_into_holds_fails_partly_and_not_shown():
    ok, bad, hidden = Part("a", HOLDS, "1"), Part("b", FAILS, "2", "worse"), Part("c", NOT_SHOWN, note="one seed")
    assert combine([ok, hidden])[0] == HOLDS
    assert combine([bad])[0] == FAILS
    verdict, value, reason = combine([ok, bad, hidden])
    assert verdict == PARTLY and value == "a: 1; b: 2"
    assert reason == "holds for a; fails for b (worse); not shown for c: one seed"
    assert combine([hidden]) == (NOT_SHOWN, "", "c: one seed")
    # A claim of two halves: one that holds beside one not shown is partly, never holds.
    halves = [Part("size", HOLDS, aspect="size"), Part("gain", NOT_SHOWN, note="one seed", aspect="gain")]
    assert combine(halves)[0] == PARTLY


def test_settle_corrects_a_claims_tests_together_and_combine_says_partly_or_inconclusive():
    # supports (0.001, 0.2) -> Holm 0.002, 0.2: the first part holds, the second is not decided; its refutation
    # (0.3 of refutations 0.3, 0.9) -> Holm 0.6
    parts = settle([Part.tested("a", (_test(0.001, 0.9),), "1"), Part.tested("b", (_test(0.2, 0.3),), "2")])
    assert [p.verdict for p in parts] == [HOLDS, INCONCLUSIVE]
    assert (
        parts[0].value == "1 (p = 0.002, Holm)"
        and parts[1].note == "not decided at 95% (p = 0.2 that it holds, 0.6 that it fails; Holm)"
    )
    assert combine(parts) == (
        PARTLY,
        "a: 1 (p = 0.002, Holm); b: 2",
        "holds for a; inconclusive for b (not decided at 95% (p = 0.2 that it holds, 0.6 that it fails; Holm))",
    )
    # nothing decided: inconclusive, naming each part
    undecided = settle([Part.tested("b", (_test(0.2, 0.3),), "2"), Part.tested("c", (_test(0.6, 0.3),))])
    verdict, _, reason = combine(undecided)
    assert verdict == INCONCLUSIVE
    assert reason == (
        "inconclusive for b (not decided at 95% (p = 0.4 that it holds, 0.6 that it fails; Holm)); "
        "c (not decided at 95% (p = 0.6 that it holds, 0.6 that it fails; Holm))"
    )
    # a part with a failing test fails, with the refutation's adjusted p
    failed = settle([Part.tested("d", (_test(0.9, 0.01), _test(0.001, 0.9)))])
    assert failed[0].verdict == FAILS and failed[0].note == "measurably worse (p = 0.02, Holm)"


def test_a_claim_true_by_construction_says_why_and_what_was_not_shown():
    size = Part("size", BY_CONSTRUCTION, "+15,000 per word", "W_h grows by d x H a word", aspect="size")
    gain = Part("gain", NOT_SHOWN, note="one seed", aspect="gain")
    assert combine([size, gain]) == (
        BY_CONSTRUCTION,
        "size: +15,000 per word",
        "size (W_h grows by d x H a word); not shown for gain: one seed",
    )
    # beside a measured part that holds, the built one is counted apart
    held = settle([Part.tested("gain", (_test(0.001, 0.9),), "0", aspect="gain")])
    assert combine([size, *held]) == (
        HOLDS,
        "size: +15,000 per word; gain: 0 (p = 0.001, Holm)",
        "holds for every part shown; true by construction: size (W_h grows by d x H a word)",
    )
    # and beside one that fails, the claim fails
    failed = settle([Part.tested("gain", (_test(0.9, 0.001),), "-9", aspect="gain")])
    verdict, _, reason = combine([size, *failed])
    assert verdict == FAILS and reason.endswith("; true by construction: size (W_h grows by d x H a word)")


# --------------------------------------------------------------------------------------------------------------
# Results folders written by hand (tests/planted.py)


def test_clipping_that_costs_a_fifth_of_the_perplexity_fails_costs_nothing(tmp_path):
    roles = clipping_folder(tmp_path, [p * 1.2 for p in UNCLIPPED])  # 120.6, 119.4, 120: 20% worse on every seed
    finding = judge(claim("clip_quality"), Evidence(tmp_path, roles))
    assert finding.verdict == FAILS
    # difference 20, each side's sd 0.5 and 0.6 over three seeds: the interval is far from 0
    assert "+20%" in finding.value and "PTB, rate 0.5, threshold 2× the median norm (0.25)" in finding.value
    assert "measurably worse (p = " in finding.reason
    assert finding.evidence == "studies/clipping_ptb; studies/clip_threshold_ptb"


def test_clipping_with_the_unclipped_perplexities_holds_costs_nothing(tmp_path):
    # clipped = unclipped = 100 +- 0.5: difference 0, se sqrt(0.25/3 + 0.25/3) = 0.408 on Welch's 4 degrees of
    # freedom; the margin is 2% of 100 = 2: t = (0 - 2) / 0.408 = -4.90, one-sided p = 0.0040: within the margin.
    roles = clipping_folder(tmp_path, list(UNCLIPPED), cosines=(0.9991, 0.9989, 0.999))
    finding = judge(claim("clip_quality"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS and "+0% [" in finding.value and "(p = 0.004, Holm)" in finding.value
    # Adam's update from the clipped gradient against the unclipped one's: cosines 0.999 +- 0.0001, far above 0.99
    direction = judge(claim("clip_direction"), Evidence(tmp_path, roles))
    assert (
        direction.verdict == HOLDS
        and "PTB, Adam's update, rate 0.5, threshold 2× the median norm (0.25): mean cosine +0.999 [" in direction.value
    )
    assert (
        "true by construction: PTB, the gradient (a positive rescaling keeps a vector's direction" in direction.reason
    )
    assert direction.evidence == "studies/clipping_ptb; studies/clip_threshold_ptb"


def test_the_clipped_updates_mean_cosine_is_printed_cut_at_1(tmp_path):
    # two seeds, cosines 0.999 and 1.0: Student's interval 0.9995 +- 0.0063531 reaches 1.0059 (worked by hand in
    # test_an_interval_on_a_cosine_is_cut_at_1_worked_by_hand); the part prints it ending at 1, and says why
    roles = clipping_folder(tmp_path, [100.5, 99.5], cosines=(0.999, 1.0))
    direction = judge(claim("clip_direction"), Evidence(tmp_path, roles))
    assert direction.verdict == HOLDS
    assert "mean cosine +0.9995 [+0.9931, +1] (cut at 1, a cosine's largest value) over 2 seeds" in direction.value
    assert "+1.00" not in direction.value and "mean cosine +0.9995 [+0.9931, +1]" in direction.headline


def test_a_claim_whose_runs_did_not_learn_is_not_shown(tmp_path):
    roles = clipping_folder(tmp_path, list(UNCLIPPED), outcome="did not learn")
    finding = judge(claim("clip_quality"), Evidence(tmp_path, roles))
    assert (
        finding.verdict == NOT_SHOWN and "needs two learned seeds on each side, has 0 clipped and 0" in finding.reason
    )


def test_a_test_perplexity_that_is_one_stuck_columns_doing_is_not_evidence(tmp_path):
    # Seed 1's worst test column reads 6,000 against a median column of 100: more than STUCK_SPREAD (5) times it,
    # so its test perplexity, 400, is that column's doing and is left out, as the studies' tables leave it out.
    # Seed 2's worst column, 480, is 4.8 times its median: kept.
    columns = [(6000.0, 100.0, 400.0), (480.0, 100.0, 101.0)]
    runs = [
        {
            "run_id": f"r-{seed}",
            "seed": seed,
            "clip_mode": "none",
            "outcome": "learned",
            "metrics": {"test_ppl": ppl, "test_column_worst": worst, "test_column_median": middle},
        }
        for seed, (worst, middle, ppl) in enumerate(columns, start=1)
    ]
    write_study(tmp_path, "clipping_ptb", {**CLIPPING_ABOUT, "vary": ["clip_mode"]}, runs)
    read = Evidence(tmp_path, Roles(studies={"clipping": ("clipping_ptb",)})).runs("clipping_ptb")
    assert math.isnan(read.loc[read["seed"] == 1, "test_ppl"].iloc[0])
    assert read.loc[read["seed"] == 2, "test_ppl"].iloc[0] == 101.0


def test_a_renamed_clipping_study_is_still_found_by_its_role(tmp_path):
    merged = merge_config_files(CONFIG_FILES)
    merged["studies"] = {("my_clip_runs" if k == "clipping_ptb" else k): v for k, v in merged["studies"].items()}
    merged["comparison"]["dynamic_evaluation"] = None
    config = load_config(merged)
    roles = Roles.from_config(config)
    assert "my_clip_runs" in roles.studies["clipping"] and "clipping_ptb" not in roles.study_names()
    # and its results are read under the new name
    clipping_folder(tmp_path, [p * 1.2 for p in UNCLIPPED], none_study="my_clip_runs")
    finding = judge(
        claim("clip_quality"), Evidence(tmp_path, Roles(studies={"clipping": ("my_clip_runs", "clip_threshold_ptb")}))
    )
    assert finding.verdict == FAILS and "studies/my_clip_runs" in finding.evidence


def test_a_claim_with_no_study_of_its_role_is_not_shown_and_says_so(tmp_path):
    finding = judge(claim("sigmoid_quarter"), Evidence(tmp_path, Roles()))
    assert finding.verdict == NOT_SHOWN and finding.reason == "no analysis with role activation in this config"


def test_divergence_prevented_at_one_threshold_and_not_at_another_is_partly(tmp_path):
    # unclipped 4 of 4 diverged; norm <= 1: 0 of 4 (Fisher p = 1/70), norm <= 25: 4 of 4 (p = 1 either way).
    # Holm over the two: 2/70 = 0.029 holds; the other is not decided (equal counts refute nothing).
    roles = divergence_folder(tmp_path, {None: (4, 4), 1.0: (0, 4), 25.0: (4, 4)})
    finding = judge(claim("clip_divergence"), Evidence(tmp_path, roles))
    assert finding.verdict == PARTLY
    assert (
        "PTB, rate 1, threshold 2× the median norm (1): unclipped 4/4 diverged, clipped 0/4 (5% of steps clipped) (p = 0.029, Holm)"
        in finding.value
    )
    assert finding.reason == (
        "holds for PTB, rate 1, threshold 2× the median norm (1); inconclusive for PTB, rate 1, threshold 50× the median norm (25) "
        "(not decided at 95% (p = 1 that it holds, 1 that it fails; Holm))"
    )


def test_a_run_that_ended_above_the_unigram_blew_up_though_it_did_not_diverge(tmp_path):
    # unclipped: 2 of 4 diverged and the other 2 settled above the unigram perplexity, 4 of 4 blew up; clipped at
    # 2 x median: 0 of 4. Fisher one-sided 1/70 = 0.014, one test: holds. On divergence alone (2/4 against 0/4,
    # p = 3/14 = 0.21) it could not have.
    roles = divergence_folder(tmp_path, {None: (2, 4), 1.0: (0, 4)}, settled_high={None: 2})
    finding = judge(claim("clip_divergence"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS
    assert (
        "unclipped 4/4 blew up (2 diverged, 2 ended above the unigram perplexity), clipped 0/4 blew up" in finding.value
    )


def test_a_window_whose_accuracy_falls_just_past_its_width_is_blind_there(tmp_path):
    # n-1 = 2: distance 2 at 0.90, 0.92, 0.94; distance 3 at 0.60, 0.61, 0.65: drops 0.30, 0.31, 0.29,
    # mean 0.30, sd 0.01, t interval 0.30 +- 4.303 * 0.01 / sqrt(3) = [0.275, 0.325]: above 0; t = 0.30 / 0.00577 =
    # 51.96 on 2 degrees of freedom: p = 1/2 - t / (2 sqrt(2 + t^2)) = 0.00019.
    curves = [{1: 0.95, 2: a, 3: b} for a, b in ((0.90, 0.60), (0.92, 0.61), (0.94, 0.65))]
    finding = judge(claim("window_blind"), Evidence(tmp_path, window_folder(tmp_path, curves)))
    assert finding.verdict == HOLDS
    assert (
        finding.value
        == "agreement corpus, n−1 = 2: accuracy at distance 2 − at 3: +0.3 [+0.275, +0.325] (p = 0.00019, Holm)"
    )


def test_a_recurrence_with_a_cliff_fails_no_cliff(tmp_path):
    # flat, then a drop of 0.3 from distance 3 to 4: drops 0.30, 0.28, 0.32, measurably above 0
    curves = [{1: 0.9 + j, 2: 0.9, 3: 0.9 - j, 4: 0.6 + j} for j in (0.0, 0.01, -0.01)]
    finding = judge(claim("recurrence_no_cliff"), Evidence(tmp_path, recurrence_folder(tmp_path, curves)))
    assert finding.verdict == FAILS
    assert "largest drop +0.3 [" in finding.value and "from distance 3 to 4 (3 adjacent pairs)" in finding.value
    assert finding.reason.startswith("fails for agreement corpus, H = 60 (measurably worse (p = ")


def test_a_recurrence_study_that_varies_nothing_is_one_setting_over_its_seeds(tmp_path):
    # H fixed at 60, three seeds: each adjacent drop 0 +- 0.002 (0.9 at distances 1 and 3, 0.9 + a at 2 and 4, a =
    # 0.002, -0.002, 0), below the 0.02 margin at t = -17.3. One part over the three seeds, not three of one seed.
    curves = [{1: 0.9, 2: 0.9 + a, 3: 0.9, 4: 0.9 + a} for a in (0.002, -0.002, 0.0)]
    finding = judge(claim("recurrence_no_cliff"), Evidence(tmp_path, recurrence_folder(tmp_path, curves, varied=False)))
    assert finding.verdict == HOLDS and finding.value.startswith("agreement corpus: largest drop +0 [")


def test_the_recurrence_is_set_against_the_window_of_its_size_on_a_language_models_text(tmp_path):
    # H = 200 at 150, 152, 148 against the window's 160, 161, 159: recurrence - window = 150 - 160 = -10, lower is
    # better for perplexity. H = 50 is 25% smaller than the window and is not its match.
    roles = lm_size_folder(tmp_path, (150.0, 152.0, 148.0))
    finding = judge(claim("recurrence_beats_window"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS
    assert finding.value.startswith(
        "PTB, n−1 = 1 (1,494,002) against H = 200 (1,534,002): test_ppl, recurrence − window −10 ["
    )
    # One seed of the recurrence has no spread to read a gap of any size against.
    one = tmp_path / "one"
    finding = judge(claim("recurrence_beats_window"), Evidence(one, lm_size_folder(one, (150.0,))))
    assert finding.verdict == NOT_SHOWN and "1 recurrence and 3 window runs learned; needs two each" in finding.reason
    # The window ahead by as much: the recurrence is not better.
    ahead = tmp_path / "ahead"
    finding = judge(claim("recurrence_beats_window"), Evidence(ahead, lm_size_folder(ahead, (170.0, 172.0, 168.0))))
    assert finding.verdict == FAILS and "recurrence − window +10 [" in finding.value


def test_a_truncated_run_that_loses_more_beyond_k_than_full_bptt_shows_the_dependency_hidden(tmp_path):
    # stream segments at k = 2, two seeds: gap (within − beyond) 0.35 and 0.37 cut, 0.05 and 0.07 full: the
    # interaction +0.3, each side's sd 0.0141 (Welch: se 0.0141, t = 21.2 on 2 degrees of freedom)
    roles = truncation_folder(tmp_path, [0.05, 0.07], [0.35, 0.37])
    finding = judge(claim("truncation_invisible"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS and "gap within − beyond: cut 0.36, full 0.06; interaction +0.3 [" in finding.value
    assert "over 2 seeds" in finding.value and finding.evidence == "studies/cuts"


def test_the_sentence_cut_study_is_split_by_block_and_paired_by_seed(tmp_path):
    # its full runs' gaps 0 + (0.001, -0.001, 0), cut 0.15 + (0.002, -0.002, 0): per seed +0.151, +0.149... paired
    # differences 0.15 + (0.001, -0.001, 0), the study's rows read at the block split
    roles = sentence_cut_folder(tmp_path, spread(0.15, 0.002))
    finding = judge(claim("truncation_invisible"), Evidence(tmp_path, roles))
    assert (
        "agreement corpus, sentence cuts, truncated at k = 2, split by block" in finding.value
        and "(paired)" in finding.value
    )
    assert (
        "agreement corpus, stream segments, truncated at k = 2, split by distance" in finding.value
        and finding.verdict == HOLDS
    )


def test_sentence_cuts_between_stream_segments_and_full_bptt_reduce_the_damage_without_removing_it(tmp_path):
    # gaps at k = 2: full 0, stream 0.35, sentence cuts 0.15 (+-0.002): interactions 0.35 and 0.15
    finding = judge(
        claim("sentence_cuts_reduce"), Evidence(tmp_path, sentence_cut_folder(tmp_path, spread(0.15, 0.002)))
    )
    assert finding.verdict == HOLDS
    assert (
        "agreement corpus, sentence cuts against stream segments, truncated at k = 2: interaction (gap within − beyond, cut minus full), stream − sentence +0.2"
        in finding.value
    )
    assert (
        "agreement corpus, sentence cuts against its full-sentence runs, truncated at k = 2: interaction (gap within − beyond, cut minus full), sentence +0.15"
        in finding.value
    )
    # sentence cuts lose no more than full BPTT: the damage is removed, so the claim holds only in part
    removed = judge(
        claim("sentence_cuts_reduce"), Evidence(tmp_path / "x", sentence_cut_folder(tmp_path / "x", spread(0.0, 0.002)))
    )
    assert (
        removed.verdict == PARTLY
        and "fails for agreement corpus, sentence cuts against its full-sentence runs, truncated at k = 2"
        in removed.reason
    )


def test_rates_below_and_above_zero_over_seeds_decide_vanishing_and_explosion(tmp_path):
    net = {"family": "rnn", "activation": "tanh", "hidden": 32, "embed_dim": 16}
    write_rates(
        tmp_path,
        "radii",
        [
            {**net, "radius": 0.5, "seed": 0, "rate": -0.70},
            {**net, "radius": 0.5, "seed": 1, "rate": -0.72},
            # +0.001, -0.001, 0: mean 0, sd 0.001, se 0.000577; short of the +0.01 margin: t = -0.01 / 0.000577 =
            # -17.3 on 2 degrees of freedom, p = 0.0017
            {**net, "radius": 1.1, "seed": 0, "rate": 0.001},
            {**net, "radius": 1.1, "seed": 1, "rate": -0.001},
            {**net, "radius": 1.1, "seed": 2, "rate": 0.0},
        ],
    )
    roles = Roles(analyses={"radius": ("radii",)})
    vanish = judge(claim("vanish_below_one"), Evidence(tmp_path, roles))
    assert vanish.verdict == HOLDS and "rate −0.71 [" in vanish.value and "over 2 seeds" in vanish.value
    explode = judge(claim("explode_above_one"), Evidence(tmp_path, roles))
    assert explode.verdict == FAILS and "measurably short of the margin (p = 0.0017, Holm)" in explode.reason
    assert "untrained, spectral radius 1.1, H = 32: rate +0 [" in explode.value


def test_explosion_is_read_on_trained_networks_whose_radius_ended_above_one_too(tmp_path):
    # untrained at ρ(U) 1.5: rates +0.3 + (0.01, -0.01, 0), growing. Trained networks whose ρ(U) ended at 1.2 still
    # decay, -0.1 + (0.01, -0.01, 0): short of +0.01 (t = -0.11 / 0.00577 = -19, p = 0.0014, doubled by Holm).
    radius_folder(tmp_path, {1.5: spread(0.3, 0.01)})
    trained_decay_folder(tmp_path, spread(-0.1, 0.01), rho=1.2)
    roles = Roles(analyses={"radius": ("radii",), "trained_decay": ("trained",)})
    finding = judge(claim("explode_above_one"), Evidence(tmp_path, roles))
    assert finding.verdict == PARTLY and finding.evidence == "analyses/radii; analyses/trained"
    assert (
        "agreement corpus, trained: rate −0.1 [−0.125, −0.0752] over 3 seeds, per-step factor 0.905, ρ(U) 1.2 to 1.2"
        in (finding.value)
    )
    assert finding.reason == (
        "holds for untrained, spectral radius 1.5, H = 32; "
        "fails for agreement corpus, trained (measurably short of the margin (p = 0.0027, Holm))"
    )


def test_the_lessons_gradient_reach_holds_when_it_falls_at_every_longer_sequence(tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    path = tables / "lesson_gradient_reach.csv"
    pd.DataFrame({"length": [5, 20, 50], "grad_token1_mean_abs": [1e-2, 1e-6, 1e-14]}).to_csv(path, index=False)
    assert judge(claim("lesson_gradient_reach"), Evidence(tmp_path, Roles())).verdict == HOLDS
    pd.DataFrame({"length": [5, 20, 50], "grad_token1_mean_abs": [1e-2, 1e-6, 1e-5]}).to_csv(path, index=False)
    finding = judge(claim("lesson_gradient_reach"), Evidence(tmp_path, Roles()))
    assert finding.verdict == FAILS and "does not fall at T = 50" in finding.reason
    off = judge(claim("lesson_gradient_reach"), Evidence(tmp_path, Roles(worked=False)))
    assert off.verdict == NOT_SHOWN and "tables.worked is false" in off.reason


def test_the_job_writes_one_row_per_claim_and_names_what_it_read(tmp_path):
    roles = clipping_folder(tmp_path, [p * 1.2 for p in UNCLIPPED])
    out = tmp_path / "tables" / "findings.csv"
    record = tmp_path / "tables" / "findings.provenance.json"
    jobs.findings_table(
        str(tmp_path),
        {**roles.record(), "worked": False},
        str(out),
        provenance_file=str(record),
        provenance={"config": {}, "config_files": [], "command": "test", "checkout": str(REPO)},
    )
    table = pd.read_csv(out, keep_default_na=False)
    assert list(table.columns) == list(COLUMNS) and list(table["id"]) == [c.id for c in CLAIMS]
    assert table.set_index("id").loc["clip_quality", "verdict"] == FAILS
    # plain SGD (no update cosine measured): the gradient's direction is all there is, and it is kept by construction
    assert table.set_index("id").loc["clip_direction", "verdict"] == BY_CONSTRUCTION
    assert set(table["verdict"]) <= set(VERDICTS)
    inputs = json.loads(record.read_text())["inputs"]
    assert any(str(i).endswith("studies/clip_threshold_ptb/summary.csv") for i in inputs)


# --------------------------------------------------------------------------------------------------------------
# The registry against the config and the seeds


def test_the_schema_allows_exactly_the_roles_the_claims_read():
    assert set(schema()["$defs"]["role"]["enum"]) == set(ROLES)


def test_roles_are_not_run_settings_and_a_misspelt_one_names_the_key():
    merged = merge_config_files(CONFIG_FILES)
    merged["comparison"]["dynamic_evaluation"] = None
    with_roles = load_config(merged)
    bare = json.loads(json.dumps(merged))
    for body in [*bare["studies"].values(), *bare["analyses"].values()]:
        body.pop("roles", None)
    assert sorted(load_config(bare).all_runs()) == sorted(with_roles.all_runs())
    bare["studies"]["clipping_ptb"]["roles"] = ["cliping"]
    with pytest.raises(
        ConfigError, match=r"studies\.clipping_ptb\.roles\.0: 'cliping' is not allowed; allowed values: 'window'"
    ):
        load_config(bare)


def test_the_findings_wait_for_the_units_and_speed_tables_they_read():
    from rnnbench import paths

    merged = merge_config_files(CONFIG_FILES)
    merged["comparison"]["dynamic_evaluation"] = None
    config = load_config(merged)
    inputs = paths.findings_inputs(config, [])
    results = config.results_dir
    for study in ("activation_ptb", "activation_agreement"):  # role activation_training: units.csv, speed.csv
        assert paths.study_extra_table(results, study, "units") in inputs
        assert paths.study_extra_table(results, study, "speed") in inputs
    assert paths.study_extra_table(results, "truncation_agreement", "distance") not in inputs  # read per run instead


def _seeds_folder() -> Path | None:
    for candidate in (os.environ.get("RNNBENCH_SEEDS"), REPO.parent / "shared" / "seeds", "/work/shared/seeds"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def test_every_quote_is_the_seeds_own_words():
    folder = _seeds_folder()
    if folder is None:
        pytest.skip("the seeds' folder (shared/seeds beside the checkout, or $RNNBENCH_SEEDS) is not here")
    for c in CLAIMS:
        assert c.seed in SEEDS
        assert c.quote in (folder / c.seed).read_text(encoding="utf-8"), c.id
    assert len({c.id for c in CLAIMS}) == len(CLAIMS)


def test_the_book_links_each_claim_to_the_sections_its_evidence_has(tmp_path):
    from rnnbench.book import findings

    roles = clipping_folder(tmp_path, list(UNCLIPPED), cosines=(0.9991, 0.9989, 0.999))
    (tmp_path / "analyses" / "radii").mkdir(parents=True)
    (tmp_path / "analyses" / "radii" / "analysis.json").write_text(json.dumps({"kind": "gradient_decay"}))
    evidence = "studies/clipping_ptb; analyses/radii; analyses/absent; studies/absent; tables/benchmarks.csv"
    tables = {"tables/benchmarks.csv": "sec-benchmarks"}
    assert findings.sections(evidence, tables, tmp_path) == [
        "sec-study-clipping-ptb",
        "sec-analysis-radii",
        "sec-benchmarks",
    ]
    out = tmp_path / "tables" / "findings.csv"
    table, _ = findings_table(tmp_path, Roles(studies=roles.studies, worked=False))
    out.parent.mkdir(exist_ok=True)
    table.to_csv(out, index=False)
    counts = findings.verdict_counts(findings.findings(tmp_path))
    assert sum(counts.values()) == len(CLAIMS) and counts[HOLDS] >= 2  # clip_direction and clip_quality


# --------------------------------------------------------------------------------------------------------------
# Activations


def test_a_sigmoid_network_measurably_behind_tanh_after_equal_training_holds(tmp_path):
    # sigmoid (300, 310, 305) against tanh (250, 255, 245): difference 55, each variance 25, se = sqrt(25/3 + 25/3)
    # = 4.0825 on Welch's 4 degrees of freedom, t = 2.776445: 55 +- 11.335.
    roles = activation_folder(
        tmp_path,
        {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]},
        {"tanh": [0, 0, 0], "sigmoid": [0, 0, 0], "relu": [0.1, 0.12, 0.08]},
    )
    # steps to the target, sigmoid (600, 610, 605) against tanh (400, 405, 410): the same spread, 200 +- 11.335.
    # One-sided p: t = 55 / 4.0825 = 13.5 and 200 / 4.0825 = 49.0 on 4 degrees of freedom; Holm doubles the smaller.
    finding = judge(claim("zero_centred_faster"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS
    assert finding.value == (
        "PTB, sigmoid against tanh: valid_ppl 305 against 250, sigmoid − tanh +55 [+43.7, +66.3] "
        "(p = 8.8e-05, Holm); "
        "PTB, steps to a training loss both reach, sigmoid against tanh: steps to training perplexity "
        "300: 605 against 405, sigmoid − tanh +200 [+189, +211] (p = 1e-06, Holm)"
    )
    # The same spread at equal means is short of each margin and the claim fails: perplexity 250 +- 1 on both sides,
    # margin 2% of 250 = 5, se sqrt(1/3 + 1/3) = 0.816, t = -5 / 0.816 = -6.1 on 4 degrees of freedom (p = 0.002);
    # steps (402, 398, 405) against (400, 405, 410), difference -3.3 against a margin of 5% of 405 = 20.25.
    # Behind after equal training but no slower to the target (the sigmoid's steps now tanh's less 100), it holds
    # in part.
    silent = {"tanh": [0, 0, 0], "sigmoid": [0, 0, 0], "relu": [0, 0, 0]}
    level_ppl = {"tanh": [251, 249, 250], "sigmoid": [249, 251, 250], "relu": [260, 270, 265]}
    level_steps = {**STEPS_TO_TARGET, "sigmoid": [402, 398, 405]}
    faster_steps = {**STEPS_TO_TARGET, "sigmoid": [300, 310, 305]}
    cases = {
        "level": (level_ppl, level_steps, FAILS, "measurably short of the margin"),
        "part": (None, faster_steps, PARTLY, "; fails for PTB, steps to a training loss both reach"),
    }
    behind = {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]}
    for case, (valid, steps, verdict, why) in cases.items():
        roles = activation_folder(tmp_path / case, valid or behind, silent, steps=steps)
        finding = judge(claim("zero_centred_faster"), Evidence(tmp_path / case, roles))
        assert finding.verdict == verdict and why in finding.reason, case


def test_relu_units_that_die_in_training_hold_and_none_dying_fails(tmp_path):
    # shares (0.10, 0.12, 0.08): mean 0.10, sd 0.02, se 0.011547, t_{0.975, 2} = 4.302653: 10% +- 4.97%;
    # t = 0.10 / 0.011547 = 8.66: p = 1/2 - t / (2 sqrt(2 + t^2)) = 0.0065
    valid = {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]}
    roles = activation_folder(tmp_path, valid, {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0.1, 0.12, 0.08]})
    finding = judge(claim("relu_dies"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS
    assert finding.value == (
        "PTB, ReLU: share of 100 units silent on validation +10% [+5.03%, +15%] (p = 0.0065, Holm)"
    )
    # no unit silent in any seed: the share is exactly 0, short of the margin of 0.01
    alive = activation_folder(tmp_path / "alive", valid, {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0] * 3})
    finding = judge(claim("relu_dies"), Evidence(tmp_path / "alive", alive))
    assert finding.verdict == FAILS and finding.reason == (
        "fails for PTB, ReLU (measurably short of the margin (p = 0, Holm))"
    )


def test_activation_claims_on_runs_that_did_not_learn_are_not_shown(tmp_path):
    roles = activation_folder(
        tmp_path,
        {"tanh": [700, 710, 705], "sigmoid": [720, 730, 725], "relu": [700, 700, 700]},
        {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0.5] * 3},
        outcome="did not learn",
    )
    for claim_id in ("zero_centred_faster", "relu_dies"):
        finding = judge(claim(claim_id), Evidence(tmp_path, roles))
        assert finding.verdict == NOT_SHOWN and "0 of 3 runs learned; needs two" in finding.reason


def test_relu_runs_that_all_blow_up_beside_tanh_runs_that_train_hold_the_lessons_no_ceiling(tmp_path):
    # 4 of 4 ReLU runs diverged against 0 of 4 tanh runs: Fisher's p = 1/70 = 0.014
    valid = {"tanh": [250, 255, 245, 250], "sigmoid": [300, 310, 305, 305], "relu": [260, 270, 265, 265]}
    none = {act: [0] * 4 for act in valid}
    roles = activation_folder(tmp_path, valid, none, diverged=("relu",))
    finding = judge(claim("relu_no_ceiling"), Evidence(tmp_path, roles))
    assert finding.verdict == HOLDS
    assert finding.value == "PTB, ReLU against tanh: diverged: ReLU 4 of 4, tanh 0 of 4 (p = 0.014, Holm)"
    # 3 of 3 against 0 of 3 is p = 1/20 = 0.05, not below 0.05: three seeds a side cannot show it
    three = {act: values[:3] for act, values in valid.items()}
    roles = activation_folder(tmp_path / "three", three, {act: [0] * 3 for act in valid}, diverged=("relu",))
    finding = judge(claim("relu_no_ceiling"), Evidence(tmp_path / "three", roles))
    assert finding.verdict == INCONCLUSIVE and "(p = 0.05 that it holds, 1 that it fails; Holm)" in finding.reason
    # with no run diverging on either side the counts are equal: nothing is decided either way
    calm = activation_folder(tmp_path / "calm", valid, none)
    finding = judge(claim("relu_no_ceiling"), Evidence(tmp_path / "calm", calm))
    assert finding.verdict == INCONCLUSIVE and "ReLU 0 of 4, tanh 0 of 4" in finding.value


def test_a_state_the_probe_reads_at_chance_where_the_gradient_has_faded_fails_forward_carries(tmp_path):
    # The gradient falls 10-fold by distance 2; the farthest distance measured, 10, is read. Accuracy there
    # 0.5 +- 0.001 (0.501, 0.499, 0.5) against chance 0.5: above chance 0 +- 0.0025, measurably short of the 0.02
    # margin (t = -0.02 / 0.000577 = -34.6 on 2 degrees of freedom, p = 0.00042; Holm over the claim's two tests,
    # this and the shuffled-label control, doubles the smaller: 0.00083).
    same = probe_folder(tmp_path, (0.501, 0.499, 0.5))
    finding = judge(claim("forward_carries"), Evidence(tmp_path, same))
    assert finding.verdict == FAILS and "measurably short of the margin (p = 0.00083, Holm)" in finding.reason
    assert (
        "at distance 10, sentences whose nearest noun has the other number (on them the gradient 1 × 10⁻⁵ of its size "
        "at the verb): accuracy 0.5 against chance 0.5"
    ) in finding.value
    assert "above chance +0 [−0.00248, +0.00248] over 3 seeds" in finding.value
    assert finding.evidence == "analyses/probe"
    # accuracies 0.81, 0.79, 0.8 there: 0.3 above chance, 0.3 +- 0.0248: the state carries what the gradient lost
    carried = probe_folder(tmp_path / "carried", (0.81, 0.79, 0.8))
    finding = judge(claim("forward_carries"), Evidence(tmp_path / "carried", carried))
    assert finding.verdict == HOLDS and "above chance +0.3 [+0.275, +0.325] over 3 seeds" in finding.value
    # that is the carrying half; the networks probed learned the agreement, so "cannot be trained to use it" is a
    # part not shown, said in the reason, and the claim's title and statistic name only what was tested
    untested = [p for p in finding.parts if p.label == "cannot be trained to use it"]
    assert [p.verdict for p in untested] == [NOT_SHOWN] and "not tested here" in untested[0].note
    assert finding.reason.startswith(
        "holds for every part shown; not shown for cannot be trained to use it: not tested"
    )
    assert "cannot be trained" not in finding.value and "carr" in finding.title
    assert finding.statistic.startswith("the carrying half only")
    # the negative control: a probe that reads shuffled labels 0.1 above chance (0.6 +- 0.001) reads something
    # other than the state's content, and the claim cannot hold on it; one 0.1 below chance (a label-blind probe
    # under the majority rate) leaks nothing
    leaky = probe_folder(tmp_path / "leaky", (0.81, 0.79, 0.8), shuffled=[0.601, 0.599, 0.6])
    finding = judge(claim("forward_carries"), Evidence(tmp_path / "leaky", leaky))
    assert finding.verdict == FAILS and "measurably worse" in finding.reason
    blind = probe_folder(tmp_path / "blind", (0.81, 0.79, 0.8), shuffled=[0.401, 0.399, 0.4])
    assert judge(claim("forward_carries"), Evidence(tmp_path / "blind", blind)).verdict == HOLDS


def test_relu_units_are_not_counted_when_every_relu_run_diverged(tmp_path):
    valid = {"tanh": [250, 255, 245], "sigmoid": [300, 310, 305], "relu": [260, 270, 265]}
    none = {"tanh": [0] * 3, "sigmoid": [0] * 3, "relu": [0] * 3}
    roles = activation_folder(tmp_path, valid, none, diverged=("relu",))
    finding = judge(claim("relu_dies"), Evidence(tmp_path, roles))
    assert finding.verdict == NOT_SHOWN and finding.reason == "PTB, ReLU: 0 of 3 runs learned; needs two; 3 diverged"


def test_a_threshold_below_the_median_is_reported_outside_the_chapters_regime(tmp_path):
    # the unclipped perplexities against clipped ones 20% worse, the threshold half the median norm: it clips ordinary
    # steps (here every one, 100%), normalised SGD, not the rescaling of rare spikes the chapter means, so no part is
    # tested and the claim is not shown
    roles = clipping_folder(tmp_path, [120.0, 121.0, 119.0], clipped=1.0, times=0.5)
    finding = judge(claim("clip_quality"), Evidence(tmp_path, roles))
    assert finding.verdict == NOT_SHOWN
    assert (
        "0.5× the unclipped median norm: ordinary steps, not the rare spikes the chapter clips "
        "(100% of steps clipped)" in finding.reason
    )


def test_activation_runs_are_read_per_start_of_u_and_the_speed_claim_reads_the_default_start():
    from rnnbench.findings.activation import default_start, starts

    table = pd.DataFrame({"recurrent_init": ["default", "identity", "default", None], "activation": list("abcd")})
    assert [label for label, _ in starts(table)] == ["", ", U = I start"]
    assert [len(group) for _, group in starts(table)] == [3, 1]  # a row from before the setting is the default's
    assert default_start(table)["activation"].tolist() == ["a", "c", "d"]
    older = table.drop(columns="recurrent_init")  # a study that never varied the start: one group, every row
    assert [len(group) for _, group in starts(older)] == [4] and len(default_start(older)) == 4


def _reference_rows(rnn_ppl: tuple[float, ...], ff_ppl: tuple[float, ...]) -> pd.DataFrame:
    """tables/comparison.csv's runs trained to convergence: windows n-1 = 4 (1,000 parameters) and RNNs H = 8
    (900: within the matching tolerance), one row per seed, and a dynamically evaluated row that must be left out."""
    rows = [
        {
            "origin": "ours",
            "scale": "reference",
            "corpus": "ptb",
            "family": "ff",
            "model": f"ff-{i}",
            "n": 5,
            "hidden": 16,
            "parameters": 1000,
            "test_ppl": v,
        }
        for i, v in enumerate(ff_ppl)
    ] + [
        {
            "origin": "ours",
            "scale": "reference",
            "corpus": "ptb",
            "family": "rnn",
            "model": f"rnn-{i}",
            "n": None,
            "hidden": 8,
            "parameters": 900,
            "test_ppl": v,
        }
        for i, v in enumerate(rnn_ppl)
    ]
    dynamic = {**rows[-1], "model": "rnn-0 dynamic", "test_ppl": 1.0}  # would win any test if it were read
    return pd.DataFrame([*rows, dynamic])


def test_the_recurrence_against_the_window_trained_to_convergence_is_a_test_over_seeds():
    # RNN 120, 121 against windows 140, 141: a difference of -20 [well below], far past the 2% margin (2.8)
    (ahead,) = window.at_convergence(_reference_rows((120.0, 121.0), (140.0, 141.0)))
    assert ahead.verdict == "tested" and ahead.tests[0].interval.estimate == pytest.approx(-20.0)
    assert "trained to convergence, n−1 = 4 (1,000) against H = 8 (900)" in ahead.label
    # the same runs the other way round: the recurrence is measurably worse, so the part can fail
    (behind,) = window.at_convergence(_reference_rows((140.0, 141.0), (120.0, 121.0)))
    assert behind.tests[0].interval.estimate == pytest.approx(20.0) and behind.tests[0].p_refutes < 0.05
    # a recipe carried beyond the paper's, at the same H but another size, is no run of the pair
    rows = _reference_rows((120.0, 121.0), (140.0, 141.0)).assign(departs_from=None)
    tied = rows[rows["model"] == "rnn-0"].assign(model="tied", parameters=5000, test_ppl=60.0, departs_from="rnn")
    (same,) = window.at_convergence(pd.concat([tied, rows], ignore_index=True))
    assert same.label == ahead.label and same.tests[0].interval.estimate == pytest.approx(-20.0)
    # one seed a side is no test
    (alone,) = window.at_convergence(_reference_rows((120.0,), (140.0, 141.0)))
    assert alone.verdict == "not shown" and "needs two each" in alone.note


@pytest.mark.parametrize(
    ("steps", "held"),
    [
        # k = 10, 35, 70 at 665 updates each: equal updates
        ({10: 665, 35: 665, 70: 665}, "equal updates"),
        # 23,250 tokens a column: 2,325 updates at k = 10, 664 at 35, 332 at 70 (x k: 23,250, 23,240, 23,240)
        ({10: 2325, 35: 664, 70: 332}, "equal tokens"),
        # neither: 100 x 10 = 1,000 against 300 x 35 = 10,500
        ({10: 100, 35: 300}, ""),
    ],
)
def test_a_truncation_study_is_named_by_what_its_runs_held_equal(steps, held):
    runs = pd.DataFrame(
        [{"bptt": k, "steps": n, "outcome": "learned"} for k, n in steps.items()]
        + [{"bptt": 10, "steps": 7, "outcome": "diverged"}]  # a run that diverged stopped early: not read
    )
    assert held_equal(runs) == held
