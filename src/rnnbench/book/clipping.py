"""The clipping sections' values (reports/studies.qmd, one section per corpus): every clipping setting of the
studies with the clipping role, per learning rate, with its seeds and what clipping measured (the share of steps
clipped, the cosine between the clipped and the unclipped gradient, and between the updates Adam took from them,
the gradient's norm); where unclipped training diverges and which thresholds stop it; what each threshold costs
where it does not, with the verdict the sentences pick their wording from (the findings' rule, so that the section
and the findings agree); and how far clipping turned the optimiser's update, over every clipping study (update_turn).

Reads results only (rnnbench.book.results); no torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR
from rnnbench.book.format import fixed, label_slug, sig
from rnnbench.book.results import results_root, study_about, study_summary
from rnnbench.book.studies import count_of, extra_figure, measured_cell, studies_with_role
from rnnbench.findings.registry import interval
from rnnbench.findings.stats import NO_CHANGE, difference, direction
from rnnbench.metrics import METRIC_LABELS, UPDATE_COSINE_EVERY
from rnnbench.results.ablations import setting_table

# Measurements of the clipping table, in its column order.
CLIP_METRICS = (
    "clipped_fraction",
    "clip_cosine_mean",
    "update_cosine_mean",
    "grad_norm_median",
    "grad_norm_q95",
    "grad_norm_max",
    "diverged_step",
)

CLIPPING_ROLE = "clipping"


def clipping_studies(corpus: str, results: str | Path | None = None) -> list[str]:
    """The studies of ``corpus`` with the clipping role that have results here."""
    return studies_with_role(CLIPPING_ROLE, results, corpus)


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


# Mikolov's element-wise clipping threshold, set for a loss summed over the sequence, not averaged: the
# clipping section names it where a value-clipping threshold never acted on this book's mean loss.
MIKOLOV_VALUE_CLIP = 15


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


def section(corpus: str, results: str | Path | None = None) -> Clipping | None:
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
            "learned": [count_of(k, n) for k, n in zip(table["seeds_learned"], table["runs"], strict=True)],
            "diverged": [count_of(d, n) for d, n in zip(table["diverged_runs"], table["runs"], strict=True)],
            section.metric_name: [measured_cell(row, metric) for _, row in table.iterrows()],
            "steps clipped": [f"{100 * v:.0f}%" if not math.isnan(v) else "–" for v in table["clipped_fraction_mean"]],
            "gradient cosine": [fixed(v, 4) if not math.isnan(v) else "–" for v in table["clip_cosine_mean_mean"]],
            "update cosine": [fixed(v, 4) if not math.isnan(v) else "–" for v in table["update_cosine_mean_mean"]],
            "median norm": [sig(v, plain=True) for v in table["grad_norm_median_mean"]],
            "95% norm": [sig(v, plain=True) for v in table["grad_norm_q95_mean"]],
        }
    )


def norm_traces(
    section: Clipping, results: str | Path | None = None, staging: str | Path = STAGING_DIR
) -> dict[str, str]:
    """Each traced study's norm-trace figure, staged into the book: study -> image path."""
    return {s: extra_figure(s, "norm-trace", results, staging) for s in section.traced}


@dataclass(frozen=True)
class UpdateTurn:
    """How far clipping turned the optimiser's update (rnnbench.training.clipping), over the runs of every study with
    the clipping role that measured it on a clipped step: each run once, its statistics from its metrics.json, and
    those of the runs that learned (rnnbench.results.outcome) alone stated."""

    studies: tuple[str, ...]  # the studies with an update table: a figure each
    runs: int  # runs with a clipped step whose update was measured
    learned: int  # of those, the runs that learned
    steps: int  # the measured clipped steps of the runs that learned
    mean_low: float  # the lowest and highest per-run mean cosine over the runs that learned; NaN where none
    mean_high: float
    smallest: float  # the smallest cosine of any one measured step of a run that learned; NaN where none
    every: int = UPDATE_COSINE_EVERY  # steps between two measurements


def update_turn(results: str | Path | None = None) -> UpdateTurn:
    studies = studies_with_role(CLIPPING_ROLE, results)
    frames = [study_summary(s, results) for s in studies]
    traced = tuple(s for s in studies if Path(paths.study_extra_table(results_root(results), s, "update")).is_file())
    if not frames:
        return UpdateTurn(traced, 0, 0, 0, math.nan, math.nan, math.nan)
    rows = pd.concat(frames, ignore_index=True)
    wide = rows.pivot_table(index="run_id", columns="metric", values="value", aggfunc="first")
    wide = wide.reindex(columns=["update_cosine_mean", "update_cosine_min", "update_cosine_steps"])
    wide["learned"] = wide.index.map(rows.drop_duplicates("run_id").set_index("run_id")["outcome"]) == "learned"
    measured = wide[wide["update_cosine_steps"].fillna(0) > 0]
    good = measured[measured["learned"]]
    return UpdateTurn(
        traced,
        len(measured),
        len(good),
        int(good["update_cosine_steps"].sum()),
        float(good["update_cosine_mean"].min()) if len(good) else math.nan,
        float(good["update_cosine_mean"].max()) if len(good) else math.nan,
        float(good["update_cosine_min"].min()) if len(good) else math.nan,
    )


def update_figures(
    turn: UpdateTurn, results: str | Path | None = None, staging: str | Path = STAGING_DIR
) -> dict[str, str]:
    """Each measured study's update-cosine figure, staged into the book: study -> image path."""
    return {s: extra_figure(s, "update-cosine", results, staging) for s in turn.studies}
