"""The values and flags of the chapter "Against the published numbers" (reports/published.qmd): what its sentences
print and which of its alternative passages the results call for (rnnbench.book.conditions). The sentences are the
chapter's; every value here is read from the comparison table (rnnbench.book.published) and the runs' clipping
(rnnbench.book.recipe_clipping).

    chapter(results)          PublishedChapter: the whole chapter's values, its flags nested as its sections are
    corpus_comparison(f, c)   one corpus's section: its published rows' papers, both splits, our best run of each
                              family against its reference row, and its table
    reference_summary(f)      the runs trained to convergence (reference/): how many are level with, below and above
                              their published row, two headline rows, and the table with each row's verdict
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench.book import published, recipe_clipping
from rnnbench.book import reference_results as converged
from rnnbench.book.figures import book_figure, book_figure_shown
from rnnbench.book.format import (
    NONE,
    Markdown,
    between,
    cell_sig,
    code,
    counted,
    escape,
    integer,
    markdown_table,
    share,
    sig,
    words,
)
from rnnbench.metrics import FAMILY_NAMES
from rnnbench.results.beside_published import carried_beyond


@dataclass(frozen=True)
class BestRun:
    """Our run of a family on a corpus with the lowest validation perplexity, beside the published row it is
    measured against (published.best_runs)."""

    shown: bool  # a run of the family finished on the corpus
    comparable: bool  # its test perplexity is set against the published one (a ratio)
    uncompared: bool  # it finished, but is not set against the published one (measured on part of the test split)
    family: Markdown = NONE
    ours: Markdown = NONE
    epochs: Markdown = NONE
    status: Markdown = NONE
    ratio: Markdown = NONE
    reference: Markdown = NONE
    reference_model: Markdown = NONE


@dataclass(frozen=True)
class CorpusComparison:
    """One corpus's section: its published rows beside our best runs."""

    shown: bool  # the comparison holds runs of ours on this corpus
    finished: bool  # some run of ours on it finished (did not diverge)
    name: Markdown
    cite: Markdown  # the papers of its published rows, as citations
    sources: Markdown  # their full sources
    their_split: Markdown
    our_split: Markdown
    rnn: BestRun
    ff: BestRun
    table: Markdown


@dataclass(frozen=True)
class ReferenceRow:
    """One reference result (a study trained to convergence, its seeds' mean) against its published row."""

    shown: bool
    ours: Markdown = NONE  # mean test perplexity over the seeds
    low: Markdown = NONE  # the lowest and highest seed's
    high: Markdown = NONE
    seeds: Markdown = NONE  # "2 seeds"
    reference: Markdown = NONE  # the published row's perplexity and model
    reference_model: Markdown = NONE
    normalised: Markdown = NONE  # each over the Kneser-Ney model of its own split
    verdict: Markdown = NONE  # in words (reference_results.verdict_words)
    departures: Markdown = NONE  # a modern recipe's: the settings it changes in our row of the paper's recipe


@dataclass(frozen=True)
class ReferenceSummary:
    """The reference results (reference/): counts by verdict, two headline rows and the table."""

    shown: bool
    stale: bool  # some reference run no longer matches config/paper.yaml or the code
    rows: Markdown  # the reference results on the papers' recipes: a recipe carried beyond them has its own sentence
    by_verdict: Markdown  # "3 are level with their published model and 2 are not compared"
    stale_runs: Markdown
    commits: Markdown  # the commits that collected them (first digits), from their records
    margin: Markdown  # the band around a normalised ratio of 1 within which a row is level
    rnn_ptb: ReferenceRow  # Mikolov's table's RNN, and Bengio's table's feed-forward network
    ff_brown: ReferenceRow
    rnn_ptb_dynamic: ReferenceRow  # Mikolov's RNN row under dynamic evaluation
    # the Elman RNN carried beyond Mikolov's row by a modern recipe, scored as trained and under dynamic evaluation
    rnn_ptb_modern: ReferenceRow
    rnn_ptb_modern_dynamic: ReferenceRow
    table: Markdown


@dataclass(frozen=True)
class RecipeClipping:
    """How often the threshold acted in the chapter's runs (recipe_clipping), against the chapter's remedy."""

    sits: recipe_clipping.AgainstTheChapter
    runs: Markdown
    thresholds: Markdown
    shares: Markdown
    tally: Markdown


@dataclass(frozen=True)
class PublishedChapter:
    compared: bool  # the configuration names studies under `comparison`
    paper_scale: bool  # its runs are config/paper.yaml's (trained to the schedule's end), else short
    short_scale: bool
    subset: bool  # some run was measured on part of the test split
    curves_drawn: bool  # the learning-curve figure draws enough to be shown; else the curves as a table
    curves_tabled: bool
    runs: Markdown
    subset_runs: Markdown
    ptb: CorpusComparison
    brown: CorpusComparison
    reference: ReferenceSummary
    clipping: RecipeClipping
    curves_figure: str
    curves_table: Markdown


def chapter(results: str | Path | None = None) -> PublishedChapter:
    compared = published.has_comparison(results)
    frame = published.comparison(results) if compared else None
    mine = published.trained_here(frame) if compared else pd.DataFrame({"status": [], "studies": []})
    subset = int((mine["status"] == "subset").sum())
    drawn = compared and book_figure_shown("learning_curves", results)
    return PublishedChapter(
        compared=compared,
        paper_scale=compared and published.scale_of(frame) == "paper",
        short_scale=compared and published.scale_of(frame) != "paper",
        subset=subset > 0,
        curves_drawn=drawn,
        curves_tabled=compared and not drawn,
        runs=counted(len(mine), "run"),
        subset_runs=counted(subset, "run"),
        ptb=corpus_comparison(frame, "ptb"),
        brown=corpus_comparison(frame, "brown"),
        reference=reference_summary(frame),
        clipping=clipping_of(mine, results),
        curves_figure=book_figure("learning_curves", results) if drawn else "",
        curves_table=markdown_table(
            published.learning_display(results) if compared else pd.DataFrame(columns=["corpus", "epoch"])
        ),
    )


def corpus_comparison(frame: pd.DataFrame | None, corpus: str) -> CorpusComparison:
    """``corpus``'s section; hidden (shown False) where there is no comparison (``frame`` None) or no run on it."""
    if frame is None:
        absent = BestRun(shown=False, comparable=False, uncompared=False)
        name = Markdown(published.CORPUS_NAMES.get(corpus, corpus))
        no_rows = markdown_table(pd.DataFrame(columns=["model", "measured by", "test perplexity"]))
        return CorpusComparison(False, False, name, NONE, NONE, NONE, NONE, absent, absent, no_rows)
    theirs = published.published_rows(frame, corpus)
    mine = published.trained_here(frame)
    mine = mine[mine["corpus"] == corpus]
    our_split = mine["split"].dropna()
    cites = dict.fromkeys(published.citation(s, k) for s, k in zip(theirs["source"], theirs["cite_key"], strict=True))
    rnn, ff = best_run(frame, corpus, "rnn"), best_run(frame, corpus, "ff")
    return CorpusComparison(
        shown=len(mine) > 0,
        finished=rnn.shown or ff.shown,
        name=Markdown(published.CORPUS_NAMES.get(corpus, corpus)),
        cite=words(cites) if cites else NONE,
        sources=published.sources(frame, corpus) if len(theirs) else NONE,
        their_split=escape(theirs["split"].iloc[0]) if len(theirs) else Markdown("not given"),
        our_split=escape(our_split.iloc[0]) if len(our_split) and str(our_split.iloc[0]) else NONE,
        rnn=rnn,
        ff=ff,
        table=comparison_table(published.corpus_rows(frame, corpus)),
    )


def comparison_table(rows: pd.DataFrame) -> Markdown:
    """A corpus's rows (rnnbench.book.published.corpus_rows) as a table. Where every row's Kneser-Ney model has one
    name, the header names it and the cells hold the ratio alone; otherwise each cell names its own."""
    names = set(rows["kn_name"]) - {""}
    if len(names) == 1:
        kn = f"over its split's {names.pop()}"
        over_kn = rows["over_kn"]
    else:
        kn = "over its split's KN"
        over_kn = [
            Markdown(f"{cell_sig(r)} of {escape(n)}") if pd.notna(r) else None
            for r, n in zip(rows["over_kn"], rows["kn_name"], strict=True)
        ]
    shown = rows.drop(columns="kn_name").assign(over_kn=over_kn)
    return markdown_table(
        shown,
        formats={"test_ppl": published.ppl, "ratio": cell_sig, "over_kn": cell_sig},
        headers={"test_ppl": "test perplexity", "ratio": "ours / published", "over_kn": kn},
        align={"ratio": "right", "over_kn": "right"},
    )


def best_run(frame: pd.DataFrame, corpus: str, family: str) -> BestRun:
    picks = published.best_runs(frame)
    pick = picks[(picks["corpus"] == corpus) & (picks["family"] == family)]
    if pick.empty:
        return BestRun(shown=False, comparable=False, uncompared=False)
    row = pick.iloc[0]
    comparable = bool(pd.notna(row["ratio_to_reference"]))
    return BestRun(
        shown=True,
        comparable=comparable,
        uncompared=not comparable,
        family=Markdown(FAMILY_NAMES.get(family, family)),
        ours=published.ppl(row["test_ppl"]),
        epochs=counted(int(row["epochs"]), "epoch"),
        status=Markdown(published.STATUS_TEXT.get(row["status"], row["status"])),
        ratio=sig(row["ratio_to_reference"]),
        reference=published.ppl(row["reference_ppl"]),
        reference_model=escape(row["reference_model"]),
    )


# Each reference verdict (rnnbench.book.reference_results.reference_verdict) as the tally says it of one result and of
# several, in this order; results not set against their published model are counted together.
REFERENCE_WORDS = {
    "tie": ("is level with its published model", "are level with their published model"),
    "below": ("is below it with every seed", "are below it with every seed"),
    "above": ("is above it with every seed", "are above it with every seed"),
    "mixed": ("is beyond the band on the mean only", "are beyond the band on the mean only"),
    "not compared": ("is not compared", "are not compared"),
}
UNCOMPARED = ("not comparable", "no baseline")


def reference_tally(verdicts: list[str]) -> Markdown:
    """How many reference results have each verdict, those with none left out: "3 are level with their published
    model, 1 is below it with every seed and 2 are not compared"."""
    kinds = ["not compared" if v in UNCOMPARED else v for v in verdicts]
    said = [f"{kinds.count(k)} {REFERENCE_WORDS[k][kinds.count(k) != 1]}" for k in REFERENCE_WORDS if k in kinds]
    return words(said) if said else Markdown("none has a verdict")


def reference_summary(frame: pd.DataFrame | None) -> ReferenceSummary:
    rows = converged.reference_runs(frame) if frame is not None else pd.DataFrame()
    on_recipe = rows[~carried_beyond(rows)] if len(rows) else rows
    verdicts = [converged.reference_verdict(r) for _, r in on_recipe.iterrows()]
    stale = int(rows["stale"].sum()) if len(rows) else 0
    return ReferenceSummary(
        shown=len(rows) > 0,
        stale=stale > 0,
        rows=integer(len(on_recipe)),
        by_verdict=reference_tally(verdicts),
        stale_runs=counted(stale, "reference run"),
        commits=words(code(c) for c in dict.fromkeys(", ".join(rows["commit"]).split(", "))) if len(rows) else NONE,
        margin=Markdown(str(converged.MARGIN)),
        rnn_ptb=_reference_row(rows, "ptb", "rnn"),
        ff_brown=_reference_row(rows, "brown", "ff"),
        rnn_ptb_dynamic=_reference_row(rows, "ptb", "rnn", dynamic=True),
        rnn_ptb_modern=_reference_row(rows, "ptb", "rnn", modern=True),
        rnn_ptb_modern_dynamic=_reference_row(rows, "ptb", "rnn", modern=True, dynamic=True),
        table=markdown_table(reference_display(rows)),
    )


def _reference_row(
    rows: pd.DataFrame, corpus: str, family: str, *, modern: bool = False, dynamic: bool = False
) -> ReferenceRow:
    """The study of ``family`` on ``corpus`` on the paper's recipe, or (``modern``) one that carries that recipe
    further, scored as trained or (``dynamic``) under dynamic evaluation: the first, if several."""
    if rows.empty:
        return ReferenceRow(shown=False)
    carried = carried_beyond(rows)
    picked = rows[
        (rows["corpus"] == corpus) & (rows["family"] == family) & (rows["dynamic"] == dynamic) & (carried == modern)
    ]
    if picked.empty:
        return ReferenceRow(shown=False)
    row = picked.iloc[0]
    return ReferenceRow(
        shown=True,
        ours=published.ppl(row["test_ppl"]),
        low=published.ppl(row["test_min"]),
        high=published.ppl(row["test_max"]),
        seeds=counted(int(row["n_seeds"]), "seed"),
        reference=published.ppl(row["reference_ppl"]),
        reference_model=escape(row["reference_model"]),
        normalised=sig(row["normalised"]),
        verdict=Markdown(converged.verdict_words(row)),
        departures=escape(row["departures"]) if modern else NONE,
    )


REFERENCE_COLUMNS = (
    "ours, trained to convergence",
    "test perplexity",
    "published",
    "normalised",
    "against it",
    "recipe departs in",
)


def reference_display(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per reference study (reference_runs): its corpus and model, mean test perplexity with its seeds'
    range, the published row it is set against, the normalised ratio, the verdict in words and where
    its recipe departs from the published one; five columns, so that the PDF's page holds them. No rows, no reference
    results: the columns alone (a hidden table is still a table)."""
    if rows.empty:
        return pd.DataFrame(columns=list(REFERENCE_COLUMNS))
    ppl = published.ppl
    return pd.DataFrame(
        {
            "ours, trained to convergence": [
                Markdown(f"{published.CORPUS_SHORT.get(c, c)}: {escape(d)}")
                for c, d in zip(rows["corpus"], rows["description"], strict=True)
            ],
            "test perplexity": [  # its seeds are named in the corpus's table above
                Markdown(f"{ppl(m)} ({ppl(lo)}–{ppl(hi)})")
                for m, lo, hi in zip(rows["test_ppl"], rows["test_min"], rows["test_max"], strict=True)
            ],
            "published": [
                Markdown(f"{ppl(p)}, {escape(m)}")
                for p, m in zip(rows["reference_ppl"], rows["reference_model"], strict=True)
            ],
            "normalised ratio": [
                Markdown(f"{sig(r['normalised'], plain=True)}: {escape(converged.verdict_words(r))}")
                for _, r in rows.iterrows()
            ],
            "recipe departs in": [
                escape(converged.departure_words(r["departures"], _base_model(rows, r["departs_from"])))
                for _, r in rows.iterrows()
            ],
        }
    )


def _base_model(rows: pd.DataFrame, study: str) -> str:
    """The published model our row of ``study`` is set against, the recipe a modern one changes ("" for none)."""
    if not study:
        return ""
    base = rows[(rows["study"] == study) & ~rows["dynamic"]]
    return str(base["reference_model"].iloc[0]) if len(base) else study


def clipping_of(mine: pd.DataFrame, results: str | Path | None = None) -> RecipeClipping:
    found = recipe_clipping.recipe_clipping(recipe_clipping.studies_named(mine["studies"]), results)
    return RecipeClipping(
        sits=recipe_clipping.against_the_chapter(found),
        runs=integer(found.runs if found else 0),
        thresholds=words([sig(t) for t in found.thresholds]) if found else NONE,
        shares=between(found.share_min, found.share_max, share) if found else NONE,
        tally=recipe_clipping.tally(found),
    )
