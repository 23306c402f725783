"""What the studies chapter's ablation sections share (reports/studies.qmd holds the sentences; the values of
each section are in rnnbench.book.clipping, .truncation and .windows, and rnnbench.book.study_sections makes the
generated section of each study): the studies a section reads, found by the role the config gives them; how many
seeds of each setting learned; a study's extra tables and figures; and the table cells every section prints.

Every mean and range over seeds here is over the seeds that learned (rnnbench.results.outcome, as each study's summary
holds it); each table says how many of a setting's seeds learned, and a setting none of whose seeds learned
has no mean. seed_outcomes gives the counts the book's sentences state ("k of n seeds learned"), and learned and
stuck those seeds a section names; figure_markdown gives a study's extra figures as a chapter places them.

Reads results only (rnnbench.book.results); no torch.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR, figure_shown, stage_figure
from rnnbench.book.format import NONE, Markdown, counted, figure, fixed, integer, label_slug, percent, sig, words
from rnnbench.book.results import missing_result, results_root, study_about, study_names, study_summary
from rnnbench.results.ablations import per_run, setting_table
from rnnbench.results.outcome import COUNT_COLUMNS

# Accuracy below this counts as not learned (two verb forms: chance is 0.5; a few hundred probes per
# distance put the seed-to-seed noise at a few points).
LEARNED = 0.55


# The studies each ablation section reads.


def have(*studies: str, results: str | Path | None = None) -> bool:
    """Whether every one of ``studies`` has results here (a config may leave any of them out)."""
    present = set(study_names(results))
    return all(s in present for s in studies)


def studies_with_role(role: str, results: str | Path | None = None, corpus: str | None = None) -> list[str]:
    """The studies with results here that carry ``role`` (study.json's roles, from the config), on ``corpus``
    if given, whatever they are named."""
    return [
        s
        for s in study_names(results)
        if role in study_about(s, results).get("roles", [])
        and (corpus is None or study_about(s, results)["corpus"] == corpus)
    ]


def first_of(studies: list[str]) -> str | None:
    """The first of ``studies``, or None: a section reads one study of a role."""
    return studies[0] if studies else None


def seed_outcomes(studies: list[str], results: str | Path | None = None) -> pd.DataFrame:
    """Per study and combination of its varied settings: how many seeds learned, failed and diverged.

        study, setting (its values as markdown, `key` = value), runs, seeds_learned, seeds_failed, diverged_runs

    The counts behind the book's "k of n seeds learned"; studies without results here are left out."""
    frames = []
    for study in studies:
        if not have(study, results=results):
            continue
        vary = list(study_about(study, results)["vary"])
        table = setting_table(study_summary(study, results), vary, [])
        labels = [_setting_label(vary, row) for _, row in table.iterrows()]
        frames.append(table.assign(study=study, setting=labels)[["study", "setting", *COUNT_COLUMNS]])
    columns = ["study", "setting", *COUNT_COLUMNS]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def _setting_label(vary: list[str], row: pd.Series) -> Markdown:
    return Markdown(", ".join(f"`{key}` = {_value(row[key])}" for key in vary))


def _value(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def extra_table(study: str, kind: str, results: str | Path | None = None) -> pd.DataFrame:
    path = Path(paths.study_extra_table(results_root(results), study, kind))
    if not path.is_file():
        raise missing_result(path)
    return pd.read_csv(path)


def extra_figure(study: str, name: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> str:
    """A study's extra figure (distance-heatmap, distance-curves, norm-trace), staged into the book."""
    source = paths.study_extra_figure(results_root(results), study, name, "png")
    return stage_figure(source, f"study-{label_slug(study)}-{name}", staging)


def extra_shown(study: str, name: str, results: str | Path | None = None) -> bool:
    """Whether a study's extra figure draws enough to be shown (rnnbench.book.figures.figure_shown): learning
    curves of one epoch each are dots, not curves, and the chapter prints their table instead."""
    return figure_shown(paths.study_extra_figure(results_root(results), study, name, "png"))


def learning_display(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """A study's learning table (learning.csv) as the book prints it where its figure is not shown: one row per
    run and finished epoch, its varied settings, seed, the tokens read and seconds trained by that epoch's end,
    its validation perplexity then, and the run's outcome."""
    table = extra_table(study, "learning", results)
    vary = [v for v in study_about(study, results)["vary"] if v in table]
    shown = table[[*vary, "seed", "epoch", "tokens_seen", "seconds_trained", "valid_ppl", "outcome"]].copy()
    shown["tokens_seen"] = [integer(v) for v in shown["tokens_seen"]]
    shown["seconds_trained"] = [fixed(v, 1) for v in shown["seconds_trained"]]
    shown["valid_ppl"] = [sig(v, plain=True) for v in shown["valid_ppl"]]
    names = {"tokens_seen": "tokens read", "seconds_trained": "seconds trained", "valid_ppl": "validation perplexity"}
    return shown.rename(columns=names)


def extra_file(study: str, name: str, kind: str = "png") -> str:
    """How a caption names the file: relative to the results folder, as every caption of the book does."""
    if kind == "csv":
        return os.path.relpath(paths.study_extra_table(".", study, name))
    return os.path.relpath(paths.study_extra_figure(".", study, name, kind))


def distance_figures(
    study: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR
) -> dict[str, str]:
    """A study's distance-heatmap and distance-curves figures that draw enough to be shown (extra_shown), staged
    into the book: name -> image path."""
    names = [n for n in ("distance-heatmap", "distance-curves") if extra_shown(study, n, results)]
    return {name: extra_figure(study, name, results, staging) for name in names}


def distance_references(study: str, results: str | Path | None = None) -> Markdown:
    """Where a reader sees a study's accuracy per distance: its shown distance figures, else its section's table."""
    shown = [
        f"@fig-{label_slug(study)}-{n}"
        for n in ("distance-heatmap", "distance-curves")
        if extra_shown(study, n, results)
    ]
    return words(shown) if shown else Markdown(f"@tbl-study-{label_slug(study)}")


# Each extra figure's caption as a chapter places it, by figure: {study} is the study, and the other fields are the
# words figure_markdown is given (``setting``: what a distance figure's rows or lines are, "window $n-1$"; ``every``:
# how often the update's turn is measured). The file and the rule that drew it follow.
EXTRA_CAPTIONS = {
    "distance-heatmap": "Agreement accuracy per head-verb distance (columns) and {setting} (rows), mean over the "
    "seeds that learned; white is chance, a hatched row a setting none of whose seeds learned ({study})",
    "distance-curves": "Agreement accuracy against head-verb distance, one line per {setting}, mean over the seeds "
    "that learned with their range shaded; dotted: chance; a hollow legend marker, a setting none of whose seeds "
    "learned ({study})",
    "norm-trace": "Pre-clip gradient norm per step, first seed of {study} (log scale); a red cross marks where a run "
    "diverged, a hollow circle where a run that did not learn ended",
    "update-cosine": "The cosine between the update Adam took from the clipped gradient and the one it would have "
    "taken from the unclipped gradient at the same state, on each clipped step measured (one in {every} of all "
    "steps), in {study}; a hollow marker is a run that did not learn or diverged, the dotted line the gradient's "
    "own cosine, $1$ by construction",
}


def figure_markdown(name: str, images: dict[str, str], **said: str) -> Markdown:
    """The extra figure ``name`` of each study of ``images`` (study -> its staged image: extra_figure) as Markdown,
    captioned by EXTRA_CAPTIONS with ``said`` and labelled fig-<study>-<name>; nothing for no image."""
    return Markdown(
        "\n".join(
            figure(
                image,
                f"{EXTRA_CAPTIONS[name].format(study=study, **said)}. From {extra_file(study, name)}, rule "
                "study_extra_figure.",
                f"fig-{label_slug(study)}-{name}",
            )
            for study, image in images.items()
        )
    )


# What a section says of its studies' seeds: those that did not learn, and those whose test perplexity is one
# evaluation column's doing.


def study_reference(study: str) -> Markdown:
    """Where a study's every run is: its section in the studies appendix."""
    return Markdown(f"@sec-study-{label_slug(study)}")


@dataclass(frozen=True)
class Learned:
    """The settings of some studies where not every seed learned (seed_outcomes)."""

    failed: bool  # some seed of the studies did not learn
    where: Markdown  # "in the study of @sec-study-x, 1 of 2 seeds learned at `bptt` = 0 (1 diverged)"; ...


def learned(studies: Sequence[str], results: str | Path | None = None) -> Learned:
    parts = []
    for study, rows in seed_outcomes(list(studies), results).groupby("study", sort=False):
        failed = rows[rows["seeds_failed"] > 0]
        if failed.empty:
            continue
        named = f"in the study of {study_reference(study)}"
        if (rows["seeds_learned"] == 0).all():
            n, runs, diverged = len(rows), int(rows["runs"].sum()), int(rows["diverged_runs"].sum())
            where = f"any of its {integer(n)} settings" if n != 1 else "its one setting"
            what = str(counted(runs, "run")) + (f", {integer(diverged)} diverged" if diverged else "")
            parts.append(f"{named} no seed learned at {where} ({what})")
            continue
        said = [
            f"{integer(r.seeds_learned)} of {integer(r.runs)} seeds learned at {r.setting}"
            + (f" ({integer(r.diverged_runs)} diverged)" if r.diverged_runs else "")
            for r in failed.itertuples(index=False)
        ]
        parts.append(f"{named}, {words(said)}")
    return Learned(bool(parts), Markdown("; ".join(parts)) if parts else NONE)


@dataclass(frozen=True)
class Stuck:
    """The seeds of some studies that learned but whose test perplexity is one evaluation column's doing (stuck_runs):
    the tables leave their test perplexity out."""

    shown: bool  # some seed of the studies has a stuck column
    seeds: Markdown  # "1 seed"
    each: Markdown  # "bptt = 35, seed 2 (@sec-study-...): its worst test column at perplexity 950 against ..."


def stuck(studies: Sequence[str], results: str | Path | None = None) -> Stuck:
    each = [
        f"{r.setting}, seed {integer(r.seed)} ({study_reference(r.study)}): its worst test column at perplexity "
        f"{sig(r.test_column_worst)} against a median column at {sig(r.test_column_median)}, which puts its test "
        f"perplexity at {sig(r.test_ppl)} (validation {sig(r.valid_ppl)})"
        for r in stuck_runs(list(studies), results).itertuples()
    ]
    return Stuck(bool(each), counted(len(each), "seed"), Markdown("; ".join(each)) if each else NONE)


# Table cells every section prints.


def spread(mean: float, lo: float, hi: float, digits: int = 3) -> Markdown:
    """mean (min–max over the seeds that learned), or the one value when they agree or there is one."""
    if math.isnan(mean):
        return NONE
    if math.isnan(lo) or lo == hi:
        return sig(mean, digits, plain=True)
    return Markdown(f"{sig(mean, digits, plain=True)} ({sig(lo, digits, plain=True)}–{sig(hi, digits, plain=True)})")


def count_of(count: int, runs: int) -> str:
    """A table cell: how many of a setting's runs learned, or diverged."""
    return f"{integer(count)} of {integer(runs)}"


def measured_cell(row: pd.Series, metric: str, digits: int = 3) -> str:
    """A setting's metric as a table cell: mean (range) over the seeds that learned, or "none learned". Test
    perplexity is over those seeds whose test columns did not stick (rnnbench.training.stuck_columns), the others counted."""
    if row["seeds_learned"] == 0:
        return "none learned"
    stuck = int(row.get("seeds_stuck", 0)) if metric == "test_ppl" else 0
    if stuck == row["seeds_learned"]:
        return counted(stuck, "stuck column")
    cell = spread(row[f"{metric}_mean"], row[f"{metric}_min"], row[f"{metric}_max"], digits)
    return Markdown(f"{cell}; {integer(stuck)} stuck, left out") if stuck else cell


STUCK_COLUMNS = (
    "run_id",
    "study",
    "setting",
    "seed",
    "test_ppl",
    "valid_ppl",
    "test_column_worst",
    "test_column_median",
)


def stuck_runs(studies: Sequence[str], results: str | Path | None = None) -> pd.DataFrame:
    """The runs of ``studies`` that learned but whose test perplexity is one evaluation column's doing
    (rnnbench.training.stuck_columns), each once: its study, its varied settings in words ("bptt = 35"), seed, test and
    validation perplexity, and its worst and median test column."""
    frames = []
    for study in studies:
        vary = [v for v in study_about(study, results)["vary"] if v != "seed"]
        runs = per_run(study_summary(study, results), [*vary, "seed", "outcome"])
        runs = runs[runs["learned"] & runs["stuck"]]
        setting = [
            ", ".join(f"{v} = {run[v]:g}" if isinstance(run[v], float) else f"{v} = {run[v]}" for v in vary)
            for _, run in runs.iterrows()
        ]
        frames.append(runs.assign(study=study, setting=setting, seed=runs["seed"].astype(int)))
    found = [f for f in frames if len(f)]
    table = pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=list(STUCK_COLUMNS))
    return table[list(STUCK_COLUMNS)].drop_duplicates("run_id")


def accuracy(value: float) -> str:
    """An accuracy as the sections print it: three decimals, or – where no seed learned."""
    return str(fixed(value, 3)) if not math.isnan(value) else "–"


def silent_units_display(summary: pd.DataFrame) -> pd.DataFrame:
    """A units summary (rnnbench.results.ablations.unit_summary) as the units table prints it: the shares of silent
    units, fractions there, as percentages; – where no seed learned."""
    shares = ["silent_mean", "silent_min", "silent_max"]
    table = summary.rename(columns={"seeds_learned": "learned"})
    for column in shares:
        table[column] = [NONE if math.isnan(v) else percent(100 * v) for v in summary[column]]
    return table.rename(columns={"silent_mean": "silent units, mean", "silent_min": "min", "silent_max": "max"})


def speed_display(summary: pd.DataFrame) -> pd.DataFrame:
    """A speed summary (rnnbench.results.ablations.speed_summary) as the speed table prints it: the steps to the target,
    mean and range over the seeds that learned; – where none did."""
    steps = [
        spread(m, lo, hi) for m, lo, hi in zip(*(summary[f"steps_{s}"] for s in ("mean", "min", "max")), strict=True)
    ]
    table = summary.drop(columns=["steps_mean", "steps_min", "steps_max"]).rename(columns={"seeds_learned": "learned"})
    return table.assign(**{"steps to the target": steps})


def column_or_nan(table: pd.DataFrame, name: str) -> pd.Series:
    """A column the benchmarks may lack (a build without them): NaN throughout then."""
    return table[name] if name in table else pd.Series(math.nan, index=table.index)
