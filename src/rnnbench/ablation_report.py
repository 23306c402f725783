"""What the book's ablation sections read: the studies' extra tables and figures, and the tables its prose
quotes (clipping per setting, truncation's cost, each window against its matched recurrence).

Every mean and range over seeds here is over the seeds that learned (rnnbench.outcome, as each study's summary
holds it); each table says how many of a setting's seeds learned, and a setting none of whose seeds learned
has no mean. A best setting is chosen on validation only (rnnbench.selection). seed_outcomes gives the counts
the book's sentences state ("k of n seeds learned").

Reads results only (rnnbench.report's folder conventions); no torch.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.ablations import matched_pairs, reach_table, setting_table
from rnnbench.cuts import contrast
from rnnbench.findings.registry import interval
from rnnbench.findings.stats import NO_CHANGE, difference, direction
from rnnbench.markdown import Markdown, fixed, integer, markdown_table, sig, words
from rnnbench.outcome import COUNT_COLUMNS
from rnnbench.report import (
    STAGING_DIR,
    _missing,
    _root,
    agreement_baselines,
    label_slug,
    stage_figure,
    study_about,
    study_names,
    study_summary,
)
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
    cuts = [s for s in study_names(results) if Path(paths.study_extra_table(_root(results), s, "cuts")).is_file()]
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
    path = Path(paths.study_extra_table(_root(results), study, kind))
    if not path.is_file():
        raise _missing(path)
    return pd.read_csv(path)


def extra_figure(study: str, name: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> str:
    """A study's extra figure (distance-heatmap, distance-curves, norm-trace), staged into the book."""
    source = paths.study_extra_figure(_root(results), study, name, "png")
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
    bench_path = Path(paths.table(_root(results), "benchmarks"))
    if not bench_path.is_file():
        raise _missing(bench_path)
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
    settings = Path(paths.run_config(_root(results), run_id))
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
# The sections' text: every number from the tables above.

from rnnbench.summary import METRIC_LABELS  # noqa: E402


def _spread(mean: float, lo: float, hi: float, digits: int = 3) -> str:
    """mean (min–max over the seeds that learned), or the one value when they agree or there is one."""
    if math.isnan(mean):
        return "–"
    if math.isnan(lo) or lo == hi:
        return str(sig(mean, digits, plain=True))
    return f"{sig(mean, digits, plain=True)} ({sig(lo, digits, plain=True)}–{sig(hi, digits, plain=True)})"


def _figure(path: str, caption: str, label: str) -> str:
    return f"![{caption}]({path}){{#{label}}}"


def _optimizer(study: str, results: str | Path | None = None) -> str:
    """The optimiser a study's runs train with: its fixed setting, else its first run's (config.json)."""
    fixed = study_about(study, results).get("fixed", {})
    if "optimizer" in fixed:
        return str(fixed["optimizer"])
    first = study_about(study, results)["run_ids"][0]
    path = Path(paths.run_config(_root(results), first))
    return str(json.loads(path.read_text(encoding="utf-8"))["optimizer"]) if path.is_file() else "?"


OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam"}


def _lr_text(lr: float, table: pd.DataFrame) -> str:
    """ "rate 0.5", or "rate 0.5 (SGD)" where the table's studies train with more than one optimiser."""
    if table["optimizer"].nunique() < 2:
        return f"rate {lr:g}"
    optimizer = table.loc[table["lr"] == lr, "optimizer"].iloc[0]
    return f"rate {lr:g} ({OPTIMIZER_NAMES.get(optimizer, optimizer)})"


def _learned_cell(learned: int, runs: int) -> str:
    """A table cell: how many of a setting's seeds learned."""
    return f"{integer(learned)} of {integer(runs)}"


def _measured(row: pd.Series, metric: str, digits: int = 3) -> str:
    """A setting's metric as a table cell: mean (range) over the seeds that learned, or "none learned"."""
    if row["seeds_learned"] == 0:
        return "none learned"
    return _spread(row[f"{metric}_mean"], row[f"{metric}_min"], row[f"{metric}_max"], digits)


def _accuracy(value: float) -> str:
    return str(fixed(value, 3)) if not math.isnan(value) else "–"


def clipping_section(corpus: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """The clipping ablation on one corpus: its table, norm traces and the three claims, measured over the
    seeds that learned (the divergence counts over every run)."""
    studies = clipping_studies(corpus, results)
    if not studies:
        return Markdown("")
    table = clipping_table(studies, results)
    metric = table["metric"].iloc[0]
    metric_name = METRIC_LABELS.get(metric, metric)
    slug = label_slug(f"clipping-{corpus}")
    lines = [f"### Clipping on {corpus} {{#sec-{slug}}}", ""]
    none, norm, value = (clipping_rows(table, m) for m in ("none", "norm", "value"))
    traced = [s for s in studies if Path(paths.study_extra_table(_root(results), s, "trace")).is_file()]
    traces = words([f"@fig-{label_slug(s)}-norm-trace" for s in traced])
    lines += [
        f"@tbl-{slug} lists every clipping setting at each learning rate"
        + (f"; {traces} trace{'s' if len(traced) == 1 else ''} the gradient norm step by step." if traced else "."),
        "",
    ]

    # Direction: norm clipping rescales (cosine exactly 1); value clipping may turn the update. Measured on the
    # runs that learned, as every number of this section but the divergence counts.
    taught = table[table["seeds_learned"] > 0]
    norm_clipped = norm[(norm["seeds_learned"] > 0) & (norm["clipped_fraction_mean"] > 0)]
    if len(norm_clipped):
        lo, hi = norm_clipped["clip_cosine_mean_min"].min(), norm_clipped["clip_cosine_mean_max"].max()
        measured = f"{fixed(lo, 6)} in every one" if lo == hi else f"{fixed(lo, 6)} to {fixed(hi, 6)}"
        lines.append(
            f"**Direction.** Norm clipping changes the step's length and never its direction: over every run that "
            f"learned and whose gradient was clipped at all, the mean cosine between the clipped and the unclipped "
            f"update is {measured}."
        )
    learned_value = value[value["seeds_learned"] > 0]
    acted = learned_value[learned_value["clipped_fraction_mean"] > 0]
    idle = learned_value[~(learned_value["clipped_fraction_mean"] > 0)]
    for clip, rows in acted.groupby("clip", sort=True):
        lines.append(
            f"Value clipping at ±{clip:g} turned the update: its mean cosine over the steps it clipped "
            f"({fixed(100 * rows['clipped_fraction_mean'].mean(), 0)}% of them) is "
            f"{_spread(rows['clip_cosine_mean_mean'].mean(), rows['clip_cosine_mean_min'].min(), rows['clip_cosine_mean_max'].max(), 4)}."
        )
    if len(idle):
        biggest = idle["grad_norm_max_max"].max()
        seen = (
            f" (the largest global pre-clip norm of any of them was {sig(biggest)})" if not math.isnan(biggest) else ""
        )
        lines.append(
            f"Value clipping at {words(sorted({f'±{c:g}' for c in idle['clip']}))} clipped no step of its runs that "
            f"learned: no single gradient component reached the threshold{seen}, so those runs are the unclipped "
            f"runs' twins. Mikolov's ±15 was set for a summed, not a mean, loss."
        )
    if len(table) and taught.empty:
        lines.append(
            f"No run of {words([f'`{s}`' for s in studies])} learned (rnnbench.outcome), so nothing is measured "
            "here of what clipping did to the gradient of a run that trained."
        )
    lines.append("")

    # Divergence: at each rate, who diverged (a count over every run: divergence is what it measures).
    claims = []
    for lr in sorted(table["lr"].unique()):
        at = table[table["lr"] == lr]
        unclipped = at[at["clip_mode"] == "none"]
        clipped = at[at["clip_mode"] == "norm"]
        parts = []
        if len(unclipped):
            u = unclipped.iloc[0]
            steps = (
                (
                    f", at step {integer(u['diverged_step_min'])}"
                    if u["diverged_step_min"] == u["diverged_step_max"]
                    else f", between steps {integer(u['diverged_step_min'])} and {integer(u['diverged_step_max'])}"
                )
                if u["diverged_runs"]
                else ""
            )
            parts.append(f"{integer(u['diverged_runs'])} of {integer(u['runs'])} unclipped runs diverged{steps}")
        if len(clipped):
            safe = clipped[clipped["diverged_runs"] == 0]["clip"].tolist()
            failed = clipped[clipped["diverged_runs"] > 0]
            if safe:
                parts.append(f"none diverged with the norm clipped at {words([f'{c:g}' for c in safe])}")
            if len(failed):
                parts.append(
                    "with the norm clipped at "
                    + words(
                        [
                            f"{c:g}, {integer(d)} of {integer(n)}"
                            for c, d, n in zip(failed["clip"], failed["diverged_runs"], failed["runs"], strict=True)
                        ]
                    )
                    + " did"
                )
        if parts:
            claims.append(f"at {_lr_text(lr, table)}, " + "; ".join(parts))
    if claims:
        text = "; ".join(claims)
        lines += [f"**Divergence.** {text[0].upper()}{text[1:]}.", ""]

    # Cost: at a rate where no unclipped run diverged and some learned, compare the clipped runs' metric with
    # the unclipped seeds' that learned.
    calm = [
        lr
        for lr in sorted(table["lr"].unique())
        if len(none[none["lr"] == lr])
        and int(none[none["lr"] == lr]["diverged_runs"].iloc[0]) == 0
        and int(none[none["lr"] == lr]["seeds_learned"].iloc[0]) > 0
    ]
    # The findings' rule (rnnbench.findings.clipping.quality), so that this section and the findings agree: the
    # Welch interval of the difference of seed means, clipped minus unclipped, over the seeds that learned.
    seeds = clipping_seed_values(studies, results)
    lower_is_better = metric.endswith("ppl")
    for lr in calm:
        base = none[none["lr"] == lr].iloc[0]
        lo, hi = base[f"{metric}_min"], base[f"{metric}_max"]
        unclipped = seeds[(seeds["clip_mode"] == "none") & (seeds["lr"] == lr)]["value"]
        rows = norm[(norm["lr"] == lr) & (norm["diverged_runs"] == 0) & (norm["seeds_learned"] > 0)]
        same, better, worse, idle = [], [], [], []
        for clip, fraction in zip(rows["clip"], rows["clipped_fraction_mean"], strict=True):
            if not fraction > 0:
                idle.append(f"{clip:g}")
                continue
            clipped = seeds[(seeds["clip_mode"] == "norm") & (seeds["clip"] == clip) & (seeds["lr"] == lr)]["value"]
            iv = difference(clipped, unclipped)
            if iv is None:
                continue
            shown = f"{clip:g} ({sig(clipped.mean())}, {interval(iv.scaled(100 / float(unclipped.mean())), unit='%')})"
            seen = direction(iv)
            if seen == NO_CHANGE:
                same.append(shown)
            elif (seen == "above") == lower_is_better:
                worse.append(shown)
            else:
                better.append(shown)
        sentence = (
            f"**Cost.** At {_lr_text(lr, table)}, where no unclipped run diverged, the unclipped runs that learned reach "
            f"{metric_name} {_spread(base[f'{metric}_mean'], lo, hi)} (mean and range over those seeds). Against "
            "them, each threshold's seed mean and the difference of the means relative to the unclipped one, with "
            "its 95% interval (Welch), the rule of the findings chapter:"
        )
        if same:
            sentence += f" norm clipping at {words(same)} makes no measurable difference;"
        if better:
            sentence += f" at {words(better)} it is measurably better;"
        if worse:
            sentence += (
                f" at {words(worse)} it is measurably worse: a threshold that clips most steps shortens every "
                "step, a slower rate in disguise;"
            )
        if idle:
            sentence += f" at {words(idle)} it never clipped a step, so those runs are the unclipped ones' twins;"
        lines += [sentence.rstrip(";:") + ".", ""]

    # The table.
    shown = pd.DataFrame(
        {
            "clipping": table["clipping"],
            "lr": [
                f"{v:g}" if table["optimizer"].nunique() < 2 else f"{v:g} ({OPTIMIZER_NAMES.get(o, o)})"
                for v, o in zip(table["lr"], table["optimizer"], strict=True)
            ],
            "learned": [_learned_cell(k, n) for k, n in zip(table["seeds_learned"], table["runs"], strict=True)],
            "diverged": [
                f"{integer(d)} of {integer(n)}" for d, n in zip(table["diverged_runs"], table["runs"], strict=True)
            ],
            metric_name: [_measured(row, metric) for _, row in table.iterrows()],
            "steps clipped": [f"{100 * v:.0f}%" if not math.isnan(v) else "–" for v in table["clipped_fraction_mean"]],
            "cosine": [fixed(v, 4) if not math.isnan(v) else "–" for v in table["clip_cosine_mean_mean"]],
            "median norm": [sig(v, plain=True) for v in table["grad_norm_median_mean"]],
            "95% norm": [sig(v, plain=True) for v in table["grad_norm_q95_mean"]],
        }
    )
    files = words([f"studies/{s}/summary.csv" for s in studies])
    lines += [
        markdown_table(shown, align={metric_name: "right", "learned": "right", "diverged": "right"}),
        "",
        f": Clipping on {corpus}, per setting and learning rate: seeds that learned and runs that diverged, then over "
        f"the seeds that learned (rnnbench.outcome) {metric_name} (mean, range), share of steps clipped, mean cosine "
        f"of the clipped update over clipped steps, and the pre-clip gradient norm's median and 95% quantile (means); "
        f"a setting none of whose seeds learned has no mean. From {files}, rule study_summary. {{#tbl-{slug}}}",
        "",
    ]
    for study in studies:
        if (Path(paths.study_extra_table(_root(results), study, "trace"))).is_file():
            image = extra_figure(study, "norm-trace", results, staging)
            lines += [
                _figure(
                    image,
                    f"Pre-clip gradient norm per step, first seed of {study} (log scale); a red cross marks "
                    f"where a run diverged, a hollow circle where a run that did not learn ended. From "
                    f"{extra_file(study, 'norm-trace')}, rule study_extra_figure.",
                    f"fig-{label_slug(study)}-norm-trace",
                ),
                "",
            ]
    return Markdown("\n".join(lines))


def _distance_figures(study: str, setting_words: str, results, staging) -> list[str]:
    lines = []
    slug = label_slug(study)
    for name, what in (
        (
            "distance-heatmap",
            f"Agreement accuracy per head-verb distance (columns) and {setting_words} (rows), "
            "mean over the seeds that learned; white is chance, a hatched row a setting none of whose seeds learned",
        ),
        (
            "distance-curves",
            f"Agreement accuracy against head-verb distance, one line per {setting_words}, "
            "mean over the seeds that learned with their range shaded; dotted: chance; a hollow legend marker, "
            "a setting none of whose seeds learned",
        ),
    ):
        image = extra_figure(study, name, results, staging)
        lines += [
            _figure(
                image,
                f"{what} ({study}). From {extra_file(study, name)}, rule study_extra_figure.",
                f"fig-{slug}-{name}",
            ),
            "",
        ]
    return lines


def _reach_sentence(rows: pd.DataFrame, setting: str, name) -> str:
    parts = []
    for row in rows.itertuples(index=False):
        value = getattr(row, setting)
        if row.seeds_learned == 0:
            parts.append(f"{name(value)}: none of its {integer(row.runs)} seeds learned")
            continue
        counted = f" ({integer(row.seeds_learned)} of {integer(row.runs)} seeds learned)"
        counted = counted if row.seeds_learned < row.runs else ""
        if math.isinf(row.width):
            parts.append(f"{name(value)}: {fixed(row.within_accuracy, 3)} over all distances{counted}")
        elif row.beyond_probes == 0:
            parts.append(f"{name(value)}: {fixed(row.within_accuracy, 3)} (every distance within reach){counted}")
        else:
            parts.append(
                f"{name(value)}: {fixed(row.within_accuracy, 3)} within reach, {fixed(row.beyond_accuracy, 3)} "
                f"beyond{counted}"
            )
    return "; ".join(parts)


def truncation_section(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """Truncation on PTB (perplexity, speed, memory) and on the agreement corpus (accuracy per distance), over
    the seeds that learned; the best and worst truncation length chosen on validation."""
    lines = []
    found = truncation_studies(results)
    if found["cost"]:
        ptb = found["cost"]
        cost = truncation_cost(ptb, results)
        metric = study_about(ptb, results)["metric"]
        name = METRIC_LABELS.get(metric, metric)
        ok = cost[cost["seeds_learned"] > 0].dropna(subset=[f"{metric}_mean"]).set_index("bptt", drop=False)
        fixed_settings = study_about(ptb, results).get("fixed", {})
        tokens = fixed_settings.get("train_tokens")
        read = f"the same first {integer(tokens)} training tokens" if tokens else "the whole training split"
        cap = fixed_settings.get("max_steps_per_epoch")
        held = (
            f"Every length reads {read}, but at most {integer(cap)} updates an epoch, so neither the tokens nor the "
            "updates are held equal"
            if cap
            else f"Every length trains on {read}, in the same order, so what is held equal is the tokens, not the updates"
        )
        steps = cost.dropna(subset=["steps_mean"]) if "steps_mean" in cost else cost.iloc[0:0]
        if len(steps) > 1 and not cap:
            few, many = steps.sort_values("bptt").iloc[-1], steps.sort_values("bptt").iloc[0]
            held += (
                f": {integer(many['steps_mean'])} of them at bptt = {int(many['bptt'])}, "
                f"{integer(few['steps_mean'])} at bptt = {int(few['bptt'])}"
            )
        lines += [
            "### Truncation on PTB {#sec-truncation-ptb}",
            "",
            f"{held}. @tbl-truncation-ptb gives every length's numbers.",
            "",
        ]
        if len(ok) > 1:
            best, worst = best_and_worst(ok, metric, suffix="_mean", what="truncation length (bptt)")
            on = selection_metric(metric)
            on_name = METRIC_LABELS.get(on, on)
            chosen = f"Of the {integer(len(ok))} truncation lengths with a seed that learned, the best" + (
                f" on {on_name} (mean over those seeds; the test split plays no part in the choice)"
                if on != metric
                else ""
            )
            lines.append(
                f"{chosen} is bptt = {int(best['bptt'])}, where {name} is "
                f"{_spread(best[f'{metric}_mean'], best[f'{metric}_min'], best[f'{metric}_max'])}; the worst is "
                f"bptt = {int(worst['bptt'])}, at {_spread(worst[f'{metric}_mean'], worst[f'{metric}_min'], worst[f'{metric}_max'])}. "
                f"Each is the mean, and in brackets the range, over the seeds that learned."
            )
        elif len(ok) == 1:
            only = ok.iloc[0]
            lines.append(
                f"Only bptt = {int(only['bptt'])} has a seed that learned: {name} "
                f"{_spread(only[f'{metric}_mean'], only[f'{metric}_min'], only[f'{metric}_max'])}."
            )
        else:
            lines.append(f"No truncation length has a seed that learned, so no {name} is compared here.")
        speed = ok.dropna(subset=["tokens_per_second_mean"])
        if len(speed) > 1:
            fast = speed.sort_values("tokens_per_second_mean").iloc[-1]
            slow = speed.sort_values("tokens_per_second_mean").iloc[0]
            lines.append(
                f"Training reads {sig(fast['tokens_per_second_mean'])} tokens per second at bptt = {int(fast['bptt'])} "
                f"and {sig(slow['tokens_per_second_mean'])} at bptt = {int(slow['bptt'])}: a short window takes one "
                f"optimiser step per few tokens, and each step's fixed cost dominates."
            )
        memory = ok.dropna(subset=["max_rss_mb"]) if "max_rss_mb" in ok else ok.iloc[0:0]
        if len(memory) > 1:
            lo, hi = memory.sort_values("max_rss_mb").iloc[0], memory.sort_values("max_rss_mb").iloc[-1]
            lines.append(
                f"Peak memory of the training job ranges from {integer(lo['max_rss_mb'])} MB (bptt = {int(lo['bptt'])}) to "
                f"{integer(hi['max_rss_mb'])} MB (bptt = {int(hi['bptt'])}); at this model size the activations kept for "
                f"the backward pass are small beside the process itself."
            )
        shown = pd.DataFrame(
            {
                "bptt": cost["bptt"].astype(int),
                "learned": [_learned_cell(k, n) for k, n in zip(cost["seeds_learned"], cost["runs"], strict=True)],
                name: [_measured(row, metric) for _, row in cost.iterrows()],
                "tokens/s": [sig(v, plain=True) for v in cost["tokens_per_second_mean"]],
                "wall s": [sig(v, plain=True) for v in cost.get("wall_seconds", pd.Series(math.nan, index=cost.index))],
                "CPU s": [sig(v, plain=True) for v in cost.get("cpu_seconds", pd.Series(math.nan, index=cost.index))],
                "peak MB": [
                    integer(v) if not math.isnan(v) else "–"
                    for v in cost.get("max_rss_mb", pd.Series(math.nan, index=cost.index))
                ],
            }
        )
        lines += [
            "",
            markdown_table(shown, align={name: "right", "learned": "right"}),
            "",
            f": Truncation on PTB: seeds that learned (rnnbench.outcome), and over them {name} (mean, range), "
            "training tokens per second (metrics.json), and the training job's wall time, CPU time and peak memory "
            "(means; the jobs shared the machine, so wall time is inflated by the others); a length none of whose "
            f"seeds learned has no mean. From studies/{ptb}/summary.csv and tables/benchmarks.csv, rules "
            "study_summary and benchmark_table. {#tbl-truncation-ptb}",
            "",
        ]
    if found["reach"]:
        agreement = found["reach"]
        slug = label_slug(agreement)
        rows = reach(agreement, "bptt", results)

        def label(k):
            return "full-sentence BPTT" if k == 0 else f"k = {k}"

        lines += ["### Truncation on the agreement corpus {#sec-truncation-agreement}", ""]
        lines.append(
            "A head-verb dependency longer than the truncation length k always crosses a segment boundary, so no "
            "gradient connects the verb's error to the head; the state still carries the head forward. Accuracy "
            "within each k and beyond it (probe-weighted means over distances of the means over the seeds that "
            f"learned): {_reach_sentence(rows, 'bptt', label)}."
        )
        measured = rows[rows["seeds_learned"] > 0]
        beyond = measured[
            (~measured["width"].map(math.isinf)) & (measured["beyond_probes"] > 0) & measured["beyond_accuracy"].notna()
        ]
        full = measured[measured["width"].map(math.isinf)]
        if len(full) and full["within_accuracy"].iloc[0] < LEARNED:
            lines.append(
                f"Even full-sentence BPTT stays below {LEARNED} here: at this scale the model has not learned agreement, "
                "so the comparison between truncation lengths says nothing about the claim."
            )
        elif len(beyond):
            gaps = beyond["within_accuracy"] - beyond["beyond_accuracy"]
            lines.append(
                f"The drop from within to beyond is {fixed(gaps.min(), 3)} to {fixed(gaps.max(), 3)} across the truncated "
                f"runs that learned{'; beyond k the accuracy stays above chance (0.5), so some of the dependency is learned through what earlier segments taught the weights' if (beyond['beyond_accuracy'] > LEARNED).any() else '; beyond k the accuracy is at chance (0.5): across a boundary the dependency is not learned'}."
            )
        lines.append(f"@fig-{slug}-distance-heatmap and @fig-{slug}-distance-curves show every distance.")
        lines.append("")
        lines += _distance_figures(agreement, "truncation length k (0: full sentence)", results, staging)
    if found["cuts"]:
        lines += _sentence_cut_lines(found["cuts"], results, staging)
    return Markdown("\n".join(lines))


def _sentence_cut_lines(study: str, results, staging) -> list[str]:
    """The study whose runs differ from full-sentence BPTT only where backward stops (segments: sentence): the
    two sides of each cut at the distances that have both, the cut runs' and full-sentence BPTT's on the same
    probes (rnnbench.cuts.contrast)."""
    slug = label_slug(study)
    rows = contrast(extra_table(study, "cuts", results), ["bptt"])
    cut, full = rows[rows["bptt"] > 0], rows[rows["bptt"] == 0].set_index(["cut_every", "distance"])
    lines = [
        "### Truncation within sentences {#sec-truncation-sentence-agreement}",
        "",
        f"In `{study}` a truncated run reads the batches of full-sentence BPTT (the same sentences in the same "
        "order, each from a zero state, one update per batch) and only its gradient is cut, at steps k, 2k, ... of "
        "each sentence. A probe is within a gradient block when the step that reads the head and the step that "
        "predicts the verb fall in one block of k steps, and across a cut otherwise; at one distance both kinds "
        "occur only where the head's position in its sentence decides it, so full-sentence BPTT is split the same "
        "way beside each cut run.",
    ]
    said = []
    for row in cut.itertuples(index=False):
        key = (row.cut_every, row.distance)
        uncut = f", full-sentence BPTT {fixed(full.loc[key, 'within'], 3)} and {fixed(full.loc[key, 'across'], 3)}"
        said.append(
            f"k = {int(row.cut_every)} at distance {int(row.distance)}, within {fixed(row.within, 3)} and across "
            f"{fixed(row.across, 3)} ({integer(row.within_probes)} and {integer(row.across_probes)} probes)"
            f"{uncut if key in full.index else ''}"
        )
    if said:
        lines.append(
            "Where both occur, accuracy within a block and across a cut, each a mean over the seeds that learned: "
            + "; ".join(said)
            + "."
        )
    else:
        lines.append("No distance has probes on both sides of a cut with a seed that learned, so none is compared.")
    lines += [
        f"@fig-{slug}-cut-contrast shows every distance.",
        "",
        _figure(
            extra_figure(study, "cut-contrast", results, staging),
            "Agreement accuracy against head-verb distance, a panel per cut length k: solid with filled markers "
            "the probes within one gradient block, dashed with hollow ones those across a cut; in colour the runs "
            "cut every k steps, in grey full-sentence BPTT on the same probes; mean over the seeds that learned, "
            f"their range shaded ({study}). From {extra_file(study, 'cuts', 'csv')} and "
            f"{extra_file(study, 'cut-contrast')}, rules study_extra_table and study_extra_figure.",
            f"fig-{slug}-cut-contrast",
        ),
        "",
    ]
    return lines


def window_section(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """Feed-forward windows against Elman RNNs of matched size, accuracy within and beyond each window, over
    the seeds that learned; a claim only where both sides of a pair have such seeds."""
    windows, recurrences = window_studies(results)
    if not (windows and recurrences):
        return Markdown("")
    pairs = window_against_recurrence(windows, recurrences, results)
    lines = ["### Window against recurrence {#sec-window-recurrence}", ""]
    failing = pairs[pairs["beyond"]]
    if len(failing):
        lines.append(
            "A window of n-1 words cannot see a head further back than n-1. Paired with the Elman RNN of the nearest "
            "parameter count (@tbl-window-recurrence), each window's accuracy within its width and beyond it, against "
            "the RNN's on the same distances, over the seeds that learned: "
            + "; ".join(
                f"n-1 = {p.context}: window {_accuracy(p.ff_within)} / {_accuracy(p.ff_beyond)}, RNN (H = {p.hidden}) "
                f"{_accuracy(p.rnn_within)} / {_accuracy(p.rnn_beyond)}"
                for p in failing.itertuples(index=False)
            )
            + " (within / beyond; – where no seed learned)."
        )
        # Claims only on the pairs both of whose sides have a seed that learned.
        compared = failing[(failing["ff_learned"] > 0) & (failing["rnn_learned"] > 0)]
        compared = compared.dropna(subset=["ff_within", "ff_beyond", "rnn_within", "rnn_beyond"])
        if compared.empty:
            lines.append(
                "No window with dependencies beyond it has, with its matched RNN, seeds that learned on both sides: "
                "no comparison is made."
            )
        elif (compared["rnn_within"] < LEARNED).all():
            lines.append(
                f"No recurrence reached {LEARNED} even within the windows' widths: at this scale the comparison "
                "says nothing about the claim."
            )
        options = study_about(windows, results).get("fixed", {}).get("corpus_options", {})
        attractors = options.get("attractor_prob")
        if attractors is not None and attractors < 0.5:
            lines.append(
                f"A window is not blind beyond its width: the nouns between head and verb that it does see have the "
                f"head's number with probability {fixed(1 - attractors, 2)} (corpus option attractor_prob = "
                f"{fixed(attractors, 2)} in `{windows}`), so its best guess there is the nearest noun's number, not a coin."
            )
        judged = failing.dropna(subset=["ff_beyond", "nearest_noun_beyond"])
        if len(judged):
            below = judged[judged["ff_beyond"] < judged["nearest_noun_beyond"]]
            scores = "; ".join(
                f"{fixed(p.nearest_noun_beyond, 3)} beyond n-1 = {p.context}" for p in judged.itertuples(index=False)
            )
            lines.append(
                "The nearest-noun heuristic, which gives the verb the number of the closest noun before it "
                f"(tables/agreement_baselines.csv), scores {scores} on the same distances, over the windows' seeds "
                f"that learned: beyond its width the window is below that count-based rule in "
                f"{integer(len(below))} of {integer(len(judged))} windows."
            )
        if len(compared):
            fails = compared[compared["ff_beyond"] < LEARNED]
            lines.append(
                f"Beyond its width the window is near chance (below {LEARNED}) for {integer(len(fails))} of the "
                f"{integer(len(compared))} windows that have dependencies beyond them and seeds that learned on both "
                f"sides; the recurrence beats the window beyond its width in "
                f"{integer(int((compared['rnn_beyond'] > compared['ff_beyond']).sum()))} of them."
            )
    ws, rs = label_slug(windows), label_slug(recurrences)
    lines.append(
        "@tbl-window-recurrence states both parameter counts of each pair. "
        f"@fig-{ws}-distance-heatmap and @fig-{ws}-distance-curves show the windows per "
        f"distance, @fig-{rs}-distance-heatmap and @fig-{rs}-distance-curves the recurrences."
    )
    lines.append("")
    shown = pd.DataFrame(
        {
            "n-1": pairs["context"],
            "window parameters": [integer(v) for v in pairs["ff_parameters"]],
            "RNN H": pairs["hidden"],
            "RNN parameters": [integer(v) for v in pairs["rnn_parameters"]],
            "ratio": [fixed(v, 3) for v in pairs["ratio"]],
            "window learned": [_learned_cell(k, n) for k, n in zip(pairs["ff_learned"], pairs["ff_runs"], strict=True)],
            "RNN learned": [_learned_cell(k, n) for k, n in zip(pairs["rnn_learned"], pairs["rnn_runs"], strict=True)],
            "window within": [_accuracy(v) for v in pairs["ff_within"]],
            "window beyond": [_accuracy(v) for v in pairs["ff_beyond"]],
            "RNN within": [_accuracy(v) for v in pairs["rnn_within"]],
            "RNN beyond": [_accuracy(v) for v in pairs["rnn_beyond"]],
        }
    )
    lines += [
        markdown_table(shown),
        "",
        ": Each feed-forward window with the Elman RNN of the nearest parameter count (both counts from the runs' "
        "metrics.json; ratio = RNN / window), how many seeds of each learned (rnnbench.outcome), and both models' "
        "agreement accuracy on the distances within the window's width and beyond it (probe-weighted means of the "
        "means over the seeds that learned; – where no distance lies beyond or no seed learned). From "
        f"studies/{windows}/distance.csv and studies/{recurrences}/distance.csv, rule study_extra_table. "
        "{#tbl-window-recurrence}",
        "",
    ]
    lines += _distance_figures(windows, "window n-1", results, staging)
    lines += _distance_figures(recurrences, "hidden size H", results, staging)
    return Markdown("\n".join(lines))
