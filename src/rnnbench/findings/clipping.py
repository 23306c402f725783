"""The chapter's claims about gradient clipping (Equation 12.7: rescale the gradient to the threshold when its
norm exceeds it), judged on the studies with role ``clipping``, grouped by corpus, by rnnbench.findings.policy.

    direction    the clipped gradient points where the unclipped one did (true by construction: a positive
                 rescaling), and the update a stateful optimiser takes from it turns by no more than the margin
                 (the cosine of the two updates at the same state, measured in training)
    divergence   at a rate where unclipped runs blow up (diverge, or end above the unigram model's perplexity),
                 norm-clipped runs blow up measurably less often
    quality      at a rate where unclipped runs train, norm clipping costs no more than the perplexity margin

    vanishing    clipping does not make the gradient decay more slowly (analyses with role clipping_decay)

Every claim reads only the settings in the chapter's regime, set before training (rnnbench.metrics.threshold_regime:
a threshold above the median norm of its study's unclipped runs clips the rare spike); a threshold at or below it
clips ordinary steps, another optimiser, and is reported as a part not shown, as is one in the regime that never
acted. A setting's share of steps clipped is reported beside it, and flagged where it contradicts its regime
(rnnbench.metrics.regime_contradicted); it never moves the setting to another regime.
"""

from __future__ import annotations

import math

import pandas as pd

from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.policy import ABOVE, BELOW, MARGINS, RANGES
from rnnbench.findings.registry import BY_CONSTRUCTION, NOT_SHOWN, Judged, Part
from rnnbench.findings.setting_words import corpus as corpus_words
from rnnbench.findings.setting_words import word
from rnnbench.metrics import CLIP_SPIKES, LOWER_IS_BETTER, regime_contradicted, threshold_regime
from rnnbench.numbers import interval, significant
from rnnbench.results.outcome import BLEW_UP

ROLE = "clipping"
SETTINGS = ("clip_mode", "clip", "lr")
# What norm clipping does to the gradient, said once: the verdict of the gradient's direction is this, not a number.
RESCALING = "a positive rescaling keeps a vector's direction: Equation 12.7 multiplies g by threshold / ‖g‖ > 0"
AFTER_BACKWARD = (
    "Equation 12.7 rescales g once the backward pass has computed it: every ∂L/∂h at every distance is the "
    "unclipped one, so clipping leaves their decay with distance as it found it at that step"
)
UPDATE_COSINE = "update_cosine_mean"  # per run: mean over clipped steps of cos(update from clipped g, from g)


def clipping_runs(ev: Evidence, role: str = ROLE) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Every run of the role's studies, once (two studies may share one): study, corpus, metric, value (the study's
    metric), clip_mode, clip, clip_times_median, lr, seed, outcome, diverged, the clipping measurements, and its
    setting's a-priori regime and multiple of the reference's median norm (with_regimes); and the studies read."""
    frames, read = [], []
    for name in ev.studies(role):
        frames.append(study_runs(ev, name))
        read.append(f"studies/{name}")
    if not frames:
        return pd.DataFrame(), ()
    table = pd.concat(frames, ignore_index=True).drop_duplicates("run_id")
    return table.reset_index(drop=True), tuple(read)


def study_runs(ev: Evidence, name: str) -> pd.DataFrame:
    """The runs of study ``name`` as clipping_runs lists them, each with its setting's regime."""
    record = ev.study(name)
    runs = ev.runs(name)
    for key in SETTINGS:  # a setting neither varied nor fixed by the study: the run's own config.json
        if key not in runs.columns:
            runs[key] = [ev.run_config(r)[key] for r in runs["run_id"]]
    if "clip_times_median" not in runs.columns:  # only a study can set it, so its record names it where it is set
        runs["clip_times_median"] = math.nan
    metric = record["metric"]
    runs = runs.assign(
        study=name,
        corpus=record["corpus"],
        metric=metric,
        value=runs.get(metric, math.nan),
        diverged=runs.get("diverged", pd.Series(0.0, index=runs.index)).fillna(0).gt(0)
        | runs["outcome"].eq("diverged"),
    )
    # blew up: diverged, or ended above the unigram model's perplexity (rnnbench.results.outcome.blew_up)
    runs["blown"] = runs["diverged"] | runs.get(BLEW_UP, pd.Series(0.0, index=runs.index)).fillna(0).gt(0)
    for column in ("clipped_fraction", "clip_cosine_mean", UPDATE_COSINE, "grad_norm_median"):
        if column not in runs:
            runs[column] = math.nan
    for key in ("clip", "clip_times_median", "lr"):  # "inf" as config.json writes it, None where not set: numbers
        runs[key] = pd.to_numeric(runs[key].replace({"inf": math.inf}), errors="coerce").astype(float)
    return with_regimes(runs)


def with_regimes(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` (of one study or several: study, lr, clip_mode, clip, clip_times_median, diverged, grad_norm_median)
    with regime and times: each norm-clipped run's a-priori regime and its threshold's multiple of the reference's
    median norm (rnnbench.metrics.threshold_regime; a threshold given as a number against the unclipped runs of its
    study at its rate that did not diverge); "" and NaN for a run that does not clip by norm."""
    free = runs[_unclipped(runs) & ~runs["diverged"]]
    regimes, times = [], []
    for _, run in runs.iterrows():
        if not (run["clip_mode"] == "norm" and run["clip"] < math.inf):
            regimes.append("")
            times.append(math.nan)
            continue
        beside = free[(free["study"] == run["study"]) & (free["lr"] == run["lr"])]["grad_norm_median"]
        regime, multiple = threshold_regime(float(run["clip"]), float(run["clip_times_median"]), beside.astype(float))
        regimes.append(regime or "")
        times.append(multiple)
    return runs.assign(regime=regimes, times=times)


def threshold(clip: float, runs: pd.DataFrame) -> str:
    """A norm threshold as a part names it: its multiple of the reference run's median norm where it was set so
    ("threshold 2× the median norm (0.849)"), else its value."""
    return threshold_words(clip, _times(runs))


def threshold_words(clip: float, times: float = math.nan) -> str:
    """threshold's words from the numbers: the resolved threshold and its multiple of the median (NaN: none)."""
    return (
        f"{word('clip_times_median', times)} ({significant(clip)})"
        if not math.isnan(times)
        else f"norm threshold {clip:g}"
    )


def _times(runs: pd.DataFrame) -> float:
    times = runs["clip_times_median"].dropna().astype(float)
    return float(times.iloc[0]) if len(times) else math.nan


def part_label(corpus: str, lr: float, clip: float, times: float = math.nan) -> str:
    """The label of a divergence or quality part: what tables/findings_parts.csv names the setting by."""
    return f"{corpus_words(corpus)}, {word('lr', lr)}, {threshold_words(clip, times)}"


def _share(runs: pd.DataFrame) -> str:
    """The setting's share of steps clipped, over every run of it (diverged ones over the steps they took)."""
    share = float(runs["clipped_fraction"].mean())
    return "no step measured" if math.isnan(share) else f"{100 * share:.3g}% of steps clipped"


def _check(runs: pd.DataFrame) -> str:
    """The share of steps clipped as a part reports it beside its a-priori regime, flagged where it contradicts it."""
    share = float(runs["clipped_fraction"].mean())
    regime = str(runs["regime"].iloc[0])
    flag = f", contradicting its regime ({regime})" if regime_contradicted(regime, share) else ""
    return f"{_share(runs)}{flag}"


def _outside(label: str, runs: pd.DataFrame) -> Part | None:
    """None for a setting in the chapter's regime whose threshold acted; else the part that reports it, not tested:
    a threshold with no reference norm, one at or below the median (clipping ordinary steps), one that never acted."""
    regime, times = str(runs["regime"].iloc[0]), float(runs["times"].iloc[0])
    if regime == "":
        return Part(label, NOT_SHOWN, note="no unclipped run of its study at this rate trained to set it against")
    if regime != CLIP_SPIKES:
        return Part(
            label,
            NOT_SHOWN,
            note=f"{times:.3g}× the unclipped median norm: {regime}, not the rare spikes the chapter clips "
            f"({_check(runs)})",
        )
    if not runs["clipped_fraction"].gt(0).any():
        return Part(
            label,
            NOT_SHOWN,
            note=f"{times:.3g}× the unclipped median norm, in the chapter's regime: no step was clipped",
        )
    return None


def _unclipped(runs: pd.DataFrame) -> pd.Series:
    return runs["clip_mode"].eq("none") | runs["clip"].eq(math.inf)


def _norm(runs: pd.DataFrame) -> pd.Series:
    return runs["clip_mode"].eq("norm") & runs["clip"].lt(math.inf)


def direction(ev: Evidence) -> Judged:
    """Per corpus, over the settings in the chapter's regime whose threshold acted: the gradient's direction (true by
    construction), then per optimiser setting with a measured update cosine, that cosine against 1 (no turn beyond
    the margin) over the learned seeds, its interval cut to a cosine's range [-1, 1] (policy.RANGES). A setting outside
    the regime with a measured cosine is reported, not tested."""
    runs, read = clipping_runs(ev)
    margin = MARGINS["update cosine"].size
    parts = []
    for corpus, group in runs.groupby("corpus", sort=False):
        clipped = group[_norm(group)]
        if "optimizer" not in clipped.columns:  # neither varied nor recorded by the study: the run's own
            clipped = clipped.assign(optimizer=[_optimizer(ev, r) for r in clipped["run_id"]])
        inside, outside = [], []
        for (optimizer, lr, clip), at in clipped.groupby(["optimizer", "lr", "clip"], sort=True):
            said = word("optimizer", optimizer)
            label = f"{corpus_words(corpus)}, {said}'s update, {word('lr', lr)}, {threshold(clip, at)}"
            part = _outside(label, at)
            if part is None:
                inside.append((label, at))
            elif at[UPDATE_COSINE].notna().any():
                outside.append(part)
        if not inside:
            parts.append(
                Part(
                    corpus_words(corpus),
                    NOT_SHOWN,
                    note="no norm-clipped setting in the chapter's regime had a step clipped",
                )
            )
        else:
            parts.append(Part(f"{corpus_words(corpus)}, the gradient", BY_CONSTRUCTION, note=RESCALING))
        for label, at in inside:
            if at[UPDATE_COSINE].isna().all():
                if str(at["optimizer"].iloc[0]) not in ("", "sgd"):  # measures the update, on sampled steps
                    parts.append(Part(label, NOT_SHOWN, note=f"no clipped step's update was measured ({_share(at)})"))
                continue  # plain SGD's update follows the gradient: the gradient's part says it
            taken = learned(at)[UPDATE_COSINE].dropna()
            test = policy.no_effect(taken, None, BELOW, margin, against=1.0, bounds=RANGES["update cosine"])
            if test is None:
                parts.append(
                    Part(
                        label,
                        NOT_SHOWN,
                        note=f"{len(taken)} of {len(at)} runs learned with a measured update; needs two",
                    )
                )
                continue
            cut = f" ({test.interval.cut})" if test.interval.cut else ""
            value = f"mean cosine {interval(test.interval, digits=4)}{cut} over {len(taken)} seeds, {_check(at)}"
            parts.append(Part.tested(label, (test,), value))
        parts.extend(outside)
    return Judged(read, tuple(parts))


def _optimizer(ev: Evidence, run_id: str) -> str:
    """A run's optimiser from its config.json; "" where the results hold none."""
    try:
        return str(ev.run_config(run_id)["optimizer"])
    except FileNotFoundError:
        return ""


def _blown(runs: pd.DataFrame, *, as_blown: bool = False) -> str:
    """How many of ``runs`` blew up, and how: "3/5 diverged" where every one that blew up diverged, else
    "5/5 blew up (3 diverged, 2 ended above the unigram perplexity)"; ``as_blown``: said as blowing up even where
    every one that did diverged ("0/5 blew up"), beside a count that is not all divergence."""
    blown, diverged, n = int(runs["blown"].sum()), int(runs["diverged"].sum()), len(runs)
    if blown == diverged and not as_blown:
        return f"{diverged}/{n} diverged"
    if blown == diverged:
        return f"{blown}/{n} blew up" + (" (each diverged)" if blown else "")
    return f"{blown}/{n} blew up ({diverged} diverged, {blown - diverged} ended above the unigram perplexity)"


def divergence(ev: Evidence) -> Judged:
    """Blowing up is the measurement here: every run counts, learned or not, by whether its training blew up
    (diverged, or ended above the unigram model's perplexity: rnnbench.results.outcome.blew_up); the counts are
    compared by Fisher's exact test."""
    runs, read = clipping_runs(ev)
    parts = []
    for corpus, group in runs.groupby("corpus", sort=False):
        for lr, at in group.groupby("lr", sort=True):
            free = at[_unclipped(at)]
            if free.empty or not free["blown"].any():
                continue
            clipped = at[_norm(at)]
            blown = int(free["blown"].sum())
            base = f"unclipped {_blown(free)}"
            if clipped.empty:
                label = f"{corpus_words(corpus)}, {word('lr', lr)}"
                parts.append(Part(label, NOT_SHOWN, base, "no norm-clipped run at this rate"))
                continue
            for clip, runs_at in clipped.groupby("clip", sort=True):
                n, bad = len(runs_at), int(runs_at["blown"].sum())
                label = part_label(corpus, lr, clip, _times(runs_at))
                if (part := _outside(label, runs_at)) is not None:
                    parts.append(part)
                    continue
                plain = free["blown"].eq(free["diverged"]).all() and runs_at["blown"].eq(runs_at["diverged"]).all()
                # "diverged" said once where it is all; else both sides counted as blowing up
                clipped_said = f"{bad}/{n}" if plain else _blown(runs_at, as_blown=True)
                value = f"{base}, clipped {clipped_said} ({_check(runs_at)})"
                parts.append(Part.tested(label, (policy.more_often(blown, len(free), bad, n),), value))
    reason = "" if parts else "no unclipped run blew up at any rate: there was no divergence to prevent"
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
                label = part_label(corpus, lr, clip, _times(runs_at))
                if (part := _outside(label, runs_at)) is not None:
                    parts.append(part)
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
                    f"{metric} {significant(float(taken.mean()))} against {significant(float(base.mean()))}, "
                    f"{shown} (margin {margin}), {_check(runs_at)}"
                )
                parts.append(Part.tested(label, (test,), value))
    reason = "" if parts else "no rate at which the unclipped runs trained without diverging beside norm-clipped runs"
    return Judged(read, tuple(parts), reason)


def vanishing(ev: Evidence) -> Judged:
    """The decay rate of dL/dh in runs of a clipping study, clipped in the chapter's regime against unclipped at the
    same rate: clipping rescales a step; it cannot make the per-step factor of the backward pass larger. At one
    step that is an identity (AFTER_BACKWARD: clipping comes after the backward pass), named as such; what can turn
    is the network training arrives at, measured."""
    from rnnbench.findings.decay import backward_rates

    parts, read = [], []
    for name in ev.analyses("clipping_decay"):
        record = ev.analysis(name)
        read.append(f"analyses/{name}")
        if record.get("study") is None:
            note = "measures untrained networks, not a clipping study's runs"
            parts.append(Part("untrained networks", NOT_SHOWN, note=note, source=name))
            continue
        runs = study_runs(ev, record["study"])
        trained = corpus_words(str(ev.study(record["study"]).get("corpus", "")))
        rates = backward_rates(ev, name)
        rates = rates[rates["snapshot"].astype(str) == "final"].drop(columns=[*SETTINGS], errors="ignore")
        rates = rates.merge(runs, on="run_id", how="inner", suffixes=("_decay", ""))
        step = len(
            parts
        )  # where the identity goes, once a setting in the chapter's regime is found (as clip_direction)
        for lr, at in rates.groupby("lr", sort=True):
            free = learned(at[_unclipped(at)])["rate"]
            for clip, group in at[~_unclipped(at)].groupby(["clip_mode", "clip"], sort=True):
                said = (
                    threshold(clip[1], group) if clip[0] == "norm" else f"{word('clip_mode', clip[0])} at {clip[1]:g}"
                )
                label = f"{trained}, {word('lr', lr)}, {said}"
                if clip[0] == "norm" and (part := _outside(label, group)) is not None:
                    parts.append(part)
                    continue
                if step is not None:  # what one step cannot do; whether training moves the decay is measured
                    parts.insert(step, Part(f"{trained}, one step", BY_CONSTRUCTION, note=AFTER_BACKWARD, source=name))
                    step = None
                group = learned(group)
                test = policy.no_effect(group["rate"], free, ABOVE, MARGINS["decay rate"].size)
                if test is None:
                    parts.append(Part(label, NOT_SHOWN, note=_seeds_note(len(group), len(free))))
                    continue
                value = f"decay rate, clipped − unclipped {interval(test.interval)}"
                parts.append(Part.tested(label, (test,), value))
    return Judged(tuple(read), tuple(parts), "" if parts else "no learned run of a clipping study was measured")


def _seeds_note(a: int, b: int) -> str:
    return f"needs two learned seeds on each side, has {a} clipped and {b} unclipped"
