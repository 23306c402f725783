"""Which of the alternative sentences of the chapter "Do gradients vanish and explode?" (reports/gradients.qmd) its
results call for (rnnbench.book.conditions), and the verdict words of the activations measured above the edge. The
sentences are the chapter's; the values it reads are rnnbench.book.decay's.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from rnnbench.book import decay
from rnnbench.book.format import Markdown, sig_words


@dataclass(frozen=True)
class Saturation:
    """How hard two networks' units saturate, by their mean tanh' (rnnbench.book.decay.saturation_verdict)."""

    alike: bool
    more: bool  # the first saturates more: its mean slope is the smaller
    less: bool


def saturation(first: float, second: float) -> Saturation:
    verdict = decay.saturation_verdict(first, second)
    return Saturation(alike=verdict == "alike", more=verdict == "here", less=verdict == "there")


@dataclass(frozen=True)
class AboveEdge:
    """What an activation's gradient does above the edge, rho(U) > 1 (rnnbench.book.decay.above_edge)."""

    still_vanishes: bool
    grows_slower: bool  # grows, but more slowly than log rho(U)
    grows: bool
    unmeasured: bool


def above_edge(rows: pd.DataFrame) -> AboveEdge:
    """``rows``: one activation's rows of decay.above_edge (none: not measured)."""
    verdict = rows["verdict"].iloc[0] if len(rows) else ""
    return AboveEdge(
        still_vanishes=verdict == decay.STILL_VANISHES,
        grows_slower=verdict == decay.GROWS_SLOWER,
        grows=verdict == decay.GROWS,
        unmeasured=verdict == "",
    )


ABOVE_EDGE_WORDS = {
    decay.STILL_VANISHES: "still vanishes at $\\rho(U) =$ {radii}",
    decay.GROWS_SLOWER: "grows, but more slowly than $\\log \\rho(U)$ says",
    decay.GROWS: "grows as fast as $\\log \\rho(U)$ says, or faster",
}


def vanishing_radii(rows: pd.DataFrame) -> Markdown:
    """The radii above the edge at which the measured gradient still shrinks."""
    return sig_words(rows.loc[rows["measured"] < 0, "radius"])


def other_activations(others: pd.DataFrame) -> Markdown:
    """Each activation but tanh measured above the edge, with its verdict in words; "none" where there is none."""
    said = [
        f"with {activation} it " + ABOVE_EDGE_WORDS[rows["verdict"].iloc[0]].format(radii=vanishing_radii(rows))
        for activation, rows in others.groupby("activation", sort=False)
    ]
    return Markdown("; ".join(said) or "none")


@dataclass(frozen=True)
class Passages:
    """The flags of the chapter's alternative sentences, each computed in the chapter from its tables."""

    all_match: bool  # every worked number of the forty-seven word example matches the chapter's
    full_passes: bool  # full BPTT's hand gradient agrees with autograd and with finite differences
    shrank_all: bool  # the Jacobian product had shrunk below one by the last step at every radius
    measured_grows: bool  # the measured untrained gradient grows above the edge (at the radius both measure)
    wide_grows: bool  # the wide network's product grows at some radius
    small_saturation: Saturation  # the small network against the measured ones, at that radius
    width_decides: bool
    wide_saturation: Saturation  # the wide network against the small one, at the largest radius
    wide_short: bool  # the wide product's rate falls short of the measured gradient's
    same_width: bool  # the wide network is as wide as the measured ones
    below_grows: bool  # below the edge, the gradient grows at some radius
    tanh: AboveEdge
    loose: bool  # some bound stands above zero where the measured gradient shrinks (decay.loose_bound)
    small_shrinks: bool  # the small network's product shrinks at every radius
