"""The values of the front chapter's six answers (reports/answers.qmd), and which of its alternative sentences the
results call for (rnnbench.book.conditions): the chapter holds every sentence; this module decides, from the
results, which one is true.

    front_page(results)   FrontPage: one value object per question, and where the chapter's passage puts its word

Reads results only; no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rnnbench.book import activation as act
from rnnbench.book import answers, decay, published
from rnnbench.book import truncation_chapter as tc
from rnnbench.book.clipping import clipping_table
from rnnbench.book.clipping_chapter import relative_studies
from rnnbench.book.clipping_outcomes import divergence_by_rate, divergence_by_regime, unclipped_divergence
from rnnbench.book.context_chapter import WindowSection, window_section
from rnnbench.book.format import Markdown, between, sig, words
from rnnbench.book.window import window_comparison
from rnnbench.findings.registry import FAILS, HOLDS, INCONCLUSIVE, NOT_SHOWN
from rnnbench.findings.setting_words import word
from rnnbench.metrics import CLIP_SPIKES, METRIC_LABELS
from rnnbench.plots.ablation_figures import CHANCE


@dataclass(frozen=True)
class WindowAnswer:
    """Does more context keep helping the window? The window section's numbers (rnnbench.book.context_chapter), and
    the verdict of the widening claim's gain part on the Penn Treebank's study."""

    section: WindowSection
    gain_holds: bool  # the widest gains nothing measurable over the next
    gain_fails: bool  # it still gains measurably
    gain_undecided: bool  # the seeds cannot tell


def window_answer(results: str | Path | None = None) -> WindowAnswer:
    section = window_section(results)
    widening = answers.Answers(results).parts("widening_not_fix")
    study = section.ptb_study or "-"
    of_study = widening["source"] == study if "source" in widening else widening.index.str.startswith(study)
    gain = widening[(widening["aspect"] == "gain") & of_study]["verdict"]
    verdict = gain.iloc[0] if len(gain) else ""
    return WindowAnswer(
        section=section,
        gain_holds=verdict == HOLDS,
        gain_fails=verdict == FAILS,
        gain_undecided=verdict not in (HOLDS, FAILS),
    )


@dataclass(frozen=True)
class MatchedAnswer:
    """Does the recurrence beat a window of the same size? Whether each corpus has a pair to read."""

    ptb_measured: bool  # a feed-forward model of the Penn Treebank has an Elman RNN matched to its size
    converged_measured: bool  # ... among the runs trained to convergence
    short_measured: bool  # ... among the default run's short runs
    agreement_measured: bool  # an agreement window has a recurrence of its size, both read past the width
    overtaken: bool  # the window leads at every matched width after short training, the recurrence at convergence
    agreement_tested: bool  # the verdict tests some agreement pair on accuracy over every distance
    agreement_sizes: Markdown  # "3 of the 3": pairs where that accuracy is measurably higher, of those tested


def matched_answer(results: str | Path | None = None) -> MatchedAnswer:
    cross = published.crossover(results)
    windows = window_comparison(results)
    converged = cross is not None and cross.converged.spanned > 0
    short = cross is not None and cross.short.spanned > 0
    pairs = answers.Answers(results).parts("recurrence_beats_window")
    named = windows is not None and "source" in pairs  # a part names the study it reads (findings_parts' source)
    of_agreement = pairs[pairs["source"].eq(windows.windows)] if named else pairs.iloc[0:0]
    tested = of_agreement[of_agreement["verdict"].isin((HOLDS, FAILS, INCONCLUSIVE))]
    return MatchedAnswer(
        agreement_tested=len(tested) > 0,
        agreement_sizes=Markdown(f"{int((tested['verdict'] == HOLDS).sum())} of the {len(tested)}"),
        ptb_measured=converged or short,
        converged_measured=converged,
        short_measured=short,
        agreement_measured=windows is not None and len(windows.compared) > 0,
        overtaken=converged and short and cross.converged.advantage > 0 and cross.short.rnn_lower == 0,
    )


@dataclass(frozen=True)
class GradientAnswer:
    """Do gradients vanish and explode? Every trained network whose U has every eigenvalue's modulus above one."""

    measured: bool  # some trained network has every eigenvalue's modulus above one
    all_vanish: bool  # the gradient still shrinks in every one of them
    some_vanish: bool
    none_vanish: bool
    radii: Markdown  # their spectral radii, lowest to highest
    factors: Markdown  # their gradients' per-step factors


def gradient_answer(results: str | Path | None = None) -> GradientAnswer:
    trained = decay.trained_summary(decay.trained_rates(results), results)
    above = trained[trained["rho_min"] > 1]
    vanishing = int((above["rate_max"] < 0).sum())
    return GradientAnswer(
        measured=len(above) > 0,
        all_vanish=vanishing == len(above),
        some_vanish=0 < vanishing < len(above),
        none_vanish=vanishing == 0 and len(above) > 0,
        radii=between(above["rho_min"].min(), above["rho_max"].max(), sig),
        factors=between(math.exp(above["rate_min"].min()), math.exp(above["rate_max"].max()), sig),
    )


@dataclass(frozen=True)
class ClippingAnswer:
    """Does clipping help, and what does it cost? At each rate where unclipped SGD blew up, its runs that blew up
    against those of each threshold set to clip rare spikes; the divergence claim's reading chooses the first words."""

    prevents: bool  # the claim that clipping is a remedy for divergence holds
    prevents_in_part: bool  # it holds at some rates, fails or is undecided at others
    prevents_undecided: bool  # no rate decides it (or no rate could test it)
    prevents_fails: bool  # it fails, at every rate tested or in part with the rest undecided
    spikes_tried: bool  # some unclipped rate diverged and a threshold clipping rare spikes ran there
    spikes_learned: bool  # and a seed of such a threshold learned there
    unclipped_trained: bool  # some rate at which unclipped SGD learned, where a threshold's cost can be read
    by_rate: Markdown  # runs that blew up: "at rate 1, 5 of 5 unclipped and 0 of 5 clipped at 2 × median; at ..."


def divergence_by_rate_words(table) -> Markdown:
    """At each rate where an unclipped run blew up (diverged, or ended above the unigram model's perplexity), its
    runs that blew up against each rare-spike threshold's there: "at rate 1, 5 of 5 unclipped and 0 of 5 clipped at
    2 × median; at rate 5, 5 of 5 and 5 of 5". A rate after the first names a threshold only where it differs from
    the first rate's."""
    said, first = [], None
    for at in divergence_by_rate(table):
        spikes = [c for c in at.clipped if c.regime == CLIP_SPIKES]
        if not (at.unclipped_blown and spikes):
            continue
        names = [c.clipping.removeprefix("norm, ") for c in spikes]
        if first is None or names != first:
            clipped = words(f"{c.blown} of {c.runs} clipped at {n}" for c, n in zip(spikes, names, strict=True))
            said.append(f"at rate {at.lr:g}, {at.unclipped_blown} of {at.unclipped_runs} unclipped and {clipped}")
            first = first or names
        else:
            clipped = words(f"{c.blown} of {c.runs}" for c in spikes)
            said.append(f"at rate {at.lr:g}, {at.unclipped_blown} of {at.unclipped_runs} and {clipped}")
    return Markdown("; ".join(said)) if said else Markdown("no rate")


def clipping_answer(results: str | Path | None = None) -> ClippingAnswer:
    runs = clipping_table(relative_studies(results), results)
    spikes, unclipped = divergence_by_regime(runs).get(CLIP_SPIKES), unclipped_divergence(runs)
    at_divergence = runs[(runs["regime"] == CLIP_SPIKES) & runs["lr"].isin(unclipped.rates)]
    reading = answers.Answers(results).reading("clip_divergence")
    return ClippingAnswer(
        prevents=reading == HOLDS,
        prevents_in_part=reading in (answers.MIXED, answers.PARTLY_DECIDED),
        prevents_undecided=reading in (INCONCLUSIVE, NOT_SHOWN),
        prevents_fails=reading in (FAILS, answers.PARTLY_REFUTED),
        spikes_tried=bool(spikes and unclipped.blown),
        spikes_learned=bool(unclipped.diverged and (at_divergence["seeds_learned"] > 0).any()),
        unclipped_trained=bool(
            (runs["unclipped"] & (runs["seeds_learned"] > 0) & ~runs["lr"].isin(unclipped.rates)).any()
        ),
        by_rate=divergence_by_rate_words(runs),
    )


@dataclass(frozen=True)
class TruncationAnswer:
    across_measured: bool  # some cut run has an accuracy across a cut
    ptb_measured: bool  # the Penn Treebank's truncation design has a length to set against another
    across_learned: bool  # across a cut every length still reads the head above a learned model's floor
    above_rule: bool  # across a cut, at every length every seed scores higher than the nearest-noun rule there
    mean_above_rule: bool  # where some seed does not, the seeds' mean does at every length
    # the reading of the chapter's claim that training cannot see across a cut: the answer's first words
    harm_holds: bool
    harm_in_part: bool
    harm_undecided: bool
    harm_fails: bool
    rule_measured: bool  # the nearest-noun rule's accuracy across a cut is known at some length
    longer_faster: bool  # on PTB the longest unrolling read more tokens a CPU second than the shortest
    across: Markdown  # the cut runs' accuracy across a cut, lowest to highest over the lengths
    gap: Markdown  # and how much lower than within a block
    full_across: Markdown  # full BPTT's accuracy on the same verbs
    chance: Markdown
    rule: Markdown  # the nearest-noun rule's accuracy at the distances of the probes across a cut, over the lengths
    memory_share: Markdown
    design: Markdown  # what the PTB design those two come from holds equal


def truncation_answer(results: str | Path | None = None) -> TruncationAnswer:
    cuts, facts = tc.cut_numbers("sentence cuts", results), tc.ptb_facts(results)
    reading = answers.Answers(results).reading("truncation_invisible")
    return TruncationAnswer(
        harm_holds=reading == HOLDS,
        harm_in_part=reading in (answers.MIXED, answers.PARTLY_DECIDED),
        harm_undecided=reading in (INCONCLUSIVE, NOT_SHOWN),
        harm_fails=reading in (FAILS, answers.PARTLY_REFUTED),
        across_measured=math.isfinite(cuts.across_low),
        ptb_measured=facts.measured,
        across_learned=cuts.across_learned,
        above_rule=cuts.rule_lengths > 0 and cuts.above_rule == cuts.rule_lengths,
        mean_above_rule=cuts.rule_lengths > 0 and cuts.mean_above_rule == cuts.rule_lengths,
        rule_measured=cuts.rule_lengths > 0,
        longer_faster=facts.longer_faster,
        across=tc.accuracy_range(cuts.across_low, cuts.across_high),
        gap=tc.accuracy_range(cuts.cut_gap_low, cuts.cut_gap_high),
        full_across=tc.accuracy_range(cuts.full_across_low, cuts.full_across_high),
        chance=sig(CHANCE),
        rule=tc.accuracy_range(cuts.rule_low, cuts.rule_high),
        memory_share=facts.memory_share,
        design=facts.design,
    )


@dataclass(frozen=True)
class ActivationAnswer:
    measured: bool  # some activation study has a run that learned
    same_best: bool  # one activation is best on every activation study with a run that learned
    best: Markdown  # each study's best setting and its metric
    diverged: Markdown  # the activations whose runs diverged, per study


def activation_answer(results: str | Path | None = None) -> ActivationAnswer:
    runs = act.runs(results)
    studies = [s for s in (act.study_of(runs, None), act.study_of(runs, act.AGREEMENT)) if s]
    # a study none of whose runs learned has no best, and is left out of the comparison
    bests = [(s, b) for s in studies if (b := answers.best_activation(runs, s))]
    best = [
        f"on {act.corpus_name(runs, s)}, {word('activation', a)} from the {word('recurrent_init', start)} "
        f"({METRIC_LABELS[act.setting(runs, s, a, start).metric]} {sig(value)})"
        for s, (a, start, value) in bests
    ]
    diverged = []
    for study in studies:
        for activation in sorted(set(runs.loc[runs["study"] == study, "activation"])):
            settings = [act.setting(runs, study, activation, start) for start in act.starts(runs)]
            failed, total = sum(s.diverged for s in settings), sum(s.runs for s in settings)
            if failed:
                said = word("activation", activation)
                diverged.append(f"{said} diverged in {failed} of {total} runs on {act.corpus_name(runs, study)}")
    return ActivationAnswer(
        measured=bool(bests),
        same_best=len({a for _, (a, _, _) in bests}) == 1,
        best=words(best) or Markdown("none: no run of an activation study learned"),
        diverged=words(diverged) or Markdown("no run diverged"),
    )


@dataclass(frozen=True)
class PassagePlace:
    """Where the passage analysis puts the chapter's evidence word, against the chapter's own distance."""

    unmeasured: bool
    as_the_chapter: bool
    nearer: bool
    farther: bool


def passage_place(results: str | Path | None = None) -> PassagePlace:
    distance = answers.passage_distance(results)
    return PassagePlace(
        unmeasured=distance is None,
        as_the_chapter=distance == decay.PASSAGE_WORDS,
        nearer=distance is not None and distance < decay.PASSAGE_WORDS,
        farther=distance is not None and distance > decay.PASSAGE_WORDS,
    )


@dataclass(frozen=True)
class FrontPage:
    window: WindowAnswer
    matched: MatchedAnswer
    gradients: GradientAnswer
    clipping: ClippingAnswer
    truncation: TruncationAnswer
    activation: ActivationAnswer
    passage: PassagePlace


def front_page(results: str | Path | None = None) -> FrontPage:
    return FrontPage(
        window=window_answer(results),
        matched=matched_answer(results),
        gradients=gradient_answer(results),
        clipping=clipping_answer(results),
        truncation=truncation_answer(results),
        activation=activation_answer(results),
        passage=passage_place(results),
    )
