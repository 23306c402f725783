"""The chapter's claims about truncated backpropagation through time, judged on studies by role.

invisible   (truncation_reach: agreement)  beyond k steps, k-truncated runs are measurably less accurate
            than full-sentence BPTT (bptt 0) on the same distances
cost        (truncation_cost)  the longest unrolling trains measurably fewer tokens a second, and its job
            peaks measurably higher in memory, than the shortest
sentence_cuts  (truncation_reach and truncation_sentence: agreement)  beyond k, gradient cuts every k steps within
            sentences are measurably more accurate than segments of k that ignore sentences, and measurably less
            accurate than full-sentence BPTT
"""

from __future__ import annotations

import math

import pandas as pd

from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.policy import ABOVE, BELOW, MARGINS
from rnnbench.findings.registry import NOT_SHOWN, Judged, Part, interval, num

FULL = 0  # bptt 0: full-sentence BPTT, no boundary inside a sentence
ACCURACY_MARGIN = MARGINS["accuracy"].size


def beyond(table: pd.DataFrame, k: int) -> float:
    """Probe-weighted accuracy over the head-verb distances longer than ``k`` (NaN when there are none)."""
    rows = table[table["distance"] > k]
    n = rows["n"].sum()
    return float((rows["accuracy"] * rows["n"]).sum() / n) if n else math.nan


def invisible(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("truncation_reach"):
        read.append(f"studies/{name}")
        runs = ev.runs(name)
        full = learned(runs[runs["bptt"] == FULL])
        for k, group in runs[runs["bptt"] > FULL].groupby("bptt", sort=True):
            label, ok = f"{name}, k = {int(k)}", learned(group)
            if len(full) < 2:
                parts.append(Part(label, NOT_SHOWN, note=f"{len(full)} full-BPTT runs (bptt 0) learned; needs two"))
                continue
            a = [beyond(ev.accuracy(r), k) for r in full["run_id"]]
            b = [beyond(ev.accuracy(r), k) for r in ok["run_id"]]
            if any(math.isnan(v) for v in a + b):
                parts.append(Part(label, NOT_SHOWN, note=f"no head-verb distance longer than {int(k)}"))
                continue
            test = policy.effect(a, b, ABOVE, ACCURACY_MARGIN)
            if test is None:
                parts.append(Part(label, NOT_SHOWN, note=f"{len(ok)} of its {len(group)} runs learned; needs two"))
                continue
            value = f"accuracy beyond {int(k)}, full − truncated {interval(test.interval)}"
            parts.append(Part.tested(label, (test,), value))
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
            parts.append(Part(name, NOT_SHOWN, note="one truncation length: nothing to compare"))
            continue
        short, long = lengths[0], lengths[-1]
        names = {FULL: "full"}
        pair = f"bptt {names.get(long, int(long))} against {int(short)}"
        at_short, at_long = learned(runs[runs["bptt"] == short]), learned(runs[runs["bptt"] == long])
        for what, column, unit, expected, margin in (
            ("slow", "tokens_per_second", " tokens/s", BELOW, MARGINS["tokens per second"]),
            ("memory", "max_rss_mb", " MB", ABOVE, MARGINS["peak memory"]),
        ):
            label = f"{name}, {what}, {pair}"
            a, b = at_long[column].dropna(), at_short[column].dropna()
            test = policy.effect(a, b, expected, margin.absolute(float(b.mean()))) if len(b) else None
            if test is None:
                parts.append(
                    Part(label, NOT_SHOWN, note=f"{len(a)} and {len(b)} runs learned; needs two each", aspect=what)
                )
                continue
            value = (
                f"{num(float(a.mean()))} against {num(float(b.mean()))}{unit}, long − short {interval(test.interval)}"
            )
            parts.append(Part.tested(label, (test,), value, aspect=what))
    return Judged(tuple(dict.fromkeys(read)), tuple(parts))


def sentence_cuts(ev: Evidence) -> Judged:
    """At each k both kinds of cut were trained at: on the probes beyond k (every one of them across a cut, in a
    stream segmented every k steps and in a sentence cut every k steps alike), cuts aligned to sentences against
    cuts that ignore them ("reduces"), and full-sentence BPTT against the sentence cuts ("remains")."""
    parts, read = [], []
    for stream_name in ev.studies("truncation_reach"):
        stream_runs = ev.runs(stream_name)
        for name in ev.studies("truncation_sentence"):
            read += [f"studies/{stream_name}", f"studies/{name}"]
            runs = ev.runs(name)
            full = learned(pd.concat([runs[runs["bptt"] == FULL], stream_runs[stream_runs["bptt"] == FULL]]))
            full = full.drop_duplicates("run_id")
            shared = sorted(set(runs.loc[runs["bptt"] > FULL, "bptt"]) & set(stream_runs["bptt"]))
            for k in shared:
                at_sentence = learned(runs[runs["bptt"] == k])
                at_stream = learned(stream_runs[stream_runs["bptt"] == k])
                sides = {
                    "reduces": (at_sentence, at_stream, "sentence − stream"),
                    "remains": (full, at_sentence, "full − sentence"),
                }
                for aspect, (better, worse, what) in sides.items():
                    label = (
                        f"{name} against {stream_name if aspect == 'reduces' else 'full-sentence BPTT'}, k = {int(k)}"
                    )
                    a = [beyond(ev.accuracy(r), k) for r in better["run_id"]]
                    b = [beyond(ev.accuracy(r), k) for r in worse["run_id"]]
                    if any(math.isnan(v) for v in a + b):
                        parts.append(
                            Part(label, NOT_SHOWN, note=f"no head-verb distance longer than {int(k)}", aspect=aspect)
                        )
                        continue
                    test = policy.effect(a, b, ABOVE, ACCURACY_MARGIN)
                    if test is None:
                        note = f"{len(a)} and {len(b)} runs learned; needs two each"
                        parts.append(Part(label, NOT_SHOWN, note=note, aspect=aspect))
                        continue
                    value = f"accuracy beyond {int(k)}, {what} {interval(test.interval)}"
                    parts.append(Part.tested(label, (test,), value, aspect=aspect))
    return Judged(tuple(dict.fromkeys(read)), tuple(parts))
