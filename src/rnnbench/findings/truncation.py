"""The chapter's claims about truncated backpropagation through time, judged on studies by role.

invisible   (truncation_reach and truncation_sentence: agreement)  the interaction of truncation with reach: a run
            cut every k steps loses more accuracy from the probes within reach of k to those beyond it than
            full-sentence BPTT (bptt 0) loses on the same probes (studies/<name>/reach.csv, rnnbench.results.reach).
            In a study of sentence cuts (the same batches and updates as its full-sentence runs, seed for seed)
            the probes split by block (head and verb in one block of k steps against a cut between them) and the
            difference is paired by seed; in a study of stream segments by distance (<= k against > k), Welch
cost        (truncation_cost)  the longest unrolling trains measurably fewer tokens a second, and its job
            peaks measurably higher in memory, than the shortest
sentence_cuts  (truncation_reach and truncation_sentence: agreement)  at each k trained both ways, the sentence cuts'
            interaction is measurably smaller than the stream segments' ("reduces"), and measurably above 0
            ("without removing it"), each against the full-sentence runs of its own study

interactions(reach) gives what ``invisible`` tests as numbers, each seed's and each length's interval, for the
chapter that quotes them and the figure that draws them.
"""

from __future__ import annotations

import math

import pandas as pd

from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.policy import ABOVE, BELOW, MARGINS
from rnnbench.findings.registry import NOT_SHOWN, Judged, Part
from rnnbench.findings.setting_words import corpus, study, word
from rnnbench.metrics import TOKENS_PER_CPU_SECOND
from rnnbench.numbers import interval, significant

FULL = 0  # bptt 0: full-sentence BPTT, no boundary inside a sentence
ACCURACY_MARGIN = MARGINS["accuracy"].size


def split_gaps(reach: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The learned rows of a study's reach.csv at the split its design allows (block for sentence cuts, else
    distance), and that split."""
    split = "block" if (reach["split"] == "block").any() else "distance"
    reach = reach[(reach["split"] == split) & (reach["outcome"] == "learned")]
    return reach.dropna(subset=["gap"]), split


def _gaps(ev: Evidence, name: str) -> tuple[pd.DataFrame, str]:
    return split_gaps(ev.study_extra(name, "reach"))


def interaction(reach: pd.DataFrame, k: int) -> tuple[pd.Series, pd.Series]:
    """The gaps (within minus beyond) of the runs cut at ``k`` and of the full-sentence runs split at ``k``, each
    indexed by seed."""
    cut = reach[(reach["bptt"] == k) & (reach["cut_every"] == k)].set_index("seed")["gap"]
    full = reach[(reach["bptt"] == FULL) & (reach["cut_every"] == k)].set_index("seed")["gap"]
    return cut, full


def _interaction_test(cut: pd.Series, full: pd.Series, paired: bool):
    """Truncated gap minus full-BPTT gap above 0: paired by seed where the runs share their batches, else Welch."""
    if paired:
        seeds = cut.index.intersection(full.index)
        return policy.effect(cut[seeds] - full[seeds], None, ABOVE, ACCURACY_MARGIN), len(seeds)
    return policy.effect(cut, full, ABOVE, ACCURACY_MARGIN), min(len(cut), len(full))


def interactions(reach: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What ``invisible`` tests, per cut length k of a study's reach.csv, as numbers to draw and quote: each seed's
    interaction (its cut run's gap minus, paired, the full-sentence run's of the same seed, else the mean of the
    full-sentence runs' gaps), and the interval the test reports (Student's over the paired differences, else
    Welch's of the cut gaps against the full ones; none under two values a side).

        points:    k, seed, interaction
        intervals: k, split, paired, n, mean, low, high
    """
    gaps, split = split_gaps(reach)
    paired = split == "block"
    points, intervals = [], []
    for k in sorted(k for k in gaps["bptt"].unique() if k > FULL):
        cut, full = interaction(gaps, k)
        if paired:
            seeds = cut.index.intersection(full.index)
            each, found = cut[seeds] - full[seeds], policy.mean_interval(cut[seeds] - full[seeds])
        else:
            each, found = cut - full.mean(), policy.difference(cut, full)
        points += [{"k": int(k), "seed": seed, "interaction": float(v)} for seed, v in each.dropna().items()]
        if found is not None:
            intervals.append(
                {"k": int(k), "split": split, "paired": paired, "n": found.n, "mean": found.estimate}
                | {"low": found.low, "high": found.high}
            )
    columns = ["k", "split", "paired", "n", "mean", "low", "high"]
    return pd.DataFrame(points, columns=["k", "seed", "interaction"]), pd.DataFrame(intervals, columns=columns)


def _study(ev: Evidence, name: str, roles: tuple[str, ...]) -> str:
    """A study as a label names it: its corpus, and what sets it apart from the other studies of ``roles``."""
    return study(ev.study(name), [ev.study(n) for role in roles for n in ev.studies(role)])


def held_equal(runs: pd.DataFrame) -> str:
    """What a truncation study holds equal across its lengths, read from the updates its runs took (``steps``, over
    the runs that did not diverge): "equal updates" where every length took one number; "equal tokens" where
    updates x k agree within 1% (an update reads B x k tokens, B the same for every length); "" otherwise."""
    if "steps" not in runs:
        return ""
    done = runs[runs["outcome"] != "diverged"].dropna(subset=["steps"])
    per_length = done.groupby("bptt")["steps"].median()
    if len(per_length) < 2:
        return ""
    if per_length.nunique() == 1:
        return "equal updates"
    tokens = per_length * per_length.index.to_series().astype(float)
    return "equal tokens" if tokens.max() <= 1.01 * tokens.min() else ""


def _reach(ev: Evidence, name: str) -> str:
    """A study of reach as a label names it: its corpus (and what sets it apart from the others of its role), and
    how it cuts the gradient: within sentences (role truncation_sentence) or at stream segments."""
    role = "truncation_sentence" if name in ev.studies("truncation_sentence") else "truncation_reach"
    kind = "sentence cuts" if role == "truncation_sentence" else "stream segments"
    return f"{_study(ev, name, (role,))}, {kind}"


def invisible(ev: Evidence) -> Judged:
    parts, read = [], []
    names = dict.fromkeys((*ev.studies("truncation_sentence"), *ev.studies("truncation_reach")))
    for name in names:
        read.append(f"studies/{name}")
        reach, split = _gaps(ev, name)
        paired = split == "block"
        for k in sorted(k for k in reach["bptt"].unique() if k > FULL):
            label = f"{_reach(ev, name)}, {word('bptt', k)}, split by {split}"
            cut, full = interaction(reach, k)
            test, n = _interaction_test(cut, full, paired)
            if test is None:
                note = (
                    f"{len(cut)} cut and {len(full)} full-sentence runs learned with probes on both sides of {int(k)}"
                )
                parts.append(Part(label, NOT_SHOWN, note=note, source=name))
                continue
            value = (
                f"gap within − beyond: cut {significant(float(cut.mean()))}, full {significant(float(full.mean()))}; "
                f"interaction {interval(test.interval)} over {n} seeds{' (paired)' if paired else ''}"
            )
            parts.append(Part.tested(label, (test,), value, source=name))
    return Judged(tuple(read), tuple(parts))


def _order(bptt: float) -> float:
    return math.inf if bptt == FULL else bptt  # full-sentence BPTT is the longest unrolling


def cost(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("truncation_cost"):
        read += [f"studies/{name}", "tables/benchmarks.csv"]
        runs = ev.runs(name)
        memory = ev.table("benchmarks").groupby("run_id")["max_rss_mb"].mean()
        runs = runs.assign(max_rss_mb=runs["run_id"].map(memory))
        lengths = sorted(runs["bptt"].unique(), key=_order)
        if len(lengths) < 2:
            label = _study(ev, name, ("truncation_cost",))
            parts.append(Part(label, NOT_SHOWN, note="one truncation length: nothing to compare", source=name))
            continue
        short, long = lengths[0], lengths[-1]
        pair = f"{word('bptt', long)} against k = {int(short)}"
        design = held_equal(runs)  # the design names the study where it can; else its settings do
        named = (
            f"{corpus(str(ev.study(name).get('corpus', '')))}, {design}"
            if design
            else _study(ev, name, ("truncation_cost",))
        )
        at_short, at_long = learned(runs[runs["bptt"] == short]), learned(runs[runs["bptt"] == long])
        for what, column, unit, expected, margin in (
            # speed in the run's own CPU time: a busy machine stretches wall time (rnnbench.metrics)
            ("slow", TOKENS_PER_CPU_SECOND, " tokens per CPU second", BELOW, MARGINS["tokens per second"]),
            ("memory", "max_rss_mb", " MB", ABOVE, MARGINS["peak memory"]),
        ):
            label = f"{named}, {what}, {pair}"
            a, b = at_long[column].dropna(), at_short[column].dropna()
            test = policy.effect(a, b, expected, margin.absolute(float(b.mean()))) if len(b) else None
            if test is None:
                parts.append(
                    Part(
                        label,
                        NOT_SHOWN,
                        note=f"{len(a)} and {len(b)} runs learned; needs two each",
                        aspect=what,
                        source=name,
                    )
                )
                continue
            value = f"{significant(float(a.mean()))} against {significant(float(b.mean()))}{unit}, long − short {interval(test.interval)}"
            parts.append(Part.tested(label, (test,), value, aspect=what, source=name))
    return Judged(tuple(dict.fromkeys(read)), tuple(parts))


def sentence_cuts(ev: Evidence) -> Judged:
    """At each k both kinds of cut were trained at, each study's interaction against its own full-sentence runs
    (split by distance in both, the one split both designs share): sentence cuts' smaller than stream segments'
    ("reduces"), and above 0 ("remains")."""
    parts, read = [], []
    for stream_name in ev.studies("truncation_reach"):
        stream = ev.study_extra(stream_name, "reach")
        stream = stream[(stream["split"] == "distance") & (stream["outcome"] == "learned")].dropna(subset=["gap"])
        for name in ev.studies("truncation_sentence"):
            if name == stream_name:
                continue
            read += [f"studies/{stream_name}", f"studies/{name}"]
            sentence = ev.study_extra(name, "reach")
            sentence = sentence[(sentence["split"] == "distance") & (sentence["outcome"] == "learned")].dropna(
                subset=["gap"]
            )
            shared = sorted(set(sentence.loc[sentence["bptt"] > FULL, "bptt"]) & set(stream["bptt"]))
            for k in shared:
                s_cut, s_full = interaction(sentence, k)
                t_cut, t_full = interaction(stream, k)
                own = s_cut - s_full.mean() if len(s_full) else s_cut * math.nan
                theirs = t_cut - t_full.mean() if len(t_full) else t_cut * math.nan
                sides = {
                    "reduces": (
                        policy.effect(theirs.dropna(), own.dropna(), ABOVE, ACCURACY_MARGIN),
                        "stream − sentence",
                    ),
                    "remains": (_interaction_test(s_cut, s_full, paired=True)[0], "sentence"),
                }
                for aspect, (test, what) in sides.items():
                    # the stream study by how it cuts, and by its corpus only where it is not this study's
                    same = corpus(str(ev.study(name).get("corpus", ""))) + ", "
                    stream_words = _reach(ev, stream_name).removeprefix(same)
                    against = stream_words if aspect == "reduces" else "its full-sentence runs"
                    label = f"{_reach(ev, name)} against {against}, {word('bptt', k)}"
                    if test is None:
                        note = f"too few learned runs with probes on both sides of {int(k)}"
                        parts.append(Part(label, NOT_SHOWN, note=note, aspect=aspect, source=name))
                        continue
                    value = f"interaction (gap within − beyond, cut minus full), {what} {interval(test.interval)}"
                    parts.append(Part.tested(label, (test,), value, aspect=aspect, source=name))
    return Judged(tuple(dict.fromkeys(read)), tuple(parts))
