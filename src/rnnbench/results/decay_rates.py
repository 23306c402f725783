"""The gradient-decay analyses' measured rates, each network counted once: the one computation of the rate of a
setting (an activation at a spectral radius, say) that every reader quotes.

Two analyses can measure the same network. In the default config decay_activation's tanh network at radius 0.9,
seed 0, is decay_radius's, and so is decay_lstm's Elman network at radius 1. Measured the same way, their rows
are the same numbers; a mean over the analyses' rows would count that network twice and weigh its seed above
the others.

    network_rates   the rates tables of several analyses, one row per network and measured quantity; the
                    analyses that measured the network named in ``analyses``
    setting_rates   per setting: the mean rate over its networks (seeds), their range and count, the means of
                    the values beside the rate (bounds, log rho(U), mean slope), and the analyses they came from
    backward_h      the rows of the rate the book quotes: ||dL/dh|| in one backward pass
    distinct_networks  how many networks the analyses measure, each counted once however often it is measured

A network is the same when it is built the same way and measured the same way: an untrained network by its
settings (rnnbench.config.analyses.UNTRAINED_KEYS), a study's run by its run id and snapshot; and by the
analysis's ``measure`` (corpus, split, window, dtype, seed, fit). Pure pandas, no torch: the book imports this.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rnnbench.config.analyses import UNTRAINED_KEYS

MEASURED = ("direction", "method", "quantity")  # what of the network a row measures
# What a network is, by the kind of network an analysis measures.
IDENTITY = {"untrained": UNTRAINED_KEYS, "study": ("run_id", "snapshot")}
# Two rows of one network measured one way are the same measurement; these tolerances allow only float noise.
SAME_RATE = {"rtol": 1e-6, "atol": 1e-9}
SEP = ", "  # between the names of the analyses of a network or setting


def _identity(record: Mapping[str, Any], rates: pd.DataFrame) -> pd.Series:
    """One string per row naming its network and how it was measured (the module docstring)."""
    kind = record["network"]
    cells = rates[list(IDENTITY[kind])].map(_cell).agg("|".join, axis=1)
    return kind + "|" + cells + "|" + json.dumps(record["measure"], sort_keys=True)


def _cell(value: Any) -> str:
    return "nan" if pd.isna(value) else str(value)  # an LSTM has no radius or activation: NaN, or None, alike


def distinct_networks(records: Sequence[Mapping[str, Any]]) -> int:
    """How many networks the analyses of ``records`` (analysis.json) measure, one however many analyses measure
    it and however they measure it."""
    return len(
        {
            (record["network"], *(_cell(point.get(key)) for key in IDENTITY[record["network"]]))
            for record in records
            for point in record["points"]
        }
    )


def network_rates(analyses: Mapping[str, tuple[Mapping[str, Any], pd.DataFrame]]) -> pd.DataFrame:
    """``analyses``: name -> (its analysis.json record, its rates.csv). One row per network and measured quantity
    (direction, method, quantity), the first analysis's row (by name) where several measured it, with
    ``network`` (untrained or study) and ``analyses`` (every analysis that measured it, sorted, comma-separated).

    Raises ValueError where two analyses measured the same network the same way and got different rates: one
    of them is stale, and no mean over the two is right."""
    frames = []
    for name in sorted(analyses):
        record, rates = analyses[name]
        if rates.empty:
            continue
        frames.append(rates.assign(analysis=name, network=record["network"], _key=_identity(record, rates)))
    if not frames:
        return pd.DataFrame(columns=[*MEASURED, "rate", "network", "analyses"])
    rows = pd.concat(frames, ignore_index=True)
    by = ["_key", *MEASURED]
    for _, same in rows.groupby(by, sort=False, dropna=False):
        rate = same["rate"].to_numpy(dtype=float)
        if not np.allclose(rate, rate[0], equal_nan=True, **SAME_RATE):
            named = SEP.join(same["analysis"])
            raise ValueError(f"{named} measured the same network the same way and got rates {list(rate)}: rebuild them")
    names = rows.groupby(by, sort=False, dropna=False)["analysis"].agg(lambda a: SEP.join(sorted(set(a))))
    first = rows.drop_duplicates(by).set_index(by)
    first["analyses"] = names
    return first.reset_index().drop(columns=["_key", "analysis"])


def backward_h(networks: pd.DataFrame) -> pd.DataFrame:
    """The rows of ||dL/dh_t|| measured in one backward pass: the rate of the chapter's gradient."""
    chosen = (networks["direction"] == "backward") & (networks["method"] == "one_pass") & (networks["quantity"] == "h")
    return networks[chosen].reset_index(drop=True)


def setting_rates(networks: pd.DataFrame, by: Sequence[str], beside: Sequence[str] = ()) -> pd.DataFrame:
    """Per setting (the columns ``by``; a network without one, an LSTM's radius, is its own NaN setting), in the
    order first seen: ``measured``, the mean rate over its networks; ``lowest`` and ``highest``; ``networks``,
    how many; the mean of each column of ``beside``; and ``analyses``, every analysis they came from.

    ``networks`` is network_rates' table (or a part of it), one row per network: no network is counted twice."""
    by = list(by)
    columns = [*by, "measured", "lowest", "highest", "networks", *beside, "analyses"]
    if networks.empty:
        return pd.DataFrame(columns=columns)
    grouped = networks.groupby(by, sort=False, dropna=False)
    table = grouped.agg(
        measured=("rate", "mean"),
        lowest=("rate", "min"),
        highest=("rate", "max"),
        networks=("rate", "size"),
        **{column: (column, "mean") for column in beside},
        analyses=("analyses", lambda a: SEP.join(sorted({n for names in a for n in names.split(SEP)}))),
    )
    return table.reset_index()[columns]
