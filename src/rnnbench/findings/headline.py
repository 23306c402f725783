"""The number that decides a claim's verdict, in a few words: the headline of tables/findings.csv.

    deciding(verdict, parts)          the parts that decide it
    headline(verdict, parts, read)    those parts' settings and numbers, as one short line

Which parts decide. A claim that holds: its weakest supporting part, the one nearest to not holding (the largest
Holm-adjusted p-value for it; a part given its verdict without a test holds exactly, so any tested part is weaker).
A claim that fails: its clearest failing part (the smallest p-value against it). A claim that holds in part: its
clearest holding part beside its clearest failing one, or its nearest-to-decided undecided one where none fails.
An inconclusive claim: the part nearest a decision. True by construction: its first such part. Not shown: none.

A part reads as its setting and its value. The setting is its label without the names of the studies, analyses and
tables the claim read (names the configuration gives, not words a reader knows), the value its first clause
that holds an interval (else its first) up to that interval's end, without its p-value or any other aside in
parentheses, and a metric's key as its words (test_ppl -> test
perplexity). Nothing here is typed for one claim: every claim's line is made the same way from its parts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from rnnbench.findings.policy import BY_CONSTRUCTION, FAILS, HOLDS, INCONCLUSIVE, PARTLY
from rnnbench.metrics import METRIC_LABELS

# A part, as far as this module reads one: rnnbench.findings.registry.Part (label, verdict, value, note, p_supports,
# p_refutes). Typed loosely so that the registry, which imports this module, is not imported back.
PartLike = Any

# An aside: words in parentheses after a space ("(p = 0.004, Holm)", "(1,494,002)"), not a function's argument
# (ρ(U), nn.RNN(8, 32)).
ASIDE = re.compile(r"\s+\([^()]*\)")
# A comma between two settings of a label, not one inside parentheses.
BETWEEN = re.compile(r",\s(?![^()]*\))")
# Metric keys as the results spell them (test_ppl, agreement_accuracy): a plain word (steps) is left as written.
METRIC_KEY = re.compile(
    r"\b(" + "|".join(sorted((re.escape(k) for k in METRIC_LABELS if "_" in k), key=len, reverse=True)) + r")\b"
)


def _p(value: float) -> float:
    """A p-value to order parts by; a part without a test (NaN) decided exactly, as if p were 0."""
    return 0.0 if math.isnan(value) else value


def _nearest(part: PartLike) -> float:
    return min(_p(part.p_supports), _p(part.p_refutes))


def deciding(verdict: str, parts: Sequence[PartLike]) -> tuple[PartLike, ...]:
    """The parts behind ``verdict`` (module docstring), in the order the headline names them."""
    holds = [p for p in parts if p.verdict == HOLDS]
    fails = [p for p in parts if p.verdict == FAILS]
    undecided = [p for p in parts if p.verdict == INCONCLUSIVE]
    clearest_hold = min(holds, key=lambda p: _p(p.p_supports), default=None)
    clearest_fail = min(fails, key=lambda p: _p(p.p_refutes), default=None)
    nearest = min(undecided, key=_nearest, default=None)
    if verdict == HOLDS:
        return (max(holds, key=lambda p: _p(p.p_supports)),) if holds else ()
    if verdict == FAILS:
        return (clearest_fail,) if fails else ()
    if verdict == INCONCLUSIVE:
        return (nearest,) if undecided else ()
    if verdict == PARTLY:
        found = [p for p in (clearest_hold, clearest_fail, nearest) if p is not None]
        return tuple(found[:2])
    if verdict == BY_CONSTRUCTION:
        return tuple(p for p in parts if p.verdict == BY_CONSTRUCTION)[:1]
    return ()


def setting(label: str, read: Sequence[str]) -> str:
    """A part's label without the names of what was read ("studies/window_agreement" -> window_agreement) or
    asides in parentheses: "decay_radius, radius 1.1, hidden 200" -> "radius 1.1, hidden 200"."""
    names = [item.split("/", 1)[-1].removesuffix(".csv") for item in read]
    named = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, names)) + r")(?![\w])") if names else None
    pieces = [p.strip() for p in BETWEEN.split(ASIDE.sub("", label))]
    return ", ".join(p for p in pieces if p and not (named and named.search(p)))


def number(part: PartLike) -> str:
    """A part's value: its first clause with an interval in it (else its first), up to that interval's end, no
    asides, metric keys as words; a part true by construction by its reason."""
    text = part.value or (part.note if part.verdict == BY_CONSTRUCTION else "")
    clauses = [c.strip() for c in ASIDE.sub("", text).split("; ")]
    text = next((c for c in clauses if "[" in c), clauses[0])
    text = text[: text.index("]") + 1] if "]" in text else text  # the interval ends what decides it
    return METRIC_KEY.sub(lambda m: METRIC_LABELS[m.group(1)], text)


def headline(verdict: str, parts: Sequence[PartLike], read: Sequence[str]) -> str:
    """One line: "n−1 = 4: accuracy at distance 4 − at 5: +0.187 [+0.0952, +0.279]"; a claim that holds in part
    names each part's verdict ("holds for ...; fails for ...")."""
    chosen = deciding(verdict, parts)

    def line(part: PartLike) -> str:
        where, value = setting(part.label, read), number(part)
        return f"{where}: {value}" if where and value else where or value

    if verdict == PARTLY:
        return "; ".join(f"{part.verdict} for {line(part)}" for part in chosen)
    return "; ".join(line(part) for part in chosen)
