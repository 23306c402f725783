"""A claim of the seeds, how it is judged, and its verdict.

    Claim     id, the seed file and its words (verbatim), the roles of the evidence it reads, the statistic,
              the decision rule in one line, and the function that judges it
    Part      one comparison inside a claim (one corpus, one setting): its value and its own verdict
    Judged    what a judge returns: the files it read as evidence and its parts
    Finding   the row of tables/findings.csv

A claim's verdict comes from its parts: holds where every part shown holds, fails where every one fails,
partly where some hold and some fail (the reason says which), not shown where no part could be judged
(runs that did not learn or diverged, one seed where the rule needs a spread, or no evidence of the role in
this config: the reason says which). A claim of two halves ("slow and memory-hungry") gives each part its
aspect: each aspect must be shown, so one that holds beside one not shown is partly, never holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

HOLDS, FAILS, PARTLY, NOT_SHOWN = "holds", "fails", "partly", "not shown"
VERDICTS = (HOLDS, FAILS, PARTLY, NOT_SHOWN)

# The seeds, by file (/work/shared/seeds/ in the project's steering folder): the chapter and the two lessons.
CHAPTER = "000_72b7a2efd4a8bd72.txt"  # Chapter 12, "Recurrent Networks"
LESSON_001 = "001_be007dee4de86cc7.txt"  # "The vanilla RNN"
LESSON_003 = "003_401d9ba6a152dbcc.txt"  # "Recurrent Neural Networks"
SEEDS = (CHAPTER, LESSON_001, LESSON_003)

# The confidence of every interval a rule reads (rnnbench.findings.stats), and so of "measurable".
LEVEL = 0.95

COLUMNS = ("id", "seed", "quote", "evidence", "statistic", "value", "rule", "verdict", "reason")


@dataclass(frozen=True)
class Part:
    label: str  # what this part compares ("ptb, rate 0.5, norm <= 0.25")
    verdict: str  # HOLDS, FAILS or NOT_SHOWN
    value: str = ""  # the number behind it
    note: str = ""  # why it is not shown, or what failed
    aspect: str = ""  # which half of the claim it measures, for a claim of several ("" for one)

    def __post_init__(self):
        if self.verdict not in (HOLDS, FAILS, NOT_SHOWN):
            raise ValueError(f"a part's verdict is one of {HOLDS}, {FAILS}, {NOT_SHOWN}; got {self.verdict!r}")


@dataclass(frozen=True)
class Judged:
    evidence: tuple[str, ...]  # what was read, relative to the results folder ("studies/clipping_ptb")
    parts: tuple[Part, ...]
    reason: str = ""  # why nothing could be judged, when there are no parts


@dataclass(frozen=True)
class Need:
    kind: str  # "study" or "analysis"
    role: str


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str
    quote: str
    needs: tuple[Need, ...]
    statistic: str
    rule: str
    judge: Callable[..., Judged]

    def __post_init__(self):
        if self.seed not in SEEDS:
            raise ValueError(f"claim {self.id}: seed {self.seed!r} is not one of {', '.join(SEEDS)}")
        if "\n" in self.rule:
            raise ValueError(f"claim {self.id}: a decision rule is one line")


@dataclass(frozen=True)
class Finding:
    id: str
    seed: str
    quote: str
    evidence: str
    statistic: str
    value: str
    rule: str
    verdict: str
    reason: str

    def row(self) -> dict[str, str]:
        return {c: getattr(self, c) for c in COLUMNS}


def combine(parts: Sequence[Part]) -> tuple[str, str, str]:
    """(verdict, value, reason) of a claim from its parts (module docstring)."""
    shown = [p for p in parts if p.verdict != NOT_SHOWN]
    hidden = [p for p in parts if p.verdict == NOT_SHOWN]
    unshown = "; ".join(f"{p.label}: {p.note}" if p.note else p.label for p in hidden)
    value = "; ".join(f"{p.label}: {p.value}" if p.value else p.label for p in shown)
    if not shown:
        return NOT_SHOWN, "", unshown or "nothing to judge"
    holds = [p for p in shown if p.verdict == HOLDS]
    fails = [p for p in shown if p.verdict == FAILS]
    aspects = list(dict.fromkeys(p.aspect for p in parts))
    missing = [a for a in aspects if not any(p.aspect == a for p in shown)]
    also = f"; not shown for {unshown}" if unshown else ""
    if not fails and not missing:
        return HOLDS, value, f"holds for every part shown{also}" if hidden else ""
    failed = "; ".join(f"{p.label} ({p.note})" if p.note else p.label for p in fails)
    if not holds:
        return FAILS, value, f"fails for {failed}{also}"
    held = "; ".join(p.label for p in holds)
    return PARTLY, value, f"holds for {held}" + (f"; fails for {failed}" if fails else "") + also


def judge(claim: Claim, evidence) -> Finding:
    """The claim's finding: "not shown" naming the first role this config gives no study or analysis, else
    its judge's parts combined."""
    for need in claim.needs:
        found = evidence.studies(need.role) if need.kind == "study" else evidence.analyses(need.role)
        if not found:
            return _finding(claim, "", "", NOT_SHOWN, f"no {need.kind} with role {need.role} in this config")
    judged = claim.judge(evidence)
    if not judged.parts:
        return _finding(claim, "; ".join(judged.evidence), "", NOT_SHOWN, judged.reason or "nothing to judge")
    verdict, value, reason = combine(judged.parts)
    return _finding(claim, "; ".join(judged.evidence), value, verdict, reason)


def _finding(claim: Claim, evidence: str, value: str, verdict: str, reason: str) -> Finding:
    return Finding(claim.id, claim.seed, claim.quote, evidence, claim.statistic, value, claim.rule, verdict, reason)


def num(value: float, digits: int = 3) -> str:
    """A number as the findings print it: `digits` significant figures, a minus sign for negatives."""
    if math.isnan(value):
        return "nan"
    return f"{value:.{digits}g}".replace("-", "−")


def interval(iv, digits: int = 3, unit: str = "") -> str:
    """An estimate and its 95% interval: "+20.0% [+15.1%, +24.9%]"."""

    def signed(v: float) -> str:
        text = num(v, digits)
        return (text if text.startswith("−") else f"+{text}") + unit

    return f"{signed(iv.estimate)} [{signed(iv.low)}, {signed(iv.high)}]"
