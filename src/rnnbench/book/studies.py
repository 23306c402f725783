"""The studies chapter's values (reports/studies.qmd holds the sentences; rnnbench.book.study_sections the
generated section of each study): what its ablation sections read, the studies' extra tables and figures, and
the values their sentences state (clipping per setting, truncation's cost, each window against its matched
recurrence), with the verdicts the sentences pick their wording from.

Every mean and range over seeds here is over the seeds that learned (rnnbench.outcome, as each study's summary
holds it); each table says how many of a setting's seeds learned, and a setting none of whose seeds learned
has no mean. A best setting is chosen on validation only (rnnbench.selection). seed_outcomes gives the counts
the book's sentences state ("k of n seeds learned").

Reads results only (rnnbench.book.results); no torch.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.ablations import matched_pairs, reach_table, setting_table
from rnnbench.book.figures import STAGING_DIR, stage_figure
from rnnbench.book.format import Markdown, fixed, integer, label_slug, sig
from rnnbench.book.results import (
    agreement_baselines,
    missing_result,
    results_root,
    study_about,
    study_names,
    study_summary,
)
from rnnbench.cuts import contrast
from rnnbench.findings.registry import interval
from rnnbench.findings.stats import NO_CHANGE, difference, direction
from rnnbench.metrics import METRIC_LABELS
from rnnbench.outcome import COUNT_COLUMNS
from rnnbench.selection import best_and_worst, selection_metric

# Accuracy below this counts as not learned (two verb forms: chance is 0.5; a few hundred probes per
# distance put the seed-to-seed noise at a few points).
LEARNED = 0.55

# Measurements of the clipping table, in its column order.
CLIP_METRICS = (
    "clipped_fraction",
    "clip_cosine_mean",
    "grad_norm_median",
    "grad_norm_q95",
    "grad_norm_max",
    "diverged_step",
)


# The studies each ablation section reads (clipping: one set per corpus).


def have(*studies: str, results: str | Path | None = None) -> bool:
    """Whether every one of ``studies`` has results here (a config may leave any of them out)."""
    present = set(study_names(results))
    return all(s in present for s in studies)


CLIPPING_ROLE = "clipping"


def studies_with_role(role: str, results: str | Path | None = None, corpus: str | None = None) -> list[str]:
    """The studies with results here that carry ``role`` (study.json's roles, from the config), on ``corpus``
    if given, whatever they are named."""
    return [
        s
        for s in study_names(results)
        if role in study_about(s, results).get("roles", [])
        and (corpus is None or study_about(s, results)["corpus"] == corpus)
    ]


def clipping_studies(corpus: str, results: str | Path | None = None) -> list[str]:
    """The studies of ``corpus`` with the clipping role that have results here."""
    return studies_with_role(CLIPPING_ROLE, results, corpus)


def _first(studies: list[str]) -> str | None:
    return studies[0] if studies else None


def truncation_studies(results: str | Path | None = None) -> dict[str, str | None]:
    """The truncation section's studies, found by role: "cost" (truncation_cost: perplexity, speed and memory
    against k), "reach" (truncation_reach: agreement accuracy within and beyond k), and "cuts" (a study with a
    cuts table: the gradient cut within sentences)."""
    cuts = [
        s for s in study_names(results) if Path(paths.study_extra_table(results_root(results), s, "cuts")).is_file()
    ]
    return {
        "cost": _first(studies_with_role("truncation_cost", results)),
        "reach": _first(studies_with_role("truncation_reach", results)),
        "cuts": _first(cuts),
    }


def window_studies(results: str | Path | None = None) -> tuple[str | None, str | None]:
    """The windows (role window) and the recurrences sized to match them (role recurrence)."""
    return _first(studies_with_role("window", results)), _first(studies_with_role("recurrence", results))


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


def extra_file(study: str, name: str, kind: str = "png") -> str:
    """How a caption names the file: relative to the results folder, as every caption of the book does."""
    if kind == "csv":
        return os.path.relpath(paths.study_extra_table(".", study, name))
    return os.path.relpath(paths.study_extra_figure(".", study, name, kind))


def clipping_table(studies: list[str], results: str | Path | None = None) -> pd.DataFrame:
    """Every clipping setting of ``studies`` (a mode study: none/value; a threshold study: norm at each
    threshold) per learning rate: its runs, how many learned, failed and diverged, and the metric and the
    clipping measurements over the seeds that learned (diverged_step over the runs that diverged).

        clipping, clip_mode, clip, lr, runs, seeds_learned, seeds_failed, diverged_runs,
        <metric>_mean/_min/_max, <CLIP_METRICS>_mean/_min/_max
    """
    frames = []
    for study in studies:
        about, summary = _clipping_summary(study, results)
        table = setting_table(summary, ["clip_mode", "clip", "lr"], [about["metric"], *CLIP_METRICS])
        frames.append(table.assign(study=study, metric=about["metric"], optimizer=_optimizer(study, results)))
    # A setting two studies share (value clipping at 15 at the same rate) is the same runs: listed once.
    table = pd.concat(frames, ignore_index=True).drop_duplicates(["clip_mode", "clip", "lr"])
    table["clipping"] = [_clip_label(m, c) for m, c in zip(table["clip_mode"], table["clip"], strict=True)]
    order = {"none": 0, "norm": 1, "value": 2}
    table = table.sort_values(["clip_mode", "clip", "lr"], key=lambda c: c.map(order) if c.name == "clip_mode" else c)
    return table.reset_index(drop=True)


def _clipping_summary(study: str, results: str | Path | None = None) -> tuple[dict, pd.DataFrame]:
    """A clipping study's record and its summary, with clip_mode, clip and lr as columns even where the study
    fixes them rather than varies them."""
    about = study_about(study, results)
    summary = study_summary(study, results)
    fixed = about.get("fixed", {})
    for key in ("clip_mode", "clip", "lr"):
        if key not in summary.columns:
            summary[key] = fixed.get(key)
    return about, summary


def clipping_seed_values(studies: list[str], results: str | Path | None = None) -> pd.DataFrame:
    """Every learned run of ``studies``, once: clip_mode, clip, lr, seed and its value of its study's metric."""
    frames = []
    for study in studies:
        about, summary = _clipping_summary(study, results)
        rows = summary[(summary["metric"] == about["metric"]) & (summary["outcome"] == "learned")]
        frames.append(rows[["run_id", "clip_mode", "clip", "lr", "seed", "value"]])
    if not frames:
        return pd.DataFrame(columns=["run_id", "clip_mode", "clip", "lr", "seed", "value"])
    table = pd.concat(frames, ignore_index=True).drop_duplicates("run_id")  # a run two studies share, once
    return table.astype({"clip": float, "lr": float})


def _clip_label(mode: str, clip: float) -> str:
    if mode == "none":
        return "none"
    return f"norm ≤ {clip:g}" if mode == "norm" else f"value ±{clip:g}"


def clipping_rows(table: pd.DataFrame, mode: str) -> pd.DataFrame:
    """The rows of one clipping mode (none, norm, value)."""
    return table[table["clip_mode"] == mode]


def truncation_cost(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """Per truncation length: how many seeds learned, failed and diverged; the metric, the metric its best
    length is chosen by (rnnbench.selection) and training tokens per second (metrics.json), and the training
    job's wall seconds, CPU seconds and peak memory (tables/benchmarks.csv), each a mean over the seeds that
    learned."""
    about = study_about(study, results)
    metric = about["metric"]
    summary = study_summary(study, results)
    bench_path = Path(paths.table(results_root(results), "benchmarks"))
    if not bench_path.is_file():
        raise missing_result(bench_path)
    bench = pd.read_csv(bench_path).groupby("run_id", as_index=False).mean(numeric_only=True)
    measured = list(dict.fromkeys([metric, selection_metric(metric), "tokens_per_second", "steps"]))
    per_setting = setting_table(summary, ["bptt"], [m for m in measured if m in set(summary["metric"])])
    runs = summary.drop_duplicates("run_id")
    runs = runs[runs["outcome"] == "learned"][["run_id", "bptt"]].merge(bench, on="run_id", how="left")
    columns = [c for c in ("wall_seconds", "cpu_seconds", "max_rss_mb") if c in bench]
    cost = runs.groupby("bptt", sort=False)[columns].mean()
    return per_setting.merge(cost.reset_index(), on="bptt", how="left")


def reach(study: str, setting: str, results: str | Path | None = None) -> pd.DataFrame:
    """A study's accuracy within and beyond each setting's reach (rnnbench.ablations.reach_table)."""
    return reach_table(extra_table(study, "distance", results), setting)


def window_against_recurrence(ff_study: str, rnn_study: str, results: str | Path | None = None) -> pd.DataFrame:
    """Each window paired with the Elman RNN of the nearest parameter count, both counts stated, both sides'
    seeds that learned out of their runs (ff_learned/ff_runs, rnn_learned/rnn_runs), and both models' accuracy
    on the dependencies within the window's width and beyond it (means over the seeds that learned; NaN where
    none did); ``beyond``: whether any head-verb distance lies beyond the window, ``beyond_probes`` the probes
    there over the window's seeds that learned."""
    ff_summary, rnn_summary = study_summary(ff_study, results), study_summary(rnn_study, results)
    ff = _parameters(ff_summary, "context")
    rnn = _parameters(rnn_summary, "hidden")
    pairs = matched_pairs(ff, rnn)
    counts = {
        "ff": setting_table(ff_summary, ["context"], []).set_index("context"),
        "rnn": setting_table(rnn_summary, ["hidden"], []).set_index("hidden"),
    }
    ff_dist = extra_table(ff_study, "distance", results)
    rnn_dist = extra_table(rnn_study, "distance", results)
    heuristic = _nearest_noun(ff_study, results)
    rows = []
    for pair in pairs.itertuples(index=False):
        window = ff_dist[ff_dist["context"] == pair.context]
        recurrent = rnn_dist[rnn_dist["hidden"] == pair.hidden]
        row = pair._asdict()
        for name, table, key in (("ff", window, pair.context), ("rnn", recurrent, pair.hidden)):
            row[f"{name}_learned"] = int(counts[name].loc[key, "seeds_learned"])
            row[f"{name}_runs"] = int(counts[name].loc[key, "runs"])
            split = reach_table(table.assign(width=pair.context), "width")
            row[f"{name}_within"] = float(split["within_accuracy"].iloc[0]) if len(split) else math.nan
            row[f"{name}_beyond"] = float(split["beyond_accuracy"].iloc[0]) if len(split) else math.nan
        # whether the window has dependencies beyond its width at all, whatever its seeds did
        row["beyond"] = bool((window["distance"] > pair.context).any())
        row["beyond_probes"] = int(window.loc[window["distance"] > pair.context, "probes"].sum())
        # the count-based heuristic on the same distances: a window beyond its width is judged against it
        far = heuristic[heuristic["distance"] > pair.context]
        row["nearest_noun_beyond"] = (
            float((far["accuracy"] * far["n"]).sum() / far["n"].sum()) if len(far) else math.nan
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _nearest_noun(study: str, results: str | Path | None) -> pd.DataFrame:
    """The nearest-noun heuristic's test accuracy per head-verb distance (tables/agreement_baselines.csv) on
    the corpus ``study``'s runs read (all of a study's runs read one corpus); empty without the table or the run."""
    run_id = study_about(study, results)["run_ids"][0]
    settings = Path(paths.run_config(results_root(results), run_id))
    if not settings.is_file():
        return pd.DataFrame(columns=["distance", "accuracy", "n"])
    run = json.loads(settings.read_text())
    # rnnbench.config.RunConfig.corpus_key, from the run's own settings
    digest = hashlib.sha1(json.dumps(dict(run["corpus_options"]), sort_keys=True).encode()).hexdigest()[:8]
    try:
        table = agreement_baselines(results)
    except FileNotFoundError:
        return pd.DataFrame(columns=["distance", "accuracy", "n"])
    rows = table[(table["corpus_key"] == f"{run['corpus']}-{digest}") & (table["heuristic"] == "nearest_noun")]
    return rows[rows["split"] == "test"][["distance", "accuracy", "n"]]


def _parameters(summary: pd.DataFrame, setting: str) -> pd.DataFrame:
    rows = summary[summary["metric"] == "parameters"]
    return rows.groupby(setting, sort=False, as_index=False)["value"].first().rename(columns={"value": "parameters"})


# --------------------------------------------------------------------------------------------------------------
# The values the ablation sections' sentences print: reports/studies.qmd holds the sentences, and picks each
# one's wording from the verdicts below. Tables and figures are made here, their captions are the chapter's.

# Mikolov's element-wise clipping threshold, set for a loss summed over the sequence, not averaged: the
# clipping section names it where a value-clipping threshold never acted on this book's mean loss.
MIKOLOV_VALUE_CLIP = 15
# A truncation length of 0 is backpropagation through the whole sentence (rnnbench.config).
FULL_SENTENCE_BPTT = 0


def spread(mean: float, lo: float, hi: float, digits: int = 3) -> Markdown:
    """mean (min–max over the seeds that learned), or the one value when they agree or there is one."""
    if math.isnan(mean):
        return Markdown("–")
    if math.isnan(lo) or lo == hi:
        return sig(mean, digits, plain=True)
    return Markdown(f"{sig(mean, digits, plain=True)} ({sig(lo, digits, plain=True)}–{sig(hi, digits, plain=True)})")


def _of(count: int, runs: int) -> str:
    """A table cell: how many of a setting's runs learned, or diverged."""
    return f"{integer(count)} of {integer(runs)}"


def _measured(row: pd.Series, metric: str, digits: int = 3) -> str:
    """A setting's metric as a table cell: mean (range) over the seeds that learned, or "none learned"."""
    if row["seeds_learned"] == 0:
        return "none learned"
    return spread(row[f"{metric}_mean"], row[f"{metric}_min"], row[f"{metric}_max"], digits)


def accuracy(value: float) -> str:
    """An accuracy as the sections print it: three decimals, or – where no seed learned."""
    return str(fixed(value, 3)) if not math.isnan(value) else "–"


def _column(table: pd.DataFrame, name: str) -> pd.Series:
    """A column the benchmarks may lack (a build without them): NaN throughout then."""
    return table[name] if name in table else pd.Series(math.nan, index=table.index)


# Clipping, one section per corpus ----------------------------------------------------------------------------


def _optimizer(study: str, results: str | Path | None = None) -> str:
    """The optimiser a study's runs train with: its fixed setting, else its first run's (config.json)."""
    fixed = study_about(study, results).get("fixed", {})
    if "optimizer" in fixed:
        return str(fixed["optimizer"])
    first = study_about(study, results)["run_ids"][0]
    path = Path(paths.run_config(results_root(results), first))
    return str(json.loads(path.read_text(encoding="utf-8"))["optimizer"]) if path.is_file() else "?"


OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam"}


@dataclass(frozen=True, eq=False)
class Clipping:
    """The clipping studies of one corpus and their settings' table (clipping_table)."""

    corpus: str
    studies: tuple[str, ...]
    table: pd.DataFrame
    traced: tuple[str, ...]  # the studies with a norm trace: a figure each

    @property
    def metric(self) -> str:
        return str(self.table["metric"].iloc[0])

    @property
    def metric_name(self) -> str:
        return METRIC_LABELS.get(self.metric, self.metric)

    @property
    def label(self) -> str:
        """The section's label and its table's: sec-<label>, tbl-<label>."""
        return label_slug(f"clipping-{self.corpus}")

    @property
    def learned_any(self) -> bool:
        return bool((self.table["seeds_learned"] > 0).any())


def clipping(corpus: str, results: str | Path | None = None) -> Clipping | None:
    """The clipping section of ``corpus``, or None when no study of the clipping role has results for it."""
    studies = clipping_studies(corpus, results)
    if not studies:
        return None
    traced = [s for s in studies if Path(paths.study_extra_table(results_root(results), s, "trace")).is_file()]
    return Clipping(corpus, tuple(studies), clipping_table(studies, results), tuple(traced))


def rate_optimizers(table: pd.DataFrame) -> dict[float, str]:
    """Each learning rate's optimiser, by name, where the table's studies train with more than one (a rate
    means nothing without its optimiser then); empty where they all train with one."""
    if table["optimizer"].nunique() < 2:
        return {}
    first = table.drop_duplicates("lr")
    return {lr: OPTIMIZER_NAMES.get(o, o) for lr, o in zip(first["lr"], first["optimizer"], strict=True)}


def norm_cosine_range(table: pd.DataFrame) -> tuple[float, float] | None:
    """The lowest and highest mean cosine between the norm-clipped and the unclipped update, over the norm
    settings with a seed that learned and a step clipped; None where there is no such setting."""
    rows = clipping_rows(table, "norm")
    rows = rows[(rows["seeds_learned"] > 0) & (rows["clipped_fraction_mean"] > 0)]
    if rows.empty:
        return None
    return float(rows["clip_cosine_mean_min"].min()), float(rows["clip_cosine_mean_max"].max())


def value_clipping_turns(table: pd.DataFrame) -> pd.DataFrame:
    """Per value-clipping threshold that clipped a step of a run that learned, over its learning rates: the
    share of steps clipped and the mean cosine of the clipped update (mean, min, max).

    clip, clipped_share, cosine_mean, cosine_min, cosine_max
    """
    rows = _learned_value_rows(table)
    rows = rows[rows["clipped_fraction_mean"] > 0]
    by_clip = rows.groupby("clip", sort=True)
    return pd.DataFrame(
        {
            "clipped_share": by_clip["clipped_fraction_mean"].mean(),
            "cosine_mean": by_clip["clip_cosine_mean_mean"].mean(),
            "cosine_min": by_clip["clip_cosine_mean_min"].min(),
            "cosine_max": by_clip["clip_cosine_mean_max"].max(),
        }
    ).reset_index()


@dataclass(frozen=True)
class IdleValueClipping:
    """Value-clipping thresholds that clipped no step of their runs that learned."""

    thresholds: tuple[float, ...]
    largest_norm: float  # the largest pre-clip global norm of any of those runs; NaN where none was measured


def value_clipping_idle(table: pd.DataFrame) -> IdleValueClipping | None:
    rows = _learned_value_rows(table)
    rows = rows[~(rows["clipped_fraction_mean"] > 0)]
    if rows.empty:
        return None
    return IdleValueClipping(tuple(sorted(set(rows["clip"]))), float(rows["grad_norm_max_max"].max()))


def _learned_value_rows(table: pd.DataFrame) -> pd.DataFrame:
    rows = clipping_rows(table, "value")
    return rows[rows["seeds_learned"] > 0]


@dataclass(frozen=True)
class DivergenceAtRate:
    """At one learning rate: how many unclipped runs diverged and where (a count over every run, since
    divergence is what it measures), and the norm thresholds at which none and some diverged."""

    lr: float
    unclipped_runs: int  # 0 where the rate has no unclipped setting
    unclipped_diverged: int
    first_step: float  # of the unclipped runs that diverged; NaN where none did
    last_step: float
    norm_safe: tuple[float, ...]
    norm_diverged: tuple[tuple[float, int, int], ...]  # (threshold, runs that diverged, runs)


def divergence_by_rate(table: pd.DataFrame) -> list[DivergenceAtRate]:
    """Every learning rate with an unclipped or a norm-clipped setting, in increasing order."""
    found = []
    for lr in sorted(table["lr"].unique()):
        at = table[table["lr"] == lr]
        unclipped, norm = clipping_rows(at, "none"), clipping_rows(at, "norm")
        if unclipped.empty and norm.empty:
            continue
        u = unclipped.iloc[0] if len(unclipped) else None
        diverged = norm[norm["diverged_runs"] > 0]
        found.append(
            DivergenceAtRate(
                lr=float(lr),
                unclipped_runs=int(u["runs"]) if u is not None else 0,
                unclipped_diverged=int(u["diverged_runs"]) if u is not None else 0,
                first_step=float(u["diverged_step_min"]) if u is not None and u["diverged_runs"] else math.nan,
                last_step=float(u["diverged_step_max"]) if u is not None and u["diverged_runs"] else math.nan,
                norm_safe=tuple(norm.loc[norm["diverged_runs"] == 0, "clip"]),
                norm_diverged=tuple(
                    (float(c), int(d), int(n))
                    for c, d, n in zip(diverged["clip"], diverged["diverged_runs"], diverged["runs"], strict=True)
                ),
            )
        )
    return found


# What norm clipping at a threshold cost, by the findings' rule (rnnbench.findings.clipping.quality), so that
# this section and the findings agree: the Welch interval of the difference of seed means, clipped minus
# unclipped, over the seeds that learned.
NO_DIFFERENCE, BETTER, WORSE, NEVER_CLIPPED = "no measurable difference", "better", "worse", "never clipped"


@dataclass(frozen=True)
class ThresholdCost:
    clip: float
    verdict: str  # NO_DIFFERENCE, BETTER, WORSE or NEVER_CLIPPED
    mean: float  # the clipped seeds' mean of the metric; NaN where no step was clipped
    difference: str  # the difference of the means relative to the unclipped one, with its interval; "" idle


@dataclass(frozen=True)
class CostAtRate:
    """At a rate where no unclipped run diverged and some learned: the unclipped seeds' metric (mean, range)
    and each norm threshold that did not diverge, judged against them."""

    lr: float
    unclipped_mean: float
    unclipped_min: float
    unclipped_max: float
    thresholds: tuple[ThresholdCost, ...]


def clipping_cost(section: Clipping, results: str | Path | None = None) -> list[CostAtRate]:
    table, metric = section.table, section.metric
    none, norm = clipping_rows(table, "none"), clipping_rows(table, "norm")
    seeds = clipping_seed_values(list(section.studies), results)
    costs = []
    for lr in _calm_rates(none):
        base = none[none["lr"] == lr].iloc[0]
        unclipped = seeds[(seeds["clip_mode"] == "none") & (seeds["lr"] == lr)]["value"]
        rows = norm[(norm["lr"] == lr) & (norm["diverged_runs"] == 0) & (norm["seeds_learned"] > 0)]
        judged = []
        for clip, fraction in zip(rows["clip"], rows["clipped_fraction_mean"], strict=True):
            clipped = seeds[(seeds["clip_mode"] == "norm") & (seeds["clip"] == clip) & (seeds["lr"] == lr)]["value"]
            cost = _threshold_cost(float(clip), fraction, clipped, unclipped, metric)
            if cost is not None:
                judged.append(cost)
        stats = [float(base[f"{metric}_{s}"]) for s in ("mean", "min", "max")]
        costs.append(CostAtRate(float(lr), *stats, tuple(judged)))
    return costs


def _calm_rates(none: pd.DataFrame) -> list[float]:
    """The rates at which no unclipped run diverged and some unclipped seed learned."""
    calm = none[(none["diverged_runs"] == 0) & (none["seeds_learned"] > 0)]
    return sorted(calm["lr"].unique())


def _threshold_cost(
    clip: float, fraction: float, clipped: pd.Series, unclipped: pd.Series, metric: str
) -> ThresholdCost | None:
    """A threshold's verdict against the unclipped seeds; None where either side has too few seeds to judge."""
    if not fraction > 0:
        return ThresholdCost(clip, NEVER_CLIPPED, math.nan, "")
    iv = difference(clipped, unclipped)
    if iv is None:
        return None
    relative = interval(iv.scaled(100 / float(unclipped.mean())), unit="%")
    seen = direction(iv)
    if seen == NO_CHANGE:
        verdict = NO_DIFFERENCE
    else:
        lower_is_better = metric.endswith("ppl")
        verdict = WORSE if (seen == "above") == lower_is_better else BETTER
    return ThresholdCost(clip, verdict, float(clipped.mean()), relative)


def clipping_display(section: Clipping) -> pd.DataFrame:
    """The section's table: every setting at each rate, its seeds and what clipping measured."""
    table, metric = section.table, section.metric
    optimizers = rate_optimizers(table)
    return pd.DataFrame(
        {
            "clipping": table["clipping"],
            "lr": [f"{v:g}" + (f" ({optimizers[v]})" if optimizers else "") for v in table["lr"]],
            "learned": [_of(k, n) for k, n in zip(table["seeds_learned"], table["runs"], strict=True)],
            "diverged": [_of(d, n) for d, n in zip(table["diverged_runs"], table["runs"], strict=True)],
            section.metric_name: [_measured(row, metric) for _, row in table.iterrows()],
            "steps clipped": [f"{100 * v:.0f}%" if not math.isnan(v) else "–" for v in table["clipped_fraction_mean"]],
            "cosine": [fixed(v, 4) if not math.isnan(v) else "–" for v in table["clip_cosine_mean_mean"]],
            "median norm": [sig(v, plain=True) for v in table["grad_norm_median_mean"]],
            "95% norm": [sig(v, plain=True) for v in table["grad_norm_q95_mean"]],
        }
    )


def norm_traces(
    section: Clipping, results: str | Path | None = None, staging: str | Path = STAGING_DIR
) -> dict[str, str]:
    """Each traced study's norm-trace figure, staged into the book: study -> image path."""
    return {s: extra_figure(s, "norm-trace", results, staging) for s in section.traced}


# Truncation --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TruncationCost:
    """The truncation study on PTB (role truncation_cost) and its lengths' table (truncation_cost)."""

    study: str
    metric: str
    table: pd.DataFrame
    train_tokens: int | None  # the training tokens every length reads; None: the whole training split
    max_steps_per_epoch: int | None  # the cap on updates an epoch, where the study sets one

    @property
    def metric_name(self) -> str:
        return METRIC_LABELS.get(self.metric, self.metric)

    @property
    def learned(self) -> pd.DataFrame:
        """The lengths with a seed that learned and a mean of the metric, indexed by bptt."""
        ok = self.table[self.table["seeds_learned"] > 0].dropna(subset=[f"{self.metric}_mean"])
        return ok.set_index("bptt", drop=False)


def truncation_cost_study(results: str | Path | None = None) -> TruncationCost | None:
    study = truncation_studies(results)["cost"]
    if not study:
        return None
    about = study_about(study, results)
    settings = about.get("fixed", {})
    return TruncationCost(
        study,
        about["metric"],
        truncation_cost(study, results),
        settings.get("train_tokens"),
        settings.get("max_steps_per_epoch"),
    )


def updates_by_length(cost: TruncationCost) -> tuple[pd.Series, pd.Series] | None:
    """The updates of the shortest length and of the longest (most and fewest), where every length reads the
    same tokens with no cap on updates and more than one length has a count; else None."""
    steps = cost.table.dropna(subset=["steps_mean"]) if "steps_mean" in cost.table else cost.table.iloc[0:0]
    if len(steps) < 2 or cost.max_steps_per_epoch:
        return None
    by_length = steps.sort_values("bptt")
    return by_length.iloc[0], by_length.iloc[-1]


def best_and_worst_length(cost: TruncationCost) -> tuple[pd.Series, pd.Series] | None:
    """The best and worst length on validation (rnnbench.selection), among those with a seed that learned;
    None where fewer than two have one."""
    if len(cost.learned) < 2:
        return None
    return best_and_worst(cost.learned, cost.metric, suffix="_mean", what="truncation length (bptt)")


def selected_on(cost: TruncationCost) -> str | None:
    """The name of the metric the best length is chosen by, where it is not the metric reported."""
    on = selection_metric(cost.metric)
    return METRIC_LABELS.get(on, on) if on != cost.metric else None


def fastest_and_slowest(cost: TruncationCost) -> tuple[pd.Series, pd.Series] | None:
    """The lengths that trained fastest and slowest in tokens per second, where more than one was measured."""
    speed = cost.learned.dropna(subset=["tokens_per_second_mean"]).sort_values("tokens_per_second_mean")
    return (speed.iloc[-1], speed.iloc[0]) if len(speed) > 1 else None


def memory_range(cost: TruncationCost) -> tuple[pd.Series, pd.Series] | None:
    """The lengths with the least and the most peak memory, where more than one was measured."""
    if "max_rss_mb" not in cost.learned:
        return None
    memory = cost.learned.dropna(subset=["max_rss_mb"]).sort_values("max_rss_mb")
    return (memory.iloc[0], memory.iloc[-1]) if len(memory) > 1 else None


def truncation_display(cost: TruncationCost) -> pd.DataFrame:
    """The PTB truncation table: every length's seeds, its metric, speed, time and memory."""
    table = cost.table
    return pd.DataFrame(
        {
            "bptt": table["bptt"].astype(int),
            "learned": [_of(k, n) for k, n in zip(table["seeds_learned"], table["runs"], strict=True)],
            cost.metric_name: [_measured(row, cost.metric) for _, row in table.iterrows()],
            "tokens/s": [sig(v, plain=True) for v in table["tokens_per_second_mean"]],
            "wall s": [sig(v, plain=True) for v in _column(table, "wall_seconds")],
            "CPU s": [sig(v, plain=True) for v in _column(table, "cpu_seconds")],
            "peak MB": [integer(v) if not math.isnan(v) else "–" for v in _column(table, "max_rss_mb")],
        }
    )


# How far a truncation length's accuracy can be read (truncation_reach's ``kind``): no seed learned; the
# whole sentence is within reach (full-sentence BPTT); every distance is within reach; or some lie beyond.
NONE_LEARNED, WHOLE_SENTENCE, ALL_WITHIN, WITHIN_AND_BEYOND = "none learned", "whole sentence", "all within", "beyond"


def truncation_reach(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """Per truncation length of ``study`` (reach: accuracy within and beyond k), with its ``kind``."""
    rows = reach(study, "bptt", results)
    return rows.assign(kind=[_reach_kind(row) for _, row in rows.iterrows()])


def _reach_kind(row: pd.Series) -> str:
    if row["seeds_learned"] == 0:
        return NONE_LEARNED
    if math.isinf(row["width"]):
        return WHOLE_SENTENCE
    return ALL_WITHIN if row["beyond_probes"] == 0 else WITHIN_AND_BEYOND


# What truncation does beyond k (ReachDrop's ``verdict``): full-sentence BPTT did not learn agreement, so the
# lengths say nothing; beyond k some length stays above chance; or every one is at chance there.
FULL_NOT_LEARNED, ABOVE_CHANCE, AT_CHANCE = "full sentence not learned", "above chance", "at chance"


@dataclass(frozen=True)
class ReachDrop:
    verdict: str
    smallest: float  # the drop from within k to beyond it, over the truncated lengths that learned; NaN where
    largest: float  # full-sentence BPTT did not learn


def reach_drop(rows: pd.DataFrame) -> ReachDrop | None:
    """The drop from within k to beyond it (truncation_reach's rows), or why there is none to read; None where
    no length that learned has probes beyond its k."""
    measured = rows[rows["seeds_learned"] > 0]
    full = measured[measured["kind"] == WHOLE_SENTENCE]
    if len(full) and full["within_accuracy"].iloc[0] < LEARNED:
        return ReachDrop(FULL_NOT_LEARNED, math.nan, math.nan)
    beyond = measured[(measured["kind"] == WITHIN_AND_BEYOND) & measured["beyond_accuracy"].notna()]
    if beyond.empty:
        return None
    drops = beyond["within_accuracy"] - beyond["beyond_accuracy"]
    verdict = ABOVE_CHANCE if (beyond["beyond_accuracy"] > LEARNED).any() else AT_CHANCE
    return ReachDrop(verdict, float(drops.min()), float(drops.max()))


def distance_figures(
    study: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR
) -> dict[str, str]:
    """A study's distance-heatmap and distance-curves figures, staged into the book: name -> image path."""
    return {name: extra_figure(study, name, results, staging) for name in ("distance-heatmap", "distance-curves")}


def sentence_cuts(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """The runs whose gradient is cut every k steps of a sentence (rnnbench.cuts.contrast), at each distance
    with probes on both sides of a cut, beside full-sentence BPTT on the same probes (NaN where it has none).

    cut_every, distance, within, across, within_probes, across_probes, full_within, full_across
    """
    rows = contrast(extra_table(study, "cuts", results), ["bptt"])
    full = rows[rows["bptt"] == FULL_SENTENCE_BPTT][["cut_every", "distance", "within", "across"]]
    full = full.rename(columns={"within": "full_within", "across": "full_across"})
    cut = rows[rows["bptt"] != FULL_SENTENCE_BPTT].drop(columns=["bptt", "gap"])
    return cut.merge(full, on=["cut_every", "distance"], how="left").reset_index(drop=True)


# Window against recurrence -----------------------------------------------------------------------------------

# Whether the windows beyond their width are compared with their recurrences (WindowComparison.state): no
# pair has seeds that learned on both sides; no recurrence learned even within the windows' widths; or they are.
NOTHING_COMPARED, RECURRENCE_NOT_LEARNED, COMPARED = "nothing compared", "recurrence not learned", "compared"


@dataclass(frozen=True, eq=False)
class WindowComparison:
    """The windows (role window), the recurrences sized to match them (role recurrence), and their pairs
    (window_against_recurrence)."""

    windows: str
    recurrences: str
    pairs: pd.DataFrame
    attractor_prob: float | None  # the windows' corpus option: how likely a noun between has the other number

    @property
    def beyond(self) -> pd.DataFrame:
        """The pairs whose window has dependencies beyond its width."""
        return self.pairs[self.pairs["beyond"]]

    @property
    def compared(self) -> pd.DataFrame:
        """The pairs with dependencies beyond the window and seeds that learned on both sides: the only ones
        a claim is made on."""
        rows = self.beyond[(self.beyond["ff_learned"] > 0) & (self.beyond["rnn_learned"] > 0)]
        return rows.dropna(subset=["ff_within", "ff_beyond", "rnn_within", "rnn_beyond"])

    @property
    def state(self) -> str:
        if self.compared.empty:
            return NOTHING_COMPARED
        return RECURRENCE_NOT_LEARNED if (self.compared["rnn_within"] < LEARNED).all() else COMPARED

    @property
    def nearest_noun_informs(self) -> bool:
        """Whether a noun between head and verb more likely has the head's number than not, so that a window
        beyond its width has a better guess than a coin."""
        return self.attractor_prob is not None and self.attractor_prob < 0.5

    @property
    def judged(self) -> pd.DataFrame:
        """The pairs beyond the window whose window and nearest-noun heuristic both have an accuracy there."""
        return self.beyond.dropna(subset=["ff_beyond", "nearest_noun_beyond"])

    @property
    def below_heuristic(self) -> int:
        """Of the judged windows, how many score below the nearest-noun heuristic beyond their width."""
        return int((self.judged["ff_beyond"] < self.judged["nearest_noun_beyond"]).sum())

    @property
    def near_chance(self) -> int:
        """Of the compared windows, how many are below LEARNED beyond their width."""
        return int((self.compared["ff_beyond"] < LEARNED).sum())

    @property
    def recurrence_better(self) -> int:
        """Of the compared pairs, in how many the recurrence beats the window beyond the window's width."""
        return int((self.compared["rnn_beyond"] > self.compared["ff_beyond"]).sum())


def window_comparison(results: str | Path | None = None) -> WindowComparison | None:
    """None unless both a window study and a recurrence study have results here."""
    windows, recurrences = window_studies(results)
    if not (windows and recurrences):
        return None
    options = study_about(windows, results).get("fixed", {}).get("corpus_options", {})
    pairs = window_against_recurrence(windows, recurrences, results)
    return WindowComparison(windows, recurrences, pairs, options.get("attractor_prob"))


def window_display(comparison: WindowComparison) -> pd.DataFrame:
    """Each window with its matched recurrence: both sizes, both sides' seeds and accuracy within and beyond."""
    pairs = comparison.pairs
    return pd.DataFrame(
        {
            "n-1": pairs["context"],
            "window parameters": [integer(v) for v in pairs["ff_parameters"]],
            "RNN H": pairs["hidden"],
            "RNN parameters": [integer(v) for v in pairs["rnn_parameters"]],
            "ratio": [fixed(v, 3) for v in pairs["ratio"]],
            "window learned": [_of(k, n) for k, n in zip(pairs["ff_learned"], pairs["ff_runs"], strict=True)],
            "RNN learned": [_of(k, n) for k, n in zip(pairs["rnn_learned"], pairs["rnn_runs"], strict=True)],
            "window within": [accuracy(v) for v in pairs["ff_within"]],
            "window beyond": [accuracy(v) for v in pairs["ff_beyond"]],
            "RNN within": [accuracy(v) for v in pairs["rnn_within"]],
            "RNN beyond": [accuracy(v) for v in pairs["rnn_beyond"]],
        }
    )
