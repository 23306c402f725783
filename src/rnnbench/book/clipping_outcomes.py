"""What the clipping settings of a section did, each read in its regime, set before training (rnnbench.book.clipping:
the findings' rule, rnnbench.metrics.threshold_regime): at every rate, how many unclipped and clipped runs diverged;
over the rates at which unclipped runs diverged, each regime's divergences; the settings whose share of steps
clipped contradicts their regime; and at the rates at which they trained, what each norm threshold cost, by the
findings' rule, so that the section (reports/studies.qmd) and the findings agree. The settings are
rnnbench.book.clipping's table.

Reads results only (rnnbench.book.results); no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench.book.clipping import (
    Clipping,
    RelativeThresholds,
    clipping_rows,
    clipping_seed_values,
    rate_optimizers,
    relative_thresholds,
    section,
)
from rnnbench.book.findings import parts as finding_parts
from rnnbench.book.format import share, sig
from rnnbench.book.studies import spread
from rnnbench.findings import policy
from rnnbench.findings.clipping import part_label
from rnnbench.findings.policy import ABOVE, BELOW, FAILS, HOLDS, INCONCLUSIVE, MARGINS
from rnnbench.metrics import CLIP_SPIKES, LOWER_IS_BETTER
from rnnbench.numbers import interval


@dataclass(frozen=True)
class DivergenceAtRate:
    """At one learning rate: how many unclipped runs diverged and where, and how many blew up (diverged, or ended
    above the unigram model's perplexity; counts over every run, since blowing up is what they measure), and each
    clipped setting's regime and outcomes there."""

    lr: float
    unclipped_runs: int  # 0 where the rate has no unclipped setting
    unclipped_diverged: int
    unclipped_blown: int
    first_step: float  # of the unclipped runs that diverged; NaN where none did
    last_step: float
    clipped: tuple[ClippedOutcome, ...]


@dataclass(frozen=True)
class ClippedOutcome:
    """A clipped setting at one rate: its label, regime, share of steps clipped (over every run), runs, divergences
    and runs that blew up (the diverged among them)."""

    clipping: str
    clip_mode: str
    regime: str
    share: float
    runs: int
    diverged: int
    blown: int


def divergence_by_rate(table: pd.DataFrame) -> list[DivergenceAtRate]:
    """Every learning rate with an unclipped or a clipped setting, in increasing order."""
    found = []
    for lr in sorted(table["lr"].unique()):
        at = table[table["lr"] == lr]
        unclipped, clipped = clipping_rows(at, "none"), at[~at["unclipped"]]
        u = unclipped.iloc[0] if len(unclipped) else None
        found.append(
            DivergenceAtRate(
                lr=float(lr),
                unclipped_runs=int(u["runs"]) if u is not None else 0,
                unclipped_diverged=int(u["diverged_runs"]) if u is not None else 0,
                unclipped_blown=int(u["blown_runs"]) if u is not None else 0,
                first_step=float(u["diverged_step_min"]) if u is not None and u["diverged_runs"] else math.nan,
                last_step=float(u["diverged_step_max"]) if u is not None and u["diverged_runs"] else math.nan,
                clipped=tuple(
                    ClippedOutcome(
                        r.clipping,
                        r.clip_mode,
                        r.regime,
                        float(r.clipped_fraction_mean),
                        int(r.runs),
                        int(r.diverged_runs),
                        int(r.blown_runs),
                    )
                    for r in clipped.itertuples(index=False)
                ),
            )
        )
    return found


@dataclass(frozen=True)
class RegimeAtDivergence:
    """Over the rates at which unclipped runs diverged: the clipped settings in one regime, their runs, how many of
    those diverged, and the lowest and highest share of steps they clipped."""

    regime: str
    settings: tuple[str, ...]  # "<clipping> at rate <lr>"
    runs: int
    diverged: int
    blown: int  # diverged, or ended above the unigram model's perplexity
    share_min: float
    share_max: float


def divergence_by_regime(table: pd.DataFrame) -> dict[str, RegimeAtDivergence]:
    """Regime -> its settings at the rates where some unclipped run diverged (only the regimes that have one)."""
    found: dict[str, list[tuple[str, ClippedOutcome]]] = {}
    for at in divergence_by_rate(table):
        if not at.unclipped_diverged:
            continue
        for c in at.clipped:
            if c.regime:
                found.setdefault(c.regime, []).append((f"{c.clipping} at rate {at.lr:g}", c))
    return {
        regime: RegimeAtDivergence(
            regime,
            tuple(name for name, _ in outcomes),
            sum(c.runs for _, c in outcomes),
            sum(c.diverged for _, c in outcomes),
            sum(c.blown for _, c in outcomes),
            min(c.share for _, c in outcomes),
            max(c.share for _, c in outcomes),
        )
        for regime, outcomes in found.items()
    }


def diverging_rates(table: pd.DataFrame) -> tuple[float, ...]:
    """The rates at which some unclipped run diverged."""
    return tuple(at.lr for at in divergence_by_rate(table) if at.unclipped_diverged)


@dataclass(frozen=True)
class UnclippedDivergence:
    """The unclipped runs at the rates where some diverged: the rates, how many runs, how many diverged, and the
    earliest and latest step one diverged at (NaN where none did)."""

    rates: tuple[float, ...]
    runs: int
    diverged: int
    blown: int  # diverged, or ended above the unigram model's perplexity
    first_step: float
    last_step: float


def unclipped_divergence(table: pd.DataFrame) -> UnclippedDivergence:
    rates = [at for at in divergence_by_rate(table) if at.unclipped_diverged]
    return UnclippedDivergence(
        tuple(at.lr for at in rates),
        sum(at.unclipped_runs for at in rates),
        sum(at.unclipped_diverged for at in rates),
        sum(at.unclipped_blown for at in rates),
        min((at.first_step for at in rates), default=math.nan),
        max((at.last_step for at in rates), default=math.nan),
    )


def contradictions(table: pd.DataFrame) -> pd.DataFrame:
    """The norm thresholds whose share of steps clipped contradicts their a-priori regime (rnnbench.metrics.
    regime_contradicted), each kept in its regime: clip_times_median, clip, lr, regime, share, one row per rate."""
    rows = clipping_rows(table, "norm")
    rows = rows[rows["regime"].ne("") & rows["contradicted"]]
    shown = rows[["clip_times_median", "clip", "lr", "regime", "clipped_fraction_mean"]]
    return shown.rename(columns={"clipped_fraction_mean": "share"}).reset_index(drop=True)


# What norm clipping at a threshold cost, by the one statistical policy (rnnbench.findings.policy): worse than no
# clipping by less than the perplexity margin (the one-sided equivalence test), measurably worse, or neither. A
# setting that clips rare spikes takes the findings' own verdict (tables/findings_parts.csv, clip_quality: Holm over
# every threshold the claim tests), so that this section and the findings agree; a threshold that clips ordinary
# steps, which the claim does not test, its single test's.
WITHIN_MARGIN, WORSE, UNDECIDED, NEVER_CLIPPED = (
    "within the margin",
    "measurably worse",
    "inconclusive",
    "never clipped",
)
COST_WORDS = {HOLDS: WITHIN_MARGIN, FAILS: WORSE, INCONCLUSIVE: UNDECIDED}


@dataclass(frozen=True)
class ThresholdCost:
    clip: float
    clipping: str  # the setting's label (clipping_table)
    regime: str
    share: float  # of steps clipped, over every run of the setting
    verdict: str  # WITHIN_MARGIN, WORSE, UNDECIDED or NEVER_CLIPPED
    mean: float  # the clipped seeds' mean of the metric; NaN where no step was clipped
    difference: str  # the difference of the means relative to the unclipped one, with its interval; "" idle


@dataclass(frozen=True)
class CostAtRate:
    """At a rate where no unclipped run diverged and some learned: the unclipped seeds' metric (mean, range)
    and each norm threshold that did not diverge, judged against them."""

    lr: float
    unclipped_mean: float
    unclipped_min: float
    unclipped_max: float
    thresholds: tuple[ThresholdCost, ...]
    # the thresholds at this rate of which no seed learned or diverged: (setting's label, regime), no cost to judge
    unlearned: tuple[tuple[str, str], ...] = ()


def clipping_cost(section: Clipping, results: str | Path | None = None) -> list[CostAtRate]:
    table, metric = section.table, section.metric
    none, norm = clipping_rows(table, "none"), clipping_rows(table, "norm")
    seeds = clipping_seed_values(list(section.studies), results)
    unclipped_runs = seeds["clip_mode"].eq("none") | seeds["clip"].eq(math.inf)
    judged_parts = finding_parts("clip_quality", results)
    costs = []
    for lr in _calm_rates(none):
        base = none[none["lr"] == lr].iloc[0]
        unclipped = seeds[unclipped_runs & (seeds["lr"] == lr)]["value"]
        rows = norm[(norm["lr"] == lr) & (norm["diverged_runs"] == 0) & (norm["seeds_learned"] > 0)]
        judged = []
        for row in rows.itertuples(index=False):
            here = seeds[~unclipped_runs & (seeds["clip_mode"] == "norm") & (seeds["lr"] == lr)]
            clipped = here[here["clip"] == row.clip]["value"]
            found = judged_parts.loc[[label]] if (label := _label(section, lr, row)) in judged_parts.index else None
            cost = _threshold_cost(row, clipped, unclipped, metric, found)
            if cost is not None:
                judged.append(cost)
        stats = [float(base[f"{metric}_{s}"]) for s in ("mean", "min", "max")]
        stuck = norm[(norm["lr"] == lr) & (norm["diverged_runs"] == 0) & (norm["seeds_learned"] == 0)]
        unlearned = tuple((str(r.clipping), str(r.regime)) for r in stuck.itertuples(index=False))
        costs.append(CostAtRate(float(lr), *stats, tuple(judged), unlearned))
    return costs


def _calm_rates(none: pd.DataFrame) -> list[float]:
    """The rates at which no unclipped run diverged and some unclipped seed learned."""
    calm = none[(none["diverged_runs"] == 0) & (none["seeds_learned"] > 0)]
    return sorted(calm["lr"].unique())


def _label(section: Clipping, lr: float, row) -> str:
    times = getattr(row, "clip_times_median", math.nan)
    return part_label(section.corpus, float(lr), float(row.clip), float(times) if times is not None else math.nan)


def _threshold_cost(
    row, clipped: pd.Series, unclipped: pd.Series, metric: str, found: pd.DataFrame | None
) -> ThresholdCost | None:
    """A threshold's verdict against the unclipped seeds (module comment); None where either side has too few seeds
    to judge."""
    said = (float(row.clip), row.clipping, row.regime, float(row.clipped_fraction_mean))
    if not row.clipped_fraction_mean > 0:
        return ThresholdCost(*said, NEVER_CLIPPED, math.nan, "")
    harm = ABOVE if metric in LOWER_IS_BETTER else BELOW
    margin = MARGINS[policy.quantity(metric)].absolute(float(unclipped.mean())) if len(unclipped) else 0.0
    test = policy.no_effect(clipped, unclipped, harm, margin)
    if test is None:
        return None
    relative = interval(test.interval.scaled(100 / float(unclipped.mean())), unit="%")
    if row.regime == CLIP_SPIKES and found is not None and found["verdict"].iloc[0] in COST_WORDS:
        verdict = COST_WORDS[found["verdict"].iloc[0]]
    else:
        verdict = COST_WORDS[policy.decide([test])[0][0]]
    return ThresholdCost(*said, verdict, float(clipped.mean()), relative)


def costs_in(costs: list[CostAtRate], regime: str) -> list[tuple[float, ThresholdCost]]:
    """Every (rate, threshold cost) of ``costs`` whose setting is in ``regime``."""
    return [(c.lr, t) for c in costs for t in c.thresholds if t.regime == regime]


def unlearned_in(costs: list[CostAtRate], regime: str) -> list[tuple[float, str]]:
    """Every (rate, setting's label) of ``costs`` in ``regime`` of which no seed learned: a cost it cannot have."""
    return [(c.lr, label) for c in costs for label, at in c.unlearned if at == regime]


@dataclass(frozen=True, eq=False)
class Outcomes:
    """What a corpus's clipping section states: its settings (None where no clipping study has results here), the
    thresholds set from a measured norm (None where none is), the unclipped runs' divergence, each regime's settings
    at the rates where those diverged, the settings whose share of steps clipped contradicts their regime, and the
    cost at each rate where unclipped training did not diverge."""

    section: Clipping | None
    relative: RelativeThresholds | None
    unclipped: UnclippedDivergence
    at_divergence: dict[str, RegimeAtDivergence]
    contradicted: pd.DataFrame
    costs: list[CostAtRate]


def outcomes(corpus: str, results: str | Path | None = None) -> Outcomes:
    found = section(corpus, results)
    if found is None:
        empty = pd.DataFrame(columns=["clip_times_median", "clip", "lr", "regime", "share"])
        return Outcomes(None, None, UnclippedDivergence((), 0, 0, 0, math.nan, math.nan), {}, empty, [])
    return Outcomes(
        found,
        relative_thresholds(found, results),
        unclipped_divergence(found.table),
        divergence_by_regime(found.table),
        contradictions(found.table),
        clipping_cost(found, results),
    )


def cost_display(found: Outcomes) -> pd.DataFrame:
    """Every norm threshold judged at a rate where unclipped training did not diverge (clipping_cost), a row each:
    the rate, the setting, its share of steps clipped and regime, the unclipped and the clipped seeds' metric, the
    difference of the means relative to the unclipped one with its interval, and the verdict."""
    optimizers = rate_optimizers(found.section.table) if found.section else {}
    rows = [
        {
            "lr": f"{cost.lr:g}" + (f" ({optimizers[cost.lr]})" if optimizers else ""),
            "clipping": t.clipping,
            "steps clipped": f"{share(t.share)}, {t.regime}" if t.regime else "–",
            "unclipped": spread(cost.unclipped_mean, cost.unclipped_min, cost.unclipped_max),
            "clipped": sig(t.mean, plain=True),
            "difference": t.difference or "–",
            "verdict": t.verdict,
        }
        for cost in found.costs
        for t in cost.thresholds
    ]
    return pd.DataFrame(
        rows, columns=["lr", "clipping", "steps clipped", "unclipped", "clipped", "difference", "verdict"]
    )
