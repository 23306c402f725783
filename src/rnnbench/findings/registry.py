"""A claim of the seeds, how it is judged, and its verdict.

    Claim     id, the seed file and its words (verbatim), the roles of the evidence it reads, the statistic,
              the decision rule in one line, the function that judges it, a title in plain words, the
              question of the chapter it answers (one of QUESTIONS), and whether it is a check: a source's own
              printout recomputed (one network, no seeds), which the book counts with the arithmetic checks, not
              among the measured verdicts
    Part      one comparison inside a claim (one corpus, one setting): its value, and its tests or its verdict
    Judged    what a judge returns: the files it read as evidence and its parts
    Finding   the row of tables/findings.csv

A part is decided by its tests (rnnbench.findings.policy: each test holds, fails or is inconclusive, Holm-corrected
over all the tests of the claim; a part holds when every test holds, fails when one fails), or is given its verdict
by its judge: not shown (with why), true by construction (with the one-line reason), or holds/fails for a check
that needs no statistics (a count of parameters, one network the lesson itself prints).

A claim's verdict comes from its measured parts: holds where every one holds, fails where every one fails,
inconclusive where none could be decided, partly otherwise (the reason says which part is which); true by
construction where every part shown is; not shown where nothing could be judged. A claim of two halves ("slow
and memory-hungry") gives each part its aspect: each aspect must be shown, so one that holds beside one not
shown is partly, never holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rnnbench.findings.headline import headline
from rnnbench.findings.policy import (
    BY_CONSTRUCTION,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    LEVEL,
    NOT_SHOWN,
    PARTLY,
    VERDICTS,
    Test,
    decide,
)

__all__ = [
    "BY_CONSTRUCTION",
    "FAILS",
    "HOLDS",
    "INCONCLUSIVE",
    "LEVEL",
    "NOT_SHOWN",
    "PARTLY",
    "QUESTIONS",
    "VERDICTS",
    "Claim",
    "Finding",
    "Judged",
    "Need",
    "Part",
    "combine",
    "judge",
    "settle",
]

# The seeds, by file (/work/shared/seeds/ in the project's steering folder): the chapter and the two lessons.
CHAPTER = "000_72b7a2efd4a8bd72.txt"  # Chapter 12, "Recurrent Networks"
LESSON_001 = "001_be007dee4de86cc7.txt"  # "The vanilla RNN"
LESSON_003 = "003_401d9ba6a152dbcc.txt"  # "Recurrent Neural Networks"
SEEDS = (CHAPTER, LESSON_001, LESSON_003)

# The chapter's questions, in its order, each claim answering one: does more context keep helping the window; the
# recurrence against the window at matched size; do gradients vanish and explode; does clipping help and at what
# cost; is truncation harmful; which activation. The book's first chapter answers them in this order.
QUESTIONS = ("context", "matched", "gradients", "clipping", "truncation", "activation")

COLUMNS = (
    "id",
    "seed",
    "title",
    "question",
    "quote",
    "evidence",
    "statistic",
    "value",
    "headline",
    "rule",
    "verdict",
    "reason",
)
# tables/findings_parts.csv: every part of every claim, decided, with its Holm-adjusted p-values (NaN untested)
# (part: its label, in words; source: the study or analysis it reads, by its name in the config, "" for none)
PART_COLUMNS = ("id", "part", "source", "aspect", "verdict", "value", "note", "p_supports", "p_refutes")
PENDING = "tested"  # a part whose tests decide its verdict when the claim's tests are corrected together
GIVEN = (HOLDS, FAILS, NOT_SHOWN, BY_CONSTRUCTION)


@dataclass(frozen=True)
class Part:
    label: str  # what this part compares, in words (rnnbench.findings.setting_words): "PTB, rate 0.5, threshold 0.25"
    verdict: str  # one of GIVEN, or PENDING while its tests are undecided
    value: str = ""  # the number behind it
    note: str = ""  # why it is not shown, what failed, or why it is true by construction
    aspect: str = ""  # which half of the claim it measures, for a claim of several ("" for one)
    tests: tuple[Test, ...] = ()
    p_supports: float = math.nan  # Holm-adjusted, once settled: the largest over its tests
    p_refutes: float = math.nan  # Holm-adjusted: the smallest over its tests
    source: str = ""  # the study or analysis it reads, by its config name (never in the label)

    def __post_init__(self):
        allowed = (PENDING,) if self.tests else GIVEN
        after = self.verdict in (HOLDS, FAILS, INCONCLUSIVE) and bool(self.tests)  # decided by settle()
        if self.verdict not in allowed and not after:
            raise ValueError(f"part {self.label!r}: verdict {self.verdict!r}; a part is {', '.join(GIVEN)} or tested")

    @classmethod
    def tested(cls, label: str, tests: Sequence[Test], value: str = "", aspect: str = "", source: str = "") -> Part:
        """A part decided by ``tests`` (every one must hold for it to hold), once the claim's tests are corrected."""
        if not tests:
            raise ValueError(f"part {label!r}: a tested part needs a test")
        return cls(label, PENDING, value, aspect=aspect, tests=tuple(tests), source=source)


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
    title: str  # the claim in plain words, as a reader would say it ("A window cannot see past its width")
    question: str  # which of QUESTIONS it answers
    check: bool = False  # a check of a source's own printout, not a test: counted with the arithmetic checks

    def __post_init__(self):
        if self.seed not in SEEDS:
            raise ValueError(f"claim {self.id}: seed {self.seed!r} is not one of {', '.join(SEEDS)}")
        if self.question not in QUESTIONS:
            raise ValueError(f"claim {self.id}: question {self.question!r} is not one of {', '.join(QUESTIONS)}")
        if not self.title.strip() or "_" in self.title:
            raise ValueError(f"claim {self.id}: a title is plain words, not {self.title!r}")
        if "\n" in self.rule:
            raise ValueError(f"claim {self.id}: a decision rule is one line")


@dataclass(frozen=True)
class Finding:
    id: str
    seed: str
    title: str
    question: str
    quote: str
    evidence: str
    statistic: str
    value: str
    headline: str  # the number that decides the verdict (rnnbench.findings.headline)
    rule: str
    verdict: str
    reason: str
    parts: tuple[Part, ...] = ()  # decided

    def row(self) -> dict[str, str]:
        return {c: getattr(self, c) for c in COLUMNS}

    def part_rows(self) -> list[dict]:
        return [
            {
                "id": self.id,
                "part": p.label,
                "source": p.source,
                "aspect": p.aspect,
                "verdict": p.verdict,
                "value": p.value,
                "note": p.note,
                "p_supports": p.p_supports,
                "p_refutes": p.p_refutes,
            }
            for p in self.parts
        ]


def settle(parts: Sequence[Part]) -> tuple[Part, ...]:
    """The tested parts decided: every test of the claim corrected together (policy.decide); a part holds when
    each of its tests holds, fails when one fails, else is inconclusive."""
    tests = [t for p in parts for t in p.tests]
    decided = iter(decide(tests))
    out = []
    for part in parts:
        if not part.tests:
            out.append(part)
            continue
        verdicts = [next(decided) for _ in part.tests]
        said = [v for v, _, _ in verdicts]
        part = replace(part, p_supports=max(s for _, s, _ in verdicts), p_refutes=min(r for _, _, r in verdicts))
        if FAILS in said:
            refuted = part.tests[said.index(FAILS)].refuted
            p = verdicts[said.index(FAILS)][2]
            out.append(replace(part, verdict=FAILS, note=f"{refuted} (p = {p:.2g}, Holm)"))
        elif all(v == HOLDS for v in said):
            p = max(s for _, s, _ in verdicts)
            out.append(replace(part, verdict=HOLDS, value=_with_p(part.value, p)))
        else:
            # both tests' p: which way the interval leans, and how far it is from deciding either way
            p = max(s for v, s, _ in verdicts if v == INCONCLUSIVE)
            r = min(r for v, _, r in verdicts if v == INCONCLUSIVE)
            note = f"not decided at {LEVEL:.0%} (p = {p:.2g} that it holds, {r:.2g} that it fails; Holm)"
            out.append(replace(part, verdict=INCONCLUSIVE, note=note))
    return tuple(out)


def _with_p(value: str, p: float) -> str:
    return f"{value} (p = {p:.2g}, Holm)" if value else f"p = {p:.2g}, Holm"


def combine(parts: Sequence[Part]) -> tuple[str, str, str]:
    """(verdict, value, reason) of a claim from its decided parts (module docstring)."""
    shown = [p for p in parts if p.verdict != NOT_SHOWN]
    hidden = [p for p in parts if p.verdict == NOT_SHOWN]
    unshown = "; ".join(f"{p.label}: {p.note}" if p.note else p.label for p in hidden)
    value = "; ".join(f"{p.label}: {p.value}" if p.value else p.label for p in shown)
    if not shown:
        return NOT_SHOWN, "", unshown or "nothing to judge"
    also = f"; not shown for {unshown}" if unshown else ""
    built = [p for p in shown if p.verdict == BY_CONSTRUCTION]
    given = "; ".join(f"{p.label} ({p.note})" for p in built)
    measured = [p for p in shown if p.verdict != BY_CONSTRUCTION]
    if not measured:
        return BY_CONSTRUCTION, value, given + also
    also = (f"; true by construction: {given}" if built else "") + also

    def named(group: list[Part]) -> str:
        return "; ".join(f"{p.label} ({p.note})" if p.note else p.label for p in group)

    holds = [p for p in measured if p.verdict == HOLDS]
    fails = [p for p in measured if p.verdict == FAILS]
    undecided = [p for p in measured if p.verdict == INCONCLUSIVE]
    aspects = list(dict.fromkeys(p.aspect for p in parts if p.verdict != BY_CONSTRUCTION))
    missing = [a for a in aspects if not any(p.aspect == a for p in measured)]
    if len(holds) == len(measured) and not missing:
        return HOLDS, value, f"holds for every part shown{also}" if hidden or built else ""
    if len(fails) == len(measured):
        return FAILS, value, f"fails for {named(fails)}{also}"
    if len(undecided) == len(measured):
        return INCONCLUSIVE, value, f"inconclusive for {named(undecided)}{also}"
    said = [
        f"{word} for {named(group) if word != 'holds' else '; '.join(p.label for p in group)}"
        for word, group in (("holds", holds), ("fails", fails), ("inconclusive", undecided))
        if group
    ]
    return PARTLY, value, "; ".join(said) + also


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
    parts = settle(judged.parts)
    verdict, value, reason = combine(parts)
    line = headline(verdict, parts, judged.evidence)
    return _finding(claim, "; ".join(judged.evidence), value, verdict, reason, parts, line)


def _finding(
    claim: Claim,
    evidence: str,
    value: str,
    verdict: str,
    reason: str,
    parts: tuple[Part, ...] = (),
    line: str = "",
) -> Finding:
    return Finding(
        claim.id,
        claim.seed,
        claim.title,
        claim.question,
        claim.quote,
        evidence,
        claim.statistic,
        value,
        line,
        claim.rule,
        verdict,
        reason,
        parts,
    )
