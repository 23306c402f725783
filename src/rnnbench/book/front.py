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
from rnnbench.book import answers, context, decay
from rnnbench.book import truncation_chapter as tc
from rnnbench.book.clipping import clipping_table
from rnnbench.book.clipping_chapter import relative_studies
from rnnbench.book.clipping_outcomes import divergence_by_regime, unclipped_divergence
from rnnbench.book.format import Markdown, between, fixed, sig, words
from rnnbench.findings.registry import FAILS, HOLDS
from rnnbench.metrics import CLIP_SPIKES, METRIC_LABELS
from rnnbench.plots.ablation_figures import CHANCE


@dataclass(frozen=True)
class WindowAnswer:
    """Does more context keep helping the window? The Penn Treebank's window study, and the agreement windows."""

    limited: bool  # the best width is narrower than the widest measured
    gain_holds: bool  # the widening claim's gain part on that study: the widest gains nothing measurable over the next
    gain_fails: bool  # it still gains measurably
    gain_undecided: bool  # the seeds cannot tell
    narrow_ppl: Markdown
    best_width: Markdown
    best_ppl: Markdown
    widest_width: Markdown
    widest_ppl: Markdown
    next_ppl: Markdown
    blind_low: Markdown  # how much less accurately a window reads a head past its width than inside it
    blind_high: Markdown


def window_answer(results: str | Path | None = None) -> WindowAnswer:
    ptb, blind = context.widening("ptb", results), context.blind_windows(results)
    widening = answers.Answers(results).parts("widening_not_fix")
    gain = widening[(widening["aspect"] == "gain") & widening.index.str.startswith(ptb.study)]["verdict"]
    verdict = gain.iloc[0] if len(gain) else ""
    (_, narrow_ppl), (best_w, best_ppl) = ptb.narrowest, ptb.best
    (widest_w, widest_ppl), (_, next_ppl) = ptb.widest, ptb.next_widest
    return WindowAnswer(
        limited=best_w < widest_w,
        gain_holds=verdict == HOLDS,
        gain_fails=verdict == FAILS,
        gain_undecided=verdict not in (HOLDS, FAILS),
        narrow_ppl=sig(narrow_ppl),
        best_width=Markdown(str(best_w)),
        best_ppl=sig(best_ppl),
        widest_width=Markdown(str(widest_w)),
        widest_ppl=fixed(widest_ppl, 1),
        next_ppl=fixed(next_ppl, 1),
        blind_low=fixed(blind.smallest_fall, 2),
        blind_high=fixed(blind.largest_fall, 2),
    )


@dataclass(frozen=True)
class GradientAnswer:
    """Do gradients vanish and explode? Every trained network whose U has every eigenvalue's modulus above one."""

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
        all_vanish=vanishing == len(above),
        some_vanish=0 < vanishing < len(above),
        none_vanish=vanishing == 0 and len(above) > 0,
        radii=between(above["rho_min"].min(), above["rho_max"].max(), sig),
        factors=between(math.exp(above["rate_min"].min()), math.exp(above["rate_max"].max()), sig),
    )


@dataclass(frozen=True)
class ClippingAnswer:
    helped: bool  # thresholds that clip rare spikes diverged in a smaller share of runs than unclipped SGD


def clipping_answer(results: str | Path | None = None) -> ClippingAnswer:
    runs = clipping_table(relative_studies(results), results)
    spikes, unclipped = divergence_by_regime(runs).get(CLIP_SPIKES), unclipped_divergence(runs)
    return ClippingAnswer(
        helped=bool(spikes and unclipped.runs and spikes.diverged / spikes.runs < unclipped.diverged / unclipped.runs)
    )


@dataclass(frozen=True)
class TruncationAnswer:
    across_learned: bool  # across a cut every length still reads the head above a learned model's floor
    longer_faster: bool  # on PTB the longest unrolling read more tokens a second than the shortest
    across: Markdown  # the cut runs' accuracy across a cut, lowest to highest over the lengths
    gap: Markdown  # and how much lower than within a block
    chance: Markdown
    memory_share: Markdown


def truncation_answer(results: str | Path | None = None) -> TruncationAnswer:
    cuts, facts = tc.cut_numbers("sentence cuts", results), tc.ptb_facts(results)
    return TruncationAnswer(
        across_learned=cuts.across_learned,
        longer_faster=facts.longer_faster,
        across=tc.accuracy_range(cuts.across_low, cuts.across_high),
        gap=tc.accuracy_range(cuts.cut_gap_low, cuts.cut_gap_high),
        chance=sig(CHANCE),
        memory_share=facts.memory_share,
    )


@dataclass(frozen=True)
class ActivationAnswer:
    same_best: bool  # one activation is best on every activation study with a run that learned
    best: Markdown  # each study's best setting and its metric
    diverged: Markdown  # the activations whose runs diverged, per study


def activation_answer(results: str | Path | None = None) -> ActivationAnswer:
    runs = act.runs(results)
    studies = [s for s in (act.study_of(runs, None), act.study_of(runs, act.AGREEMENT)) if s]
    # a study none of whose runs learned has no best, and is left out of the comparison
    bests = [(s, b) for s in studies if (b := answers.best_activation(runs, s))]
    best = [
        f"on {act.corpus_name(runs, s)}, {a} from the {start} start "
        f"({METRIC_LABELS[act.setting(runs, s, a, start).metric]} {sig(value)})"
        for s, (a, start, value) in bests
    ]
    diverged = []
    for study in studies:
        for activation in sorted(set(runs.loc[runs["study"] == study, "activation"])):
            settings = [act.setting(runs, study, activation, start) for start in act.starts(runs)]
            failed, total = sum(s.diverged for s in settings), sum(s.runs for s in settings)
            if failed:
                diverged.append(f"{activation} diverged in {failed} of {total} runs on {act.corpus_name(runs, study)}")
    return ActivationAnswer(
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
    gradients: GradientAnswer
    clipping: ClippingAnswer
    truncation: TruncationAnswer
    activation: ActivationAnswer
    passage: PassagePlace


def front_page(results: str | Path | None = None) -> FrontPage:
    return FrontPage(
        window=window_answer(results),
        gradients=gradient_answer(results),
        clipping=clipping_answer(results),
        truncation=truncation_answer(results),
        activation=activation_answer(results),
        passage=passage_place(results),
    )
