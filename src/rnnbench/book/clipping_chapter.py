"""The values of the clipping chapter (reports/clipping.qmd): does clipping help, and what does it cost?

The chapter is answered on the clipping studies whose norm thresholds are multiples of a measured median norm
(rnnbench.paths.clipping_figure_studies, found here by their record), read by the regime each threshold is set in
before training (rnnbench.metrics.threshold_regime; the share of steps clipped beside it, as a check):
its figure (rule clipping_figure), the design, each regime's divergences where unclipped training diverges, what
each threshold cost where it does not (rnnbench.book.clipping_outcomes), how far Adam's update turned, the verdicts
and quotes of the four claims, and how often the other studies' default recipe clipped (rnnbench.book.recipe_clipping).

Returns numbers and short formatted values; the sentences are the chapter's. Reads results only; no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.book import clipping_outcomes as outcomes_of
from rnnbench.book import recipe_clipping
from rnnbench.book.answers import reading
from rnnbench.book.clipping import CLIPPING_ROLE, Clipping, clipping_table, relative_thresholds, update_turn
from rnnbench.book.figures import STAGING_DIR, figure_shown, stage_figure
from rnnbench.book.findings import findings, parts, sections
from rnnbench.book.format import NONE, Markdown, between, counted, escape, label_slug, share, sig, words
from rnnbench.book.results import results_root, study_about
from rnnbench.book.studies import studies_with_role
from rnnbench.findings import policy
from rnnbench.metrics import CLIP_ORDINARY, CLIP_SPIKES, CLIP_SPIKES_BELOW, clip_regime
from rnnbench.results.outcome import DIVERGED

CLAIMS = ("clip_divergence", "clip_quality", "clip_direction", "clip_vanishing")
CORPUS_WORDS = {"ptb": "PTB", "brown": "Brown", "agreement": "the agreement corpus"}


def relative_studies(results: str | Path | None = None) -> list[str]:
    """The clipping studies here the figure is drawn from (rnnbench.paths.clipping_figure_studies): a norm threshold
    that is a multiple of a measured median norm, with plain SGD."""
    found = []
    for s in studies_with_role(CLIPPING_ROLE, results):
        about = study_about(s, results)
        fixed = about.get("fixed", {})
        if (
            "clip_times_median" in {*about["vary"], *fixed}
            and fixed.get("optimizer") == paths.CLIPPING_FIGURE_OPTIMIZER
        ):
            found.append(s)
    return found


def _outcomes(corpus: str, studies: list[str], results: str | Path | None) -> outcomes_of.Outcomes:
    """What the relative studies alone did (rnnbench.book.clipping_outcomes.outcomes reads every clipping study of
    the corpus, whatever its optimiser and however its thresholds were set)."""
    table = clipping_table(studies, results)
    section = Clipping(corpus, tuple(studies), table, ())
    return outcomes_of.Outcomes(
        section,
        relative_thresholds(section, results),
        outcomes_of.unclipped_divergence(table),
        outcomes_of.divergence_by_regime(table),
        outcomes_of.contradictions(table),
        outcomes_of.clipping_cost(section, results),
    )


def _at_divergence(found: outcomes_of.Outcomes, regime: str) -> Markdown:
    """The settings of one regime at the rates where unclipped runs diverged: how many of their runs blew up (of
    them, how many diverged) and the share of steps they clipped ("5 of 10 runs, 4 of which diverged (clipping
    5% to 82% of the steps)")."""
    at = found.at_divergence.get(regime)
    if at is None:
        return Markdown("no run (no setting was in that regime there)")
    said = [f"{at.diverged} of them diverged"] if at.diverged != at.blown else []
    said.append(f"clipping {between(at.share_min, at.share_max, share)} of the steps")
    return Markdown(f"{at.blown} of {counted(at.runs, 'run')} ({'; '.join(said)})")


def _diverged_of(diverged: int, blown: int) -> str:
    """ " (3 of them diverged)" where not every run that blew up diverged; nothing where all of them did."""
    return "" if diverged == blown else f" ({diverged} of them diverged)"


def _contradicted(found: outcomes_of.Outcomes) -> Markdown:
    """The settings whose share of steps clipped contradicts their regime, each kept in it ("2 × median at rate 5,
    83.8% of the steps (rare spikes)")."""
    said = [
        f"{r.clip_times_median:g} × median at rate {r.lr:g}, {share(r.share)} of the steps ({r.regime})"
        for r in found.contradicted.itertuples()
    ]
    return Markdown("; ".join(said)) if said else Markdown("none")


def _costs(found: outcomes_of.Outcomes, regime: str) -> Markdown:
    """Each threshold of ``regime`` at a rate where unclipped training trained: the difference of the mean metric
    from the unclipped one with its interval, then the setting ("+0.38% [−0.21%, +0.98%] at 2 × median and rate
    0.5"); a setting no seed of which learned is said so ("no seed learned at 0.5 × median and rate 0.5")."""
    said = [
        f"{t.difference or t.verdict} at {t.clipping.removeprefix('norm, ')} and rate {lr:g}"
        for lr, t in outcomes_of.costs_in(found.costs, regime)
    ]
    said += [
        f"no seed learned at {label.removeprefix('norm, ')} and rate {lr:g}"
        for lr, label in outcomes_of.unlearned_in(found.costs, regime)
    ]
    return Markdown("; ".join(said)) if said else Markdown("none at those rates")


@dataclass(frozen=True, eq=False)
class ClippingChapter:
    studies: tuple[str, ...]  # the clipping studies with relative thresholds
    corpus: Markdown
    metric: Markdown
    quotes: dict[str, Markdown]  # claim -> the seed's words
    verdicts: dict[str, str]  # claim -> its verdict (tables/findings.csv), read with its parts where it holds in part
    # the design
    median: Markdown
    reference_lr: Markdown
    reference_seed: Markdown
    multiples: Markdown
    thresholds: Markdown
    rates: Markdown
    seeds: int
    spikes_below: Markdown  # the share of steps below which a threshold's clipping agrees with the rare-spike regime
    # divergence, at the rates where unclipped runs diverged
    # how many runs blew up (diverged, or ended above the unigram model's perplexity), the diverged among them
    unclipped_by_rate: Markdown  # "0 of 5 at rate 0.5, 5 of 5 at rate 1 (3 of them diverged) and 5 of 5 at rate 5"
    spikes: Markdown  # "5 of 10 runs (4 of them diverged; clipping 5% to 82% of the steps)"
    every: Markdown  # the same, of the thresholds at or below the median (ordinary steps)
    contradicted: Markdown  # the settings whose share of steps clipped contradicts their regime
    spike_metric: Markdown  # the metric of the rare-spike settings' seeds that learned there, per rate
    every_metric: Markdown  # and of the settings at or below the median'
    fisher_min_p: Markdown  # the smallest one-sided p Fisher's test gives with ``seeds`` runs a side
    # cost, at the rates where unclipped runs trained
    unclipped_metric: Markdown  # mean (range) there
    spike_costs: Markdown
    every_costs: Markdown
    margin: Markdown
    # the update's direction
    update_runs: int
    update_low: Markdown
    update_high: Markdown
    update_smallest: Markdown
    update_shares: Markdown  # the share of steps clipped by the settings whose update was measured
    update_regimes: Markdown
    # the other studies' recipe
    recipe_runs: Markdown
    recipe_by_threshold: Markdown  # per threshold: its corpora, runs, share of steps clipped and runs per regime
    recipe: recipe_clipping.AgainstTheChapter  # how those runs clipped, against the chapter's remedy (flags)
    # vanishing gradients
    vanishing_margin: Markdown
    # where the details are, as references
    study_sections: Markdown  # the relative studies' sections
    vanishing_sections: Markdown  # the sections of the analyses the vanishing claim reads

    def said(self, words_of: dict[str, str]) -> dict[str, Markdown]:
        """Each claim's verdict in the chapter's words (``words_of``: verdict -> words)."""
        return {claim: Markdown(words_of[verdict]) for claim, verdict in self.verdicts.items()}


def chapter(results: str | Path | None = None) -> ClippingChapter:
    studies = relative_studies(results)
    if not studies:
        raise FileNotFoundError(
            f"{results_root(results)}: no study with the clipping role sets its threshold as a multiple of a measured "
            "median norm (clip_times_median); the clipping chapter reads one"
        )
    corpus = str(study_about(studies[0], results)["corpus"])
    found = _outcomes(corpus, studies, results)
    table = found.section.table
    relative = found.relative
    claims = findings(results).set_index("id")
    unclipped = found.unclipped
    calm = [c for c in found.costs if c.thresholds]
    update = _update(results)
    recipe = recipe_clipping.recipe_clipping(recipe_clipping.recipe_studies(results), results)
    return ClippingChapter(
        studies=tuple(studies),
        corpus=Markdown(CORPUS_WORDS.get(corpus, corpus)),
        metric=Markdown(found.section.metric_name),
        quotes={c: escape(claims.loc[c, "quote"]) for c in CLAIMS if c in claims.index},
        verdicts={
            c: reading(str(claims.loc[c, "verdict"]), parts(c, results)["verdict"]) for c in CLAIMS if c in claims.index
        },
        median=sig(relative.median),
        reference_lr=sig(relative.reference_lr),
        reference_seed=Markdown(f"{relative.reference_seed:g}") if relative.reference_seed >= 0 else NONE,
        multiples=words(f"{m:g}" for m in relative.multiples if math.isfinite(m)),
        thresholds=words(sig(t) for t in relative.thresholds if math.isfinite(t)),
        rates=words(f"{r:g}" for r in relative.rates),
        seeds=relative.seeds,
        spikes_below=share(CLIP_SPIKES_BELOW),
        unclipped_by_rate=words(
            f"{at.unclipped_blown} of {at.unclipped_runs} at rate {at.lr:g}{_diverged_of(at.unclipped_diverged, at.unclipped_blown)}"
            for at in outcomes_of.divergence_by_rate(table)
            if at.unclipped_runs
        )
        or NONE,
        spikes=_at_divergence(found, CLIP_SPIKES),
        every=_at_divergence(found, CLIP_ORDINARY),
        contradicted=_contradicted(found),
        spike_metric=_metric_at(table, found.section.metric, CLIP_SPIKES, unclipped.rates),
        every_metric=_metric_at(table, found.section.metric, CLIP_ORDINARY, unclipped.rates),
        fisher_min_p=sig(policy.more_often(relative.seeds, relative.seeds, 0, relative.seeds).p_supports, 2),
        unclipped_metric=words(
            f"{sig(c.unclipped_mean)} ({between(c.unclipped_min, c.unclipped_max, sig)}) at rate {c.lr:g}" for c in calm
        )
        or NONE,
        spike_costs=_costs(found, CLIP_SPIKES),
        every_costs=_costs(found, CLIP_ORDINARY),
        margin=Markdown(str(policy.MARGINS[policy.quantity(str(table["metric"].iloc[0]))])),
        **update,
        recipe_runs=counted(recipe.runs, "run") if recipe else Markdown("no run"),
        recipe_by_threshold=_recipe_by_threshold(results),
        recipe=recipe_clipping.against_the_chapter(recipe),
        vanishing_margin=Markdown(str(policy.MARGINS["decay rate"])),
        study_sections=words(f"@sec-study-{label_slug(s)}" for s in studies),
        vanishing_sections=_sections(claims, "clip_vanishing", results),
    )


def _metric_at(table: pd.DataFrame, metric: str, regime: str, rates: tuple[float, ...]) -> Markdown:
    """The metric of ``regime``'s settings at ``rates`` over their seeds that learned, mean (range) per setting:
    "276 (275 to 278) for 2 × median at rate 1"."""
    rows = table[(table["regime"] == regime) & table["lr"].isin(rates) & (table["seeds_learned"] > 0)]
    said = [
        f"{sig(r[f'{metric}_mean'])} ({between(r[f'{metric}_min'], r[f'{metric}_max'], sig)}) for "
        f"{r['clipping'].removeprefix('norm, ')} at rate {r['lr']:g}"
        for _, r in rows.iterrows()
    ]
    return words(said) if said else NONE


def _recipe_by_threshold(results: str | Path | None) -> Markdown:
    """Per threshold of the studies not about clipping: "0.25 on PTB and Brown, 49 runs, 50% to 100% of steps
    clipped (9 often, 40 every step)". Over the runs that did not diverge, as recipe_clipping counts them: a run that
    diverged clipped on its way up, and the counts here add up to the runs the chapter's sentence reads."""
    runs = recipe_clipping.recipe_runs(recipe_clipping.recipe_studies(results), results)
    runs = runs[runs["clipped_fraction"].notna() & runs["outcome"].ne(DIVERGED)]
    said = []
    for clip, at in runs.groupby("clip", sort=True):
        corpora = dict.fromkeys(
            CORPUS_WORDS.get(c, c) for c in (study_about(s, results)["corpus"] for s in at["study"])
        )
        regimes = [clip_regime(f) for f in at["clipped_fraction"]]
        tally = words(f"{regimes.count(r)} {r}" for r in recipe_clipping.REGIME_ORDER if r in regimes)
        clipped = between(at["clipped_fraction"].min(), at["clipped_fraction"].max(), share)
        said.append(f"{clip:g} on {words(corpora)}: {counted(len(at), 'run')}, {clipped} of steps clipped ({tally})")
    return Markdown("; ".join(said)) if said else NONE


def _update(results: str | Path | None) -> dict:
    """How far Adam's update turned where clipping acted (rnnbench.book.clipping.update_turn), and how often the
    settings whose update was measured clipped."""
    turn = update_turn(results)
    table = clipping_table(studies_with_role(CLIPPING_ROLE, results), results)
    measured = table[table["update_cosine_mean_mean"].notna() & ~table["unclipped"]]
    regimes = [r for r in (CLIP_SPIKES, CLIP_ORDINARY) if r in set(measured["regime"])]
    return {
        "update_runs": turn.learned,
        "update_low": sig(turn.mean_low),
        "update_high": sig(turn.mean_high),
        "update_smallest": sig(turn.smallest),
        "update_shares": between(
            measured["clipped_fraction_mean"].min(), measured["clipped_fraction_mean"].max(), share
        )
        if len(measured)
        else NONE,
        "update_regimes": words(regimes) or NONE,
    }


def _sections(claims: pd.DataFrame, claim: str, results: str | Path | None) -> Markdown:
    """References to the sections of the studies and analyses ``claim`` reads; NONE where this book has none."""
    labels = sections(str(claims.loc[claim, "evidence"]), results=results) if claim in claims.index else []
    return words(f"@{label}" for label in labels) or NONE


def figure(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> str | None:
    """The clipping figure (rule clipping_figure), staged into the book: its path, as an image's target; None where
    it draws too little to be a figure (rnnbench.book.figures.figure_shown)."""
    source = paths.book_figure(results_root(results), paths.CLIPPING_FIGURE, "png")
    return stage_figure(source, "clipping", staging) if figure_shown(source) else None


def see(results: str | Path | None = None) -> Markdown:
    """Where a reader sees every run: the chapter's figure, or where it is not shown, the appendix's table."""
    source = paths.book_figure(results_root(results), paths.CLIPPING_FIGURE, "png")
    return Markdown("@fig-clipping-outcomes" if figure_shown(source) else "@tbl-clipping-ptb")


def figure_sources(results: str | Path | None = None) -> Markdown:
    """The files the figure was drawn from, as its caption names them."""
    return words(f"studies/{s}/summary.csv" for s in relative_studies(results))
