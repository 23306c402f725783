"""The clipping sections' values (reports/studies.qmd, one section per corpus): every clipping setting of the
studies with the clipping role, per learning rate, with its seeds and what clipping measured; each setting read by
its regime, set before training from its threshold against the unclipped median norm (rnnbench.findings.clipping.
with_regimes, the findings' rule: rare spikes above it, ordinary steps at or below), beside how often its threshold
acted, flagged where that contradicts the regime; where
unclipped training diverges and which settings stop it, per regime; and what each threshold costs where it does not,
with the verdict the sentences pick their wording from (the findings' rule, so that the section and the findings
agree).

A setting's threshold is its `clip`, or, where ``clip_times_median`` sets it, the threshold its runs resolved from
their reference's median norm (config.json's `clip`; metrics.json's clip_threshold, beside the reference's median).
A norm threshold of .inf never clips: that setting is read as unclipped, as clip_mode none is.
And how far clipping turned the optimiser's update, over every clipping study (update_turn).

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
from rnnbench.book.format import fixed, label_slug, share, sig
from rnnbench.book.results import results_root, study_about, study_summary
from rnnbench.book.studies import count_of, extra_figure, extra_shown, extra_table, measured_cell, studies_with_role
from rnnbench.findings.clipping import with_regimes
from rnnbench.metrics import METRIC_LABELS, UPDATE_COSINE_EVERY, regime_contradicted
from rnnbench.results.ablations import per_run, setting_table
from rnnbench.results.outcome import BLEW_UP, DIVERGED

# Measurements of the clipping table, in its column order.
CLIP_METRICS = (
    "clipped_fraction",
    "clip_cosine_mean",
    "update_cosine_mean",
    "grad_norm_median",
    "grad_norm_q95",
    "grad_norm_max",
    "diverged_step",
    "clip_threshold",
    "clip_reference_median",
)
# The share of steps clipped puts a setting in its regime whatever its runs' outcomes: it is taken over every run of
# the setting (a diverged run's over the steps it took), not over the seeds that learned.
EVERY_RUN = ("clipped_fraction",)
# What makes a clipping setting: the mode, the threshold, the multiple of the median norm that set it, the rate.
SETTING_KEYS = ("clip_mode", "clip", "clip_times_median", "lr")

CLIPPING_ROLE = "clipping"


def clipping_studies(corpus: str, results: str | Path | None = None) -> list[str]:
    """The studies of ``corpus`` with the clipping role that have results here."""
    return studies_with_role(CLIPPING_ROLE, results, corpus)


def clipping_table(studies: list[str], results: str | Path | None = None) -> pd.DataFrame:
    """Every clipping setting of ``studies`` per learning rate: its runs, how many learned, failed and diverged, the
    metric and the clipping measurements over the seeds that learned (diverged_step over the runs that diverged; the
    share of steps clipped, and the threshold, over every run), whether it is unclipped, its a-priori regime (""
    for no norm threshold, or none to set it against), its threshold's multiple of the median (times) and whether its
    share of steps clipped contradicts the regime.

        clipping, clip_mode, clip, clip_times_median, lr, optimizer, study, metric, unclipped, regime, times,
        contradicted, runs, seeds_learned, seeds_failed, diverged_runs, blown_runs (diverged, or ended above the
        unigram model's perplexity: rnnbench.results.outcome.blew_up), <metric>_mean/_min/_max,
        <CLIP_METRICS>_mean/_min/_max
    """
    frames = []
    for study in studies:
        about, summary = _clipping_summary(study, results)
        table = setting_table(summary, list(SETTING_KEYS), [about["metric"], *CLIP_METRICS], every_run=EVERY_RUN)
        table = table.merge(_blown_runs(summary), on=list(SETTING_KEYS), how="left")
        table = table.merge(_regimes(study, summary), on=list(SETTING_KEYS), how="left")
        frames.append(table.assign(study=study, metric=about["metric"], optimizer=_optimizer(study, results)))
    # A setting two studies share is the same runs: listed once.
    table = pd.concat(frames, ignore_index=True).drop_duplicates([*SETTING_KEYS, "optimizer"])
    table["unclipped"] = table["clip_mode"].eq("none") | table["clip"].eq(math.inf)
    table["clipping"] = [_clip_label(row) for _, row in table.iterrows()]
    table["regime"] = table["regime"].fillna("")
    table["contradicted"] = [
        regime_contradicted(r, f) for r, f in zip(table["regime"], table["clipped_fraction_mean"], strict=True)
    ]
    kind = table["clip_mode"].map({"norm": 1, "value": 2}).where(~table["unclipped"], 0)
    table = table.assign(_kind=kind).sort_values(["_kind", "clip", "lr"]).drop(columns="_kind")
    return table.reset_index(drop=True)


def _blown_runs(summary: pd.DataFrame) -> pd.DataFrame:
    """Each setting (SETTING_KEYS) with blown_runs: its runs whose training blew up, diverging or ending above the
    unigram model's perplexity (the summary's BLEW_UP row; a run with no such row counts as blown where it diverged)."""
    runs = summary.drop_duplicates("run_id")[["run_id", *SETTING_KEYS, "outcome"]].copy()
    flags = summary[summary["metric"] == BLEW_UP].set_index("run_id")["value"]
    blown = pd.to_numeric(runs["run_id"].map(flags), errors="coerce").fillna(0).gt(0)
    runs["blown_runs"] = (blown | runs["outcome"].eq(DIVERGED)).astype(int)
    return runs.groupby(list(SETTING_KEYS), dropna=False, sort=False)["blown_runs"].sum().reset_index()


def _regimes(study: str, summary: pd.DataFrame) -> pd.DataFrame:
    """Each setting of ``study`` (SETTING_KEYS) with its a-priori regime and multiple of the median, by the findings'
    rule over its runs (rnnbench.findings.clipping.with_regimes)."""
    runs = summary.drop_duplicates("run_id")[["run_id", *SETTING_KEYS, "outcome"]]
    norms = summary[summary["metric"] == "grad_norm_median"].set_index("run_id")["value"]
    runs = runs.assign(
        study=study,
        diverged=runs["outcome"].eq("diverged"),
        grad_norm_median=pd.to_numeric(runs["run_id"].map(norms), errors="coerce").astype(float),
    )
    found = with_regimes(runs)
    return found.drop_duplicates(list(SETTING_KEYS))[[*SETTING_KEYS, "regime", "times"]]


def _clipping_summary(study: str, results: str | Path | None = None) -> tuple[dict, pd.DataFrame]:
    """A clipping study's record and its summary, with clip_mode, clip, clip_times_median and lr as columns even
    where the study fixes them rather than varies them; a setting it does neither is each run's own (config.json,
    where `clip` is the threshold a relative one resolved to)."""
    about = study_about(study, results)
    summary = study_summary(study, results)
    fixed_settings = about.get("fixed", {})
    for key in SETTING_KEYS:
        if key in summary.columns:
            continue
        if key in fixed_settings:
            summary[key] = fixed_settings[key]
        else:
            own = {run: run_setting(run, key, results) for run in summary["run_id"].unique()}
            summary[key] = summary["run_id"].map(own)
    for key in ("clip", "clip_times_median", "lr"):  # "inf" as JSON writes it, None where not set: numbers
        summary[key] = pd.to_numeric(summary[key].replace({"inf": math.inf}), errors="coerce").astype(float)
    return about, summary


def run_setting(run_id: str, key: str, results: str | Path | None) -> float | str | None:
    """A run's setting from its config.json (None where there is none to read)."""
    path = Path(paths.run_config(results_root(results), run_id))
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8")).get(key)


def clipping_seed_values(studies: list[str], results: str | Path | None = None) -> pd.DataFrame:
    """Every learned run of ``studies``, once: its setting (SETTING_KEYS), seed and its value of its study's metric;
    a test perplexity that is one stuck column's doing is left out, as the studies' tables and the claims leave it."""
    columns = ["run_id", *SETTING_KEYS, "seed", "value"]
    frames = []
    for study in studies:
        about, summary = _clipping_summary(study, results)
        rows = summary[(summary["metric"] == about["metric"]) & (summary["outcome"] == "learned")]
        if about["metric"] == "test_ppl":  # a stuck column's test perplexity is shown, never compared
            held = per_run(summary, ["outcome"]).set_index("run_id")["stuck"]
            rows = rows[~rows["run_id"].map(held).fillna(False).astype(bool)]
        frames.append(rows[columns])
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True).drop_duplicates("run_id")  # a run two studies share, once


def _clip_label(row: pd.Series) -> str:
    if row["unclipped"]:
        return "none"
    if row["clip_mode"] == "value":
        return f"value ±{row['clip']:g}"
    times = row["clip_times_median"]
    return f"norm, {times:g} × median" if not math.isnan(times) else f"norm ≤ {row['clip']:g}"


def clipping_rows(table: pd.DataFrame, mode: str) -> pd.DataFrame:
    """The rows of one kind: "none" (unclipped: clip_mode none, or a norm threshold of .inf), "norm" (a finite norm
    threshold) or "value"."""
    if mode == "none":
        return table[table["unclipped"]]
    return table[(table["clip_mode"] == mode) & ~table["unclipped"]]


def _optimizer(study: str, results: str | Path | None = None) -> str:
    """The optimiser a study's runs train with: its fixed setting, else its first run's (config.json)."""
    about = study_about(study, results)
    if "optimizer" in about.get("fixed", {}):
        return str(about["fixed"]["optimizer"])
    return str(run_setting(about["run_ids"][0], "optimizer", results) or "?")


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
    # a norm trace is drawn where a study wrote one, and shown where it draws enough (rnnbench.book.figures)
    traced = [
        s
        for s in studies
        if Path(paths.study_extra_table(results_root(results), s, "trace")).is_file()
        and extra_shown(s, "norm-trace", results)
    ]
    return Clipping(corpus, tuple(studies), clipping_table(studies, results), tuple(traced))


def rate_optimizers(table: pd.DataFrame) -> dict[float, str]:
    """Each learning rate's optimiser, by name, where the table's studies train with more than one (a rate
    means nothing without its optimiser then); empty where they all train with one."""
    if table["optimizer"].nunique() < 2:
        return {}
    first = table.drop_duplicates("lr")
    return {lr: OPTIMIZER_NAMES.get(o, o) for lr, o in zip(first["lr"], first["optimizer"], strict=True)}


@dataclass(frozen=True)
class RelativeThresholds:
    """The norm thresholds of a section set from a measured norm (clip_times_median): the reference's median pre-clip
    norm, each multiple with the threshold it resolved to, and the rates they are crossed with."""

    median: float  # the reference's median pre-clip global norm (mean over the settings' records: one reference)
    reference_lr: float  # the reference's rate and seed (NaN where each setting's reference is its own)
    reference_seed: float
    multiples: tuple[float, ...]
    thresholds: tuple[float, ...]
    rates: tuple[float, ...]
    seeds: int  # runs per setting


def relative_thresholds(section: Clipping, results: str | Path | None = None) -> RelativeThresholds | None:
    """Of one study of the section that sets thresholds relative to a measured norm, the first with plain SGD (the
    clipping figure's, rnnbench.paths.clipping_figure_studies) if there is one: each study has its own reference, so
    two are never averaged. None where no setting of the section has such a threshold."""
    rows = clipping_rows(section.table, "norm")
    rows = rows[rows["clip_times_median"].notna()]
    if rows.empty:
        return None
    sgd = set(rows.loc[rows["optimizer"] == paths.CLIPPING_FIGURE_OPTIMIZER, "study"])
    found = [s for s in section.studies if s in set(rows["study"])]
    rows = rows[rows["study"] == sorted(found, key=lambda s: s not in sgd)[0]]
    by_multiple = rows.groupby("clip_times_median", sort=True)["clip_threshold_mean"].mean()
    first = study_about(str(rows["study"].iloc[0]), results)
    reference = {
        key: first.get("fixed", {}).get(key, run_setting(first["run_ids"][0], key, results))
        for key in ("clip_reference_lr", "clip_reference_seed")
    }
    return RelativeThresholds(
        median=float(rows["clip_reference_median_mean"].mean()),
        reference_lr=float(reference["clip_reference_lr"]) if reference["clip_reference_lr"] is not None else math.nan,
        reference_seed=float(reference["clip_reference_seed"])
        if reference["clip_reference_seed"] is not None
        else math.nan,
        multiples=tuple(float(m) for m in by_multiple.index),
        thresholds=tuple(float(t) for t in by_multiple),
        rates=tuple(sorted(float(r) for r in rows["lr"].unique())),
        seeds=int(rows["runs"].max()),
    )


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


def _learned_value_rows(table: pd.DataFrame) -> pd.DataFrame:
    rows = clipping_rows(table, "value")
    return rows[rows["seeds_learned"] > 0]


@dataclass(frozen=True)
class Idle:
    """Clipping settings that clipped no step of any of their runs: the unclipped runs again, under another name."""

    settings: tuple[str, ...]  # their labels, each at its rate
    largest_norm: float  # the largest pre-clip global norm of any of their runs that learned; NaN where none did


def idle_settings(table: pd.DataFrame) -> Idle | None:
    rows = table[~table["unclipped"] & table["clipped_fraction_mean"].eq(0)]
    if rows.empty:
        return None
    said = tuple(f"{c} at rate {lr:g}" for c, lr in zip(rows["clipping"], rows["lr"], strict=True))
    return Idle(said, float(rows["grad_norm_max_max"].max()))


def clipping_display(section: Clipping) -> pd.DataFrame:
    """The section's table: every setting at each rate, its seeds, its threshold, the share of steps it clipped
    and its regime, and what clipping measured."""
    table, metric = section.table, section.metric
    optimizers = rate_optimizers(table)
    regimes = [_steps_clipped(row) for _, row in table.iterrows()]
    return pd.DataFrame(
        {
            "clipping": table["clipping"],
            "lr": [f"{v:g}" + (f" ({optimizers[v]})" if optimizers else "") for v in table["lr"]],
            "learned": [count_of(k, n) for k, n in zip(table["seeds_learned"], table["runs"], strict=True)],
            "diverged": [count_of(d, n) for d, n in zip(table["diverged_runs"], table["runs"], strict=True)],
            section.metric_name: [measured_cell(row, metric) for _, row in table.iterrows()],
            "threshold": [
                "–" if u else sig(c, plain=True) for u, c in zip(table["unclipped"], table["clip"], strict=True)
            ],
            "steps clipped": regimes,
            "gradient cosine": [fixed(v, 4) if not math.isnan(v) else "–" for v in table["clip_cosine_mean_mean"]],
            "update cosine": [fixed(v, 4) if not math.isnan(v) else "–" for v in table["update_cosine_mean_mean"]],
            "median norm": [sig(v, plain=True) for v in table["grad_norm_median_mean"]],
        }
    )


def _steps_clipped(row: pd.Series) -> str:
    """A setting's share of steps clipped beside its a-priori regime, flagged where the share contradicts it."""
    if row["unclipped"] or math.isnan(row["clipped_fraction_mean"]):
        return "–"
    said = share(row["clipped_fraction_mean"])
    if row["regime"]:
        said += f", {row['regime']}" + (" (contradicted)" if row["contradicted"] else "")
    return said


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
    """Each measured study's update-cosine figure, staged into the book, where it draws enough to be shown
    (rnnbench.book.figures.figure_shown): study -> image path."""
    return {s: extra_figure(s, "update-cosine", results, staging) for s in update_shown(turn, results)}


def update_shown(turn: UpdateTurn, results: str | Path | None = None) -> list[str]:
    """The measured studies whose update-cosine figure is shown; the others' steps are a table (update_steps)."""
    return [s for s in turn.studies if extra_shown(s, "update-cosine", results)]


def update_labels(turn: UpdateTurn, results: str | Path | None = None) -> list[str]:
    """Where each measured study's steps are in the book: its figure's label, or its table's where the figure
    draws too little."""
    shown = set(update_shown(turn, results))
    return [f"{'fig' if s in shown else 'tbl'}-{label_slug(s)}-update-cosine" for s in turn.studies]


def update_steps(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """A study's measured clipped steps (update.csv) as the book prints them where the figure is not shown: the
    run's clipping and seed, the step, ||g|| / threshold, the update's cosine to the unclipped one, its outcome."""
    steps = extra_table(study, "update", results)
    ratio = [
        g / c if m == "norm" else math.nan
        for g, c, m in zip(steps["grad_norm"], steps["clip"], steps["clip_mode"], strict=True)
    ]
    shown = steps.assign(ratio=ratio)[["clip_mode", "clip", "seed", "step", "ratio", "update_cosine", "outcome"]]
    formats = {
        "clip": lambda v: sig(v, plain=True),
        "ratio": lambda v: fixed(v, 2),
        "update_cosine": lambda v: fixed(v, 3),
    }
    for column, cell in formats.items():
        shown[column] = [cell(v) for v in shown[column]]
    return shown.rename(columns={"ratio": "||g|| / threshold", "update_cosine": "cosine to the unclipped update"})
