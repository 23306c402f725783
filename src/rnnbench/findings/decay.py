"""The chapter's claims about how the gradient decays, judged on the gradient-decay analyses by role.

    radius          (untrained tanh networks, U rescaled)   |lambda| < 1 vanishes, |lambda| > 1 explodes
    activation      (untrained networks of each activation) the sigmoid divides the gradient by at least 4 a step
    trained_decay   (a study's trained runs)                decay is geometric; training does not hold |lambda| at 1;
                                                            the forward move of the state outlasts the backward blame

The rate is the slope of log ||dL/dh_{T-d}|| against the distance d (rnnbench.decay.rates: 0 is the edge,
below 0 vanishing). Its interval is over the seeds of one network setting where there are several, else
the fit's own over the distances it used (the curve's log geometric mean, as the rate was fitted).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rnnbench.findings import stats
from rnnbench.findings.evidence import Evidence
from rnnbench.findings.registry import FAILS, HOLDS, NOT_SHOWN, Judged, Part, interval, num

# A curve is geometric when a straight line explains this much of log-norm's variance over the fitted distances.
GEOMETRIC_R2 = 0.9
FINAL = "final"


def _backward(table: pd.DataFrame) -> pd.DataFrame:
    return table[(table["direction"] == "backward") & (table["method"] == "one_pass") & (table["quantity"] == "h")]


def backward_rates(ev: Evidence, name: str) -> pd.DataFrame:
    """The analysis's measured rates of dL/dh, one row per network (its keys, rate, rho, fit range)."""
    return _backward(ev.rates(name)).reset_index(drop=True)


def curve_fit(ev: Evidence, name: str, point: pd.Series) -> stats.Fit | None:
    """The fit of log geometric-mean norm against distance for one network, over the distances its rate used."""
    keys = [k for k in ev.analysis(name)["keys"] if k in point.index]
    curves = _backward(ev.curves(name))
    for key in keys:
        value = point[key]
        curves = curves[curves[key].isna()] if pd.isna(value) else curves[curves[key].astype(str) == str(value)]
    if pd.isna(point.get("fit_from")) or pd.isna(point.get("fit_to")):
        return None
    used = curves[(curves["distance"] >= point["fit_from"]) & (curves["distance"] <= point["fit_to"])]
    used = used[used["geo_mean"] > 0]
    return stats.fit(used["distance"], np.log(used["geo_mean"]))


def rate_intervals(ev: Evidence, name: str, rates: pd.DataFrame) -> list[tuple[dict, stats.Interval | None, str]]:
    """Per network setting (the analysis's keys but seed and run): the rate's interval over seeds, or for one
    seed the fit's own; and which of the two it is."""
    keys = [k for k in ev.analysis(name)["keys"] if k not in ("seed", "run_id") and k in rates.columns]
    out = []
    for values, group in rates.groupby(keys, sort=False, dropna=False) if keys else [((), rates)]:
        values = values if isinstance(values, tuple) else (values,)
        setting = dict(zip(keys, values, strict=True))
        usable = group[np.isfinite(group["rate"])]
        if len(usable) >= 2:
            out.append((setting, stats.mean_interval(usable["rate"]), f"over {len(usable)} seeds"))
        elif len(usable) == 1:
            fitted = curve_fit(ev, name, usable.iloc[0])
            out.append((setting, fitted.slope if fitted else None, "of the fit (one seed)"))
        else:
            out.append((setting, None, "no finite rate"))
    return out


def _label(name: str, setting: dict, shown: tuple[str, ...]) -> str:
    parts = [f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in setting.items() if k in shown]
    return f"{name}, {', '.join(parts)}" if parts else name


def _untrained(ev: Evidence, role: str, keep) -> tuple[list[tuple[str, dict, stats.Interval | None, str]], tuple]:
    found, read = [], []
    for name in ev.analyses(role):
        read.append(f"analyses/{name}")
        if ev.analysis(name).get("network") != "untrained":
            continue
        rates = backward_rates(ev, name)
        rates = rates[keep(rates)]
        found += [(name, *row) for row in rate_intervals(ev, name, rates)]
    return found, tuple(read)


def _elman_tanh(rates: pd.DataFrame) -> pd.Series:
    return rates["family"].eq("rnn") & rates["activation"].eq("tanh")


def _radius_claim(ev: Evidence, side: str) -> Judged:
    below = side == "below"
    found, read = _untrained(
        ev, "radius", lambda r: _elman_tanh(r) & (r["radius"].lt(1) if below else r["radius"].gt(1))
    )
    parts = []
    for name, setting, iv, how in found:
        label = _label(name, setting, ("radius", "hidden"))
        if iv is None:
            parts.append(Part(label, NOT_SHOWN, note=how))
            continue
        seen = stats.direction(iv)
        value = f"rate {interval(iv)} {how}, per-step factor {num(math.exp(iv.estimate))}"
        ok = seen == side
        note = (
            ""
            if ok
            else (
                "no measurable change" if seen == stats.NO_CHANGE else f"the gradient {'grows' if below else 'shrinks'}"
            )
        )
        parts.append(Part(label, HOLDS if ok else FAILS, value, note))
    reason = "" if parts else f"no tanh network with spectral radius {'below' if below else 'above'} 1 in the analyses"
    return Judged(read, tuple(parts), reason)


def vanish(ev: Evidence) -> Judged:
    return _radius_claim(ev, "below")


def explode(ev: Evidence) -> Judged:
    return _radius_claim(ev, "above")


QUARTER = math.log(0.25)


def sigmoid_quarter(ev: Evidence) -> Judged:
    found, read = _untrained(ev, "activation", lambda r: r["activation"].eq("sigmoid"))
    parts = []
    for name, setting, iv, how in found:
        label = _label(name, setting, ("radius", "hidden"))
        if iv is None:
            parts.append(Part(label, NOT_SHOWN, note=how))
            continue
        factors = f"{num(math.exp(iv.estimate))} [{num(math.exp(iv.low))}, {num(math.exp(iv.high))}]"
        weaker = stats.direction(iv, QUARTER) == "above"
        value = f"per-step factor {factors} {how}"
        parts.append(Part(label, FAILS if weaker else HOLDS, value, "measurably above 1/4" if weaker else ""))
    return Judged(read, tuple(parts), "" if parts else "no sigmoid network in the analyses with role activation")


def _trained(ev: Evidence) -> tuple[list[tuple[str, pd.DataFrame, pd.DataFrame]], tuple[str, ...], list[Part]]:
    """Per analysis of role trained_decay: its final-snapshot rates of learned runs, the initialisation's
    rates, and a part for each analysis whose runs did not learn."""
    found, read, skipped = [], [], []
    for name in ev.analyses("trained_decay"):
        record = ev.analysis(name)
        read.append(f"analyses/{name}")
        if record.get("study") is None:
            skipped.append(Part(name, NOT_SHOWN, note="measures untrained networks"))
            continue
        runs = ev.runs(record["study"])[["run_id", "outcome"]]
        rates = backward_rates(ev, name).merge(runs, on="run_id", how="left")
        final = rates[rates["snapshot"].astype(str) == FINAL]
        if final.empty:
            skipped.append(Part(name, NOT_SHOWN, note="no final snapshot measured"))
            continue
        taken = final[final["outcome"] == "learned"]
        if taken.empty:
            skipped.append(Part(name, NOT_SHOWN, note=f"none of its {len(final)} runs learned"))
            continue
        start = rates[(rates["snapshot"].astype(str) == "0") & rates["run_id"].isin(taken["run_id"])]
        found.append((name, taken, start))
    return found, tuple(read), skipped


def geometric(ev: Evidence) -> Judged:
    found, read, parts = _trained(ev)
    for name, final, _ in found:
        for _, point in final.iterrows():
            label = f"{name}, {point['run_id']}"
            fitted = curve_fit(ev, name, point)
            if fitted is None:
                parts.append(Part(label, NOT_SHOWN, note="fewer than three distances to fit"))
                continue
            ok = fitted.r_squared >= GEOMETRIC_R2 and fitted.slope.high < 0
            value = f"rate {interval(fitted.slope)}, R² {fitted.r_squared:.3f} over distances {int(point['fit_from'])}–{int(point['fit_to'])}"
            note = (
                ""
                if ok
                else ("not a straight line in log-norm" if fitted.r_squared < GEOMETRIC_R2 else "no measurable decay")
            )
            parts.append(Part(label, HOLDS if ok else FAILS, value, note))
    return Judged(read, tuple(parts))


def not_held(ev: Evidence) -> Judged:
    found, read, parts = _trained(ev)
    for name, final, start in found:
        rho_start = start.groupby([k for k in final.columns if k == "run_id"])["rho"].first() if len(start) else None
        for setting, iv, how in rate_intervals(ev, name, final):
            label = _label(name, {k: v for k, v in setting.items() if k not in ("snapshot", "family")}, tuple(setting))
            if iv is None:
                parts.append(Part(label, NOT_SHOWN, note=how))
                continue
            chosen = final
            for key, value in setting.items():
                chosen = chosen[chosen[key].astype(str) == str(value)]
            rho = (
                f", ρ(U) {num(float(rho_start.reindex(chosen['run_id']).mean()))} → {num(float(chosen['rho'].mean()))}"
                if rho_start is not None and len(rho_start)
                else ""
            )
            at_edge = stats.direction(iv) == stats.NO_CHANGE
            value = f"rate {interval(iv)} {how}{rho}"
            parts.append(
                Part(label, FAILS if at_edge else HOLDS, value, "within noise of the edge (rate 0)" if at_edge else "")
            )
    return Judged(read, tuple(parts))


def _forward(table: pd.DataFrame) -> pd.DataFrame:
    """The move of h_{1+d} per unit move of x_1, exact (the Jacobian-vector product): the forward twin of _backward."""
    return table[(table["direction"] == "forward") & (table["method"] == "jvp") & (table["quantity"] == "h")]


def forward_carries(ev: Evidence) -> Judged:
    """Per analysis of trained runs, final weights: the rate of the forward move of the state minus the rate of the
    backward gradient, network by network (both fitted on the same windows), over the seeds."""
    found, read, parts = _trained(ev)
    for name, final, _ in found:
        keys = [k for k in ev.analysis(name)["keys"] if k in final.columns and k != "snapshot"]
        forward = _forward(ev.rates(name))
        forward = forward[forward["snapshot"].astype(str) == FINAL][[*keys, "rate"]]
        paired = final[[*keys, "rate"]].merge(forward, on=keys, suffixes=("_backward", "_forward"))
        paired = paired[np.isfinite(paired["rate_backward"]) & np.isfinite(paired["rate_forward"])]
        gaps = paired["rate_forward"] - paired["rate_backward"]
        iv = stats.mean_interval(gaps)
        if iv is None:
            parts.append(Part(name, NOT_SHOWN, note=f"{len(paired)} trained network with both rates; needs two seeds"))
            continue
        seen = stats.direction(iv)
        value = (
            f"rate forward {num(float(paired['rate_forward'].mean()))}, backward "
            f"{num(float(paired['rate_backward'].mean()))}, forward − backward {interval(iv)} over {len(paired)} seeds"
        )
        note = (
            "" if seen == "above" else ("the same rate" if seen == stats.NO_CHANGE else "the forward move fades faster")
        )
        parts.append(Part(name, HOLDS if seen == "above" else FAILS, value, note))
    return Judged(read, tuple(parts))
