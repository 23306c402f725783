"""The decay chapter's probe section (reports/decay.qmd holds its sentences): what a linear probe reads of the head
noun's number d steps after it, beside the gradient that crosses d steps (an analysis of kind probe; its table is
rnnbench.decay.probe's).

    probe_values   the values the sentences print, at the farthest distance every network of the analysis reaches:
                   the trained and the untrained networks' accuracy on every held-out example and where the nearest
                   noun has the other number, the shuffled-label control, chance and the nearest noun's rule, the
                   gradient there relative to the verb's own state, how many seeds learned, and the verdict word

A spread is the mean over the analysis's networks at one snapshot with their range. Reads results only
(rnnbench.book.results); no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR, stage_figure
from rnnbench.book.format import Markdown, code, counted, fixed, integer, label_slug, sig
from rnnbench.book.results import (
    analysis_names,
    analysis_record,
    analysis_table,
    missing_result,
    results_root,
    study_summary,
)

TRAINED, UNTRAINED = "final", "0"  # the snapshots the section sets side by side
# The verdict: at the farthest distance, every trained network reads the head's number better than chance and
# better than the nearest noun's number would, on every held-out example (the lower end of its interval above both):
# what it reads is not the last noun it saw.
CARRIES, NOT_CARRIED = "carries", "does not reliably carry"


@dataclass(frozen=True)
class ProbeValues:
    name: Markdown  # the analysis, as code
    figure: Markdown  # the staged figure, for the image's path
    source: Markdown  # the figure's file in the results folder, as code
    study: Markdown  # the study whose runs the probe reads, and the settings it keeps: `s` (`bptt = 0`)
    sentences: Markdown  # held-out sentences read
    folds: Markdown
    l2: Markdown
    permutations: Markdown  # "10 seeded permutations" of the labels, pooled in the shuffled control
    networks: Markdown  # "3 seeds"
    learned: Markdown  # how many of them learned agreement (the study's summary): "all" where every one did
    far: Markdown  # the farthest distance every network reaches
    chance: Markdown  # the majority rate there
    nearest: Markdown  # the nearest noun's number, read as the head's, there
    trained: Markdown  # the trained networks' accuracy there, every example
    attracted: Markdown  # ... where the nearest noun has the other number
    attracted_n: Markdown  # how many examples that is (per network)
    untrained: Markdown
    untrained_noun: Markdown  # the untrained networks' accuracy at the noun itself (d = 0)
    shuffled: Markdown  # the trained networks' probe on shuffled labels
    fall: Markdown  # the trained networks' gradient there, over the one at the verb's own state
    fall_untrained: Markdown
    carries: Markdown  # CARRIES or NOT_CARRIED


def probe_names(results: str | Path | None = None) -> list[str]:
    return [n for n in analysis_names(results) if analysis_record(n, results)["kind"] == "probe"]


def _how_many(part: int, whole: int) -> Markdown:
    """``part`` of ``whole`` as the words before "of which": "all" where they are the same, else the count."""
    return Markdown("all") if part == whole else integer(part)


def spread(values: pd.Series, digits: int = 3) -> Markdown:
    """The mean and, where the networks differ at ``digits`` decimals, their range: 0.975 (0.892 to 0.981)."""
    mean, low, high = (fixed(v, digits) for v in (values.mean(), values.min(), values.max()))
    return mean if low == high else Markdown(f"{mean} ({low} to {high})")


def probe_values(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> ProbeValues:
    """The section's values from the first probe analysis here (see the module docstring)."""
    names = probe_names(results)
    if not names:
        raise missing_result(paths.analysis_table(results_root(results), "<a probe analysis>", "probe"))
    name = names[0]
    record = analysis_record(name, results)
    table = analysis_table(name, "probe", results, text=("snapshot", "run_id"))
    if not {TRAINED, UNTRAINED} <= set(table["snapshot"]):
        raise ValueError(
            f"analyses/{name}: the section sets snapshots 0 and final side by side; it has {record['snapshots']}"
        )
    true = table[table["labels"] == "true"]
    every = true[true["subset"] == "all"]
    networks = every.groupby(["run_id", "snapshot"])["distance"].max()
    far = int(networks.min())
    at = table[table["distance"] == far]

    def rows(labels: str, subset: str, snapshot: str) -> pd.DataFrame:
        return at[(at["labels"] == labels) & (at["subset"] == subset) & (at["snapshot"] == snapshot)]

    trained, attracted = rows("true", "all", TRAINED), rows("true", "attractor", TRAINED)
    above = (trained["accuracy_low"] > np.maximum(trained["chance"], trained["nearest_noun"])).all()
    summary = study_summary(record["study"], results)
    runs = summary[summary["run_id"].isin(trained["run_id"])].drop_duplicates("run_id")
    staged = stage_figure(
        paths.analysis_figure(results_root(results), name, "png"), f"probe-{label_slug(name)}", staging
    )
    return ProbeValues(
        name=code(name),
        figure=Markdown(staged),
        source=code(f"analyses/{name}/figure.png"),
        study=Markdown(
            " ".join([code(record["study"]), *(f"({code(f'{k} = {v}')})" for k, v in record["where"].items())])
        ),
        sentences=integer(every[every["distance"] == 0]["n_scored"].iloc[0]),
        folds=integer(record["measure"]["folds"]),
        l2=sig(record["measure"]["l2"]),
        permutations=counted(record["measure"]["permutations"], "seeded permutation"),
        networks=counted(trained["run_id"].nunique(), "seed"),
        # "3 seeds, all of which learned", not "3 of which": the count is read beside the number of seeds
        learned=_how_many((runs["outcome"] == "learned").sum(), trained["run_id"].nunique()),
        far=integer(far),
        chance=fixed(trained["chance"].mean(), 3),
        nearest=fixed(trained["nearest_noun"].mean(), 3),
        trained=spread(trained["accuracy"]),
        attracted=spread(attracted["accuracy"]),
        attracted_n=integer(attracted["n_scored"].mean()) if len(attracted) else integer(0),
        untrained=spread(rows("true", "all", UNTRAINED)["accuracy"]),
        untrained_noun=spread(every[(every["distance"] == 0) & (every["snapshot"] == UNTRAINED)]["accuracy"]),
        shuffled=spread(rows("shuffled", "all", TRAINED)["accuracy"]),
        fall=sig(_geometric_mean(trained["gradient_relative"]), 2),
        fall_untrained=sig(_geometric_mean(rows("true", "all", UNTRAINED)["gradient_relative"]), 2),
        carries=Markdown(CARRIES if above and len(trained) else NOT_CARRIED),
    )


def _geometric_mean(values: pd.Series) -> float:
    return float(np.exp(np.log(values.astype(float)).mean()))
