"""The appendix "The ablations in detail" (rnnbench.book.ablations_chapter) on small results folders written by hand:
which of its alternative sentences each planted result calls for, and the numbers and short lists its sentences
print."""

from __future__ import annotations

import json
import math

import pandas as pd
from test_ablation_report import distance_rows, plant_clipping, ppl_metrics, write_findings_parts, write_study

from rnnbench.book import ablations_chapter as ac
from rnnbench.book import conditions
from rnnbench.book.format import NONE


def undrawn(root, study, *names):
    """Records of ``study``'s figures that say they draw no point, as a figure rule writes for too little to draw: the
    book shows none of them, and points at the study's table instead."""
    for name in names:
        record = root / "studies" / study / f"{name}.provenance.json"
        record.write_text(json.dumps({"drawn": {"panels": []}}))


# --------------------------------------------------------------------------------------------------------------
# Clipping

# Thresholds set as multiples of the median norm (0.4) of the unclipped run at rate 0.5, seed 1: 0.5 x (0.2,
# ordinary steps), 2 x (0.8, rare spikes) and 4 x (1.6, rare spikes), .inf unclipped; two seeds a cell, each
# (test perplexity or None, share of steps clipped, step it diverged at or None).
CALM = {
    (math.inf, 0.5): [(344.0, 0.0, None), (346.0, 0.0, None)],
    (0.5, 0.5): [(440.0, 1.0, None), (442.0, 1.0, None)],
    (2.0, 0.5): [(345.0, 0.01, None), (347.0, 0.01, None)],
}
# At rate 1 both unclipped seeds diverge (steps 8 and 12), the clipped ones do not; at rate 5 the unclipped seeds
# diverge at steps 3 and 4, and 2 x the median clips 97% of the steps before both diverge: a rare-spike setting
# that clipped as if it were set for ordinary steps.
DIVERGING = {
    (math.inf, 1.0): [(None, 0.0, 8), (None, 0.0, 12)],
    (0.5, 1.0): [(300.0, 1.0, None), (302.0, 1.0, None)],
    (2.0, 1.0): [(290.0, 0.03, None), (292.0, 0.03, None)],
}
AT_RATE_FIVE = {
    (math.inf, 5.0): [(None, 0.0, 3), (None, 0.0, 4)],
    (0.5, 5.0): [(250.0, 1.0, None), (252.0, 1.0, None)],
    (2.0, 5.0): [(None, 0.97, 400), (None, 0.97, 500)],
}


def test_no_unclipped_run_diverged_so_clipping_had_no_divergence_to_stop(tmp_path):
    section = ac.clipping_section("ptb", plant_clipping(tmp_path, CALM))
    assert section.shown and section.relative and not section.divergence.diverged
    assert (section.divergence.count, section.divergence.rates, section.divergence.first) == ("0", "none", NONE)
    assert section.divergence.spikes == "no run (no setting was set to clip rare spikes there)"
    # The design: 0.5 and 2 times the reference's median of 0.4, two seeds a setting, at the one rate
    assert (section.reference_lr, section.reference_seed, section.median) == ("0.5", "1", "0.4")
    assert (section.multiples, section.thresholds, section.rates, section.seeds) == (
        "0.5 and 2",
        "0.2 and 0.8",
        "0.5",
        "2 seeds",
    )
    # At rate 0.5 the rare-spike threshold's 346 against 345 is within the 2% margin, and the ordinary-step one's
    # 441 is 28% worse (tests/test_ablation_report.py works both through)
    assert (section.spike_verdicts, section.every_verdicts) == ("within the margin", "measurably worse")
    assert section.costed  # both thresholds set against the unclipped seeds at rate 0.5
    assert not (section.contradicted or section.idle or section.value_turns or section.traced)
    assert section.contradictions == section.idle_settings == section.turns == "none"


def test_unclipped_divergence_is_counted_at_the_rates_where_it_happened_with_each_regime_beside_it(tmp_path):
    section = ac.clipping_section("ptb", plant_clipping(tmp_path, CALM | DIVERGING))
    divergence = section.divergence
    assert divergence.diverged
    assert (divergence.count, divergence.runs, divergence.rates) == ("2", "2", "rate 1")
    assert (divergence.first, divergence.last) == ("8", "12")
    assert divergence.spikes == "0 of their 2 runs (clipping 3% of the steps)"
    assert divergence.every == "0 of their 2 runs (clipping 100% of the steps)"
    assert not section.contradicted  # 3% at rate 1 is what twice the median is set for


def test_a_setting_that_clipped_against_its_regime_is_named_and_flagged(tmp_path):
    section = ac.clipping_section("ptb", plant_clipping(tmp_path, CALM | DIVERGING | AT_RATE_FIVE))
    assert (section.divergence.count, section.divergence.runs, section.divergence.rates) == ("4", "4", "rates 1 and 5")
    assert (section.divergence.first, section.divergence.last) == ("3", "12")
    # at rates 1 and 5 twice the median is four runs, the two at rate 5 diverged, clipping 3% and 97% of the steps
    assert section.divergence.spikes == "2 of their 4 runs (clipping 3% to 97% of the steps)"
    assert section.contradicted
    assert section.contradictions == "2 × median clipped 97% of the steps at rate 5 (rare spikes)"
    learned = ac.learned(["relative_thresholds"], tmp_path)
    assert learned.failed
    assert learned.where.startswith("in the study of @sec-study-relative-thresholds, 0 of 2 seeds learned at")


def test_a_threshold_that_never_clipped_is_named_as_the_unclipped_run_again(tmp_path):
    idle = {(4.0, 0.5): [(344.0, 0.0, None), (346.0, 0.0, None)]}
    section = ac.clipping_section("ptb", plant_clipping(tmp_path, CALM | idle))
    assert section.idle and section.idle_settings == "norm, 4 × median at rate 0.5"
    assert section.spike_verdicts == "never clipped and within the margin"


def test_element_wise_clipping_states_how_far_it_turned_the_gradient(tmp_path):
    """Value clipping at 0.01 clipped 40% and 60% of its two seeds' steps, their mean cosines 0.8 and 0.9."""
    runs = [
        ("none1", {"clip_mode": "none", "clip": 15, "seed": 1}),
        ("small1", {"clip_mode": "value", "clip": 0.01, "seed": 1}),
        ("small2", {"clip_mode": "value", "clip": 0.01, "seed": 2}),
    ]
    metrics = {
        "none1": ppl_metrics(200.0, 210.0),
        "small1": ppl_metrics(200.0, 210.0) | {"clipped_fraction": 0.4, "clip_cosine_mean": 0.8},
        "small2": ppl_metrics(200.0, 210.0) | {"clipped_fraction": 0.6, "clip_cosine_mean": 0.9},
    }
    about = {"family": "rnn", "corpus": "ptb", "metric": "test_ppl", "vary": ["clip_mode", "clip"]}
    write_study(tmp_path, "clipping_ptb", {**about, "fixed": {"lr": 1.0}, "roles": ["clipping"]}, runs, metrics)
    write_findings_parts(tmp_path, ("clipping_ptb",))
    section = ac.clipping_section("ptb", tmp_path)
    assert section.value_turns and not section.relative
    assert section.turns == "at ±0.01 the mean cosine over the steps it clipped (50% of them) is 0.85 (0.8–0.9)"
    assert section.multiples == section.thresholds == NONE  # no threshold set from a measured norm
    assert not section.costed and section.verdicts == "none"  # no norm threshold to set against them


# --------------------------------------------------------------------------------------------------------------
# Truncation on the agreement corpus


def plant_reach(root, rows=None, outcomes=None):
    """A stream-segment study: full-sentence BPTT 0.9 at every distance; k = 2 0.9 at distances 1-2 and 0.6 at 3-4
    (a drop of 0.3, beyond k above the 0.55 of a model that learned); k = 5 sees every distance, 0.7; no seed of
    k = 20 learned (three runs). ``rows``: bptt -> its accuracy per distance, in place of these."""
    about = {"family": "rnn", "corpus": "agreement", "metric": "agreement_accuracy", "vary": ["bptt"]}
    accuracy = rows or {
        0: [(d, 0.9) for d in (1, 2, 3, 4)],
        2: [(1, 0.9), (2, 0.9), (3, 0.6), (4, 0.6)],
        5: [(d, 0.7) for d in (1, 2, 3, 4)],
        20: [(d, math.nan) for d in (1, 2, 3, 4)],
    }
    runs = [(f"k{k}", {"bptt": k, "seed": 1}) for k in accuracy]
    metrics = {run: {"agreement_accuracy": 0.8} for run, _ in runs}
    folder = write_study(
        root, "truncation_agreement", {**about, "roles": ["truncation_reach"]}, runs, metrics, outcomes
    )
    table = [
        row
        for k, values in accuracy.items()
        for row in (
            distance_rows("bptt", k, values, learned=0, runs=3) if k == 20 else distance_rows("bptt", k, values)
        )
    ]
    pd.DataFrame(table).to_csv(folder / "distance.csv", index=False)
    undrawn(root, "truncation_agreement", "distance-heatmap", "distance-curves")
    return root


def flags(section):
    return {name for name in ("above_chance", "at_chance", "full_not_learned") if getattr(section, name)}


def test_each_length_is_read_as_far_as_it_can_be_and_a_drop_above_chance_is_flagged(tmp_path):
    section = ac.reach_section(plant_reach(tmp_path))
    assert section.shown and flags(section) == {"above_chance"}
    assert section.by_length == (
        "full-sentence BPTT: 0.900 over all distances; k = 2: 0.900 within reach, 0.600 beyond; k = 5: 0.700 "
        "(every distance within reach); k = 20: none of its 3 seeds learned"
    )
    assert (section.drop_low, section.drop_high) == ("0.300", "0.300")
    assert not section.held and section.updates == NONE  # no run recorded its updates


def test_a_drop_to_chance_and_a_full_bptt_that_did_not_learn_are_each_flagged(tmp_path):
    at_chance = {0: [(d, 0.9) for d in (1, 2, 3, 4)], 2: [(1, 0.9), (2, 0.9), (3, 0.5), (4, 0.5)]}
    section = ac.reach_section(plant_reach(tmp_path / "chance", at_chance))
    assert flags(section) == {"at_chance"} and section.drop_high == "0.400"
    unlearned = {0: [(d, 0.54) for d in (1, 2, 3, 4)], 2: [(1, 0.9), (2, 0.9), (3, 0.5), (4, 0.5)]}
    section = ac.reach_section(plant_reach(tmp_path / "full", unlearned))
    assert flags(section) == {"full_not_learned"} and section.drop_low == NONE


def test_no_length_with_distances_beyond_it_says_nothing_of_a_drop(tmp_path):
    section = ac.reach_section(plant_reach(tmp_path, {0: [(d, 0.9) for d in (1, 2)], 5: [(d, 0.7) for d in (1, 2)]}))
    assert section.shown and flags(section) == set()
    assert section.drop_low == section.drop_high == NONE


def test_the_seeds_that_did_not_learn_are_counted_per_setting_or_per_study(tmp_path):
    plant_reach(tmp_path, outcomes={"k20": "did not learn"})
    learned = ac.learned(["truncation_agreement"], tmp_path)
    assert learned.failed
    assert learned.where == "in the study of @sec-study-truncation-agreement, 0 of 1 seeds learned at `bptt` = 20"
    every = {run: "diverged" for run in ("k0", "k2", "k5")} | {"k20": "did not learn"}
    plant_reach(tmp_path / "none", outcomes=every)
    assert ac.learned(["truncation_agreement"], tmp_path / "none").where == (
        "in the study of @sec-study-truncation-agreement no seed learned at any of its 4 settings (4 runs, 3 diverged)"
    )
    assert ac.learned([], tmp_path) == ac.Learned(False, NONE)


# --------------------------------------------------------------------------------------------------------------
# Stuck columns


def test_a_seed_whose_test_perplexity_is_one_columns_doing_is_named_with_its_numbers(tmp_path):
    """Seed 2 at bptt 35: its worst test column at 950, 100 times the median column's 9.5."""
    runs = [("t35-1", {"bptt": 35, "seed": 1}), ("t35-2", {"bptt": 35, "seed": 2})]
    metrics = {
        "t35-1": ppl_metrics(20.0, 20.5) | {"test_column_worst": 24.0, "test_column_median": 19.0},
        "t35-2": ppl_metrics(19.0, 19.5) | {"test_column_worst": 950.0, "test_column_median": 9.5},
    }
    about = {"family": "rnn", "corpus": "ptb", "metric": "test_ppl", "vary": ["bptt"], "roles": ["truncation_cost"]}
    write_study(tmp_path, "truncation_ptb", about, runs, metrics)
    stuck = ac.stuck(["truncation_ptb"], tmp_path)
    assert stuck.shown and stuck.seeds == "1 seed"
    assert stuck.each == (
        "bptt = 35, seed 2 (@sec-study-truncation-ptb): its worst test column at perplexity 950 against a median "
        "column at 9.5, which puts its test perplexity at 19 (validation 19.5)"
    )
    metrics["t35-2"]["test_column_worst"] = 40.0  # 4.2 times the median: not stuck
    write_study(tmp_path / "calm", "truncation_ptb", about, runs, metrics)
    assert ac.stuck(["truncation_ptb"], tmp_path / "calm") == ac.Stuck(False, "0 seeds", NONE)


# --------------------------------------------------------------------------------------------------------------
# Windows against recurrences


def plant_windows(root, window_near=(1.0, 0.98)):
    """A window of n-1 = 2 (34,521 parameters) beside the RNN of H = 60 (34,689), one seed each: the window scores
    ``window_near`` at distances 1-2 and 0.5, 0.4 at 3-4; the RNN 1.0, 0.98 and 0.8, 0.8. A noun between head and verb
    has the other number one time in four; the nearest-noun rule is right at 1-2 and scores 0.75 (30 probes) and 0.65
    (10) at 3-4, 0.725 beyond the window."""
    base = {"corpus": "agreement", "metric": "agreement_accuracy"}
    ff = write_study(
        root,
        "window_agreement",
        {**base, "family": "ff", "vary": ["context"], "fixed": {"corpus_options": {"attractor_prob": 0.25}}}
        | {"roles": ["window"]},
        [("f2", {"context": 2, "seed": 1})],
        {"f2": {"parameters": 34_521, "agreement_accuracy": 0.7}},
    )
    rnn = write_study(
        root,
        "recurrence_agreement",
        {**base, "family": "rnn", "vary": ["hidden"], "fixed": {}, "roles": ["recurrence"]},
        [("r60", {"hidden": 60, "seed": 1}), ("r115", {"hidden": 115, "seed": 1})],
        {"r60": {"parameters": 34_689}, "r115": {"parameters": 63_344}},
    )
    near = [(1, window_near[0]), (2, window_near[1])]
    pd.DataFrame(distance_rows("context", 2, [*near, (3, 0.5), (4, 0.4)])).to_csv(ff / "distance.csv", index=False)
    rows = distance_rows("hidden", 60, [(1, 1.0), (2, 0.98), (3, 0.8), (4, 0.8)])
    pd.DataFrame(rows + distance_rows("hidden", 115, [(1, 1.0)])).to_csv(rnn / "distance.csv", index=False)
    for study in ("window_agreement", "recurrence_agreement"):
        undrawn(root, study, "distance-heatmap", "distance-curves")
    options = {"attractor_prob": 0.25}
    (root / "runs" / "f2").mkdir(parents=True)
    (root / "runs" / "f2" / "config.json").write_text(
        json.dumps({"corpus": "agreement", "corpus_options": options, "lr": 0.003, "max_epochs": 3})
    )
    from rnnbench import paths

    rule = [(1, 1.0, 10), (2, 1.0, 10), (3, 0.75, 30), (4, 0.65, 10)]
    (root / "tables").mkdir()
    pd.DataFrame(
        [
            {"corpus_key": paths.corpus_key("agreement", options), "split": "test", "distance": d}
            | {"heuristic": "nearest_noun", "accuracy": a, "n": n}
            for d, a, n in rule
        ]
    ).to_csv(root / "tables" / "agreement_baselines.csv", index=False)
    return root


WINDOW_FLAGS = ("within", "under", "beyond", "nothing_compared", "recurrence_not_learned", "informs", "judged")


def window_flags(section):
    return {name for name in (*WINDOW_FLAGS, "compared") if getattr(section, name)}


def test_a_window_trained_to_what_it_sees_is_compared_with_its_recurrence_beyond_its_width(tmp_path):
    section = ac.windows_section(plant_windows(tmp_path))
    assert section.shown and not section.recipes  # the recurrence's run has no config.json to read its recipe from
    assert section.window_recipe == "3 epochs at Adam's rate 0.003" and section.recurrence_recipe == NONE
    assert window_flags(section) == {"within", "beyond", "informs", "judged", "compared"}
    # within n-1 = 2: (1.0 + 0.98) / 2 = 0.99 against the rule's 1.0, inside the 0.02 margin
    assert section.within_scores == "$n-1$ = 2: 0.990 against 1.000"
    assert section.pairs == "$n-1$ = 2: window 0.990 / 0.450, RNN ($H$ = 60) 0.990 / 0.800"
    assert (section.keep_prob, section.attractor_prob, section.rule_beyond) == (
        "0.75",
        "0.25",
        "0.725 beyond $n-1$ = 2",
    )
    # beyond its width the window's 0.45 is below the rule's 0.725 and the 0.55 of a model that learned, and the
    # RNN's 0.8 beats it
    assert (section.below_rule, section.judged_count) == ("1", "1")
    assert (section.near_chance, section.compared_count, section.recurrence_better) == ("1", "1", "1")
    assert section.window_see == "@tbl-study-window-agreement"  # no distance figure drawn here: the study's table


def test_a_window_under_the_nearest_noun_rule_within_its_width_is_not_compared(tmp_path):
    # 1.0 and 0.9 at distances 1-2: 0.95 within, 0.05 below the rule: under-trained, so nothing is compared
    section = ac.windows_section(plant_windows(tmp_path, window_near=(1.0, 0.9)))
    assert window_flags(section) == {"within", "under", "beyond", "nothing_compared", "informs", "judged"}
    assert (section.under_count, section.within_count, section.margin) == ("1", "1", "0.02")
    assert section.compared_count == section.recurrence_better == "0"


# --------------------------------------------------------------------------------------------------------------
# The appendix without its studies


def test_without_an_ablation_study_every_section_says_so_and_nothing_fails(tmp_path):
    (tmp_path / "studies").mkdir()
    chapter = ac.chapter(tmp_path)
    sections = [
        chapter.clipping_ptb,
        chapter.clipping_agreement,
        chapter.truncation_ptb,
        chapter.reach,
        chapter.cuts,
        chapter.windows,
    ]
    assert not any(s.shown for s in sections)
    assert not (chapter.recipe.clipped or chapter.update.measured)
    assert not (chapter.truncation_ptb.values.equal_tokens or chapter.truncation_ptb.values.ranked_tokens)
    assert chapter.reach.by_length == chapter.windows.pairs == chapter.recipe.tally == NONE
    block = conditions.metadata("ablations", chapter)
    assert "  clipping_ptb:\n    shown: false\n" in block and "  windows:\n    shown: false\n" in block
    assert (chapter.level, chapter.chance, chapter.learned_floor, chapter.spikes_below) == ("95%", "0.5", "0.55", "10%")
    assert ac.norm_traces("ptb", tmp_path) == ac.update_figures(tmp_path) == ac.cut_contrast(tmp_path) == ""
    assert ac.distance_figures("windows", tmp_path) == ""
