"""The chapter's claims about how the gradient decays, judged on the gradient-decay analyses by role.

    radius          (untrained tanh networks, U rescaled)   |lambda| < 1 vanishes, |lambda| > 1 explodes; the
                    trained networks (role trained_decay) whose rho(U) ends above 1 are read for explosion too
    activation      (untrained networks of each activation) the sigmoid divides the gradient by at least 4 a step
    trained_decay   (a study's trained runs)                decay is geometric; training does not hold |lambda| at 1

The rate is the slope of log ||dL/dh_{T-d}|| against the distance d (rnnbench.decay.rates: 0 is the edge,
below 0 vanishing), one per network. A setting's rates are tested over its seeds (rnnbench.findings.policy,
margin MARGINS["decay rate"]); a setting of one network is not shown: the error of one network's fit over its
distances is not a replication.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence
from rnnbench.findings.policy import ABOVE, BELOW, EITHER, MARGINS
from rnnbench.findings.registry import FAILS, HOLDS, NOT_SHOWN, Judged, Part
from rnnbench.findings.setting_words import corpus, words
from rnnbench.numbers import interval, significant

# A curve is geometric when a straight line explains this much of log-norm's variance over the fitted distances.
GEOMETRIC_R2 = 0.9
FINAL = "final"
RATE_MARGIN = MARGINS["decay rate"].size
ONE_NETWORK = "one network: a fit's error over its distances is not a replication; the setting needs seeds"


def _backward(table: pd.DataFrame) -> pd.DataFrame:
    return table[(table["direction"] == "backward") & (table["method"] == "one_pass") & (table["quantity"] == "h")]


def backward_rates(ev: Evidence, name: str) -> pd.DataFrame:
    """The analysis's measured rates of dL/dh, one row per network (its keys, rate, rho, fit range)."""
    return _backward(ev.rates(name)).reset_index(drop=True)


def curve_fit(ev: Evidence, name: str, point: pd.Series) -> policy.Fit | None:
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
    return policy.fit(used["distance"], np.log(used["geo_mean"]))


def setting_rates(keys: list[str], rates: pd.DataFrame) -> list[tuple[dict, pd.DataFrame]]:
    """Per network setting (``keys`` but seed and run): its networks with a finite rate, one row each."""
    keys = [k for k in keys if k not in ("seed", "run_id") and k in rates.columns]
    out = []
    for values, group in rates.groupby(keys, sort=False, dropna=False) if keys else [((), rates)]:
        values = values if isinstance(values, tuple) else (values,)
        out.append((dict(zip(keys, values, strict=True)), group[np.isfinite(group["rate"])]))
    return out


def _networks(ev: Evidence, name: str) -> str:
    """What an analysis measured, in words: "untrained", or the corpus its study's networks were trained on."""
    study = ev.analysis(name).get("study")
    return "untrained" if study is None else corpus(str(ev.study(study).get("corpus", "")))


def _label(ev: Evidence, name: str, setting: dict, shown: tuple[str, ...]) -> str:
    """A part's label: the analysis's networks (_networks) and the settings ``shown``, in words (no analysis key)."""
    said = words({k: v for k, v in setting.items() if k in shown})
    return ", ".join(filter(None, (_networks(ev, name), said)))


def _untrained(ev: Evidence, role: str, keep) -> tuple[list[tuple[str, dict, pd.DataFrame]], tuple]:
    found, read = [], []
    for name in ev.analyses(role):
        read.append(f"analyses/{name}")
        if ev.analysis(name).get("network") != "untrained":
            continue
        rates = backward_rates(ev, name)
        rates = rates[keep(rates)]
        found += [(name, *row) for row in setting_rates(ev.analysis(name)["keys"], rates)]
    return found, tuple(read)


def _elman_tanh(rates: pd.DataFrame) -> pd.Series:
    return rates["family"].eq("rnn") & rates["activation"].eq("tanh")


def _rate_part(label: str, networks: pd.DataFrame, side: str, extra: str = "", source: str = "") -> Part:
    """The rates of one setting's networks on ``side`` of 0 (beyond the margin), over its seeds."""
    test = policy.effect(networks["rate"], None, side, RATE_MARGIN)
    if test is None:
        return Part(label, NOT_SHOWN, note=ONE_NETWORK if len(networks) == 1 else "no finite rate", source=source)
    value = (
        f"rate {interval(test.interval)} over {len(networks)} seeds, "
        f"per-step factor {significant(math.exp(test.interval.estimate))}{extra}"
    )
    return Part.tested(label, (test,), value, source=source)


def _radius_claim(ev: Evidence, side: str) -> Judged:
    below = side == BELOW
    found, read = _untrained(
        ev, "radius", lambda r: _elman_tanh(r) & (r["radius"].lt(1) if below else r["radius"].gt(1))
    )
    parts = [
        _rate_part(_label(ev, name, setting, ("radius", "hidden")), networks, side, source=name)
        for name, setting, networks in found
    ]
    if not below:  # a trained network whose rho(U) ended above 1 is a case of the claim too
        trained, more, _ = _trained(ev)
        read = tuple(dict.fromkeys((*read, *more)))
        for name, final, _ in trained:
            for setting, networks in setting_rates(ev.analysis(name)["keys"], final):
                above = networks[networks["rho"] > 1]
                if above.empty:
                    continue
                label = _label(ev, name, {k: v for k, v in setting.items() if k != "snapshot"}, tuple(setting))
                rho = f", ρ(U) {significant(float(above['rho'].min()))} to {significant(float(above['rho'].max()))}"
                parts.append(_rate_part(f"{label}, trained", above, side, rho, source=name))
    reason = "" if parts else f"no tanh network with spectral radius {'below' if below else 'above'} 1 in the analyses"
    return Judged(read, tuple(parts), reason)


def vanish(ev: Evidence) -> Judged:
    return _radius_claim(ev, BELOW)


def explode(ev: Evidence) -> Judged:
    return _radius_claim(ev, ABOVE)


QUARTER = math.log(0.25)


def sigmoid_quarter(ev: Evidence) -> Judged:
    """The per-step factor of each sigmoid setting no larger than 1/4 beyond the margin, over its seeds: the rate
    against log(1/4)."""
    found, read = _untrained(ev, "activation", lambda r: r["activation"].eq("sigmoid"))
    parts = []
    for name, setting, networks in found:
        label = _label(ev, name, setting, ("radius", "hidden"))
        test = policy.no_effect(networks["rate"], None, ABOVE, RATE_MARGIN, against=QUARTER)
        if test is None:
            note = ONE_NETWORK if len(networks) == 1 else "no finite rate"
            parts.append(Part(label, NOT_SHOWN, note=note, source=name))
            continue
        iv = test.interval
        factors = (
            f"{significant(math.exp(iv.estimate))} [{significant(math.exp(iv.low))}, {significant(math.exp(iv.high))}]"
        )
        parts.append(Part.tested(label, (test,), f"per-step factor {factors} over {len(networks)} seeds", source=name))
    return Judged(read, tuple(parts), "" if parts else "no sigmoid network in the analyses with role activation")


def _trained(ev: Evidence) -> tuple[list[tuple[str, pd.DataFrame, pd.DataFrame]], tuple[str, ...], list[Part]]:
    """Per analysis of role trained_decay: its final-snapshot rates of learned runs, the initialisation's
    rates, and a part for each analysis whose runs did not learn."""
    found, read, skipped = [], [], []
    for name in ev.analyses("trained_decay"):
        record = ev.analysis(name)
        read.append(f"analyses/{name}")
        if record.get("study") is None:
            skipped.append(Part("untrained networks", NOT_SHOWN, note="measures untrained networks", source=name))
            continue
        runs = ev.runs(record["study"])[["run_id", "outcome"]]
        rates = backward_rates(ev, name).merge(runs, on="run_id", how="left")
        final = rates[rates["snapshot"].astype(str) == FINAL]
        if final.empty:
            label = f"{_networks(ev, name)}, trained"
            skipped.append(Part(label, NOT_SHOWN, note="no final snapshot measured", source=name))
            continue
        taken = final[final["outcome"] == "learned"]
        if taken.empty:
            note = f"none of its {len(final)} runs learned"
            skipped.append(Part(f"{_networks(ev, name)}, trained", NOT_SHOWN, note=note, source=name))
            continue
        start = rates[(rates["snapshot"].astype(str) == "0") & rates["run_id"].isin(taken["run_id"])]
        found.append((name, taken, start))
    return found, tuple(read), skipped


def geometric(ev: Evidence) -> Judged:
    """Per trained setting: the rate below 0 over its seeds, and every network's log-norm a straight line
    (R² of its own fit at least GEOMETRIC_R2, a check on each network, not a test)."""
    found, read, parts = _trained(ev)
    for name, final, _ in found:
        for setting, networks in setting_rates(ev.analysis(name)["keys"], final):
            label = _label(ev, name, {k: v for k, v in setting.items() if k != "snapshot"}, tuple(setting))
            fits = [curve_fit(ev, name, point) for _, point in networks.iterrows()]
            fits = [f for f in fits if f is not None]
            if fits:
                lowest = min(f.r_squared for f in fits)
                straight = lowest >= GEOMETRIC_R2
                note = "" if straight else "not a straight line in log-norm"
                value = f"smallest R² {lowest:.3f} of {len(fits)} networks"
                verdict = HOLDS if straight else FAILS
                parts.append(Part(f"{label}, straight", verdict, value, note, aspect="geometric", source=name))
            part = _rate_part(f"{label}, decays", networks, BELOW, source=name)
            parts.append(Part(part.label, part.verdict, part.value, part.note, "decays", part.tests, source=name))
    return Judged(read, tuple(parts))


def not_held(ev: Evidence) -> Judged:
    found, read, parts = _trained(ev)
    for name, final, start in found:
        rho_start = start.groupby("run_id")["rho"].first() if len(start) else None
        for setting, networks in setting_rates(ev.analysis(name)["keys"], final):
            shown = {k: v for k, v in setting.items() if k not in ("snapshot", "family")}
            label = _label(ev, name, shown, tuple(setting))
            test = policy.effect(networks["rate"], None, EITHER, RATE_MARGIN)
            if test is None:
                note = ONE_NETWORK if len(networks) == 1 else "no finite rate"
                parts.append(Part(label, NOT_SHOWN, note=note, source=name))
                continue
            rho = (
                f", ρ(U) {significant(float(rho_start.reindex(networks['run_id']).mean()))} → {significant(float(networks['rho'].mean()))}"
                if rho_start is not None and len(rho_start)
                else ""
            )
            value = f"rate {interval(test.interval)} over {len(networks)} seeds{rho}"
            parts.append(Part.tested(label, (test,), value, source=name))
    return Judged(read, tuple(parts))
