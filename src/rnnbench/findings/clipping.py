"""The chapter's claims about gradient clipping (Equation 12.7: rescale the gradient to the threshold when its
norm exceeds it), judged on the studies with role ``clipping``, grouped by corpus, by rnnbench.findings.policy.

    direction    the clipped gradient points where the unclipped one did (true by construction: a positive
                 rescaling), and the update a stateful optimiser takes from it turns by no more than the margin
                 (the cosine of the two updates at the same state, measured in training)
    divergence   at a rate where unclipped runs diverge, norm-clipped runs diverge measurably less often
    quality      at a rate where unclipped runs train, norm clipping costs no more than the perplexity margin

Divergence and quality read the settings that clip in the chapter's sense, rare spikes (rnnbench.metrics.clip_regime
of the setting's share of steps clipped): a threshold that rescales every step is normalised SGD, reported as a part
not shown with its share, and one that never acted says nothing.
    vanishing    clipping does not make the gradient decay more slowly (analyses with role clipping_decay)
"""

from __future__ import annotations

import math

import pandas as pd

from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.policy import ABOVE, BELOW, MARGINS
from rnnbench.findings.registry import BY_CONSTRUCTION, NOT_SHOWN, Judged, Part, interval, num
from rnnbench.metrics import CLIP_NEVER, CLIP_SPIKES, LOWER_IS_BETTER, clip_regime

ROLE = "clipping"
SETTINGS = ("clip_mode", "clip", "lr")
# What norm clipping does to the gradient, said once: the verdict of the gradient's direction is this, not a number.
RESCALING = "a positive rescaling keeps a vector's direction: Equation 12.7 multiplies g by threshold / ‖g‖ > 0"
UPDATE_COSINE = "update_cosine_mean"  # per run: mean over clipped steps of cos(update from clipped g, from g)


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
        for column in ("clipped_fraction", "clip_cosine_mean", UPDATE_COSINE, "clip_times_median"):
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


def threshold(clip: float, runs: pd.DataFrame) -> str:
    """A norm threshold as a part names it: its multiple of the reference run's median norm where it was set so
    ("norm ≤ 2× median (0.849)"), else its value."""
    times = runs["clip_times_median"].dropna().astype(float)
    return threshold_words(clip, float(times.iloc[0]) if len(times) else math.nan)


def threshold_words(clip: float, times: float = math.nan) -> str:
    """threshold's words from the numbers: the resolved threshold and its multiple of the median (NaN: none)."""
    return f"norm ≤ {times:g}× median ({num(clip)})" if not math.isnan(times) else f"norm ≤ {clip:g}"


def part_label(corpus: str, lr: float, clip: float, times: float = math.nan) -> str:
    """The label of a divergence or quality part: what tables/findings_parts.csv names the setting by."""
    return f"{corpus}, rate {lr:g}, {threshold_words(clip, times)}"


def _regime(runs: pd.DataFrame) -> tuple[str, str]:
    """The setting's regime and its share of steps clipped, over every run of it (diverged ones over the steps they
    took), as a part says it."""
    share = float(runs["clipped_fraction"].mean())
    if math.isnan(share):
        return CLIP_NEVER, "no step measured"
    return clip_regime(share), f"{100 * share:.3g}% of steps clipped"


def _outside(label: str, regime: str, share: str) -> Part:
    """A part for a setting outside the chapter's regime: reported, not tested."""
    if regime == CLIP_NEVER:
        return Part(label, NOT_SHOWN, note="no step was clipped")
    return Part(label, NOT_SHOWN, note=f"{share}: {regime}, not the rare spikes the chapter clips")


def _unclipped(runs: pd.DataFrame) -> pd.Series:
    return runs["clip_mode"].eq("none") | runs["clip"].eq(math.inf)


def _norm(runs: pd.DataFrame) -> pd.Series:
    return runs["clip_mode"].eq("norm") & runs["clip"].lt(math.inf)


def direction(ev: Evidence) -> Judged:
    """Per corpus: the gradient's direction (true by construction, wherever a norm-clipped run had a step
    clipped), then per optimiser setting with a measured update cosine, that cosine against 1 (no turn beyond the
    margin) over the learned seeds."""
    runs, read = clipping_runs(ev)
    margin = MARGINS["update cosine"].size
    parts = []
    for corpus, group in runs.groupby("corpus", sort=False):
        acted = group[_norm(group) & group["clipped_fraction"].gt(0)]
        if acted.empty:
            parts.append(Part(corpus, NOT_SHOWN, note="no norm-clipped run had a step clipped"))
            continue
        parts.append(Part(f"{corpus}, the gradient", BY_CONSTRUCTION, note=RESCALING))
        measured = acted[acted[UPDATE_COSINE].notna()]
        if "optimizer" not in measured.columns:  # a setting the study neither varies nor records: the run's own
            measured = measured.assign(optimizer=[ev.run_config(r)["optimizer"] for r in measured["run_id"]])
        for (optimizer, lr, clip), at in measured.groupby(["optimizer", "lr", "clip"], sort=True):
            label = f"{corpus}, {optimizer}'s update, rate {lr:g}, {threshold(clip, at)}"
            taken = learned(at)[UPDATE_COSINE].dropna()
            test = policy.no_effect(taken, None, BELOW, margin, against=1.0)
            if test is None:
                parts.append(Part(label, NOT_SHOWN, note=f"{len(taken)} of {len(at)} runs learned; needs two"))
                continue
            value = (
                f"mean cosine {interval(test.interval, digits=4)} over {len(taken)} seeds, "
                f"{_clip_rate(at)} of steps clipped"
            )
            parts.append(Part.tested(label, (test,), value))
    return Judged(read, tuple(parts))


def _clip_rate(runs: pd.DataFrame) -> str:
    return f"{100 * float(runs['clipped_fraction'].mean()):.0f}%"


def divergence(ev: Evidence) -> Judged:
    """Divergence is the measurement here: every run counts, learned or not, by whether it diverged; the counts
    are compared by Fisher's exact test."""
    runs, read = clipping_runs(ev)
    parts = []
    for corpus, group in runs.groupby("corpus", sort=False):
        for lr, at in group.groupby("lr", sort=True):
            free = at[_unclipped(at)]
            if free.empty or not free["diverged"].any():
                continue
            clipped = at[_norm(at)]
            blown = int(free["diverged"].sum())
            base = f"unclipped {blown}/{len(free)} diverged"
            if clipped.empty:
                parts.append(Part(f"{corpus}, rate {lr:g}", NOT_SHOWN, base, "no norm-clipped run at this rate"))
                continue
            for clip, runs_at in clipped.groupby("clip", sort=True):
                n, bad = len(runs_at), int(runs_at["diverged"].sum())
                label = f"{corpus}, rate {lr:g}, {threshold(clip, runs_at)}"
                regime, share = _regime(runs_at)
                if regime != CLIP_SPIKES:
                    parts.append(_outside(label, regime, share))
                    continue
                value = f"{base}, clipped {bad}/{n} ({share})"
                parts.append(Part.tested(label, (policy.more_often(blown, len(free), bad, n),), value))
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
                label = f"{corpus}, rate {lr:g}, {threshold(clip, runs_at)}"
                regime, share = _regime(runs_at)
                if regime != CLIP_SPIKES:
                    parts.append(_outside(label, regime, share))
                    continue
                taken = learned(runs_at)["value"].dropna()
                metric = str(runs_at["metric"].iloc[0])
                harm = ABOVE if metric in LOWER_IS_BETTER else BELOW
                margin = MARGINS[policy.quantity(metric)]
                test = policy.no_effect(taken, base, harm, margin.absolute(float(base.mean()))) if len(base) else None
                if test is None:
                    parts.append(Part(label, NOT_SHOWN, note=_seeds_note(len(taken), len(base))))
                    continue
                shown = (
                    interval(test.interval.scaled(100 / float(base.mean())), unit="%")
                    if margin.relative
                    else interval(test.interval)
                )
                value = (
                    f"{metric} {num(float(taken.mean()))} against {num(float(base.mean()))}, "
                    f"{shown} (margin {margin}), {share}"
                )
                parts.append(Part.tested(label, (test,), value))
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
                test = policy.no_effect(group["rate"], free, ABOVE, MARGINS["decay rate"].size)
                if test is None:
                    parts.append(Part(label, NOT_SHOWN, note=_seeds_note(len(group), len(free))))
                    continue
                value = f"decay rate, clipped − unclipped {interval(test.interval)}"
                parts.append(Part.tested(label, (test,), value))
    return Judged(tuple(read), tuple(parts), "" if parts else "no learned run of a clipping study was measured")


def _seeds_note(a: int, b: int) -> str:
    return f"needs two learned seeds on each side, has {a} clipped and {b} unclipped"
