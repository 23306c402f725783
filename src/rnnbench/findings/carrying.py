"""The chapter's claim that a recurrent network carries what it cannot be trained to use, judged on the decoding
probes (analyses with role ``state_carries``: a linear classifier reading the head noun's number from the state
at each distance after the noun, on held-out sentences, beside the gradient that reaches the same distance).

    forward_carries   where the gradient reaching the noun has fallen by FALL or more, the probe still reads the
                      noun's number measurably above chance, over the seeds of trained networks that learned

A probe that reads the state says what the state holds; a Jacobian-vector product would not: its decay rate and
the backward gradient's are the same product of Jacobians, one transposed, so they agree by construction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.policy import ABOVE, MARGINS
from rnnbench.findings.registry import NOT_SHOWN, Judged, Part, interval, num

ROLE = "state_carries"
FINAL = "final"
FALL = 100.0  # "orders of magnitude": the gradient at the distance read is at most 1/FALL of its size at the noun


def far_distance(table: pd.DataFrame) -> int | None:
    """The farthest distance at which every network's gradient has fallen by FALL from distance 0 (None if none
    has): one distance for all seeds, so that their accuracies are a sample of one quantity."""
    far = []
    for _, network in table.groupby("run_id"):
        network = network.sort_values("distance")
        start = float(network["gradient_norm"].iloc[0])
        fallen = network[network["gradient_norm"] <= start / FALL]["distance"]
        far.append(int(fallen.max()) if len(fallen) else None)
    return None if not far or any(d is None for d in far) else min(far)


def forward_carries(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.analyses(ROLE):
        read.append(f"analyses/{name}")
        record = ev.analysis(name)
        table = ev.analysis_table(name, "probe")
        table = table[table["snapshot"].astype(str) == FINAL]
        runs = ev.runs(record["study"])[["run_id", "outcome"]]
        table = table.merge(runs, on="run_id", how="left")
        taken = learned(table)
        label = name
        if taken["run_id"].nunique() < 2:
            parts.append(Part(label, NOT_SHOWN, note=f"{taken['run_id'].nunique()} trained network learned; needs two"))
            continue
        distance = far_distance(taken)
        if distance is None:
            parts.append(Part(label, NOT_SHOWN, note=f"the gradient falls {num(FALL)}-fold at no distance measured"))
            continue
        at = taken[taken["distance"] == distance]
        above_chance = (at["accuracy"] - at["chance"]).to_numpy(dtype=float)
        test = policy.effect(above_chance, None, ABOVE, MARGINS["accuracy"].size)
        fallen = float(np.median(at["gradient_norm"] / _at_noun(taken, at)))
        value = (
            f"at distance {distance} (gradient {num(fallen)} of its size at the noun): accuracy "
            f"{num(float(at['accuracy'].mean()))} against chance {num(float(at['chance'].mean()))}, "
            f"above chance {interval(test.interval)} over {len(at)} seeds"
        )
        parts.append(Part.tested(label, (test,), value))
    return Judged(tuple(read), tuple(parts), "" if parts else "no decoding probe in this config")


def _at_noun(table: pd.DataFrame, at: pd.DataFrame) -> pd.Series:
    """Each network's gradient norm at distance 0, aligned with ``at``'s rows."""
    start = table[table["distance"] == 0].set_index("run_id")["gradient_norm"]
    return at["run_id"].map(start).to_numpy(dtype=float)
