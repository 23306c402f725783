"""One generated section per study: whatever results/studies/* holds, so a study added to the config
appears in the studies chapter with no edit.

    study_table      one row per run: the varied settings, the study's metric, the other measurements,
                     whether the run diverged and its outcome (rnnbench.results.outcome)
    study_section    the study's section: heading, what it measured, its figure (where it draws enough to be one,
                     rnnbench.book.figures.figure_shown) and its table, each labelled
    summary_counts   per setting of the varied keys, how many seeds learned, failed or diverged

A best and a worst run are chosen among the runs that learned, on the validation metric of rnnbench.results.selection.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR, figure_shown, one_point_each, stage_figure
from rnnbench.book.format import (
    Formatter,
    Markdown,
    cell_text,
    counted,
    humanize,
    integer,
    label_slug,
    markdown_table,
    share,
    sig,
    words,
)
from rnnbench.book.results import results_root, study_about, study_summary
from rnnbench.metrics import COUNT_METRICS, FAMILY_LABELS, METRIC_LABELS, read_metrics
from rnnbench.numbers import plural
from rnnbench.results.ablations import setting_table
from rnnbench.results.outcome import CHANCE_Z, LEARNED_FRACTION, UNKNOWN, require_outcome
from rnnbench.results.selection import SELECTED_ON, best_and_worst, selection_metric

# Columns of a study's table beside its own metric, when the runs report them (and always the metric its best
# run is chosen by, rnnbench.results.selection, so the choice can be read off the table).
STUDY_TABLE_METRICS = ("test_ppl", "valid_ppl", "agreement_accuracy", "parameters", "steps", "train_seconds")
# And, in a study whose runs clip, the threshold each clipped at and the share of its steps clipped: how often its
# clipping acted, whatever the study is about (rnnbench.metrics.clip_regime).
CLIP_TABLE_METRICS = ("clip_threshold", "clipped_fraction")


def study_table(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """Wide: one row per run (varied settings, seed), the study's metric first, then the metric its best run
    is chosen by and the other measurements, whether the run diverged (with its reason and step, when any
    did), and its outcome (rnnbench.results.outcome)."""
    about = study_about(study, results)
    summary = study_summary(study, results)
    require_outcome(summary, f"studies/{study}/summary.csv")
    keys = [c for c in dict.fromkeys((*about["vary"], "seed")) if c in summary.columns]
    runs = summary.drop_duplicates("run_id")[["run_id", *keys, "outcome"]]
    wide = summary.pivot_table(index="run_id", columns="metric", values="value", aggfunc="first", dropna=False)
    wide = runs.merge(wide.reset_index(), on="run_id", how="left")
    metric = about["metric"]
    if metric not in wide:
        wide[metric] = np.nan
    chosen_on = SELECTED_ON.get(metric)
    shown = [metric] + [
        m for m in STUDY_TABLE_METRICS if m != metric and m in wide and (wide[m].notna().any() or m == chosen_on)
    ]
    if "clipped_fraction" in wide and wide["clipped_fraction"].gt(0).any():
        shown += [m for m in CLIP_TABLE_METRICS if m != metric and m in wide]
    diverged = wide["diverged"].fillna(0).gt(0) if "diverged" in wide else pd.Series(False, index=wide.index)
    wide["diverged"] = diverged
    if diverged.any():
        reasons = _diverged_reasons(about, results)
        wide["diverged"] = [
            _diverged_text(reasons.get(run), step) if d else "no"
            for run, d, step in zip(
                wide["run_id"], diverged, wide.get("diverged_step", [None] * len(wide)), strict=True
            )
        ]
        shown.append("diverged")
    return wide[keys + shown + ["outcome"]]


def _diverged_reasons(about: Mapping[str, Any], results: str | Path | None) -> dict[str, str | None]:
    """run_id -> metrics.json's diverged_reason, where the run folder is there to read."""
    reasons = {}
    for run_id in about.get("run_ids", []):
        path = Path(paths.run_metrics(results_root(results), run_id))
        if path.is_file():
            reasons[run_id] = read_metrics(path, run_id).get("diverged_reason")
    return reasons


def _diverged_text(reason: str | None, step: Any) -> str:
    text = "yes" + (f": {reason.replace('_', ' ')}" if reason else "")
    if step is not None and not (isinstance(step, float) and math.isnan(step)):
        text += f", step {int(step):,}"
    return text


def study_section(study: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """One study's section: heading, what it measured, its figure and its table, each with a label; no figure
    where it would draw too little (one setting, or no value at all), the table alone then.

    Its best and worst run are among the runs that learned (rnnbench.results.outcome), chosen on the validation
    metric of rnnbench.results.selection and reported on the study's metric."""
    about = study_about(study, results)
    wide = study_table(study, results)
    metric, vary, slug = about["metric"], list(about["vary"]), label_slug(study)
    x = vary[0] if vary else "seed"
    metric_name = METRIC_LABELS.get(metric, metric)
    family = FAMILY_LABELS.get(about["family"], about["family"])
    drawn = paths.study_figure(results_root(results), study, "png")
    image = stage_figure(drawn, f"study-{slug}", staging) if figure_shown(drawn) else None
    marked = wide["diverged"].astype(str).str.startswith("yes") if "diverged" in wide else False
    diverged = wide["outcome"].eq("diverged") | marked
    # No ranking rests on a run that did not learn (rnnbench.results.outcome): the best and worst are among those that did.
    failed = wide["outcome"].eq("did not learn")
    unjudged = wide["outcome"].eq(UNKNOWN) & ~diverged
    measured = wide[wide["outcome"].eq("learned")].dropna(subset=[metric])
    seeds = [int(s) for s in about.get("seeds", [])]
    n_runs = len(wide)
    lines = [
        f"## The `{study}` study {{#sec-study-{slug}}}",
        "",
        f"{about['description'][0].upper()}{about['description'][1:]}.",
        f"The study trains {counted(n_runs, family + ' run')} on the "
        f"{about['corpus']} corpus, varying {words([f'`{v}`' for v in vary]) if vary else 'only the seed'}, "
        f"with {plural(len(seeds), 'seed')} {words([integer(s) for s in seeds])}.",
        "",
    ]
    cite = (
        f"@fig-study-{slug} plots {metric_name} against `{x}`, and @tbl-study-{slug} lists every run."
        if image
        else f"Its runs have a value at fewer than two settings, too few for a figure, so @tbl-study-{slug} alone lists every run."
        if not one_point_each(drawn)
        else f"Each of its runs with a value would be a point of its own, with no seed beside it and no line through "
        f"it, too few for a figure, so @tbl-study-{slug} alone lists every run."
    )
    among = "Among the runs that learned, the" if (diverged | failed | unjudged).any() else "The"
    if len(measured) == 1:
        only = measured.iloc[0]
        lines.append(
            f"{cite} The one run that learned has {metric_name} {sig(only[metric])}, at {_setting(only, vary, seeds)}."
        )
    elif len(measured):
        best, worst = best_and_worst(measured, metric, what=f"run of {study}")
        on = selection_metric(metric)
        if on == metric:
            lines.append(
                f"{cite} {among} best {metric_name}, {sig(best[metric])}, is at {_setting(best, vary, seeds)}; "
                f"the worst, {sig(worst[metric])}, at {_setting(worst, vary, seeds)}."
            )
        else:
            on_name = METRIC_LABELS.get(on, on)
            lines.append(
                f"{cite} {among} best run, chosen on {on_name} so that the test split plays no part in the "
                f"choice, is at {_setting(best, vary, seeds)}: {metric_name} {sig(best[metric])} ({on_name} "
                f"{sig(best[on])}); the worst, at {_setting(worst, vary, seeds)}: {sig(worst[metric])} "
                f"({on_name} {sig(worst[on])})."
            )
    else:
        lines.append(f"{cite} No run of this study learned, so none is ranked.")
    if diverged.any():
        n = int(diverged.sum())
        at = words([_setting(row, vary, seeds) for _, row in wide[diverged].iterrows()])
        lines.append(
            f"{integer(n).capitalize()} of the {integer(n_runs)} runs diverged ({at}): "
            + (f"the figure marks {'them' if n != 1 else 'it'} with a cross on its top edge, and " if image else "")
            + f"the table gives the reason; {'their' if n != 1 else 'its'} {metric_name} is not a result."
        )
    if failed.any():
        n = int(failed.sum())
        at = words([_setting(row, vary, seeds) for _, row in wide[failed].iterrows()])
        rule = (
            f"accuracy within {sig(CHANCE_Z)} standard errors of chance"
            if metric == "agreement_accuracy" or about["corpus"] == "agreement"
            else f"test perplexity not below {sig(LEARNED_FRACTION)} times the corpus's unigram model's, "
            "tables/baselines.csv"
        )
        lines.append(
            f"{integer(n).capitalize()} of the {integer(n_runs)} runs did not learn ({at}: {rule}): "
            + (f"the figure draws {'them' if n != 1 else 'it'} hollow and " if image else "")
            + f"the table marks {'them' if n != 1 else 'it'}; no mean or ranking here uses {'them' if n != 1 else 'it'}."
        )
    if unjudged.any():
        n = int(unjudged.sum())
        lines.append(
            f"{integer(n).capitalize()} of the {integer(n_runs)} runs could not be judged (no unigram baseline for "
            f"their corpus in tables/baselines.csv), so {'they are' if n != 1 else 'it is'} not counted as learned."
        )
    if len(seeds) > 1 and vary and (diverged | failed | unjudged).any():
        lines.append(_seeds_learned_sentence(summary_counts(study, results), vary, bool(image)))
    unmeasured = int((~diverged & wide[metric].isna()).sum())
    if unmeasured:
        lines.append(f"{counted(unmeasured, 'run').capitalize()} produced no {metric_name}.")
    # Relative to the results folder, as every caption of the book names its file.
    summary_file = os.path.relpath(paths.study_summary(".", study))
    figure_file = os.path.relpath(paths.study_figure(".", study, "png"))
    if image:
        lines += [
            "",
            f"![{metric_name.capitalize()} against `{x}` ({study}): the mean and range over the seeds that learned; "
            f"hollow, a run that did not learn; a cross, one that diverged. From {figure_file}, rule study_figure.]"
            f"({image}){{#fig-study-{slug}}}",
        ]
    lines += [
        "",
        markdown_table(
            _study_display(wide, metric, ~wide["outcome"].eq("learned")),
            formats=_study_formats(wide, metric),
            headers=_study_headers(wide),
            align={metric: "right"},
        ),
        "",
        f": Every run of {study}, one row per run, with its outcome (learned, did not learn, diverged); the "
        f"{metric_name} of a run that did not learn or diverged is in brackets, not a result. From {summary_file}, "
        f"rule study_summary. {{#tbl-study-{slug}}}",
        "",
    ]
    return Markdown("\n".join(lines))


def summary_counts(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """Per combination of the study's varied settings: runs, seeds_learned, seeds_failed, diverged_runs
    (rnnbench.results.ablations.setting_table over the study's summary)."""
    return setting_table(study_summary(study, results), list(study_about(study, results)["vary"]), [])


def _seeds_learned_sentence(counts: pd.DataFrame, vary: Sequence[str], figure: bool = True) -> str:
    """ "k of n seeds learned" for every setting where some seed failed; the figure's means, where there is a
    figure, are over those k."""
    failed = counts[counts["seeds_failed"] > 0]
    parts = [
        f"{integer(row['seeds_learned'])} of {integer(row['runs'])} seeds learned at {_setting(row, vary, [])}"
        for _, row in failed.iterrows()
    ]
    said = f"Where not every seed learned: {words(parts)}."
    if not figure:
        return said
    return f"{said} The figure's mean and range at a setting are over the seeds that learned, and a setting with none has no mean."


def _study_display(wide: pd.DataFrame, metric: str, failed: pd.Series) -> pd.DataFrame:
    """The metric of a run that did not learn or diverged is shown in brackets: printed, so nothing is hidden,
    but not as a result."""
    shown = wide.copy()
    if failed.any():
        shown[metric] = [
            Markdown(f"({sig(v, plain=True)})") if f and pd.notna(v) else v
            for v, f in zip(wide[metric], failed, strict=True)
        ]
    return shown


def _setting(row: pd.Series, vary: Sequence[str], seeds: Sequence[int]) -> str:
    parts = [f"`{v}` = {cell_text(row[v])}" for v in vary if v in row]
    if len(seeds) > 1:
        parts.append(f"seed {cell_text(row['seed'])}")
    return ", ".join(parts)


def _study_formats(wide: pd.DataFrame, metric: str) -> dict[str, Formatter]:
    counts = COUNT_METRICS - {metric}
    formats: dict[str, Formatter] = {
        c: (integer if c in counts else lambda v: sig(v, plain=True))
        for c in wide.columns
        if c in METRIC_LABELS and c != "diverged"
    }
    if "clipped_fraction" in formats and metric != "clipped_fraction":
        formats["clipped_fraction"] = share
    return formats


def _study_headers(wide: pd.DataFrame) -> dict[str, str]:
    return {c: METRIC_LABELS.get(c, humanize(c)) for c in wide.columns}
