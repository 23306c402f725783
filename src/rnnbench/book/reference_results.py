"""What the section "Trained to convergence" of reports/published.qmd reads: the reference results (paper-scale
runs kept in the repository's reference/), one row per study with its seeds summarised, and the verdict its
sentence words.

    reference_runs(frame)     one row per study of the comparison table (tables/comparison.csv): its seeds' mean
                              test perplexity and range, its ratio to the published row it is measured against, and
                              both read against the Kneser-Ney model of each one's own split (normalised)
    reference_verdict(row)    below | above | tie | mixed | not comparable | no baseline, from the normalised ratio
    verdict_words(row)        that verdict as the chapter's table and sentences say it

A split is not the paper's split (other texts, other cuts), so a reference row is judged by its normalised ratio,
our ratio to our Kneser-Ney model over the published row's ratio to its paper's (rnnbench.results.beside_published),
and a normalised ratio within TIE_BAND of 1 is a tie: the margin the findings allow any perplexity
(rnnbench.findings.policy.MARGINS), relative to the published side, here 1.

Like the rest of rnnbench.book, nothing here trains or imports torch; every number is read from the table.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from rnnbench.findings.policy import MARGINS
from rnnbench.results.departures import NO_DEPARTURE, NO_RECIPE

MARGIN = MARGINS["perplexity"]  # printed as the band's width ("2%")
TIE_BAND = MARGIN.absolute(1.0)  # a normalised ratio within 1 +- TIE_BAND is a tie
EDGE = 1e-12  # a ratio on the band's edge, up to rounding, is in the band


def reference_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The reference results (trained to convergence, kept in the repository), one row per study: its
    seeds' mean test perplexity and range, epochs, status, commit, the ratio of the mean to the published
    row it is measured against (only where every seed is comparable: same vocabulary, not stale), and the
    Kneser-Ney model of each side's own split: ours (kn_model, kn_ppl, ratio_to_kn: the mean over it), the
    paper's (reference_kn_model, reference_kn_ppl, reference_ratio_to_kn) and the normalised ratio of the mean
    and of the lowest and highest seed (normalised, normalised_min, normalised_max; NaN where a seed has none),
    and the settings its recipe departs from the published row's in (rnnbench.results.departures)."""
    mine = frame[frame["scale"] == "reference"]
    # a run scored under dynamic evaluation is a row of its own ("<run> dynamic"), beside the published dynamic row
    mine = mine.assign(_dynamic=mine["model"].str.endswith(" dynamic"))
    theirs = frame[frame["origin"] == "published"]
    rows = []
    for (corpus, family, study, _), runs in mine.groupby(["corpus", "family", "studies", "_dynamic"], sort=False):
        runs = runs.sort_values("seed", kind="stable")  # seeds and their epochs listed in one order, the seeds'
        measured = runs.dropna(subset=["test_ppl"])
        fresh = runs[runs["status"] != "stale"]
        comparable = (runs["comparable"] == "yes").all() and len(measured) == len(runs)
        mean = measured["test_ppl"].mean() if len(measured) else float("nan")
        reasons = [r for r in dict.fromkeys(runs["comparable"]) if r != "yes"]
        # every seed's, or none (skipna=False): the seeds that have one would speak for those that have not
        normalised = runs["normalised_ratio"].astype(float)
        reference = theirs[(theirs["corpus"] == corpus) & (theirs["model"] == runs["reference_model"].iloc[0])]
        rows.append(
            {
                "corpus": corpus,
                "family": family,
                "study": study,
                "description": _without_seed(runs["description"].iloc[0]),
                "seeds": ", ".join(str(int(s)) for s in runs["seed"]),
                "n_seeds": len(runs),
                "stale": len(runs) - len(fresh),
                "test_ppl": mean,
                "test_min": measured["test_ppl"].min(),
                "test_max": measured["test_ppl"].max(),
                "valid_ppl": measured["valid_ppl"].mean(),
                "epochs": ", ".join(str(int(e)) for e in runs["epochs"]),
                "status": ", ".join(dict.fromkeys(runs["status"])),
                "commit": ", ".join(dict.fromkeys(str(c)[:7] for c in runs["commit"])),
                "parameters": runs["parameters"].iloc[0],
                "reference_model": runs["reference_model"].iloc[0],
                "reference_ppl": runs["reference_ppl"].iloc[0],
                "ratio": mean / runs["reference_ppl"].iloc[0] if comparable else float("nan"),
                "comparable": "yes" if comparable else "; ".join(reasons),
                "kn_model": runs["kn_model"].iloc[0],
                "kn_ppl": runs["kn_ppl"].iloc[0],
                "ratio_to_kn": runs["ratio_to_kn"].mean(skipna=False),
                "reference_kn_model": reference["kn_model"].iloc[0] if len(reference) else "",
                "reference_kn_ppl": reference["kn_ppl"].iloc[0] if len(reference) else float("nan"),
                "reference_ratio_to_kn": reference["ratio_to_kn"].iloc[0] if len(reference) else float("nan"),
                # the seeds share one Kneser-Ney model, so the mean's normalised ratio is the seeds' mean one
                "normalised": normalised.mean(skipna=False),
                "normalised_min": normalised.min(skipna=False),
                "normalised_max": normalised.max(skipna=False),
                "departures": runs["departures"].iloc[0],  # one recipe: the seeds differ in their seed only
                # the study whose recipe this one carries further ("" for a recipe set against the paper's alone)
                "departs_from": runs["departs_from"].fillna("").iloc[0] if "departs_from" in runs else "",
                "runs": ", ".join(runs["model"]),
                "dynamic": bool(runs["_dynamic"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


def reference_verdict(row: Any) -> str:
    """Where a reference row stands against its published row, each over the Kneser-Ney model of its own split:
    tie (the mean's normalised ratio within TIE_BAND of 1), below or above (every seed's beyond the band on that
    side), mixed (the mean beyond the band, not every seed); not comparable (see
    rnnbench.results.beside_published.VOCAB_TOLERANCE) or no baseline (no normalised ratio: a Kneser-Ney model of
    either split missing)."""
    if row["comparable"] != "yes":
        return "not comparable"
    if pd.isna(row["normalised"]):
        return "no baseline"
    if abs(row["normalised"] - 1) <= TIE_BAND + EDGE:
        return "tie"
    if row["normalised_max"] < 1 - TIE_BAND - EDGE:
        return "below"
    if row["normalised_min"] > 1 + TIE_BAND + EDGE:
        return "above"
    return "mixed"


VERDICT_WORDS = {
    "tie": "level with it",
    "below": "below it, every seed",
    "above": "above it, every seed",
    "mixed": "beyond the band on the mean, not every seed",
    "no baseline": "no normalised ratio: a Kneser-Ney model of either split is missing",
}


def verdict_words(row: Any) -> str:
    """reference_verdict in words; a row not compared says why."""
    verdict = reference_verdict(row)
    return f"not compared: {row['comparable']}" if verdict == "not comparable" else VERDICT_WORDS[verdict]


def departure_words(departures: str, beyond: str = "") -> str:
    """Where a recipe departs from its paper's (rnnbench.results.departures), as a table cell says it; ``beyond``:
    the published model whose reproduction a modern recipe changes, which then lists the settings it changed."""
    if beyond:
        return f"modern recipe; against our {beyond} row, {departures}"
    if departures == NO_DEPARTURE:
        return "nothing its paper states"
    if departures == NO_RECIPE:
        return "its paper states no recipe"
    return departures


def _without_seed(description: str) -> str:
    return re.sub(r", seed \d+", "", description)
