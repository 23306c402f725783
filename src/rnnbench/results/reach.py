"""Each run's agreement accuracy within reach of a truncation length k and beyond it, and full-sentence BPTT's on the
same probes split at the same k: the per-run table the interaction of truncation with distance is read from (rule
study_extra_table, kind "reach").

Two splits of a run's test probes at one k (rnnbench.results.cut_accuracy derives where a probe's head and verb sit):

    distance   within: head-verb distance <= k; beyond: > k. A dependency longer than k crosses a cut in every
               design, whether the cuts fall every k steps of a stream or every k steps of each sentence; one within
               k may cross one too
    block      within: the head's step and the verb's in one block of k steps of the sentence; beyond: a cut
               between them. Exact only where the cuts fall at the same steps of every sentence in training
               (``segments: sentence``), so only those runs and the full-sentence runs beside them are split so

A run cut at k is split at its own k; a full-sentence run (bptt 0) at every k of its study, so that the truncated
runs' gap (within minus beyond) can be set against the gap the same probes show with no cut at all:

    interaction at k = mean gap of the runs cut at k - mean gap of the full-sentence runs split at k

each mean over the seeds that learned (the table keeps every run that did not diverge, with its outcome).

    reach_lengths   the k a run's probes are split at, and which of them by blocks
    reach_rows      one run's rows at one k, from its accuracy per (distance, side of the cut)
    reach_table     the study's per-run table

Pure pandas: no torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

SPLITS = ("distance", "block")
REACH_COLUMNS = (
    "cut_every",
    "split",
    "within_probes",
    "within_accuracy",
    "beyond_probes",
    "beyond_accuracy",
    "gap",
)


def reach_lengths(
    bptt: int, segments: str, study_lengths: Iterable[int], sentence_lengths: Iterable[int]
) -> list[tuple[int, bool]]:
    """(k, split by blocks too) for each k a run's probes are split at: a truncated run, its own k (by blocks where its
    cuts fall within sentences); a full-sentence run (bptt 0), each truncation length of its study (by blocks at the
    lengths its study cuts within sentences, ``sentence_lengths``)."""
    if bptt == 0:
        sentence = set(sentence_lengths)
        return [(k, k in sentence) for k in sorted(set(study_lengths))]
    return [(bptt, segments == "sentence")]


def reach_rows(cuts: pd.DataFrame, every: int, block: bool) -> pd.DataFrame:
    """One run's rows at ``every`` (REACH_COLUMNS): the distance split, and the block split where ``block``.
    ``cuts``: its accuracy per (distance, crosses_cut) under cuts every ``every`` steps
    (rnnbench.results.cut_accuracy.cut_accuracy: distance, crosses_cut, n, accuracy). A side with no probe has
    accuracy NaN, and so has the gap."""
    correct = cuts["n"] * cuts["accuracy"]
    sides = {"distance": cuts["distance"] <= every}
    if block:
        sides["block"] = ~cuts["crosses_cut"].astype(bool)
    rows = []
    for split, within in sides.items():
        n_in, n_out = int(cuts.loc[within, "n"].sum()), int(cuts.loc[~within, "n"].sum())
        a_in = float(correct[within].sum() / n_in) if n_in else math.nan
        a_out = float(correct[~within].sum() / n_out) if n_out else math.nan
        rows.append(
            {
                "cut_every": every,
                "split": split,
                "within_probes": n_in,
                "within_accuracy": a_in,
                "beyond_probes": n_out,
                "beyond_accuracy": a_out,
                "gap": a_in - a_out,
            }
        )
    return pd.DataFrame(rows, columns=list(REACH_COLUMNS))


def reach_table(runs: pd.DataFrame, per_run: Mapping[str, pd.DataFrame], vary: Sequence[str]) -> pd.DataFrame:
    """The study's rows, one per (run, k, split):

        run_id, <vary...>, seed, outcome, cut_every, split, within_probes, within_accuracy, beyond_probes,
        beyond_accuracy, gap

    ``runs``: rnnbench.results.ablations.runs_frame; ``per_run``: run_id -> its reach_rows (at every k it is split
    at, concatenated) for every run that did not diverge. A run that did not learn keeps its rows with its outcome:
    the reader leaves it out of every mean, and counts it."""
    vary = list(vary)
    columns = ["run_id", *vary, "seed", "outcome", *REACH_COLUMNS]
    missing = [r for r in runs.loc[~runs["diverged"], "run_id"] if r not in per_run]
    if missing:
        raise ValueError(f"runs {missing} did not diverge but have no accuracy within and beyond reach")
    frames = [
        per_run[run.run_id].assign(
            run_id=run.run_id, **{k: getattr(run, k) for k in [*vary, "seed"]}, outcome=run.outcome
        )
        for run in runs.itertuples(index=False)
        if not run.diverged
    ]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]
