"""The statistics the findings' rules read: intervals over seeds, and the fit of a log-linear decay.

    difference(a, b)   Welch's 95% interval of mean(a) - mean(b), each list one value per seed
    mean_interval(x)   Student's 95% interval of mean(x), one value per seed (a paired difference, a rate)
    fit(d, y)          least squares y = c + r d, with r's 95% interval and R^2 (a log-norm against distance)
    direction(iv)      "above" or "below" 0 when the interval lies on one side, else NO_CHANGE

An interval needs a spread: fewer than two seeds on a side gives None, and a rule that needs an interval
says "not shown" there. Seeds that agree exactly (spread 0) give the point itself: a difference between
identical seeds is exactly known, not unknown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from rnnbench.findings.registry import LEVEL

__all__ = ["LEVEL", "NO_CHANGE", "Fit", "Interval", "difference", "direction", "fit", "mean_interval"]
# What a change inside the seeds' noise is called: never a direction.
NO_CHANGE = "no measurable change"


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    n: int  # values behind it (the smaller side's, for a difference)

    def scaled(self, factor: float) -> Interval:
        """The same interval in other units (e.g. relative to a baseline: factor = 100 / baseline)."""
        ends = sorted((self.low * factor, self.high * factor))
        return Interval(self.estimate * factor, ends[0], ends[1], self.n)


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
        return "above"
    if interval.high < against:
        return "below"
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
