"""The chapter's claims about the window and the recurrence, judged on studies by role.

    blind        a window of n-1 words cannot see a head further back: its accuracy falls from distance n-1 to n
    no_cliff     the recurrence's accuracy falls measurably between no two adjacent distances
    beats        at matched parameter counts the recurrence is measurably better than the window, on every corpus
                 that has both (roles matched_window and matched_recurrence): more accurate on agreement, lower
                 perplexity on a language model's text. On agreement a pair is read only where both sides learned
                 the distances the window sees: there each scores at least the nearest-noun rule (tables/
                 agreement_baselines.csv) less the accuracy margin, or the pair would measure training, not reach
    widening     each word of context adds d x H weights (true by construction: the count of W_h), and the
                 widest window is no better than the next by more than the metric's margin

Every accuracy per distance is one seed's, from its run's agreement.csv (test split); only runs that learned
(rnnbench.results.outcome) count, and each part says how many did. Tests and margins: rnnbench.findings.policy.
"""

from __future__ import annotations

import math

import pandas as pd

from rnnbench import paths
from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.policy import ABOVE, BELOW, MARGINS
from rnnbench.findings.registry import BY_CONSTRUCTION, NOT_SHOWN, Judged, Part
from rnnbench.findings.setting_words import corpus, study, words
from rnnbench.metrics import LOWER_IS_BETTER
from rnnbench.numbers import interval, significant
from rnnbench.results.beside_published import DYNAMIC_SUFFIX, carried_beyond
from rnnbench.results.matching import TOLERANCE, matched_pairs
from rnnbench.results.runs import SCALES

ACCURACY_MARGIN = MARGINS["accuracy"].size


def _of(taken: pd.DataFrame, runs: pd.DataFrame) -> str:
    """How many runs a mean rests on, when a run was left out of it."""
    return "" if len(taken) == len(runs) else f"; {len(taken)} of {len(runs)} runs learned"


def _few(ok: pd.DataFrame, group: pd.DataFrame) -> str:
    return f"{len(ok)} of its {len(group)} runs learned; the rule needs two"


def _curves(ev: Evidence, runs: pd.DataFrame) -> list[pd.Series]:
    """Each run's accuracy indexed by head-verb distance."""
    return [ev.accuracy(r).set_index("distance")["accuracy"] for r in runs["run_id"]]


def _study(ev: Evidence, name: str, role: str) -> str:
    """A study as a label names it: its corpus, and what sets it apart from the other studies of ``role``."""
    return study(ev.study(name), [ev.study(n) for n in ev.studies(role)])


def blind(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("window"):
        read.append(f"studies/{name}")
        runs = ev.runs(name)
        for width, group in runs.groupby("context", sort=True):
            label, ok = f"{_study(ev, name, 'window')}, n−1 = {int(width)}", learned(group)
            if len(ok) < 2:
                parts.append(Part(label, NOT_SHOWN, note=_few(ok, group), source=name))
                continue
            curves = _curves(ev, ok)
            if not all(width in c.index and width + 1 in c.index for c in curves):
                parts.append(
                    Part(
                        label,
                        NOT_SHOWN,
                        note="no head-verb distance just past the window in the test split",
                        source=name,
                    )
                )
                continue
            test = policy.effect([c[width] - c[width + 1] for c in curves], None, ABOVE, ACCURACY_MARGIN)
            value = (
                f"accuracy at distance {int(width)} − at {int(width) + 1}: {interval(test.interval)}{_of(ok, group)}"
            )
            parts.append(Part.tested(label, (test,), value, source=name))
    return Judged(tuple(read), tuple(parts))


def no_cliff(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("recurrence"):
        read.append(f"studies/{name}")
        vary = list(ev.study(name)["vary"])
        runs = ev.runs(name)
        # A study that varies nothing is one setting, its seeds the replicates (never one part per seed).
        for values, group in runs.groupby(vary, sort=False) if vary else [((), runs)]:
            values = values if isinstance(values, tuple) else (values,)
            label = ", ".join(
                filter(None, (_study(ev, name, "recurrence"), words(dict(zip(vary, values, strict=True)))))
            )
            ok = learned(group)
            if len(ok) < 2:
                parts.append(Part(label, NOT_SHOWN, note=_few(ok, group), source=name))
                continue
            curves = _curves(ev, ok)
            common = sorted(set.intersection(*(set(c.index) for c in curves)))
            pairs = [d for d in common if d + 1 in common]
            if not pairs:
                parts.append(Part(label, NOT_SHOWN, note="no two adjacent head-verb distances measured", source=name))
                continue
            # A cliff is a drop beyond the margin: each adjacent pair's drop must be measurably below it.
            tests = [policy.no_effect([c[d] - c[d + 1] for c in curves], None, ABOVE, ACCURACY_MARGIN) for d in pairs]
            worst = max(range(len(pairs)), key=lambda i: tests[i].interval.estimate)
            value = (
                f"largest drop {interval(tests[worst].interval)} from distance {pairs[worst]} to {pairs[worst] + 1} "
                f"({len(pairs)} adjacent pairs){_of(ok, group)}"
            )
            parts.append(Part.tested(label, tests, value, source=name))
    return Judged(tuple(read), tuple(parts))


REFERENCE_SCALE = SCALES[0]  # tables/comparison.csv's scale of the runs trained to convergence (reference/)


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
                    f"{corpus(ff_record['corpus'])}, n−1 = {pair.context} ({int(pair.ff_parameters):,}) "
                    f"against H = {pair.hidden} ({int(pair.rnn_parameters):,})"
                )
                if not pair.matched:
                    parts.append(
                        Part(
                            label,
                            NOT_SHOWN,
                            note=f"parameter counts {significant(pair.ratio)}× apart, beyond {TOLERANCE}×: not matched",
                        )
                    )
                    continue
                a = learned(rnn[rnn["hidden"] == pair.hidden])[metric].dropna()
                b = learned(ff[ff["context"] == pair.context])[metric].dropna()
                if policy.quantity(metric) == "accuracy" and len(a) and len(b):
                    read.append("tables/agreement_baselines.csv")
                    short = _short_of_the_rule(ev, ff, rnn, pair.context, pair.hidden)
                    if short:
                        parts.append(Part(label, NOT_SHOWN, note=short, source=ff_name))
                        continue
                better = BELOW if metric in LOWER_IS_BETTER else ABOVE
                test = policy.effect(a, b, better, _margin(metric, b)) if len(b) else None
                if test is None:
                    note = f"{len(a)} recurrence and {len(b)} window runs learned; needs two each"
                    parts.append(Part(label, NOT_SHOWN, note=note, source=ff_name))
                    continue
                value = f"{metric}, recurrence − window {interval(test.interval)}"
                parts.append(Part.tested(label, (test,), value, source=ff_name))
    if parts and ev.roles.comparison:
        read += ["tables/comparison.csv", "tables/ranking_by_epoch.csv"]
        parts += at_convergence(ev.table("comparison"))
        parts += converged(ev.table("ranking_by_epoch"))
    reason = "" if read else "no matched_window and matched_recurrence study on the same corpus and metric"
    return Judged(tuple(dict.fromkeys(read)), tuple(parts), reason)


def at_convergence(comparison: pd.DataFrame) -> list[Part]:
    """The recurrence against the window at matched size among the runs trained to convergence (tables/
    comparison.csv's reference runs, statically evaluated): each feed-forward size paired with the nearest RNN size
    by the one matching rule, test perplexity compared over seeds as the short runs' parts are. A recipe carried
    beyond the paper's (a study's departs_from: another output layer, another size) is no run of the matched
    pair: its seeds would be pooled with those of the same H and its parameter count taken for theirs."""
    ours = comparison[(comparison["origin"] == "ours") & (comparison["scale"] == REFERENCE_SCALE)]
    ours = ours[~ours["model"].astype(str).str.endswith(DYNAMIC_SUFFIX) & ~carried_beyond(ours)]
    parts = []
    for name, rows in ours.groupby("corpus", sort=False):
        ff = rows[rows["family"] == "ff"].assign(context=lambda r: pd.to_numeric(r["n"]).astype(int) - 1)
        rnn = rows[rows["family"] == "rnn"].assign(hidden=lambda r: pd.to_numeric(r["hidden"]).astype(int))
        if ff.empty or rnn.empty:
            continue
        for pair in matched_pairs(_sizes(ff, "context"), _sizes(rnn, "hidden")).itertuples(index=False):
            label = (
                f"{corpus(name)}, trained to convergence, n−1 = {pair.context} ({int(pair.ff_parameters):,}) "
                f"against H = {pair.hidden} ({int(pair.rnn_parameters):,})"
            )
            if not pair.matched:
                note = f"parameter counts {significant(pair.ratio)}× apart, beyond {TOLERANCE}×: not matched"
                parts.append(Part(label, NOT_SHOWN, note=note))
                continue
            a = pd.to_numeric(rnn.loc[rnn["hidden"] == pair.hidden, "test_ppl"]).dropna()
            b = pd.to_numeric(ff.loc[ff["context"] == pair.context, "test_ppl"]).dropna()
            if min(len(a), len(b)) < 2:
                note = f"{len(a)} recurrence and {len(b)} window seeds trained to convergence; needs two each"
                parts.append(Part(label, NOT_SHOWN, note=note))
                continue
            test = policy.effect(a, b, BELOW, _margin("test_ppl", b))
            parts.append(Part.tested(label, (test,), f"test_ppl, recurrence − window {interval(test.interval)}"))
    return parts


def _within(ev: Evidence, runs: pd.DataFrame, width: int) -> float:
    """The seed mean of each run's accuracy over the probes at head-verb distances up to ``width``."""
    means = []
    for run_id in runs["run_id"]:
        table = ev.accuracy(run_id)
        near = table[table["distance"] <= width]
        means.append(float((near["accuracy"] * near["n"]).sum() / near["n"].sum()) if near["n"].sum() else math.nan)
    return float(pd.Series(means).mean())


def _short_of_the_rule(ev: Evidence, ff: pd.DataFrame, rnn: pd.DataFrame, width: int, hidden: int) -> str:
    """Why a matched agreement pair is not read ('' where it is): within the window's width the window sees the
    head, so a side scoring below the nearest-noun rule there by more than the margin has not learned what it can,
    and the pair would measure how far each was trained. No rule to read (no run settings, baseline table or rows
    for the corpus): ''."""
    a, b = learned(ff[ff["context"] == width]), learned(rnn[rnn["hidden"] == hidden])
    try:
        run = ev.run_config(a["run_id"].iloc[0])
        table = ev.table("agreement_baselines")
    except FileNotFoundError:
        return ""
    key = paths.corpus_key(run["corpus"], run.get("corpus_options", {}))
    rule = table[
        (table["corpus_key"] == key)
        & (table["split"] == "test")
        & (table["heuristic"] == "nearest_noun")
        & (table["distance"] <= width)
    ]
    if not rule["n"].sum():
        return ""
    floor = float((rule["accuracy"] * rule["n"]).sum() / rule["n"].sum())
    window, recurrence = _within(ev, a, width), _within(ev, b, width)
    below = [side for side, v in (("window", window), ("recurrence", recurrence)) if v < floor - ACCURACY_MARGIN]
    if not below:
        return ""
    return (
        f"{' and '.join(below)} below the nearest-noun rule within n−1 = {width} by more than {significant(ACCURACY_MARGIN)}: "
        f"window {significant(window)}, recurrence {significant(recurrence)}, rule {significant(floor)}; not trained to what it sees"
    )


def converged(ranking: pd.DataFrame) -> list[Part]:
    """How the matched ranking depends on training, from the comparison's runs epoch by epoch (tables/
    ranking_by_epoch.csv: after each epoch, at how many matched windows the recurrence has the lower validation
    perplexity), for the runs trained to convergence: a part not shown, since a ranking of each epoch's best model is
    a description of training, not a test over seeds; its note says where the ranking stood and the epoch from which
    it held."""
    parts = []
    for (name, scale), group in ranking.groupby(["corpus", "scale"], sort=False):
        group = group[group["matched"] > 0].sort_values("epoch")
        if scale == "short" or group.empty:
            continue
        leads = group["rnn_leads"].tolist()
        since = len(leads) - 1
        while since > 0 and leads[since - 1] == leads[-1]:
            since -= 1
        last = group.iloc[-1]
        note = (
            f"a ranking by epoch, not a test over seeds: after epoch {int(last['epoch'])} the recurrence is lower at "
            f"{int(last['rnn_leads'])} of {int(last['matched'])} matched windows, as it has been since epoch "
            f"{int(group['epoch'].iloc[since])}"
        )
        if since > 0:
            note += f" (after epoch {int(group['epoch'].iloc[since - 1])}: {leads[since - 1]} of {int(group['matched'].iloc[since - 1])})"
        parts.append(Part(f"{corpus(name)}, {scale} runs, validation perplexity by epoch", NOT_SHOWN, note=note))
    return parts


def widening(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("window_width"):
        read.append(f"studies/{name}")
        record, runs = ev.study(name), ev.runs(name)
        sizes = _sizes(runs, "context")
        if len(sizes) < 2:
            said = _study(ev, name, "window_width")
            parts.append(
                Part(f"{said}, size", NOT_SHOWN, note="one window width: nothing widened", aspect="size", source=name)
            )
            continue
        per_word = sizes["parameters"].diff().iloc[1:] / sizes["context"].diff().iloc[1:]
        shown = (
            significant(per_word.iloc[0])
            if per_word.nunique() == 1
            else f"{significant(per_word.min())} to {significant(per_word.max())}"
        )
        parts.append(
            Part(
                f"{_study(ev, name, 'window_width')}, size",
                BY_CONSTRUCTION,
                f"+{shown} parameters per word admitted",
                "W_h has (n−1)d × H weights: each word admitted adds d × H",
                aspect="size",
                source=name,
            )
        )
        metric = record["metric"]
        narrow, wide = sizes["context"].iloc[-2], sizes["context"].iloc[-1]
        label = f"{_study(ev, name, 'window_width')}, n−1 = {int(narrow)} → {int(wide)}"
        a = learned(runs[runs["context"] == wide])[metric].dropna()
        b = learned(runs[runs["context"] == narrow])[metric].dropna()
        harm = BELOW if metric in LOWER_IS_BETTER else ABOVE  # the widest window's gain is the effect denied
        test = policy.no_effect(a, b, harm, _margin(metric, b)) if len(b) else None
        if test is None:
            parts.append(
                Part(
                    label,
                    NOT_SHOWN,
                    note=f"{len(a)} and {len(b)} runs learned; needs two each",
                    aspect="gain",
                    source=name,
                )
            )
            continue
        value = f"{metric}, widest − next {interval(test.interval)}"
        parts.append(Part.tested(label, (test,), value, aspect="gain", source=name))
    return Judged(tuple(read), tuple(parts))


def _margin(metric: str, reference: pd.Series) -> float:
    """The metric's margin in its own units (a relative one against the reference side's mean)."""
    return MARGINS[policy.quantity(metric)].absolute(float(reference.mean()))
