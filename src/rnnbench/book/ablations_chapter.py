"""The values of the appendix "The ablations in detail" (reports/ablations.qmd), and which of its alternative
sentences the results call for (rnnbench.book.conditions).

    chapter()             Ablations: each section's values and flags, and the constants its sentences state
    clipping_section()    a corpus's clipping studies: thresholds set from a measured norm, divergence and cost by
                          regime (rnnbench.book.clipping_outcomes), element-wise clipping's turn, the two tables
    recipe_section(), truncation_ptb(), update_section(), reach_section(), cuts_section()
                          the other studies' recipe clipping; the PTB truncation designs; Adam's update turn; accuracy
                          within and beyond each truncation length; within a gradient block against across a cut
    norm_traces(), update_figures(), distance_figures(), cut_contrast()
                          the figures whose number the results decide, as Markdown

The windows' section is rnnbench.book.window.windows_section, the seeds a section names (not learned, a stuck test
column) rnnbench.book.studies.learned and .stuck. Values are formatted (NONE where the results give none); flags
nest as the sections do, named ``ablations.<section>.<flag>`` in the chapter. Short lists ("k = 2: 0.850 within
reach, ...") are one value each; the sentences are the chapter's. No torch.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rnnbench.book import clipping as clip_values
from rnnbench.book import clipping_outcomes as outcomes_of
from rnnbench.book import recipe_clipping
from rnnbench.book import studies as ab
from rnnbench.book import truncation as tv
from rnnbench.book.figures import STAGING_DIR
from rnnbench.book.format import (
    NONE,
    Markdown,
    between,
    counted,
    fixed,
    integer,
    label_slug,
    markdown_table,
    percent,
    share,
    sig,
    words,
)
from rnnbench.book.studies import Learned, Stuck, learned, stuck
from rnnbench.book.window import WindowsSection, window_studies, windows_section
from rnnbench.findings.policy import LEVEL
from rnnbench.metrics import CLIP_ORDINARY, CLIP_SPIKES, CLIP_SPIKES_BELOW
from rnnbench.plots.ablation_figures import CHANCE
from rnnbench.training.stuck_columns import STUCK_SPREAD

NOTHING = Markdown("none")  # an empty list, in a sentence that names what is in it


def _nothing(kind: type):
    """A section of ``kind`` whose study has no results here: every flag off, every value NONE, no seed named."""
    hints = typing.get_type_hints(kind)
    blank = {bool: False, Markdown: NONE, str: "", Learned: Learned(False, NONE)}
    return kind(**{f.name: blank[hints[f.name]] for f in dataclasses.fields(kind)})


# --------------------------------------------------------------------------------------------------------------
# Clipping


@dataclass(frozen=True)
class Divergence:
    """The unclipped runs at the rates where some diverged (rnnbench.book.clipping_outcomes.unclipped_divergence),
    and there, the runs of each regime's settings."""

    diverged: bool  # some unclipped run diverged
    count: Markdown  # how many of the unclipped runs at those rates diverged
    runs: Markdown  # of
    rates: Markdown  # "rate 1" / "rates 1 and 5"
    first: Markdown  # the earliest and latest step one diverged at
    last: Markdown
    spikes: Markdown  # "0 of their 6 runs (clipping 0.26% to 2% of the steps)", of the rare-spike settings there
    every: Markdown  # the same of the settings at or below the median (ordinary steps)


def _divergence(found: outcomes_of.Outcomes) -> Divergence:
    unclipped = found.unclipped
    rates = [f"{r:g}" for r in unclipped.rates]
    return Divergence(
        diverged=bool(unclipped.diverged),
        count=integer(unclipped.diverged),
        runs=integer(unclipped.runs),
        rates=Markdown(("rate " if len(rates) == 1 else "rates ") + words(rates)) if rates else NOTHING,
        first=integer(unclipped.first_step) if math.isfinite(unclipped.first_step) else NONE,
        last=integer(unclipped.last_step) if math.isfinite(unclipped.last_step) else NONE,
        spikes=_regime_runs(found, CLIP_SPIKES, "clip rare spikes"),
        every=_regime_runs(found, CLIP_ORDINARY, "clip ordinary steps"),
    )


def _regime_runs(found: outcomes_of.Outcomes, regime: str, set_to: str) -> Markdown:
    at = found.at_divergence.get(regime)
    if at is None:
        return Markdown(f"no run (no setting was set to {set_to} there)")
    clipped = between(at.share_min, at.share_max, share)
    return Markdown(f"{integer(at.diverged)} of their {integer(at.runs)} runs (clipping {clipped} of the steps)")


@dataclass(frozen=True, eq=False)
class ClippingSection:
    """A corpus's clipping studies (rnnbench.book.clipping.section), as its section states them."""

    shown: bool  # a study with the clipping role has results for the corpus
    relative: bool  # some of its norm thresholds are multiples of a measured median norm
    traced: bool  # a norm trace is shown
    contradicted: bool  # some setting's share of steps clipped contradicts its regime
    idle: bool  # some clipping setting clipped no step
    value_turns: bool  # some element-wise threshold clipped a step of a run that learned
    costed: bool  # some norm threshold was set against unclipped seeds at its rate
    divergence: Divergence
    stuck: Stuck
    learned: Learned
    traces: Markdown  # the norm traces, as references
    # the thresholds set from a measured norm (rnnbench.book.clipping.relative_thresholds)
    reference_lr: Markdown
    reference_seed: Markdown
    median: Markdown
    multiples: Markdown
    thresholds: Markdown
    rates: Markdown
    seeds: Markdown  # "3 seeds", per setting
    contradictions: Markdown  # "5 × median clipped 25% of the steps at rate 0.5 (rare spikes)"; ...
    # cost, at the rates where no unclipped run diverged
    spike_verdicts: Markdown
    every_verdicts: Markdown
    verdicts: Markdown  # of every threshold judged
    idle_settings: Markdown
    turns: Markdown  # "at ±0.001 the mean cosine over the steps it clipped (25% of them) is 0.9"
    # the settings at a glance (the agreement section's sentence)
    optimizers: Markdown
    all_rates: Markdown
    clip_thresholds: Markdown  # the norm thresholds of the clipped settings
    clip_shares: Markdown  # the lowest and highest share of steps they clipped
    regimes: Markdown
    # the tables
    table: pd.DataFrame  # rnnbench.book.clipping.clipping_display
    cost: pd.DataFrame  # rnnbench.book.clipping_outcomes.cost_display
    align: dict[str, str] = field(default_factory=dict)  # the columns the table sets right


def clipping_section(corpus: str, results: str | Path | None = None) -> ClippingSection:
    found = outcomes_of.outcomes(corpus, results)
    section = found.section
    studies = section.studies if section else ()
    verdicts = {
        regime: sorted({t.verdict for _, t in outcomes_of.costs_in(found.costs, regime)})
        for regime in (CLIP_SPIKES, CLIP_ORDINARY)
    }
    idle = clip_values.idle_settings(section.table) if section else None
    turns = clip_values.value_clipping_turns(section.table) if section else pd.DataFrame()
    contradictions = [
        f"{m:g} × median clipped "
        + words(f"{share(r.share)} of the steps at rate {r.lr:g} ({r.regime})" for r in rows.itertuples())
        for m, rows in found.contradicted.groupby("clip_times_median", sort=True)
    ]
    return ClippingSection(
        shown=section is not None,
        relative=found.relative is not None,
        traced=bool(section and section.traced),
        contradicted=bool(contradictions),
        idle=idle is not None,
        value_turns=len(turns) > 0,
        costed=any(c.thresholds for c in found.costs),
        divergence=_divergence(found),
        stuck=stuck(studies, results),
        learned=learned(studies, results),
        traces=words(f"@fig-{label_slug(s)}-norm-trace" for s in section.traced) or NONE if section else NONE,
        **_relative(found.relative),
        contradictions=Markdown("; ".join(contradictions)) if contradictions else NOTHING,
        spike_verdicts=words(verdicts[CLIP_SPIKES]) or NOTHING,
        every_verdicts=words(verdicts[CLIP_ORDINARY]) or NOTHING,
        verdicts=words(sorted({t.verdict for c in found.costs for t in c.thresholds})) or NOTHING,
        idle_settings=words(idle.settings) if idle else NOTHING,
        turns=words(
            f"at ±{r.clip:g} the mean cosine over the steps it clipped ({share(r.clipped_share)} of them) is "
            f"{ab.spread(r.cosine_mean, r.cosine_min, r.cosine_max, 4)}"
            for r in turns.itertuples()
        )
        or NOTHING,
        **_at_a_glance(section),
        table=clip_values.clipping_display(section) if section else pd.DataFrame(columns=["clipping"]),
        cost=outcomes_of.cost_display(found),
        align={section.metric_name: "right", "learned": "right", "diverged": "right"} if section else {},
    )


def _relative(relative: clip_values.RelativeThresholds | None) -> dict[str, Markdown]:
    """The design of thresholds set from a measured norm, as the section states it; NONE where there is none."""
    if relative is None:
        return dict.fromkeys(
            ("reference_lr", "reference_seed", "median", "multiples", "thresholds", "rates", "seeds"), NONE
        )
    return {
        "reference_lr": sig(relative.reference_lr),
        "reference_seed": integer(relative.reference_seed) if relative.reference_seed >= 0 else NONE,
        "median": sig(relative.median),
        "multiples": words(f"{m:g}" for m in relative.multiples) or NONE,
        "thresholds": words(sig(t) for t in relative.thresholds) or NONE,
        "rates": words(f"{r:g}" for r in relative.rates) or NONE,
        "seeds": counted(relative.seeds, "seed"),
    }


def _at_a_glance(section: clip_values.Clipping | None) -> dict[str, Markdown]:
    """The optimisers, rates, norm thresholds, shares of steps clipped and regimes of a section's settings."""
    names = ("optimizers", "all_rates", "clip_thresholds", "clip_shares", "regimes")
    if section is None:
        return dict.fromkeys(names, NONE)
    table = section.table
    clipped = table[~table["unclipped"].astype(bool)]
    return {
        "optimizers": words(sorted({clip_values.OPTIMIZER_NAMES.get(o, o) for o in table["optimizer"]})) or NONE,
        "all_rates": words(f"{r:g}" for r in sorted(table["lr"].unique())) or NONE,
        "clip_thresholds": words(sig(c) for c in sorted(clipped["clip"].unique())) or NONE,
        "clip_shares": between(clipped["clipped_fraction_mean"].min(), clipped["clipped_fraction_mean"].max(), share)
        if len(clipped)
        else NONE,
        "regimes": words(r for r in (CLIP_SPIKES, CLIP_ORDINARY) if r in set(clipped["regime"])) or NONE,
    }


def norm_traces(corpus: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """The norm trace of each traced clipping study of ``corpus``, as figures; nothing where there is none."""
    section = clip_values.section(corpus, results)
    return ab.figure_markdown("norm-trace", clip_values.norm_traces(section, results, staging) if section else {})


@dataclass(frozen=True, eq=False)
class RecipeSection:
    """How often the default recipe's threshold acted in the studies not about clipping
    (rnnbench.book.recipe_clipping)."""

    clipped: bool  # some run of theirs clipped at a finite threshold
    thresholds: Markdown
    runs: Markdown
    shares: Markdown  # the lowest and highest share of a run's steps clipped
    medians: Markdown  # and median pre-clip norm
    tally: Markdown  # runs per regime
    table: pd.DataFrame  # recipe_clipping.recipe_display


def recipe_section(results: str | Path | None = None) -> RecipeSection:
    recipe = recipe_clipping.recipe_clipping(recipe_clipping.recipe_studies(results), results)
    return RecipeSection(
        clipped=recipe is not None,
        thresholds=words(sig(t) for t in recipe.thresholds) if recipe else NONE,
        runs=integer(recipe.runs) if recipe else NONE,
        shares=between(recipe.share_min, recipe.share_max, share) if recipe else NONE,
        medians=between(recipe.median_min, recipe.median_max, sig) if recipe else NONE,
        tally=recipe_clipping.tally(recipe),
        table=recipe_clipping.recipe_display(results),
    )


@dataclass(frozen=True)
class UpdateSection:
    """How far clipping turned Adam's update (rnnbench.book.clipping.update_turn)."""

    measured: bool  # some run that learned had a clipped step measured
    every: Markdown  # one optimiser step in every ``every`` is measured
    runs: Markdown  # "4 runs" had a measured clipped step
    steps: Markdown  # "120 measured steps" of the runs that learned
    learned: Markdown  # how many of those runs learned
    low: Markdown  # the lowest and highest of a run's mean cosine
    high: Markdown
    smallest: Markdown  # on any one measured step
    where: Markdown  # each measured study's figure, or its table where the figure draws too little


def update_section(results: str | Path | None = None) -> UpdateSection:
    turn = clip_values.update_turn(results)
    return UpdateSection(
        measured=turn.learned > 0,
        every=integer(turn.every),
        runs=counted(turn.runs, "run"),
        steps=counted(turn.steps, "measured step"),
        learned=integer(turn.learned),
        low=sig(turn.mean_low),
        high=sig(turn.mean_high),
        smallest=sig(turn.smallest),
        where=words(f"@{label}" for label in clip_values.update_labels(turn, results)) or NONE,
    )


def update_figures(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """Each measured study's update-cosine figure; where one draws too little, the study's steps as a table."""
    turn = clip_values.update_turn(results)
    every = integer(turn.every)
    shown = ab.figure_markdown("update-cosine", clip_values.update_figures(turn, results, staging), every=every)
    drawn = set(clip_values.update_shown(turn, results))
    tables = [
        f"{markdown_table(clip_values.update_steps(study, results))}\n\n: Each clipped step measured in {study}: the "
        "cosine between the update Adam took from the clipped gradient and the one it would have taken from the "
        f"unclipped gradient at the same state (one step in {every} measured). From "
        f"{ab.extra_file(study, 'update', 'csv')}, rule study_extra_table. {{#tbl-{label_slug(study)}-update-cosine}}\n"
        for study in turn.studies
        if study not in drawn
    ]
    return Markdown("\n".join([shown, *tables]))


# --------------------------------------------------------------------------------------------------------------
# Truncation


@dataclass(frozen=True, eq=False)
class TruncationPtb:
    """The PTB truncation designs (rnnbench.book.truncation.ptb_section) and their table."""

    shown: bool  # a PTB truncation study has results here
    values: tv.PtbSection
    stuck: Stuck
    table: pd.DataFrame  # rnnbench.book.truncation.designs_display
    align: dict[str, str] = field(default_factory=dict)


def truncation_ptb(results: str | Path | None = None) -> TruncationPtb:
    values = tv.ptb_section(results)
    studies = [c.study for c in values.designs.values()]
    name = str(values.metric)
    return TruncationPtb(
        shown=bool(values.designs),
        values=values,
        stuck=stuck(studies, results),
        table=tv.designs_display(values.designs) if values.designs else pd.DataFrame(columns=["held equal"]),
        align={name: "right", "learned": "right", "updates": "right", "tokens": "right"},
    )


@dataclass(frozen=True)
class ReachSection:
    """The stream-segment study (role truncation_reach): accuracy within and beyond each length k, and the drop's
    verdict (rnnbench.book.truncation.reach_drop), a flag each; none where no length that learned reaches beyond k."""

    shown: bool  # the study has results here
    held: bool  # every length took the same number of updates
    full_not_learned: bool  # full-sentence BPTT did not learn agreement: the lengths say nothing
    above_chance: bool  # beyond k some length stays above chance
    at_chance: bool  # beyond k every length is at chance
    learned: Learned
    by_length: Markdown  # "full-sentence BPTT: 0.700 over all distances (1 of 2 seeds learned); k = 2: ..."
    updates: Markdown  # the updates every length took
    drop_low: Markdown  # the drop from within k to beyond it, over the truncated lengths that learned
    drop_high: Markdown
    see: Markdown  # where every distance is shown
    study: str


def reach_section(results: str | Path | None = None) -> ReachSection:
    study = tv.truncation_studies(results)["reach"]
    if not study:
        return _nothing(ReachSection)
    rows = tv.truncation_reach(study, results)
    held = tv.held_updates(study, results)
    drop = tv.reach_drop(rows)
    verdict = drop.verdict if drop else ""
    return ReachSection(
        shown=True,
        held=bool(held),
        full_not_learned=verdict == tv.FULL_NOT_LEARNED,
        above_chance=verdict == tv.ABOVE_CHANCE,
        at_chance=verdict == tv.AT_CHANCE,
        learned=learned([study], results),
        by_length=Markdown("; ".join(tv.reach_words(r) for r in rows.itertuples(index=False))) or NONE,
        updates=integer(held) if held else NONE,
        drop_low=fixed(drop.smallest, 3) if drop else NONE,
        drop_high=fixed(drop.largest, 3) if drop else NONE,
        see=ab.distance_references(study, results),
        study=study,
    )


@dataclass(frozen=True)
class CutsSection:
    """The study whose gradient is cut within sentences (a cuts table): accuracy within a gradient block and across
    a cut at each distance where both occur (rnnbench.book.truncation.sentence_cuts)."""

    shown: bool  # the study has results here
    held: bool  # every length took the same number of updates
    compared: bool  # some distance has probes on both sides of a cut with a seed that learned
    drawn: bool  # its cut-contrast figure draws enough to be shown
    learned: Learned
    updates: Markdown
    by_cut: Markdown  # "k = 2 at distance 3, within 0.900 and across 0.800 (120 and 80 probes), ..."; ...
    see: Markdown  # the figure, as a reference
    study: str


def cuts_section(results: str | Path | None = None) -> CutsSection:
    study = tv.truncation_studies(results)["cuts"]
    if not study:
        return _nothing(CutsSection)
    cuts = tv.sentence_cuts(study, results)
    held = tv.held_updates(study, results)
    drawn = ab.extra_shown(study, "cut-contrast", results)
    return CutsSection(
        shown=True,
        held=bool(held),
        compared=len(cuts) > 0,
        drawn=drawn,
        learned=learned([study], results),
        updates=integer(held) if held else NONE,
        by_cut=Markdown("; ".join(tv.cut_words(c) for c in cuts.itertuples(index=False))) or NONE,
        see=Markdown(f"@fig-{label_slug(study)}-cut-contrast") if drawn else NONE,
        study=study,
    )


cut_contrast = tv.cut_contrast_figure  # the sentence-cut study's cut-contrast figure, as Markdown

# What a study's distance figures set against distance, by the section that shows them.
DISTANCE_SETTINGS = {
    "reach": f"truncation length k ({tv.FULL_SENTENCE_BPTT}: full sentence)",
    "windows": "window $n-1$",
    "recurrences": "hidden size H",
}


def distance_figures(which: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """The shown distance figures (rnnbench.book.studies.distance_figures) of the stream-segment study (``which``
    "reach"), of the windows or of the recurrences; nothing where there is no such study."""
    windows, recurrences = window_studies(results)
    study = {"reach": tv.truncation_studies(results)["reach"], "windows": windows, "recurrences": recurrences}[which]
    images = ab.distance_figures(study, results, staging) if study else {}
    return Markdown(
        "\n".join(ab.figure_markdown(n, {study: i}, setting=DISTANCE_SETTINGS[which]) for n, i in images.items())
    )


# --------------------------------------------------------------------------------------------------------------
# The appendix


@dataclass(frozen=True, eq=False)
class Ablations:
    clipping_ptb: ClippingSection
    clipping_agreement: ClippingSection
    recipe: RecipeSection
    truncation_ptb: TruncationPtb
    update: UpdateSection
    reach: ReachSection
    cuts: CutsSection
    windows: WindowsSection
    level: Markdown  # the findings' level, a percentage
    chance: Markdown  # two verb forms
    learned_floor: Markdown  # the accuracy below which a model has not learned agreement
    stuck_spread: Markdown  # a stuck column's perplexity over the median column's
    spikes_below: Markdown  # the share of steps below which a threshold's clipping agrees with rare spikes


def chapter(results: str | Path | None = None) -> Ablations:
    return Ablations(
        clipping_ptb=clipping_section("ptb", results),
        clipping_agreement=clipping_section("agreement", results),
        recipe=recipe_section(results),
        truncation_ptb=truncation_ptb(results),
        update=update_section(results),
        reach=reach_section(results),
        cuts=cuts_section(results),
        windows=windows_section(results),
        level=percent(100 * LEVEL, 0),
        chance=Markdown(f"{CHANCE:g}"),
        learned_floor=Markdown(f"{ab.LEARNED:g}"),
        stuck_spread=sig(STUCK_SPREAD),
        spikes_below=share(CLIP_SPIKES_BELOW),
    )
