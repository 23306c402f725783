"""The chapter's claims about gradient clipping (Equation 12.7: rescale the gradient to the threshold when its
norm exceeds it), judged on the studies with role ``clipping``, grouped by corpus.

    direction    norm clipping keeps the update's direction: cosine of clipped and unclipped update
    divergence   at a rate where unclipped runs diverge, no norm-clipped run does
    quality      at a rate where unclipped runs train, norm clipping costs no measurable quality
    vanishing    clipping leaves the decay rate of the gradient alone (analyses with role clipping_decay)
"""

from __future__ import annotations

import math

import pandas as pd

from rnnbench.findings import stats
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.registry import FAILS, HOLDS, NOT_SHOWN, Judged, Part, interval, num
from rnnbench.metrics import LOWER_IS_BETTER

ROLE = "clipping"
SETTINGS = ("clip_mode", "clip", "lr")
# The cosine of a rescaled vector with itself is 1; float32 arithmetic leaves it within this of 1.
COSINE_TOLERANCE = 1e-6


def clipping_runs(ev: Evidence, role: str = ROLE) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Every run of the role's studies, once (two studies may share one): corpus, metric, value (the study's
    metric), clip_mode, clip, lr, seed, outcome, diverged and the clipping measurements; and the studies read."""
    frames, read = [], []
    for name in ev.studies(role):
        record = ev.study(name)
        runs = ev.runs(name)
        for key in SETTINGS:  # a setting neither varied nor fixed by the study: the run's own config.json
            if key not in runs.columns:
                runs[key] = [ev.run_config(r)[key] for r in runs["run_id"]]
        metric = record["metric"]
        runs = runs.assign(
            corpus=record["corpus"],
            metric=metric,
            value=runs.get(metric, math.nan),
            diverged=runs.get("diverged", pd.Series(0.0, index=runs.index)).fillna(0).gt(0)
            | runs["outcome"].eq("diverged"),
        )
        for column in ("clipped_fraction", "clip_cosine_mean"):
            if column not in runs:
                runs[column] = math.nan
        frames.append(runs)
        read.append(f"studies/{name}")
    if not frames:
        return pd.DataFrame(), ()
    table = pd.concat(frames, ignore_index=True).drop_duplicates("run_id")
    table["clip"] = table["clip"].astype(float)
    table["lr"] = table["lr"].astype(float)
    return table.reset_index(drop=True), tuple(read)


def _unclipped(runs: pd.DataFrame) -> pd.Series:
    return runs["clip_mode"].eq("none") | runs["clip"].eq(math.inf)


def _norm(runs: pd.DataFrame) -> pd.Series:
    return runs["clip_mode"].eq("norm") & runs["clip"].lt(math.inf)


def direction(ev: Evidence) -> Judged:
    runs, read = clipping_runs(ev)
    parts = []
    for corpus, group in runs.groupby("corpus", sort=False):
        acted = group[_norm(group) & group["clipped_fraction"].gt(0) & group["clip_cosine_mean"].notna()]
        if acted.empty:
            parts.append(Part(corpus, NOT_SHOWN, note="no norm-clipped run had a step clipped"))
            continue
        taken = learned(acted)
        if taken.empty:
            parts.append(Part(corpus, NOT_SHOWN, note=f"none of the {len(acted)} norm-clipped runs learned"))
            continue
        lowest = float(taken["clip_cosine_mean"].min())
        value = f"smallest mean cosine {lowest:.6f} over {len(taken)} runs"
        ok = lowest >= 1 - COSINE_TOLERANCE
        parts.append(Part(corpus, HOLDS if ok else FAILS, value, "" if ok else "the clipped update turned"))
    return Judged(read, tuple(parts))


def divergence(ev: Evidence) -> Judged:
    """Divergence is the measurement here: every run counts, learned or not, by whether it diverged."""
    runs, read = clipping_runs(ev)
    parts = []
    for corpus, group in runs.groupby("corpus", sort=False):
        for lr, at in group.groupby("lr", sort=True):
            free = at[_unclipped(at)]
            if free.empty or not free["diverged"].any():
                continue
            clipped = at[_norm(at)]
            base = f"unclipped {int(free['diverged'].sum())}/{len(free)} diverged"
            if clipped.empty:
                parts.append(Part(f"{corpus}, rate {lr:g}", NOT_SHOWN, base, "no norm-clipped run at this rate"))
                continue
            for clip, runs_at in clipped.groupby("clip", sort=True):
                n, bad = len(runs_at), int(runs_at["diverged"].sum())
                label = f"{corpus}, rate {lr:g}, norm ≤ {clip:g}"
                value = f"{base}, clipped {bad}/{n}"
                parts.append(
                    Part(label, HOLDS if bad == 0 else FAILS, value, "" if bad == 0 else f"{bad} of {n} diverged")
                )
    reason = "" if parts else "no unclipped run diverged at any rate: there was no divergence to prevent"
    return Judged(read, tuple(parts), reason)


def quality(ev: Evidence) -> Judged:
    runs, read = clipping_runs(ev)
    parts = []
    for corpus, group in runs.groupby("corpus", sort=False):
        for lr, at in group.groupby("lr", sort=True):
            free = at[_unclipped(at)]
            if free.empty or free["diverged"].any():
                continue  # a rate where unclipped training diverges has no quality to keep
            base = learned(free)["value"].dropna()
            clipped = at[_norm(at)]
            for clip, runs_at in clipped.groupby("clip", sort=True):
                label = f"{corpus}, rate {lr:g}, norm ≤ {clip:g}"
                if not runs_at["clipped_fraction"].gt(0).any():
                    parts.append(Part(label, NOT_SHOWN, note="no step was clipped"))
                    continue
                taken = learned(runs_at)["value"].dropna()
                metric = str(runs_at["metric"].iloc[0])
                iv = stats.difference(taken, base)
                if iv is None:
                    parts.append(Part(label, NOT_SHOWN, note=_seeds_note(len(taken), len(base))))
                    continue
                relative = iv.scaled(100 / float(base.mean()))
                worse = stats.direction(iv) == ("above" if metric in LOWER_IS_BETTER else "below")
                value = f"{metric} {num(float(taken.mean()))} against {num(float(base.mean()))}, {interval(relative, unit='%')}"
                parts.append(Part(label, FAILS if worse else HOLDS, value, "measurably worse" if worse else ""))
    reason = "" if parts else "no rate at which the unclipped runs trained without diverging beside norm-clipped runs"
    return Judged(read, tuple(parts), reason)


def vanishing(ev: Evidence) -> Judged:
    """The decay rate of dL/dh in runs of a clipping study, clipped against unclipped at the same rate: clipping
    rescales a step; it cannot make the per-step factor of the backward pass larger."""
    from rnnbench.findings.decay import backward_rates

    parts, read = [], []
    for name in ev.analyses("clipping_decay"):
        record = ev.analysis(name)
        read.append(f"analyses/{name}")
        if record.get("study") is None:
            parts.append(Part(name, NOT_SHOWN, note="measures untrained networks, not a clipping study's runs"))
            continue
        runs = ev.runs(record["study"])
        rates = backward_rates(ev, name)
        rates = rates[rates["snapshot"].astype(str) == "final"].merge(
            runs[["run_id", "outcome", *[s for s in SETTINGS if s in runs]]], on="run_id", how="left"
        )
        rates = rates[rates["outcome"] == "learned"]
        for key in SETTINGS:
            if key not in rates:
                rates[key] = [ev.run_config(r)[key] for r in rates["run_id"]]
        rates["clip"] = rates["clip"].astype(float)
        for lr, at in rates.groupby("lr", sort=True):
            free = at[_unclipped(at)]["rate"]
            for clip, group in at[~_unclipped(at)].groupby(["clip_mode", "clip"], sort=True):
                label = f"{name}, rate {lr:g}, {clip[0]} ≤ {clip[1]:g}"
                iv = stats.difference(group["rate"], free)
                if iv is None:
                    parts.append(Part(label, NOT_SHOWN, note=_seeds_note(len(group), len(free))))
                    continue
                slower = stats.direction(iv) == "above"  # a larger rate: the gradient decays more slowly
                value = f"decay rate, clipped − unclipped {interval(iv)}"
                parts.append(
                    Part(label, FAILS if slower else HOLDS, value, "decays measurably more slowly" if slower else "")
                )
    return Judged(tuple(read), tuple(parts), "" if parts else "no learned run of a clipping study was measured")


def _seeds_note(a: int, b: int) -> str:
    return f"needs two learned seeds on each side, has {a} clipped and {b} unclipped"
