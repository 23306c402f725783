"""Reach as a run with sentence segments sees it: which agreement probes a gradient cut separates from their head.

A sentence read whole (rnnbench.data.batching.sentence_batches) starts at step 0 of its batch column; at step t
its input is the token at s + t - 1 (``<eos>`` at t = 0) and its target the token at s + t, s the sentence's
start in the stream. So the head noun at stream position p_h enters at step p_h - s + 1, and the verb at p_v is
predicted at step p_v - s:

    token   the  old  book  that  the  committee  rejected  was  short  <eos>     (s = 0)
    step    0    1    2     3     4    5          6         7    8      9         (the step that predicts it)
    head "book" (p_h = 2) enters at step 3; the verb "was" (p_v = 7, distance 5) is predicted at step 7

With ``segments: sentence`` and ``bptt`` k the gradient stops at steps k, 2k, ... (rnnbench.models.base), so
step t is in block t // k, and backward from the verb's loss reaches the head only if both steps are in one
block: here within at k = 8 (blocks 0-7), across a cut at k = 5 (the head in block 0, the verb in block 1).
A distance d puts the two steps d - 1 apart, so a probe with d <= k can still cross a cut, and d > k always does.

    cut_accuracy   one run's probes (their margins, rnnbench.training.evaluate.sentence_margins): accuracy per
                   (distance, crosses_cut) under the cuts of k
    cut_table      a study's: per (varied settings, cut_every, distance, crosses_cut), the mean and range over
                   the seeds that learned; a run cut every k is split by its own cuts, a full-sentence run
                   (bptt 0) by each k of the study, so that the same probes are measured without any cut
    contrast       from cut_table: at each distance with probes on both sides, within minus across

At one distance the probes within a block and those across a cut differ in where the head sits in its
sentence (whether its noun phrase has an adjective): the full-sentence run split the same way shows how much of
the difference is that, and not the cut.

Pure numpy and pandas: no torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from rnnbench.results.outcome import COUNT_COLUMNS, learned, seed_counts

CUT_COLUMNS = ("cut_every", "distance", "crosses_cut")


def probe_steps(probes: pd.DataFrame, sentence_starts: np.ndarray) -> pd.DataFrame:
    """``probes`` (position, head_position, ...) with the steps of their sentence at which the head enters
    (``head_step``) and the verb is predicted (``verb_step``), as the module docstring derives them."""
    starts = np.asarray(sentence_starts, dtype=np.int64)
    positions = probes["position"].to_numpy(dtype=np.int64)
    start = starts[np.searchsorted(starts, positions, side="right") - 1]  # (n,) the start of each probe's sentence
    heads = probes["head_position"].to_numpy(dtype=np.int64)
    if np.any(heads < start) or np.any(heads >= positions):
        raise ValueError("every probe's head must come before its verb, in the verb's sentence")
    return probes.assign(head_step=heads - start + 1, verb_step=positions - start)


def crosses_cut(head_step: Iterable[int], verb_step: Iterable[int], every: int) -> np.ndarray:
    """Whether a cut every ``every`` steps falls between each head's step and its verb's (different blocks)."""
    if every < 1:
        raise ValueError(f"cuts every {every} steps: a cut length must be >= 1")
    head, verb = np.asarray(head_step, dtype=np.int64), np.asarray(verb_step, dtype=np.int64)
    return head // every != verb // every


def cut_accuracy(probes: pd.DataFrame, every: int) -> pd.DataFrame:
    """One run's accuracy per (distance, crosses_cut) under cuts every ``every`` steps: cut_every, distance,
    crosses_cut, n (probes), accuracy (share with margin > 0). ``probes``: probe_steps' table with each probe's
    ``margin``; a (distance, side) no probe falls on has no row."""
    table = probes.assign(
        crosses_cut=crosses_cut(probes["head_step"], probes["verb_step"], every), correct=probes["margin"] > 0
    )
    grouped = table.groupby(["distance", "crosses_cut"], as_index=False).agg(
        n=("correct", "size"), accuracy=("correct", "mean")
    )
    return grouped.assign(cut_every=every)[[*CUT_COLUMNS, "n", "accuracy"]]


def partitions(bptt: int, segments: str, study_cuts: Iterable[int]) -> list[int]:
    """The cut lengths a run's probes are split by: a run cut within sentences, its own; a full-sentence run
    (bptt 0), each of ``study_cuts`` (the study's); a stream run, none (its cuts ignore sentences)."""
    if bptt == 0:
        return sorted(set(study_cuts))
    return [bptt] if segments == "sentence" else []


def cut_table(runs: pd.DataFrame, per_run: Mapping[str, pd.DataFrame], vary: Sequence[str]) -> pd.DataFrame:
    """Accuracy per (varied settings, cut_every, distance, crosses_cut) over the seeds that learned.

        <vary...>, cut_every, distance, crosses_cut, runs, seeds_learned, seeds_failed, diverged_runs, probes,
        accuracy_mean, accuracy_min, accuracy_max, accuracy_sd

    ``runs``: rnnbench.results.ablations.runs_frame; ``per_run``: run_id -> its cut_accuracy tables (one per cut
    length it is split by, concatenated) for every run that did not diverge. As in
    rnnbench.results.ablations.distance_table, the counts are the setting's, ``probes`` is summed over the seeds that
    learned, the mean and range are over those seeds (each seed one measurement), and the sd is their sample
    standard deviation (NaN for one); a (distance, side) that some run of the setting has keeps its row where no
    seed learned, with NaN accuracies.
    """
    vary = list(vary)
    columns = [
        *vary,
        *CUT_COLUMNS,
        *COUNT_COLUMNS,
        "probes",
        "accuracy_mean",
        "accuracy_min",
        "accuracy_max",
        "accuracy_sd",
    ]
    frames = [per_run[r].assign(run_id=r) for r in runs.loc[~runs["diverged"], "run_id"] if r in per_run]
    missing = [r for r in runs.loc[~runs["diverged"], "run_id"] if r not in per_run]
    if missing:
        raise ValueError(f"runs {missing} did not diverge but have no accuracy per cut")
    if not frames:
        return pd.DataFrame(columns=columns)
    every = pd.concat(frames, ignore_index=True)
    outcome = dict(zip(runs["run_id"], runs["outcome"], strict=True))
    every["learned"] = learned(every["run_id"].map(outcome))
    rows = []
    for values, group in runs.groupby(vary, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        here = every[every["run_id"].isin(group["run_id"])]
        counts = seed_counts(group["outcome"])
        for keys, at in here.groupby(list(CUT_COLUMNS), sort=True):
            taken = at[at["learned"]]
            accuracy = taken["accuracy"]
            rows.append(
                {
                    **dict(zip(vary, values, strict=True)),
                    **dict(zip(CUT_COLUMNS, keys, strict=True)),
                    **counts,
                    "probes": int(taken["n"].sum()),
                    "accuracy_mean": float(accuracy.mean()) if len(taken) else math.nan,
                    "accuracy_min": float(accuracy.min()) if len(taken) else math.nan,
                    "accuracy_max": float(accuracy.max()) if len(taken) else math.nan,
                    "accuracy_sd": float(accuracy.std()) if len(taken) > 1 else math.nan,
                }
            )
    return pd.DataFrame(rows, columns=columns)


def contrast(table: pd.DataFrame, vary: Sequence[str]) -> pd.DataFrame:
    """Per (varied settings, cut_every, distance) of ``table`` (cut_table) whose two sides both have a mean:
    ``within`` and ``across`` (the means over the seeds that learned), ``gap`` = within - across, and the probes
    of each side. The cut's effect at one distance; a full-sentence run's gap on the same probes is what the
    split itself costs or gains, with no cut."""
    keys = [*vary, "cut_every", "distance"]
    columns = [*keys, "within", "across", "gap", "within_probes", "across_probes"]
    measured = table[table["accuracy_mean"].notna()]
    rows = []
    for values, group in measured.groupby(keys, sort=True):
        sides = group.set_index("crosses_cut")
        if not {False, True} <= set(sides.index):
            continue
        within, across = sides.loc[False], sides.loc[True]
        rows.append(
            {
                **dict(zip(keys, values, strict=True)),
                "within": float(within["accuracy_mean"]),
                "across": float(across["accuracy_mean"]),
                "gap": float(within["accuracy_mean"] - across["accuracy_mean"]),
                "within_probes": int(within["probes"]),
                "across_probes": int(across["probes"]),
            }
        )
    return pd.DataFrame(rows, columns=columns)
