"""The chapter's claims about the activation of a trained recurrence, judged on studies by role.

zero_centred   (activation_training)  after the same training tokens in the same order, the sigmoid network is
               measurably worse than the tanh network on validation, and takes measurably more optimiser steps
               to a training loss both reach (studies/<name>/speed.csv, rnnbench.results.ablations.speed_table):
               tanh's states, centred on zero, trained faster
relu_dies      (activation_training)  a measurable share of a trained ReLU network's hidden units pass no gradient
               at any step of the validation split (studies/<name>/units.csv, rnnbench.results.silent_units)
relu_unbounded (activation_training)  with nothing to cap its states, ReLU runs diverge measurably more often
               than tanh runs of the same recipe (Fisher's exact test on the counts)

Validation, not test: a claim about training speed reads what selection reads, and no finding chooses on test.
"""

from __future__ import annotations

import pandas as pd

from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.policy import ABOVE, BELOW, MARGINS
from rnnbench.findings.registry import NOT_SHOWN, Judged, Part
from rnnbench.findings.setting_words import study, word
from rnnbench.metrics import LOWER_IS_BETTER
from rnnbench.numbers import interval, significant
from rnnbench.results.activation import DEFAULT_START, speed_metric

ZERO_CENTRED, OFF_CENTRE, RELU = "tanh", "sigmoid", "relu"


def default_start(table: pd.DataFrame) -> pd.DataFrame:
    """The rows trained from the default U: the recipe the speed claim compares activations in."""
    return (
        table
        if "recurrent_init" not in table
        else table[table["recurrent_init"].fillna(DEFAULT_START) == DEFAULT_START]
    )


def starts(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The table by the start of U it was trained from, each with the words a label adds ("" for the default)."""
    if "recurrent_init" not in table:
        return [("", table)]
    inits = table["recurrent_init"].fillna(DEFAULT_START)
    return [
        ("" if init == DEFAULT_START else f", {word('recurrent_init', init)}", table[inits == init])
        for init in sorted(inits.unique(), key=lambda i: (i != DEFAULT_START, i))
    ]


def _study(ev: Evidence, name: str) -> str:
    """A study as a label names it: its corpus, and what sets it apart from the other activation studies."""
    return study(ev.study(name), [ev.study(n) for n in ev.studies("activation_training")])


def _seeds_note(runs, taken) -> str:
    return f"{len(taken)} of {len(runs)} runs learned; needs two"


def zero_centred(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("activation_training"):
        read.append(f"studies/{name}")
        runs = default_start(ev.runs(name))
        metric = speed_metric(str(ev.study(name)["metric"]))
        label = f"{_study(ev, name)}, {OFF_CENTRE} against {ZERO_CENTRED}"
        at = {act: runs[runs["activation"] == act] for act in (ZERO_CENTRED, OFF_CENTRE)}
        if any(group.empty for group in at.values()):
            parts.append(
                Part(label, NOT_SHOWN, note=f"the study has no {OFF_CENTRE} or no {ZERO_CENTRED} runs", source=name)
            )
            continue
        taken = {act: learned(group)[metric].dropna() for act, group in at.items()}
        worse = ABOVE if metric in LOWER_IS_BETTER else BELOW
        reference = taken[ZERO_CENTRED]
        margin = MARGINS[policy.quantity(metric)].absolute(float(reference.mean())) if len(reference) else 0.0
        test = policy.effect(taken[OFF_CENTRE], reference, worse, margin)
        if test is None:
            notes = [f"{act}: {_seeds_note(at[act], taken[act])}" for act in at if len(taken[act]) < 2]
            parts.append(Part(label, NOT_SHOWN, note="; ".join(notes), source=name))
            continue
        means = {act: float(values.mean()) for act, values in taken.items()}
        value = (
            f"{metric} {significant(means[OFF_CENTRE])} against {significant(means[ZERO_CENTRED])}, "
            f"{OFF_CENTRE} − {ZERO_CENTRED} {interval(test.interval)}{_learned(at, taken)}"
        )
        parts.append(Part.tested(label, (test,), value, source=name))
    for name in ev.studies("activation_training"):
        parts.append(_steps_to_target(ev, name))
    return Judged(tuple(read), tuple(parts))


def _learned(at, taken) -> str:
    """How many runs each mean rests on, when a run was left out."""
    left = [f"{act} {len(taken[act])} of {len(at[act])}" for act in at if len(taken[act]) < len(at[act])]
    return f"; learned: {', '.join(left)}" if left else ""


def _steps_to_target(ev: Evidence, name: str) -> Part:
    """The sigmoid's optimiser steps to the study's target training loss against tanh's (speed.csv)."""
    table = default_start(ev.study_extra(name, "speed"))
    label = f"{_study(ev, name)}, steps to a training loss both reach, {OFF_CENTRE} against {ZERO_CENTRED}"
    at = {act: table[table["activation"] == act] for act in (ZERO_CENTRED, OFF_CENTRE)}
    if any(group.empty for group in at.values()):
        return Part(label, NOT_SHOWN, note=f"the study has no {OFF_CENTRE} or no {ZERO_CENTRED} runs", source=name)
    taken = {act: learned(group)["steps_to_target"].dropna() for act, group in at.items()}
    reference = taken[ZERO_CENTRED]
    margin = MARGINS["optimiser steps"].absolute(float(reference.mean())) if len(reference) else 0.0
    test = policy.effect(taken[OFF_CENTRE], reference, ABOVE, margin)
    if test is None:
        notes = [f"{act}: {_seeds_note(at[act], taken[act])}" for act in at if len(taken[act]) < 2]
        return Part(label, NOT_SHOWN, note="; ".join(notes), source=name)
    means = {act: float(values.mean()) for act, values in taken.items()}
    target = float(table["target_ppl"].iloc[0])
    value = (
        f"steps to training perplexity {significant(target)}: {significant(means[OFF_CENTRE])} against {significant(means[ZERO_CENTRED])}, "
        f"{OFF_CENTRE} − {ZERO_CENTRED} {interval(test.interval)}{_learned(at, taken)}"
    )
    return Part.tested(label, (test,), value, source=name)


def relu_unbounded(ev: Evidence) -> Judged:
    """Per study and start of U: how many ReLU runs diverged against how many tanh runs of the same recipe did."""
    parts, read = [], []
    for name in ev.studies("activation_training"):
        read.append(f"studies/{name}")
        for start, runs in starts(ev.runs(name)):
            relu, bounded = runs[runs["activation"] == RELU], runs[runs["activation"] == ZERO_CENTRED]
            label = f"{_study(ev, name)}, {word('activation', RELU)} against {ZERO_CENTRED}{start}"
            if relu.empty or bounded.empty:
                parts.append(
                    Part(label, NOT_SHOWN, note=f"the study has no {RELU} or no {ZERO_CENTRED} runs", source=name)
                )
                continue
            blown, held = int((relu["outcome"] == "diverged").sum()), int((bounded["outcome"] == "diverged").sum())
            value = (
                f"diverged: {word('activation', RELU)} {blown} of {len(relu)}, {ZERO_CENTRED} {held} of {len(bounded)}"
            )
            parts.append(
                Part.tested(label, (policy.more_often(blown, len(relu), held, len(bounded)),), value, source=name)
            )
    return Judged(tuple(read), tuple(parts))


def relu_dies(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.studies("activation_training"):
        read.append(f"studies/{name}")  # its units.csv, beside its summary
        for start, table in starts(ev.study_extra(name, "units")):
            relu = table[table["activation"] == RELU]
            label = f"{_study(ev, name)}, {word('activation', RELU)}{start}"
            if relu.empty:
                parts.append(Part(label, NOT_SHOWN, note=f"the study has no {RELU} runs", source=name))
                continue
            taken = learned(relu).dropna(subset=["silent_fraction"])
            test = policy.effect(taken["silent_fraction"], None, ABOVE, MARGINS["share of units"].size)
            if test is None:
                blown = int((relu["outcome"] == "diverged").sum())
                parts.append(Part(label, NOT_SHOWN, note=f"{_seeds_note(relu, taken)}; {blown} diverged", source=name))
                continue
            units = int(taken["units"].iloc[0])
            value = f"share of {units} units silent on validation {interval(test.interval.scaled(100), unit='%')}"
            parts.append(Part.tested(label, (test,), value, source=name))
    return Judged(tuple(read), tuple(parts))
