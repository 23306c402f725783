"""The chapter's claims about the window and the recurrence, judged on studies by role.

    blind        a window of n-1 words cannot see a head further back: its accuracy falls from distance n-1 to n
    no_cliff     the recurrence's accuracy falls measurably between no two adjacent distances
    beats        at matched parameter counts the recurrence is measurably better than the window, on every corpus
                 that has both (roles matched_window and matched_recurrence): more accurate on agreement, lower
                 perplexity on a language model's text
    widening     each word of context adds parameters, and the widest window buys no measurable gain

Every accuracy per distance is one seed's, from its run's agreement.csv (test split); only runs that learned
(rnnbench.results.outcome) count.
"""

from __future__ import annotations

import pandas as pd

from rnnbench.findings import stats
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.registry import FAILS, HOLDS, NOT_SHOWN, Judged, Part, interval, num
from rnnbench.metrics import LOWER_IS_BETTER
from rnnbench.results.ablations import matched_pairs

# Two sizes are matched when their parameter counts are within this factor of each other.
MATCHED = 1.25


def _few(ok: pd.DataFrame, group: pd.DataFrame) -> str:
    return f"{len(ok)} of its {len(group)} runs learned; the rule needs two"


def _curves(ev: Evidence, runs: pd.DataFrame) -> list[pd.Series]:
    """Each run's accuracy indexed by head-verb distance."""
    return [ev.accuracy(r).set_index("distance")["accuracy"] for r in runs["run_id"]]


def blind(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("window"):
        read.append(f"studies/{name}")
        runs = ev.runs(name)
        for width, group in runs.groupby("context", sort=True):
            label, ok = f"{name}, n−1 = {int(width)}", learned(group)
            if len(ok) < 2:
                parts.append(Part(label, NOT_SHOWN, note=_few(ok, group)))
                continue
            curves = _curves(ev, ok)
            if not all(width in c.index and width + 1 in c.index for c in curves):
                parts.append(
                    Part(label, NOT_SHOWN, note="no head-verb distance just past the window in the test split")
                )
                continue
            iv = stats.mean_interval([c[width] - c[width + 1] for c in curves])
            falls = stats.direction(iv) == "above"
            value = f"accuracy at distance {int(width)} − at {int(width) + 1}: {interval(iv)}"
            parts.append(Part(label, HOLDS if falls else FAILS, value, "" if falls else stats.NO_CHANGE))
    return Judged(tuple(read), tuple(parts))


def no_cliff(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("recurrence"):
        read.append(f"studies/{name}")
        vary = list(ev.study(name)["vary"]) or ["seed"]
        runs = ev.runs(name)
        for values, group in runs.groupby(vary, sort=False):
            values = values if isinstance(values, tuple) else (values,)
            label = f"{name}, " + ", ".join(f"{k} = {v}" for k, v in zip(vary, values, strict=True))
            ok = learned(group)
            if len(ok) < 2:
                parts.append(Part(label, NOT_SHOWN, note=_few(ok, group)))
                continue
            curves = _curves(ev, ok)
            common = sorted(set.intersection(*(set(c.index) for c in curves)))
            pairs = [d for d in common if d + 1 in common]
            if not pairs:
                parts.append(Part(label, NOT_SHOWN, note="no two adjacent head-verb distances measured"))
                continue
            # One interval per adjacent pair: Bonferroni keeps the chance of a false cliff among them at 5%.
            level = 1 - (1 - stats.LEVEL) / len(pairs)
            drops = {d: stats.mean_interval([c[d] - c[d + 1] for c in curves], level) for d in pairs}
            worst = max(drops, key=lambda d: drops[d].estimate)
            cliffs = [d for d, iv in drops.items() if stats.direction(iv) == "above"]
            value = (
                f"largest drop {interval(drops[worst])} from distance {worst} to {worst + 1} "
                f"({len(pairs)} adjacent pairs, Bonferroni)"
            )
            note = "cliff at " + ", ".join(f"{d}→{d + 1}" for d in cliffs) if cliffs else ""
            parts.append(Part(label, FAILS if cliffs else HOLDS, value, note))
    return Judged(tuple(read), tuple(parts))


def _sizes(runs: pd.DataFrame, setting: str) -> pd.DataFrame:
    return runs.groupby(setting, sort=True, as_index=False)["parameters"].first()


def beats(ev: Evidence) -> Judged:
    parts, read = [], []
    for ff_name in ev.studies("matched_window"):
        for rnn_name in ev.studies("matched_recurrence"):
            ff_record, rnn_record = ev.study(ff_name), ev.study(rnn_name)
            if ff_record["corpus"] != rnn_record["corpus"] or ff_record["metric"] != rnn_record["metric"]:
                continue
            read += [f"studies/{ff_name}", f"studies/{rnn_name}"]
            ff, rnn = ev.runs(ff_name), ev.runs(rnn_name)
            metric = ff_record["metric"]
            for pair in matched_pairs(_sizes(ff, "context"), _sizes(rnn, "hidden")).itertuples(index=False):
                label = (
                    f"{ff_record['corpus']}, n−1 = {pair.context} ({pair.ff_parameters:,}) "
                    f"against H = {pair.hidden} ({pair.rnn_parameters:,})"
                )
                if not 1 / MATCHED <= pair.ratio <= MATCHED:
                    parts.append(Part(label, NOT_SHOWN, note=f"parameter counts {num(pair.ratio)}× apart: not matched"))
                    continue
                a = learned(rnn[rnn["hidden"] == pair.hidden])[metric].dropna()
                b = learned(ff[ff["context"] == pair.context])[metric].dropna()
                iv = stats.difference(a, b)
                if iv is None:
                    parts.append(
                        Part(
                            label,
                            NOT_SHOWN,
                            note=f"{len(a)} recurrence and {len(b)} window runs learned; needs two each",
                        )
                    )
                    continue
                better = stats.direction(iv) == ("below" if metric in LOWER_IS_BETTER else "above")
                value = f"{metric}, recurrence − window {interval(iv)}"
                parts.append(Part(label, HOLDS if better else FAILS, value, "" if better else "not measurably better"))
    reason = "" if read else "no matched_window and matched_recurrence study on the same corpus and metric"
    return Judged(tuple(dict.fromkeys(read)), tuple(parts), reason)


def widening(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("window_width"):
        read.append(f"studies/{name}")
        record, runs = ev.study(name), ev.runs(name)
        sizes = _sizes(runs, "context")
        if len(sizes) < 2:
            parts.append(Part(f"{name}, size", NOT_SHOWN, note="one window width: nothing widened", aspect="size"))
            continue
        per_word = sizes["parameters"].diff().iloc[1:] / sizes["context"].diff().iloc[1:]
        grows = bool((per_word > 0).all())
        shown = num(per_word.iloc[0]) if per_word.nunique() == 1 else f"{num(per_word.min())} to {num(per_word.max())}"
        parts.append(
            Part(
                f"{name}, size",
                HOLDS if grows else FAILS,
                f"+{shown} parameters per word admitted",
                "" if grows else "does not grow",
                aspect="size",
            )
        )
        metric = record["metric"]
        narrow, wide = sizes["context"].iloc[-2], sizes["context"].iloc[-1]
        label = f"{name}, n−1 = {int(narrow)} → {int(wide)}"
        a = learned(runs[runs["context"] == wide])[metric].dropna()
        b = learned(runs[runs["context"] == narrow])[metric].dropna()
        iv = stats.difference(a, b)
        if iv is None:
            parts.append(
                Part(label, NOT_SHOWN, note=f"{len(a)} and {len(b)} runs learned; needs two each", aspect="gain")
            )
            continue
        better = stats.direction(iv) == ("below" if metric in LOWER_IS_BETTER else "above")
        value = f"{metric}, widest − next {interval(iv)}"
        note = "the widest window is measurably better" if better else ""
        parts.append(Part(label, FAILS if better else HOLDS, value, note, aspect="gain"))
    return Judged(tuple(read), tuple(parts))
