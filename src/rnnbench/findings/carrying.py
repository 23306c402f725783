"""The chapter's claim that a recurrent network carries what it cannot be trained to use, its carrying half judged on
the decoding probes (analyses with role ``state_carries``, rnnbench.decay.probe: a linear classifier reading the head noun's
number from the state d steps after the noun, held-out sentences, beside the gradient of the verb's loss that
crosses the same d steps, relative to its size at d = 0).

    forward_carries   at the farthest distance measured, where the gradient has fallen FALL-fold or more in every
                      network, the probe reads the noun's number measurably above chance on the sentences whose
                      nearest noun has the other number, over the seeds of trained networks that learned; and the
                      same probe on shuffled labels, the negative control, is not above chance there (by more
                      than the margin)

    trained      "cannot be trained to use information from far back": not tested here, a part not shown. The
                 probed networks were trained with full backpropagation through time and learned the agreement, so
                 they show what the state is capable of carrying, not what training cannot reach.

A probe that reads the state says what the state holds; a Jacobian-vector product would not: its decay rate and
the backward gradient's are the same product of Jacobians, one transposed, so they agree by construction.
"""

from __future__ import annotations

import pandas as pd

from rnnbench.findings import policy
from rnnbench.findings.evidence import Evidence, learned
from rnnbench.findings.policy import ABOVE, MARGINS
from rnnbench.findings.registry import NOT_SHOWN, Judged, Part
from rnnbench.findings.setting_words import corpus, words
from rnnbench.numbers import interval, significant

ROLE = "state_carries"
FINAL = "final"
FALL = 10.0  # an order of magnitude at least: the gradient at the distance read is at most 1/FALL of its size at d = 0
# The sentences whose nearest noun has the other number: there reading the nearest noun is always wrong, so a probe
# above chance reads the head itself.
SUBSET = "attractor"
ACCURACY_MARGIN = MARGINS["accuracy"].size
# The claim's other half, which a probe of networks that learned the dependency cannot test.
UNTESTED = "cannot be trained to use it"
UNTESTED_WHY = (
    "not tested here: the probed networks were trained with full backpropagation through time and learned the "
    "agreement, so they show that the state carries the number, not that training cannot use it"
)


def far_distance(table: pd.DataFrame) -> int | None:
    """The farthest distance at which every network's gradient has fallen FALL-fold (gradient_relative <=
    1/FALL), None where one never has: one distance for all seeds, so that theirs is a sample of one quantity."""
    far = []
    for _, network in table.groupby("run_id"):
        fallen = network[network["gradient_relative"] <= 1 / FALL]["distance"]
        if fallen.empty:
            return None
        far.append(int(fallen.max()))
    return min(far) if far else None


def forward_carries(ev: Evidence) -> Judged:
    parts, read = [], []
    for name in ev.analyses(ROLE):
        read.append(f"analyses/{name}")
        record = ev.analysis(name)
        table = ev.analysis_table(name, "probe")
        table = table[(table["snapshot"].astype(str) == FINAL) & (table["subset"] == SUBSET)]
        runs = ev.runs(record["study"])[["run_id", "outcome"]]
        where = words(record.get("where") or {})
        label = ", ".join(filter(None, (corpus(str(ev.study(record["study"]).get("corpus", ""))), where, "trained")))
        table = learned(table.merge(runs, on="run_id", how="left"))
        true, shuffled = table[table["labels"] == "true"], table[table["labels"] == "shuffled"]
        networks = true["run_id"].nunique()
        if networks < 2:
            parts.append(Part(label, NOT_SHOWN, note=f"{networks} trained network learned; needs two", source=name))
            continue
        distance = far_distance(true)
        if distance is None:
            note = f"in some network the gradient falls {significant(FALL)}-fold at no distance measured"
            parts.append(Part(label, NOT_SHOWN, note=note, source=name))
            continue
        at = true[true["distance"] == distance]
        control = shuffled[shuffled["distance"] == distance]
        carries = policy.effect(at["accuracy"] - at["chance"], None, ABOVE, ACCURACY_MARGIN)
        tests = [carries]
        value = (
            f"at distance {distance}, sentences whose nearest noun has the other number (on them the gradient "
            f"{significant(float(at['gradient_relative'].mean()))} of its size at the verb): accuracy {significant(float(at['accuracy'].mean()))} against chance {significant(float(at['chance'].mean()))}, "
            f"above chance {interval(carries.interval)} over {len(at)} seeds"
        )
        # The control must not read above chance; below it is no leak (a label-blind probe scores p^2 + (1-p)^2,
        # under the majority rate where the classes are uneven), so the harm is on one side.
        checked = policy.no_effect(control["accuracy"] - control["chance"], None, ABOVE, ACCURACY_MARGIN)
        if checked is not None:
            tests.append(checked)
            value += f"; shuffled labels, above chance {interval(checked.interval)}"
        parts.append(Part.tested(label, tests, value, source=name))
    if parts:
        parts.append(Part(UNTESTED, NOT_SHOWN, note=UNTESTED_WHY))
    return Judged(tuple(read), tuple(parts), "" if parts else "no decoding probe in this config")
