"""The values of the chapter "Is truncation harmful?" (reports/truncation.qmd), and its figure.

    quoted(claim)          the seed's words of a claim, and its verdict (tables/findings.csv)
    decided(claim)         a claim's parts that a test decided (holds or fails), each by its study's kind or design;
                           part_count(claim), how many parts it has
    cut_numbers()          the interaction of cut and reach in one agreement study, as numbers and short lists
    ptb_facts()            what the PTB designs say beside their section's numbers: memory's rise, which length
                           is faster, whether one length is best under every design
    figure()               the chapter's figure (rnnbench.plots.truncation_figures), drawn from the studies' tables
                           when the book is rendered and staged into it, with the files it was drawn from

The studies are found by role, as the findings find them: sentence cuts (truncation_sentence), stream segments
(truncation_reach), and on PTB each design (truncation_cost, rnnbench.book.truncation.truncation_designs). Returns
numbers, short lists and verdicts; the sentences are the chapter's. No torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.book.answers import reading
from rnnbench.book.figures import STAGING_DIR
from rnnbench.book.findings import findings, parts
from rnnbench.book.format import NONE, Markdown, between, fixed, integer, share, words
from rnnbench.book.results import results_root, study_summary
from rnnbench.book.studies import LEARNED, extra_table, first_of, studies_with_role
from rnnbench.book.truncation import (
    EQUAL_TOKENS,
    EQUAL_UPDATES,
    best_and_worst_length,
    epochs_by_length,
    fastest_and_slowest,
    held_updates,
    memory_range,
    truncation_designs,
)
from rnnbench.book.window import nearest_noun
from rnnbench.findings.truncation import FULL, interactions, split_gaps
from rnnbench.metrics import METRIC_LABELS
from rnnbench.results.selection import selection_metric

# How the figure's legend names each kind of agreement study, by its role.
KINDS = {"truncation_sentence": "sentence cuts", "truncation_reach": "stream segments"}
# An interaction is a difference of differences of accuracies, each a count over at most thousands of probes: its
# sign is read after rounding to this many decimals, so that a zero computed in floating point is not positive.
SIGN_DECIMALS = 12


def quoted(claim: str, results: str | Path | None = None) -> tuple[Markdown, str]:
    """The seed's words of ``claim`` as the findings quote them, and the claim's verdict, read with its parts where
    it holds in part (rnnbench.book.answers.reading: mixed, partly decided or partly refuted)."""
    row = findings(results).set_index("id").loc[claim]
    return Markdown(row["quote"]), reading(str(row["verdict"]), parts(claim, results)["verdict"])


def agreement_studies(results: str | Path | None = None) -> dict[str, str]:
    """The first study of each kind in KINDS that has a reach table, by its kind's name."""
    found = {}
    for role, kind in KINDS.items():
        with_reach = [
            s
            for s in studies_with_role(role, results)
            if Path(paths.study_extra_table(results_root(results), s, "reach")).is_file()
        ]
        if first_of(with_reach):
            found[kind] = with_reach[0]
    return found


def study_kinds(results: str | Path | None = None) -> dict[str, str]:
    """Each truncation study by how the chapter names it: an agreement study by its kind (KINDS), a PTB study by
    the design it holds (rnnbench.book.truncation: "equal tokens", "equal updates")."""
    named = {study: kind for kind, study in agreement_studies(results).items()}
    return named | {cost.study: design for design, cost in truncation_designs(results).items()}


def decided(claim: str, results: str | Path | None = None) -> pd.DataFrame:
    """The parts of ``claim`` a test decided, holds or fails (tables/findings_parts.csv), in its order:

    kind (study_kinds' name of the part's study), k (the length the part is at: the longer of two), aspect,
    verdict
    """
    found = parts(claim, results)
    kinds = study_kinds(results)
    rows = []
    for label, part in found[found["verdict"].isin(("holds", "fails"))].iterrows():
        study = str(part.get("source", "")) or label.split(",")[0].strip()  # a table from before the source column
        # the length a part is at, the longer of two: none where the longer is full BPTT
        lengths = [] if "full BPTT against" in label else re.findall(r"k = (\d+)", label)
        rows.append(
            {
                "kind": kinds.get(study, study),
                "k": int(lengths[0]) if lengths else None,
                "aspect": part.get("aspect", ""),
                "verdict": part["verdict"],
            }
        )
    return pd.DataFrame(rows, columns=["kind", "k", "aspect", "verdict"])


def part_count(claim: str, results: str | Path | None = None) -> int:
    """How many parts ``claim`` has, decided or not."""
    return len(parts(claim, results))


@dataclass(frozen=True)
class CutNumbers:
    """One agreement study's interaction of cut and reach (rnnbench.findings.truncation.interactions)."""

    study: str | None
    updates: Markdown  # the updates every run took (rnnbench.book.truncation.held_updates); NONE if unequal
    epochs: Markdown  # "3 at k = 2, ..., 12 at full BPTT": the epochs those updates read per length; NONE if unknown
    by_length: Markdown  # "+0.092 (−0.058 to +0.242) at k = 2, ..."; NONE where no k has an interval
    positive: int  # seeds' interactions above 0, of
    seeds: int  # every seed's interaction at every k
    above_zero: int  # lengths whose interval lies above 0, of
    lengths: int  # the lengths with an interval
    full_gap_low: float  # full-sentence BPTT's gap (within minus across) at the cuts, its mean per k: lowest, highest
    full_gap_high: float
    cut_gap_low: float  # the cut runs' gap, the same way
    cut_gap_high: float
    across_low: float  # the cut runs' accuracy across a cut, its mean per k: lowest and highest
    across_high: float
    rule_low: float  # the nearest-noun rule's accuracy at the distances of the probes across a cut, per k
    rule_high: float
    above_rule: int  # lengths at which every cut run that learned scores higher across a cut than that rule, of
    rule_lengths: int  # the lengths with both numbers
    mean_above_rule: int  # lengths at which their mean across a cut is higher than the rule
    full_across_low: float  # full-sentence BPTT's accuracy on the same verbs across a cut, its mean per k
    full_across_high: float

    @property
    def across_learned(self) -> bool:
        """Whether across a cut every length still scores above what a model that learned must pass."""
        return self.across_low > LEARNED


def cut_numbers(kind: str = "sentence cuts", results: str | Path | None = None) -> CutNumbers:
    """The numbers of the first study of ``kind`` (a KINDS name); NaN and NONE where there is none."""
    study = agreement_studies(results).get(kind)
    if study is None:
        nan = float("nan")
        return CutNumbers(None, NONE, NONE, NONE, 0, 0, 0, 0, nan, nan, nan, nan, nan, nan, nan, nan, 0, 0, 0, nan, nan)
    reach = extra_table(study, "reach", results)
    points, intervals = interactions(reach)
    gaps, _ = split_gaps(reach)
    full_rows = gaps[gaps["bptt"] == FULL]
    full = full_rows.groupby("cut_every")["gap"].mean()
    cut_rows = gaps[(gaps["bptt"] > FULL) & (gaps["bptt"] == gaps["cut_every"])]
    cut = cut_rows.groupby("bptt")["gap"].mean()
    across = cut_rows.groupby("bptt")["beyond_accuracy"].mean()
    rule = rule_across(study, results)
    # every seed that learned must clear the rule, not only their mean
    lowest = cut_rows.groupby("bptt")["beyond_accuracy"].min()
    both = pd.concat([lowest.rename("network"), across.rename("mean"), rule.rename("rule")], axis=1).dropna()
    listed = [
        f"{signed(r.mean, 3)} ({signed(r.low, 3)} to {signed(r.high, 3)}) at k = {integer(r.k)}"
        for r in intervals.itertuples(index=False)
    ]
    updates = held_updates(study, results)
    epochs = [
        f"{integer(n)} at {'full BPTT' if k == FULL else f'k = {integer(k)}'}"
        for k, n in sorted(epochs_by_length(study, results).items(), key=lambda item: (item[0] == FULL, item[0]))
    ]
    return CutNumbers(
        study,
        integer(updates) if updates else NONE,
        words(epochs) if epochs else NONE,
        words(listed) if listed else NONE,
        int((points["interaction"].round(SIGN_DECIMALS) > 0).sum()),
        len(points),
        int((intervals["low"] > 0).sum()),
        len(intervals),
        *_range(full),
        *_range(cut),
        *_range(across),
        *_range(both["rule"]),
        int((both["network"] > both["rule"]).sum()),
        len(both),
        int((both["mean"] > both["rule"]).sum()),
        *_range(full_rows[full_rows["cut_every"].isin(cut.index)].groupby("cut_every")["beyond_accuracy"].mean()),
    )


def rule_across(study: str, results: str | Path | None = None) -> pd.Series:
    """Per cut length k: the nearest-noun rule's test accuracy (tables/agreement_baselines.csv), which reads no head
    and so needs nothing a cut hides, at the head-verb distances of the study's probes across a cut of k (its
    ``cuts`` table; rule_at_cuts). The bar a network's accuracy across a cut must clear before it can be said to
    read the head there; empty where either table is missing."""
    try:
        cuts = extra_table(study, "cuts", results)
    except FileNotFoundError:
        return pd.Series(dtype=float)
    return rule_at_cuts(cuts, nearest_noun(study, results).set_index("distance")["accuracy"])


def rule_at_cuts(cuts: pd.DataFrame, rule: pd.Series) -> pd.Series:
    """Per cut_every k: ``rule`` (accuracy by distance) averaged over the probes that cross a cut of k, each
    distance weighted by its count in ``cuts`` (rnnbench.results.cut_accuracy.cut_table). Every run reads the same
    test probes, so the first setting with probes at k gives the counts; a k with a distance the rule lacks is left
    out."""
    across = cuts[cuts["crosses_cut"].astype(bool) & (cuts["probes"] > 0)]
    bar = {}
    for k, rows in across.groupby("cut_every"):
        weights = rows[rows["bptt"] == rows["bptt"].iloc[0]].set_index("distance")["probes"]
        accuracy = rule.reindex(weights.index)
        if accuracy.notna().all():
            bar[int(k)] = float((accuracy * weights).sum() / weights.sum())
    return pd.Series(bar, dtype=float)


def _range(values: pd.Series) -> tuple[float, float]:
    return (float(values.min()), float(values.max())) if len(values) else (float("nan"), float("nan"))


@dataclass(frozen=True)
class ChapterFigure:
    image: Markdown  # the staged figure, without an extension (each format picks its own)
    files: Markdown  # the results files it was drawn from, as a list for the caption


def ptb_runs(results: str | Path | None = None) -> tuple[pd.DataFrame, str]:
    """Every run of each PTB design (design, bptt, seed, outcome, value) at the metric its lengths are ranked on
    (rnnbench.results.selection: validation perplexity, which no stuck test column moves), and that metric's
    name; a run two designs share appears under each."""
    frames, metric = [], ""
    for design, cost in truncation_designs(results).items():
        metric = selection_metric(cost.metric)
        summary = study_summary(cost.study, results)
        rows = summary[summary["metric"] == metric][["bptt", "seed", "outcome", "value"]]
        frames.append(rows.assign(design=design))
    columns = ["design", "bptt", "seed", "outcome", "value"]
    table = pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
    return table, METRIC_LABELS.get(metric, metric)


def figure(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> ChapterFigure:
    """The chapter's figure, drawn from the agreement studies' reach tables and the PTB designs' summaries, saved
    into the book's staging folder in every format."""
    from rnnbench.plots.style import save
    from rnnbench.plots.truncation_figures import truncation_figure

    studies = agreement_studies(results)
    reaches = {kind: extra_table(study, "reach", results) for kind, study in studies.items()}
    ptb, metric = ptb_runs(results)
    files = [f"studies/{s}/reach.csv" for s in studies.values()]
    files += [f"studies/{c.study}/summary.csv" for c in truncation_designs(results).values()]
    target = Path(staging) / "truncation-chapter"
    target.parent.mkdir(parents=True, exist_ok=True)
    for fmt in paths.FIGURE_FORMATS:
        drawn = truncation_figure(reaches, ptb, metric=metric)
        save(drawn, str(target.with_suffix(f".{fmt}")))
    return ChapterFigure(Markdown(target.as_posix()), words(files))


def signed(value: float, digits: int = 3) -> Markdown:
    """A difference with its sign, and a true minus: signed(-0.0109) -> −0.011, signed(0.0921) -> +0.092."""
    return Markdown(f"{float(value):+.{digits}f}".replace("-", "−"))


def gap_range(low: float, high: float) -> Markdown:
    """A range of gaps as the chapter writes it: "−0.011 to +0.003"; – where there is none."""
    return between(low, high, signed)


def accuracy_range(low: float, high: float) -> Markdown:
    """A range of accuracies: "0.768 to 0.909"; – where there is none."""
    return between(low, high, lambda v: fixed(v, 3))


@dataclass(frozen=True)
class PtbFacts:
    """What the chapter reads off the PTB designs (rnnbench.book.truncation) beside the section's numbers."""

    measured: bool  # a PTB design has two lengths whose speed and memory were measured
    design: Markdown  # what that design holds equal ("equal tokens", "equal updates")
    memory_share: Markdown  # the peak memory's rise from the leanest length to the largest, a share of the leanest
    longer_faster: bool  # whether the length that trains the most tokens a CPU second is the longer of the two
    same_best: bool  # whether every design ranks one length best (on validation)


def ptb_facts(results: str | Path | None = None) -> PtbFacts:
    designs = truncation_designs(results)
    design = EQUAL_TOKENS if EQUAL_TOKENS in designs else EQUAL_UPDATES
    measured = designs.get(design)
    memory = memory_range(measured) if measured else None
    speeds = fastest_and_slowest(measured) if measured else None
    best = {int(ranked[0]["bptt"]) for ranked in map(best_and_worst_length, designs.values()) if ranked}
    return PtbFacts(
        bool(memory and speeds),
        Markdown(design),
        share((memory[1]["max_rss_mb"] - memory[0]["max_rss_mb"]) / memory[0]["max_rss_mb"]) if memory else NONE,
        bool(speeds and speeds[0]["bptt"] > speeds[1]["bptt"]),
        len(best) == 1,
    )


@dataclass(frozen=True)
class Passages:
    """Which of the chapter's alternative sentences the results call for (rnnbench.book.conditions)."""

    across_learned: bool  # CutNumbers.across_learned of the sentence-cut study
    rule_measured: bool  # the nearest-noun rule's accuracy across a cut is known at some length
    above_rule: bool  # across a cut, at every length every seed scores higher than that rule
    mean_above_rule: bool  # and, where some seed does not, the seeds' mean does at every length
    ptb: PtbFacts  # its flags: longer_faster, same_best


def passages(cuts: CutNumbers, facts: PtbFacts) -> Passages:
    return Passages(
        across_learned=cuts.across_learned,
        rule_measured=cuts.rule_lengths > 0,
        above_rule=cuts.rule_lengths > 0 and cuts.above_rule == cuts.rule_lengths,
        mean_above_rule=cuts.rule_lengths > 0 and cuts.mean_above_rule == cuts.rule_lengths,
        ptb=facts,
    )
