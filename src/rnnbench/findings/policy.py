"""The statistical policy every claim is judged by, stated once: the book's findings page prints it from here.

Verdicts. A part of a claim (one corpus, one setting) is
    holds               its test supports the claim at level ALPHA, after Holm's correction over the claim's tests
    fails               its test refutes the claim at that level
    inconclusive        neither: the interval reaches both sides of the question (seeds too few or too noisy)
    not shown           nothing could be judged (runs that diverged or did not learn, one seed where seeds are
                        needed, no evidence of the role in this config): the reason says which
    true by construction  it follows from a definition (a positive rescaling keeps a direction), said with the
                        one-line reason and counted apart from what was measured
and a claim is holds or fails when every measured part is, partly when its parts disagree (the reason says which),
inconclusive when none could be decided (rnnbench.findings.registry.combine).

Questions. Each test gives two one-sided p-values: one whose rejection supports the claim and one whose rejection
refutes it; each family is corrected by Holm's method over all the tests of one claim.
    effect(a, b, side, margin)        "A differs from B in this direction": supported where the difference is
                                      measurably on that side of 0, refuted where it is measurably short of the
                                      margin on that side (smaller than an effect worth the name, or the other way)
    no_effect(a, b, harm, margin)     "A is no worse than B" (harm on one side) or "A equals B" (harm "either"):
                                      supported by an equivalence test, the two one-sided tests (statsmodels'
                                      ttost) against the margin, or the one that faces the harm; refuted where
                                      the difference is measurably beyond 0 on the side of the harm
    more_often(a, b)                  failure counts (diverged, did not learn) are outcomes: Fisher's exact test
A single value per side gives no test (a fit's error over the distances of one network is not a replication:
claims about a setting read seeds). Seeds that agree exactly are a difference exactly known.

Margins. What counts as no effect is stated per quantity in MARGINS, relative to the reference side's mean or in
the quantity's own units.

Intervals, for printing the number behind a verdict:
    difference(a, b)   Welch's 95% interval of mean(a) - mean(b), each list one value per seed
    mean_interval(x)   Student's 95% interval of mean(x), one value per seed (a paired difference, a rate)
    fit(d, y)          least squares y = c + r d, with r's 95% interval and R^2 (a log-norm against distance)
A quantity that cannot leave a range (a cosine lies in [-1, 1]) has it stated in RANGES; a test given its range
prints its interval cut to it (Interval.within), and says where it was cut. A t interval knows no bounds: two seeds
of cosines near 1 give one past 1. Cutting a confidence interval to where the parameter can lie keeps its coverage
(the parameter is inside the range, so it is inside the cut interval whenever it is inside the whole one); the
tests' p-values are the same either way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW, ttest_ind, ttost_ind

HOLDS, FAILS, PARTLY, INCONCLUSIVE, NOT_SHOWN, BY_CONSTRUCTION = (
    "holds",
    "fails",
    "partly",
    "inconclusive",
    "not shown",
    "true by construction",
)
VERDICTS = (HOLDS, FAILS, PARTLY, INCONCLUSIVE, NOT_SHOWN, BY_CONSTRUCTION)
MEASURED = (HOLDS, FAILS, INCONCLUSIVE)  # what a test decides

# The level of every test after Holm's correction, and the confidence of every interval. ALPHA is written, LEVEL
# derived: 1 - 0.95 is 0.050000000000000044 in floating point, which let a p-value of exactly 1/20 (Fisher's 3 of 3
# against 0 of 3) count as below 0.05; 1 - 0.05 is 0.95 exactly.
ALPHA = 0.05
LEVEL = 1 - ALPHA

ABOVE, BELOW, EITHER = "above", "below", "either"
SIDES = (ABOVE, BELOW)
# What a change inside the seeds' noise is called: never a direction.
NO_CHANGE = "no measurable change"


@dataclass(frozen=True)
class Margin:
    """The largest difference that counts as none: ``size`` in the quantity's units, or times the reference
    side's mean when ``relative``."""

    size: float
    relative: bool
    unit: str = ""

    def absolute(self, reference: float) -> float:
        return abs(self.size * reference) if self.relative else self.size

    def __str__(self) -> str:
        return f"{self.size:.0%}" if self.relative else f"{self.size:g}{self.unit}"


# Chosen once, before the results: about the spread between seeds of the default recipes, and small against the
# effects the seeds name (a cliff, a factor of four, a run that diverges).
MARGINS: dict[str, Margin] = {
    "perplexity": Margin(0.02, True),
    "accuracy": Margin(0.02, False),
    "decay rate": Margin(0.01, False, " a step (log of the per-step factor)"),
    "update cosine": Margin(0.01, False),
    "share of units": Margin(0.01, False),
    "optimiser steps": Margin(0.05, True),
    "tokens per second": Margin(0.05, True),
    "peak memory": Margin(0.05, True),
}


@dataclass(frozen=True)
class Range:
    """Where a quantity can lie, ``low`` to ``high``, and what it is called where an interval is cut to it."""

    low: float
    high: float
    of: str  # "a cosine": an interval cut at ``high`` says "cut at 1, a cosine's largest value"

    def words(self, end: float) -> str:
        """What cutting an interval at ``end`` (one of the range's ends) says."""
        which = "largest" if end == self.high else "smallest"
        return f"cut at {end:g}, {self.of}'s {which} value"


# Stated with MARGINS: the quantities whose values are bounded by what they are.
RANGES: dict[str, Range] = {
    "update cosine": Range(-1.0, 1.0, "a cosine"),
}


def quantity(metric: str) -> str:
    """The MARGINS key of a study metric: any perplexity, any accuracy."""
    if metric.endswith("ppl") or "perplexity" in metric:
        return "perplexity"
    if "accuracy" in metric:
        return "accuracy"
    raise KeyError(f"no margin is stated for metric {metric!r}; MARGINS has {', '.join(MARGINS)}")


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    n: int  # values behind it (the smaller side's, for a difference)
    cut: str = ""  # where it was cut to its quantity's range, in words (within); "" where it was not

    def scaled(self, factor: float) -> Interval:
        """The same interval in other units (e.g. relative to a baseline: factor = 100 / baseline)."""
        if self.cut:
            raise ValueError(f"an interval cut to its range ({self.cut}) is in that range's units; scale it first")
        ends = sorted((self.low * factor, self.high * factor))
        return Interval(self.estimate * factor, ends[0], ends[1], self.n)

    def within(self, bounds: Range | None) -> Interval:
        """The interval intersected with ``bounds``, the range its quantity cannot leave (the module docstring:
        it keeps its coverage), with ``cut`` saying at which end; itself where it lies inside or ``bounds`` is None.
        An estimate past an end (a mean of cosines that rounding put above 1) is set on it."""
        if bounds is None:
            return self
        low, high = max(self.low, bounds.low), min(self.high, bounds.high)
        if (low, high) == (self.low, self.high):
            return self
        said = [
            bounds.words(end)
            for end, moved in ((bounds.low, low != self.low), (bounds.high, high != self.high))
            if moved
        ]
        estimate = min(max(self.estimate, bounds.low), bounds.high)
        return Interval(estimate, min(low, high), max(low, high), self.n, "; ".join(said))


def _clean(values: Sequence[float]) -> np.ndarray:
    array = np.asarray([float(v) for v in values], dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"an interval over seeds needs finite values, got {list(values)}")
    return array


def mean_interval(values: Sequence[float], level: float = LEVEL) -> Interval | None:
    """Student's t interval of the mean: mean +- t_{(1+level)/2, n-1} sd / sqrt(n); None below two values."""
    x = _clean(values)
    if len(x) < 2:
        return None
    mean, se = float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x)))
    half = float(stats.t.ppf((1 + level) / 2, len(x) - 1)) * se
    return Interval(mean, mean - half, mean + half, len(x))


def difference(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval | None:
    """Welch's interval of mean(a) - mean(b): se = sqrt(s_a^2/n_a + s_b^2/n_b), Welch-Satterthwaite degrees
    of freedom; None when either side has fewer than two values."""
    x, y = _clean(a), _clean(b)
    if len(x) < 2 or len(y) < 2:
        return None
    estimate = float(x.mean() - y.mean())
    va, vb = float(x.var(ddof=1)) / len(x), float(y.var(ddof=1)) / len(y)
    if va + vb == 0:
        return Interval(estimate, estimate, estimate, min(len(x), len(y)))
    df = (va + vb) ** 2 / (va**2 / (len(x) - 1) + vb**2 / (len(y) - 1))
    half = float(stats.t.ppf((1 + level) / 2, df)) * math.sqrt(va + vb)
    return Interval(estimate, estimate - half, estimate + half, min(len(x), len(y)))


def direction(interval: Interval | None, against: float = 0.0) -> str | None:
    """Which side of ``against`` the interval lies on ("above", "below"), NO_CHANGE when it reaches it, None
    without an interval."""
    if interval is None:
        return None
    if interval.low > against:
        return ABOVE
    if interval.high < against:
        return BELOW
    return NO_CHANGE


@dataclass(frozen=True)
class Fit:
    slope: Interval  # the rate r and its interval
    intercept: float
    r_squared: float
    points: int


def fit(x: Sequence[float], y: Sequence[float], level: float = LEVEL) -> Fit | None:
    """Least squares y = c + r x: r with its t interval on n - 2 degrees of freedom, and R^2; None below three
    points (two points fit any line exactly and leave no residual to measure the noise by)."""
    xs, ys = _clean(x), _clean(y)
    if len(xs) != len(ys):
        raise ValueError(f"a fit needs as many x as y values, got {len(xs)} and {len(ys)}")
    if len(xs) < 3:
        return None
    result = stats.linregress(xs, ys)
    half = float(stats.t.ppf((1 + level) / 2, len(xs) - 2)) * float(result.stderr)
    slope = float(result.slope)
    return Fit(
        Interval(slope, slope - half, slope + half, len(xs)), float(result.intercept), float(result.rvalue**2), len(xs)
    )


# Tests


@dataclass(frozen=True)
class Test:
    """One comparison inside a claim: the two one-sided p-values before correction, the interval to print, and
    what a refutation and an undecided result mean in words."""

    p_supports: float  # rejecting its null supports the claim
    p_refutes: float  # rejecting its null refutes it
    interval: Interval
    margin: float  # in the difference's own units
    refuted: str  # what "fails" found, e.g. "measurably worse"
    kind: str  # "effect", "no effect" or "counts"


def _p_mean(x: np.ndarray, value: float, side: str) -> float:
    """One-sample t-test of H1: mean(x) > value (side ABOVE) or < value (BELOW)."""
    if float(x.std(ddof=1)) == 0:  # seeds that agree exactly: the mean is known
        return 0.0 if (x[0] > value if side == ABOVE else x[0] < value) else 1.0
    alternative = "larger" if side == ABOVE else "smaller"
    return float(DescrStatsW(x).ttest_mean(value, alternative=alternative)[1])


def _p_difference(a: np.ndarray, b: np.ndarray, value: float, side: str) -> float:
    """Welch's one-sided test of H1: mean(a) - mean(b) > value (ABOVE) or < value (BELOW)."""
    if float(a.var(ddof=1)) + float(b.var(ddof=1)) == 0:
        d = float(a.mean() - b.mean())
        return 0.0 if (d > value if side == ABOVE else d < value) else 1.0
    alternative = "larger" if side == ABOVE else "smaller"
    return float(ttest_ind(a, b, alternative=alternative, usevar="unequal", value=value)[1])


def _one_sided(a: np.ndarray, b: np.ndarray | None, value: float, side: str) -> float:
    return _p_mean(a, value, side) if b is None else _p_difference(a, b, value, side)


def _two_sided(a: np.ndarray, b: np.ndarray | None, value: float) -> float:
    return min(1.0, 2 * min(_one_sided(a, b, value, ABOVE), _one_sided(a, b, value, BELOW)))


def _equivalent(a: np.ndarray, b: np.ndarray | None, low: float, high: float) -> float:
    """The two one-sided tests of low < difference < high: their larger p (statsmodels' ttost_mean, ttost_ind
    with Welch's variances); seeds that agree exactly decide it exactly."""
    spread = float(a.var(ddof=1)) + (0.0 if b is None else float(b.var(ddof=1)))
    if spread == 0:
        return max(_one_sided(a, b, low, ABOVE), _one_sided(a, b, high, BELOW))
    if b is None:
        return float(DescrStatsW(a).ttost_mean(low, high)[0])
    return float(ttost_ind(a, b, low, high, usevar="unequal")[0])


def _sides(
    a: Sequence[float], b: Sequence[float] | None, bounds: Range | None = None
) -> tuple[np.ndarray, np.ndarray | None, Interval] | None:
    """The two sides as arrays and the interval to print, cut to ``bounds`` (only a mean of one side can be: a
    difference of two bounded quantities has its own range)."""
    x = _clean(a)
    y = None if b is None else _clean(b)
    if bounds is not None and y is not None:
        raise ValueError("a range bounds a mean of one side, not a difference of two")
    interval = mean_interval(x) if y is None else difference(x, y)
    return None if interval is None else (x, y, interval.within(bounds))


def _flip(side: str) -> str:
    return BELOW if side == ABOVE else ABOVE


def effect(
    a: Sequence[float], b: Sequence[float] | None, side: str, margin: float, against: float = 0.0
) -> Test | None:
    """The claim "mean(a) - mean(b) lies on ``side`` of ``against``" (b None: mean(a) itself); ``side`` EITHER for
    "differs, either way". Supported where the difference is measurably on that side; refuted where it is
    measurably within ``margin`` of ``against`` on that side (for EITHER: within +-margin, the two one-sided
    tests). None with fewer than two values on a side."""
    found = _sides(a, b)
    if found is None:
        return None
    x, y, interval = found
    if side == EITHER:
        supports = _two_sided(x, y, against)
        refutes = _equivalent(x, y, against - margin, against + margin)
        return Test(supports, refutes, interval, margin, f"measurably within ±{margin:.3g} of {against:g}", "effect")
    edge = against + margin if side == ABOVE else against - margin
    supports = _one_sided(x, y, against, side)
    refutes = _one_sided(x, y, edge, _flip(side))
    return Test(supports, refutes, interval, margin, "measurably short of the margin", "effect")


def no_effect(
    a: Sequence[float],
    b: Sequence[float] | None,
    harm: str,
    margin: float,
    against: float = 0.0,
    bounds: Range | None = None,
) -> Test | None:
    """The claim "mean(a) - mean(b) is not beyond ``against`` by more than ``margin`` on the side of ``harm``" (ABOVE,
    BELOW), or within +-margin either way (EITHER). Supported by the equivalence test; refuted where the difference
    is measurably on the side of the harm (for EITHER: measurably different). None with fewer than two values on a
    side. ``bounds``, with b None: the range mean(a) cannot leave (RANGES), which the interval printed is cut to."""
    found = _sides(a, b, bounds)
    if found is None:
        return None
    x, y, interval = found
    if harm == EITHER:
        supports = _equivalent(x, y, against - margin, against + margin)
        return Test(supports, _two_sided(x, y, against), interval, margin, "measurably different", "no effect")
    edge = against + margin if harm == ABOVE else against - margin
    supports = _one_sided(x, y, edge, _flip(harm))
    refutes = _one_sided(x, y, against, harm)
    return Test(supports, refutes, interval, margin, "measurably worse", "no effect")


def more_often(failed_a: int, runs_a: int, failed_b: int, runs_b: int) -> Test:
    """The claim "A fails more often than B" on counts (diverged, did not learn): Fisher's exact test, one-sided
    each way. The interval printed is the difference of the two rates, a point."""
    table = [[failed_a, runs_a - failed_a], [failed_b, runs_b - failed_b]]
    supports = float(stats.fisher_exact(table, alternative="greater").pvalue)
    refutes = float(stats.fisher_exact(table, alternative="less").pvalue)
    gap = failed_a / runs_a - failed_b / runs_b
    return Test(supports, refutes, Interval(gap, gap, gap, min(runs_a, runs_b)), 0.0, "measurably less often", "counts")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of one family of p-values (statsmodels' multipletests)."""
    if not p_values:
        return []
    return [float(p) for p in multipletests(list(p_values), alpha=ALPHA, method="holm")[1]]


def significant(p: float) -> bool:
    """p below ALPHA, by more than rounding: a p-value that is ALPHA in exact arithmetic (Fisher's 3 of 3 against 0
    of 3, 1/20, comes out of scipy as 0.05000000000000001) is not below it, whichever way its last bit falls."""
    return p < ALPHA and not math.isclose(p, ALPHA, rel_tol=1e-9)


def decide(tests: Sequence[Test]) -> list[tuple[str, float, float]]:
    """Each test's verdict (HOLDS, FAILS, INCONCLUSIVE) and its two Holm-adjusted p-values, the supporting and the
    refuting family each corrected over all of ``tests`` (the tests of one claim). Support is read first: an
    effect measurably present but smaller than its margin still holds."""
    supports = holm([t.p_supports for t in tests])
    refutes = holm([t.p_refutes for t in tests])
    out = []
    for s, r in zip(supports, refutes, strict=True):
        verdict = HOLDS if significant(s) else FAILS if significant(r) else INCONCLUSIVE
        out.append((verdict, s, r))
    return out
