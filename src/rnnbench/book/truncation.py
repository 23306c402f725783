"""The truncation sections' values (reports/studies.qmd): on PTB (role truncation_cost), what each BPTT length
buys in perplexity and costs in speed and memory, under each design's equal footing (the tokens every length reads,
or the updates every length takes, read from the runs' records); on the agreement corpus (role truncation_reach),
accuracy within and beyond each length's reach; and (a study with a cuts table) the gradient cut within sentences,
across a cut against within one, with the verdicts the sentences pick their wording from. A best length is chosen
on validation only (rnnbench.results.selection).

Reads results only (rnnbench.book.results); no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR
from rnnbench.book.format import NONE, Markdown, figure, fixed, integer, label_slug, sig, words
from rnnbench.book.results import missing_result, results_root, study_about, study_names, study_summary
from rnnbench.book.studies import (
    LEARNED,
    column_or_nan,
    count_of,
    extra_figure,
    extra_file,
    extra_shown,
    extra_table,
    first_of,
    measured_cell,
    studies_with_role,
)
from rnnbench.metrics import METRIC_LABELS, TOKENS_PER_CPU_SECOND
from rnnbench.results.ablations import reach_table, setting_table
from rnnbench.results.cut_accuracy import contrast
from rnnbench.results.selection import best_and_worst, selection_metric

# A truncation length of 0 is backpropagation through the whole sentence (rnnbench.config.runs).
FULL_SENTENCE_BPTT = 0


def truncation_studies(results: str | Path | None = None) -> dict[str, str | None]:
    """The truncation section's studies, found by role: "cost" (truncation_cost: perplexity, speed and memory
    against k), "reach" (truncation_reach: agreement accuracy within and beyond k), and "cuts" (a study with a
    cuts table: the gradient cut within sentences)."""
    cuts = [
        s for s in study_names(results) if Path(paths.study_extra_table(results_root(results), s, "cuts")).is_file()
    ]
    return {
        "cost": first_of(studies_with_role("truncation_cost", results)),
        "reach": first_of(studies_with_role("truncation_reach", results)),
        "cuts": first_of(cuts),
    }


def truncation_cost(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """Per truncation length: how many seeds learned, failed and diverged; the metric, the metric its best
    length is chosen by (rnnbench.results.selection) and training tokens per second (metrics.json), and the training
    job's wall seconds, CPU seconds and peak memory (tables/benchmarks.csv), each a mean over the seeds that
    learned."""
    about = study_about(study, results)
    metric = about["metric"]
    summary = study_summary(study, results)
    bench_path = Path(paths.table(results_root(results), "benchmarks"))
    if not bench_path.is_file():
        raise missing_result(bench_path)
    bench = pd.read_csv(bench_path).groupby("run_id", as_index=False).mean(numeric_only=True)
    measured = list(dict.fromkeys([metric, selection_metric(metric), TOKENS_PER_CPU_SECOND, "steps"]))
    per_setting = setting_table(summary, ["bptt"], [m for m in measured if m in set(summary["metric"])])
    runs = summary.drop_duplicates("run_id")
    runs = runs[runs["outcome"] == "learned"][["run_id", "bptt"]].merge(bench, on="run_id", how="left")
    columns = [c for c in ("wall_seconds", "cpu_seconds", "max_rss_mb") if c in bench]
    cost = runs.groupby("bptt", sort=False)[columns].mean()
    return per_setting.merge(cost.reset_index(), on="bptt", how="left")


# What a PTB truncation study holds equal across its lengths (TruncationCost.design), read from its runs' records:
# an update reads batch_size x k tokens, so at most one of the two can be.
EQUAL_TOKENS, EQUAL_UPDATES, NEITHER_EQUAL = "equal tokens", "equal updates", "neither"


def training_read(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """Per truncation length: the updates its runs took (metrics.json) and the training tokens they read (the last
    epoch's tokens_seen of the study's learning table), each a mean over the runs that did not diverge (a run that did
    not learn still took its updates).

        bptt, updates, tokens
    """
    summary = study_summary(study, results)
    runs = summary.drop_duplicates("run_id").set_index("run_id")
    steps = summary[summary["metric"] == "steps"].set_index("run_id")["value"]
    learning = extra_table(study, "learning", results)
    tokens = learning.groupby("run_id")["tokens_seen"].max()
    kept = runs[runs["outcome"] != "diverged"]
    frame = pd.DataFrame(
        {"bptt": kept["bptt"], "updates": steps.reindex(kept.index), "tokens": tokens.reindex(kept.index)}
    )
    return frame.groupby("bptt", as_index=False, sort=True)[["updates", "tokens"]].mean()


def held_updates(study: str, results: str | Path | None = None) -> int | None:
    """The updates every run of ``study`` that did not diverge took (metrics.json), where they are one number; None
    where its lengths took different numbers, or no run finished."""
    summary = study_summary(study, results)
    taken = summary[(summary["metric"] == "steps") & (summary["outcome"] != "diverged")]["value"].dropna()
    return int(taken.iloc[0]) if taken.nunique() == 1 else None


def epochs_by_length(study: str, results: str | Path | None = None) -> dict[int, int]:
    """The epochs each truncation length's runs read (metrics.json), where its runs that did not diverge agree on
    one number: at equal updates a longer segment holds more tokens, so it reads the corpus more times. Lengths whose
    runs read different numbers are left out."""
    summary = study_summary(study, results)
    taken = summary[(summary["metric"] == "epochs") & (summary["outcome"] != "diverged")].dropna(subset=["value"])
    if "bptt" not in taken:
        return {}
    per_length = taken.groupby("bptt")["value"].agg(["nunique", "first"])
    return {int(k): int(row["first"]) for k, row in per_length.iterrows() if row["nunique"] == 1}


def reach(study: str, setting: str, results: str | Path | None = None) -> pd.DataFrame:
    """A study's accuracy within and beyond each setting's reach (rnnbench.results.ablations.reach_table)."""
    return reach_table(extra_table(study, "distance", results), setting)


@dataclass(frozen=True, eq=False)
class TruncationCost:
    """The truncation study on PTB (role truncation_cost) and its lengths' table (truncation_cost)."""

    study: str
    metric: str
    table: pd.DataFrame
    train_tokens: int | None  # the training tokens every length reads; None: the whole training split
    max_steps_per_epoch: int | None  # the cap on updates an epoch, where the study sets one
    read: pd.DataFrame | None = None  # per length, the updates taken and the tokens read (training_read)

    @property
    def metric_name(self) -> str:
        return METRIC_LABELS.get(self.metric, self.metric)

    @property
    def design(self) -> str:
        """What every length of the study holds equal, as its runs' records show: EQUAL_TOKENS, EQUAL_UPDATES or
        NEITHER_EQUAL (a study of one length holds both: it reads as EQUAL_TOKENS)."""
        if self.read is None or self.read.empty:
            return NEITHER_EQUAL
        if self.read["tokens"].dropna().nunique() == 1:
            return EQUAL_TOKENS
        if self.read["updates"].dropna().nunique() == 1:
            return EQUAL_UPDATES
        return NEITHER_EQUAL

    @property
    def held(self) -> float:
        """The tokens every length reads (EQUAL_TOKENS) or the updates every length takes (EQUAL_UPDATES); NaN
        otherwise."""
        column = {EQUAL_TOKENS: "tokens", EQUAL_UPDATES: "updates"}.get(self.design)
        return float(self.read[column].dropna().iloc[0]) if column else math.nan

    @property
    def varies(self) -> pd.Series:
        """What the design leaves to vary, by length: the updates (EQUAL_TOKENS), or the tokens (EQUAL_UPDATES); both
        NaN otherwise. Indexed by bptt."""
        column = {EQUAL_TOKENS: "updates", EQUAL_UPDATES: "tokens"}.get(self.design)
        if self.read is None or column is None:
            return pd.Series(dtype=float)
        return self.read.set_index("bptt")[column]

    @property
    def learned(self) -> pd.DataFrame:
        """The lengths with a seed that learned and a mean of the metric, indexed by bptt."""
        ok = self.table[self.table["seeds_learned"] > 0].dropna(subset=[f"{self.metric}_mean"])
        return ok.set_index("bptt", drop=False)


def truncation_cost_study(results: str | Path | None = None, study: str | None = None) -> TruncationCost | None:
    """A PTB truncation study (role truncation_cost): ``study``, else the first; None where there is none."""
    study = study or truncation_studies(results)["cost"]
    if not study:
        return None
    about = study_about(study, results)
    settings = about.get("fixed", {})
    learning = Path(paths.study_extra_table(results_root(results), study, "learning"))
    return TruncationCost(
        study,
        about["metric"],
        truncation_cost(study, results),
        settings.get("train_tokens"),
        settings.get("max_steps_per_epoch"),
        training_read(study, results) if learning.is_file() else None,
    )


def truncation_designs(results: str | Path | None = None) -> dict[str, TruncationCost]:
    """Every PTB truncation study (role truncation_cost) by what it holds equal (TruncationCost.design): the first of
    each design, equal tokens first."""
    found: dict[str, TruncationCost] = {}
    for study in studies_with_role("truncation_cost", results):
        cost = truncation_cost_study(results, study)
        found.setdefault(cost.design, cost)
    return {d: found[d] for d in (EQUAL_TOKENS, EQUAL_UPDATES, NEITHER_EQUAL) if d in found}


# A value the section states where no study of a design, or no measurement, gives one.


def per_length(values: pd.Series) -> Markdown:
    """A count per truncation length (indexed by bptt) as a list: "2,325 at k = 10, 665 at k = 35 and 333 at k = 70";
    NONE where there is none."""
    known = values.dropna()
    if known.empty:
        return NONE
    return words([f"{integer(n)} at k = {integer(k)}" for k, n in known.items()])


def ranked_cells(cost: TruncationCost | None) -> tuple[Markdown, Markdown]:
    """The best and the worst length on validation (best_and_worst_length) as cells: "k = 70, 234 (230–238)", the
    metric's mean and range over the seeds that learned; NONE where fewer than two lengths have one."""
    ranked = best_and_worst_length(cost) if cost is not None else None
    if ranked is None:
        return NONE, NONE
    return tuple(Markdown(f"k = {integer(row['bptt'])}, {measured_cell(row, cost.metric)}") for row in ranked)


@dataclass(frozen=True)
class PtbSection:
    """The PTB truncation section's values (reports/studies.qmd), each a number, a list or a cell; NONE where
    no study of its design (or no measurement) gives it. Speed and memory are a length's, whatever the design: read
    from the equal-tokens study, else the equal-updates one."""

    designs: dict[str, TruncationCost]
    tokens_held: Markdown  # the training tokens every length of the equal-tokens design reads
    updates_by_length: Markdown  # and the updates each length takes there
    updates_held: Markdown  # the updates every length of the equal-updates design takes
    tokens_by_length: Markdown  # and the tokens each length reads there
    best_tokens: Markdown  # best and worst length on validation, each design
    worst_tokens: Markdown
    best_updates: Markdown
    worst_updates: Markdown
    metric: Markdown  # the metric the lengths are compared on, and the one the best is chosen by
    chosen_on: Markdown
    fast_speed: Markdown  # training tokens per second of the fastest and the slowest length
    fast_k: Markdown
    slow_speed: Markdown
    slow_k: Markdown
    low_memory: Markdown  # peak memory (MB) of the leanest and the largest length
    low_k: Markdown
    high_memory: Markdown
    high_k: Markdown
    # which of them the results give (the appendix's alternative sentences, rnnbench.book.conditions)
    equal_tokens: bool = False  # an equal-tokens design has results here
    equal_updates: bool = False
    ranked_tokens: bool = False  # that design has two lengths with a seed that learned, a best and a worst
    ranked_updates: bool = False
    speeds: bool = False  # two lengths' speeds were measured
    memory: bool = False  # and their peak memory


def ptb_section(results: str | Path | None = None) -> PtbSection:
    designs = truncation_designs(results)
    tokens, updates = designs.get(EQUAL_TOKENS), designs.get(EQUAL_UPDATES)
    measured = tokens or updates
    speeds = fastest_and_slowest(measured) if measured else None
    memory = memory_range(measured) if measured else None
    fast, slow = speeds or ({}, {})
    low, high = memory or ({}, {})
    metric = Markdown(measured.metric_name) if measured else NONE
    return PtbSection(
        designs,
        integer(tokens.held) if tokens else NONE,
        per_length(tokens.varies) if tokens else NONE,
        integer(updates.held) if updates else NONE,
        per_length(updates.varies) if updates else NONE,
        *ranked_cells(tokens),
        *ranked_cells(updates),
        metric,
        Markdown(selected_on(measured) or metric) if measured else NONE,
        sig(fast[f"{TOKENS_PER_CPU_SECOND}_mean"]) if speeds else NONE,
        integer(fast["bptt"]) if speeds else NONE,
        sig(slow[f"{TOKENS_PER_CPU_SECOND}_mean"]) if speeds else NONE,
        integer(slow["bptt"]) if speeds else NONE,
        integer(low["max_rss_mb"]) if memory else NONE,
        integer(low["bptt"]) if memory else NONE,
        integer(high["max_rss_mb"]) if memory else NONE,
        integer(high["bptt"]) if memory else NONE,
        equal_tokens=tokens is not None,
        equal_updates=updates is not None,
        ranked_tokens=bool(tokens and best_and_worst_length(tokens)),
        ranked_updates=bool(updates and best_and_worst_length(updates)),
        speeds=speeds is not None,
        memory=memory is not None,
    )


def designs_display(designs: dict[str, TruncationCost]) -> pd.DataFrame:
    """The PTB truncation table of every design: per design and length, the updates taken and tokens read, then
    truncation_display's columns."""
    frames = []
    for design, cost in designs.items():
        shown = truncation_display(cost)
        read = cost.read.set_index("bptt") if cost.read is not None else pd.DataFrame(columns=["updates", "tokens"])
        by_length = [read.reindex([b]) for b in cost.table["bptt"]]
        updates = [integer(r["updates"].iloc[0]) if r["updates"].notna().all() else "–" for r in by_length]
        tokens = [integer(r["tokens"].iloc[0]) if r["tokens"].notna().all() else "–" for r in by_length]
        shown.insert(0, "held equal", design)
        shown.insert(2, "updates", updates)
        shown.insert(3, "tokens", tokens)
        frames.append(shown)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def updates_by_length(cost: TruncationCost) -> tuple[pd.Series, pd.Series] | None:
    """The updates of the shortest length and of the longest (most and fewest), where every length reads the
    same tokens with no cap on updates and more than one length has a count; else None."""
    steps = cost.table.dropna(subset=["steps_mean"]) if "steps_mean" in cost.table else cost.table.iloc[0:0]
    if len(steps) < 2 or cost.max_steps_per_epoch:
        return None
    by_length = steps.sort_values("bptt")
    return by_length.iloc[0], by_length.iloc[-1]


def best_and_worst_length(cost: TruncationCost) -> tuple[pd.Series, pd.Series] | None:
    """The best and worst length on validation (rnnbench.results.selection), among those with a seed that learned;
    None where fewer than two have one."""
    if len(cost.learned) < 2:
        return None
    return best_and_worst(cost.learned, cost.metric, suffix="_mean", what="truncation length (bptt)")


def selected_on(cost: TruncationCost) -> str | None:
    """The name of the metric the best length is chosen by, where it is not the metric reported."""
    on = selection_metric(cost.metric)
    return METRIC_LABELS.get(on, on) if on != cost.metric else None


def fastest_and_slowest(cost: TruncationCost) -> tuple[pd.Series, pd.Series] | None:
    """The lengths that trained fastest and slowest in tokens per CPU second, where more than one was measured."""
    column = f"{TOKENS_PER_CPU_SECOND}_mean"
    speed = cost.learned.dropna(subset=[column]).sort_values(column)
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
            "learned": [count_of(k, n) for k, n in zip(table["seeds_learned"], table["runs"], strict=True)],
            cost.metric_name: [measured_cell(row, cost.metric) for _, row in table.iterrows()],
            "tokens per CPU s": [sig(v, plain=True) for v in table[f"{TOKENS_PER_CPU_SECOND}_mean"]],
            "wall s": [sig(v, plain=True) for v in column_or_nan(table, "wall_seconds")],
            "CPU s": [sig(v, plain=True) for v in column_or_nan(table, "cpu_seconds")],
            "peak MB": [integer(v) if not math.isnan(v) else "–" for v in column_or_nan(table, "max_rss_mb")],
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


def sentence_cuts(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """The runs whose gradient is cut every k steps of a sentence (rnnbench.results.cut_accuracy.contrast), at each distance
    with probes on both sides of a cut, beside full-sentence BPTT on the same probes (NaN where it has none).

    cut_every, distance, within, across, within_probes, across_probes, full_within, full_across
    """
    rows = contrast(extra_table(study, "cuts", results), ["bptt"])
    full = rows[rows["bptt"] == FULL_SENTENCE_BPTT][["cut_every", "distance", "within", "across"]]
    full = full.rename(columns={"within": "full_within", "across": "full_across"})
    cut = rows[rows["bptt"] != FULL_SENTENCE_BPTT].drop(columns=["bptt", "gap"])
    return cut.merge(full, on=["cut_every", "distance"], how="left").reset_index(drop=True)


# The per-length lists the sections print.


def length(bptt: int) -> str:
    """A truncation length as the sections name it: "k = 2", or full-sentence BPTT."""
    return "full-sentence BPTT" if bptt == FULL_SENTENCE_BPTT else f"k = {integer(bptt)}"


def reach_words(row) -> str:
    """One length's accuracy within and beyond its reach (a row of truncation_reach), by what can be read of it:
    "k = 2: 0.900 within reach, 0.600 beyond (1 of 2 seeds learned)"."""
    if row.kind == NONE_LEARNED:
        return f"{length(row.bptt)}: none of its {integer(row.runs)} seeds learned"
    said = {
        WHOLE_SENTENCE: f"{fixed(row.within_accuracy, 3)} over all distances",
        ALL_WITHIN: f"{fixed(row.within_accuracy, 3)} (every distance within reach)",
        WITHIN_AND_BEYOND: f"{fixed(row.within_accuracy, 3)} within reach, {fixed(row.beyond_accuracy, 3)} beyond",
    }[row.kind]
    seeds = (
        f" ({integer(row.seeds_learned)} of {integer(row.runs)} seeds learned)" if row.seeds_learned < row.runs else ""
    )
    return f"{length(row.bptt)}: {said}{seeds}"


def cut_words(cut) -> str:
    """One cut length at one distance (a row of sentence_cuts): within a block and across a cut, with their probes,
    and full-sentence BPTT on the same probes where it has them."""
    full = (
        f", full-sentence BPTT {fixed(cut.full_within, 3)} and {fixed(cut.full_across, 3)}"
        if not math.isnan(cut.full_within)
        else ""
    )
    return (
        f"k = {integer(cut.cut_every)} at distance {integer(cut.distance)}, within {fixed(cut.within, 3)} and "
        f"across {fixed(cut.across, 3)} ({integer(cut.within_probes)} and {integer(cut.across_probes)} probes){full}"
    )


def cut_contrast_figure(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """The sentence-cut study's cut-contrast figure as Markdown; nothing where there is no such study or it draws
    too little."""
    study = truncation_studies(results)["cuts"]
    if not study or not extra_shown(study, "cut-contrast", results):
        return Markdown("")
    return figure(
        extra_figure(study, "cut-contrast", results, staging),
        "Agreement accuracy against head-verb distance, a panel per cut length k: solid with filled markers the "
        "probes within one gradient block, dashed with hollow ones those across a cut; in colour the runs cut every k "
        "steps, in grey full-sentence BPTT on the same probes; mean over the seeds that learned, their range shaded "
        f"({study}). From {extra_file(study, 'cuts', 'csv')} and {extra_file(study, 'cut-contrast')}, rules "
        "study_extra_table and study_extra_figure.",
        f"fig-{label_slug(study)}-cut-contrast",
    )
