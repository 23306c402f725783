"""The windows section's values (reports/studies.qmd): each feed-forward window (role window) beside the Elman
RNN of the nearest parameter count (role recurrence), both models' agreement accuracy within the window's width
and beyond it, and the nearest-noun heuristic beyond it, with the state the sentences pick their wording from;
windows_section gives them as the appendix's section prints them (reports/ablations.qmd), with its flags.

Reads results only (rnnbench.book.results); no torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.book.format import NONE, Markdown, counted, fixed, integer
from rnnbench.book.results import agreement_baselines, results_root, study_about, study_summary
from rnnbench.book.studies import (
    LEARNED,
    Learned,
    accuracy,
    count_of,
    distance_references,
    extra_table,
    first_of,
    learned,
    studies_with_role,
)
from rnnbench.findings.policy import MARGINS
from rnnbench.results.ablations import reach_table, setting_table
from rnnbench.results.matching import matched_pairs

# Whether the windows beyond their width are compared with their recurrences (WindowComparison.state): no
# pair has seeds that learned on both sides; no recurrence learned even within the windows' widths; or they are.
NOTHING_COMPARED, RECURRENCE_NOT_LEARNED, COMPARED = "nothing compared", "recurrence not learned", "compared"
# How far below the nearest-noun heuristic a window may score within its width before it reads as under-trained: the
# findings' margin on an accuracy (rnnbench.findings.policy).
ACCURACY_MARGIN = MARGINS["accuracy"].size


def window_studies(results: str | Path | None = None) -> tuple[str | None, str | None]:
    """The windows (role window) and the recurrences sized to match them (role recurrence)."""
    return first_of(studies_with_role("window", results)), first_of(studies_with_role("recurrence", results))


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
    heuristic = nearest_noun(ff_study, results)
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
        # the count-based heuristic on the same distances: a window is judged against it within its width (where it
        # sees the head, so that a window trained to what it can do is not below a rule that reads one noun) and beyond
        near, far = heuristic[heuristic["distance"] <= pair.context], heuristic[heuristic["distance"] > pair.context]
        row["nearest_noun_within"], row["nearest_noun_beyond"] = _weighted(near), _weighted(far)
        rows.append(row)
    return pd.DataFrame(rows)


def _weighted(heuristic: pd.DataFrame) -> float:
    """The heuristic's accuracy over its rows' probes (NaN for none)."""
    return float((heuristic["accuracy"] * heuristic["n"]).sum() / heuristic["n"].sum()) if len(heuristic) else math.nan


def nearest_noun(study: str, results: str | Path | None = None) -> pd.DataFrame:
    """The nearest-noun heuristic's test accuracy per head-verb distance (tables/agreement_baselines.csv) on
    the corpus ``study``'s runs read (all of a study's runs read one corpus); empty without the table or the run."""
    run = _run_settings(study, results)
    if run is None:
        return pd.DataFrame(columns=["distance", "accuracy", "n"])
    try:
        table = agreement_baselines(results)
    except FileNotFoundError:
        return pd.DataFrame(columns=["distance", "accuracy", "n"])
    rows = table[
        (table["corpus_key"] == paths.corpus_key(run["corpus"], run["corpus_options"]))
        & (table["heuristic"] == "nearest_noun")
    ]
    return rows[rows["split"] == "test"][["distance", "accuracy", "n"]]


def _parameters(summary: pd.DataFrame, setting: str) -> pd.DataFrame:
    rows = summary[summary["metric"] == "parameters"]
    return rows.groupby(setting, sort=False, as_index=False)["value"].first().rename(columns={"value": "parameters"})


@dataclass(frozen=True, eq=False)
class WindowComparison:
    """The windows (role window), the recurrences sized to match them (role recurrence), and their pairs
    (window_against_recurrence)."""

    windows: str
    recurrences: str
    pairs: pd.DataFrame
    attractor_prob: float | None  # the windows' corpus option: how likely a noun between has the other number
    # How each side trained (a run's resolved lr and max_epochs; None without a run's config.json)
    window_recipe: tuple[float, int] | None = None
    recurrence_recipe: tuple[float, int] | None = None

    @property
    def beyond(self) -> pd.DataFrame:
        """The pairs whose window has dependencies beyond its width."""
        return self.pairs[self.pairs["beyond"]]

    @property
    def compared(self) -> pd.DataFrame:
        """The pairs with dependencies beyond the window, seeds that learned on both sides, and both sides trained
        to what the window sees: neither below the nearest-noun heuristic within the window's width by more than
        ACCURACY_MARGIN (where the heuristic has probes there), since a pair with a side under it measures how far
        each was trained, not how far each can see. The only pairs a claim is made on (as rnnbench.findings.window
        reads them)."""
        rows = self.beyond[(self.beyond["ff_learned"] > 0) & (self.beyond["rnn_learned"] > 0)]
        rows = rows.dropna(subset=["ff_within", "ff_beyond", "rnn_within", "rnn_beyond"])
        floor = rows["nearest_noun_within"] - ACCURACY_MARGIN
        return rows[floor.isna() | ((rows["ff_within"] >= floor) & (rows["rnn_within"] >= floor))]

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
    def within(self) -> pd.DataFrame:
        """The pairs whose window and nearest-noun heuristic both have an accuracy within the window's width."""
        return self.pairs.dropna(subset=["ff_within", "nearest_noun_within"])

    @property
    def under_the_rule(self) -> int:
        """Of those, how many windows score below the heuristic within their width by more than ACCURACY_MARGIN: a
        window that sees the head and still does worse than a rule reading one noun is under-trained."""
        rows = self.within
        return int((rows["ff_within"] < rows["nearest_noun_within"] - ACCURACY_MARGIN).sum())

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
    return WindowComparison(
        windows,
        recurrences,
        pairs,
        options.get("attractor_prob"),
        _recipe(windows, results),
        _recipe(recurrences, results),
    )


def _recipe(study: str, results: str | Path | None) -> tuple[float, int] | None:
    """(rate, epochs) a study's first run trained with, from its config.json; None where it is missing."""
    run = _run_settings(study, results) or {}
    return (float(run["lr"]), int(run["max_epochs"])) if {"lr", "max_epochs"} <= set(run) else None


def _run_settings(study: str, results: str | Path | None) -> dict | None:
    """The resolved settings (config.json) of a study's first run; None where it is missing (all of a study's runs
    read one corpus, and the window studies train every run with one rate and length)."""
    run_id = study_about(study, results)["run_ids"][0]
    settings = Path(paths.run_config(results_root(results), run_id))
    return json.loads(settings.read_text()) if settings.is_file() else None


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
            "window learned": [count_of(k, n) for k, n in zip(pairs["ff_learned"], pairs["ff_runs"], strict=True)],
            "RNN learned": [count_of(k, n) for k, n in zip(pairs["rnn_learned"], pairs["rnn_runs"], strict=True)],
            "window within": [accuracy(v) for v in pairs["ff_within"]],
            "window beyond": [accuracy(v) for v in pairs["ff_beyond"]],
            "RNN within": [accuracy(v) for v in pairs["rnn_within"]],
            "RNN beyond": [accuracy(v) for v in pairs["rnn_beyond"]],
        }
    )


@dataclass(frozen=True, eq=False)
class WindowsSection:
    """Each feed-forward window beside the Elman RNN of the nearest parameter count (window_comparison), within
    the window's width and beyond it, and the nearest-noun rule on the same distances, as the appendix's section
    prints them (reports/ablations.qmd), with the flags of its alternative sentences (rnnbench.book.conditions)."""

    shown: bool  # a window study and a recurrence study have results here
    recipes: bool  # both sides' rate and epochs are known
    within: bool  # some window and the rule both have an accuracy within the window's width
    under: bool  # some window is below the rule there by more than the margin: under-trained
    beyond: bool  # some window has dependencies beyond its width
    nothing_compared: bool  # no pair beyond a window has both sides learned and trained to what the window sees
    recurrence_not_learned: bool  # no compared recurrence learned even within the windows' widths
    informs: bool  # a noun between head and verb more likely has the head's number: the window's best guess
    judged: bool  # some window and the rule both have an accuracy beyond the window's width
    compared: bool  # some pair is compared beyond the window
    learned: Learned
    window_recipe: Markdown  # "3 epochs at Adam's rate 0.003"
    recurrence_recipe: Markdown
    within_scores: Markdown  # "$n-1$ = 2: 0.850 against 1.000"; ...
    under_count: Markdown  # windows below the rule within their width, of
    within_count: Markdown
    margin: Markdown
    pairs: Markdown  # "$n-1$ = 2: window 0.850 / 0.520, RNN ($H$ = 60) 0.900 / 0.800"; ...
    keep_prob: Markdown  # the chance a noun between has the head's number
    attractor_prob: Markdown
    rule_beyond: Markdown  # "0.750 beyond $n-1$ = 2"; ...
    below_rule: Markdown  # windows below the rule beyond their width, of
    judged_count: Markdown
    near_chance: Markdown  # compared windows below the accuracy a model that learned must pass, of
    compared_count: Markdown
    recurrence_better: Markdown  # compared pairs where the recurrence beats the window beyond its width
    window_see: Markdown  # where each side is shown per distance
    recurrence_see: Markdown
    table: pd.DataFrame  # window_display


def _recipe_words(recipe: tuple[float, int] | None) -> Markdown:
    if recipe is None:
        return NONE
    lr, epochs = recipe
    return Markdown(f"{counted(epochs, 'epoch')} at Adam's rate {lr:g}")


def windows_section(results: str | Path | None = None) -> WindowsSection:
    w = window_comparison(results)
    if w is None:
        return WindowsSection(
            *[False] * 10,
            Learned(False, NONE),
            *[NONE] * 17,
            pd.DataFrame(columns=["n-1"]),  # type: ignore[arg-type]
        )
    within = [
        f"$n-1$ = {integer(p.context)}: {accuracy(p.ff_within)} against {fixed(p.nearest_noun_within, 3)}"
        for p in w.within.itertuples(index=False)
    ]
    pairs = [
        f"$n-1$ = {integer(p.context)}: window {accuracy(p.ff_within)} / {accuracy(p.ff_beyond)}, "
        f"RNN ($H$ = {integer(p.hidden)}) {accuracy(p.rnn_within)} / {accuracy(p.rnn_beyond)}"
        for p in w.beyond.itertuples(index=False)
    ]
    rule_beyond = [
        f"{fixed(p.nearest_noun_beyond, 3)} beyond $n-1$ = {integer(p.context)}"
        for p in w.judged.itertuples(index=False)
    ]
    attractor = w.attractor_prob if w.attractor_prob is not None else math.nan
    return WindowsSection(
        shown=True,
        recipes=bool(w.window_recipe and w.recurrence_recipe),
        within=bool(within),
        under=w.under_the_rule > 0,
        beyond=bool(pairs),
        nothing_compared=w.state == NOTHING_COMPARED,
        recurrence_not_learned=w.state == RECURRENCE_NOT_LEARNED,
        informs=w.nearest_noun_informs,
        judged=bool(rule_beyond),
        compared=len(w.compared) > 0,
        learned=learned([w.windows, w.recurrences], results),
        window_recipe=_recipe_words(w.window_recipe),
        recurrence_recipe=_recipe_words(w.recurrence_recipe),
        within_scores=Markdown("; ".join(within)) if within else NONE,
        under_count=integer(w.under_the_rule),
        within_count=integer(len(w.within)),
        margin=fixed(ACCURACY_MARGIN, 2),
        pairs=Markdown("; ".join(pairs)) if pairs else NONE,
        keep_prob=fixed(1 - attractor, 2),
        attractor_prob=fixed(attractor, 2),
        rule_beyond=Markdown("; ".join(rule_beyond)) if rule_beyond else NONE,
        below_rule=integer(w.below_heuristic),
        judged_count=integer(len(w.judged)),
        near_chance=integer(w.near_chance),
        compared_count=integer(len(w.compared)),
        recurrence_better=integer(w.recurrence_better),
        window_see=distance_references(w.windows, results),
        recurrence_see=distance_references(w.recurrences, results),
        table=window_display(w),
    )
