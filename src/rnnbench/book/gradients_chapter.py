"""The values of the chapter "Do gradients vanish and explode?" (reports/gradients.qmd), as its sentences print them,
and which of its alternative sentences the results call for (rnnbench.book.conditions).

    powers()            "How fast, in numbers": the chapter's per-step factors raised to a distance
    bptt_check()        "The gradients, checked": full BPTT and the chapter's per-step formulas against two oracles
    jacobian()          "How the gradient decays with distance": the product of Jacobians of a small network
    trained_clipping()  how the runs whose trained networks the analyses measure clipped their gradients
    passages()          the flags of every alternative sentence of the chapter

The sentences are the chapter's; the measured networks' values are rnnbench.book.decay's. No torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench.book import decay, recipe_clipping
from rnnbench.book import results as res
from rnnbench.book.format import (
    NONE,
    Markdown,
    between,
    fixed,
    humanize,
    integer,
    percent,
    sci,
    share,
    sig,
    sig_words,
    words,
)
from rnnbench.findings.setting_words import word

# The distances of the powers table: the chapter's 47 and 50, and a few on either side.
SHOWN_DISTANCES = (1, 5, 10, 20, 47, 50, 100)
# The worked example the chapter carries through its text: a factor of 0.9.
WORKED_FACTOR = 0.9


@dataclass(frozen=True)
class Powers:
    """The chapter's arithmetic of decay: tables/decay.csv (factor ** distance) and tables/decay_47_words.csv (the
    chapter's printed powers against ours)."""

    factors: int  # how many per-step factors the table raises
    max_distance: int
    factor: Markdown  # the worked factor, 0.9
    distance: int  # the distance the chapter reads it at
    remaining: Markdown  # the share of the signal left there
    removed: Markdown
    chapter_bound: Markdown  # the chapter's "more than N%"
    left_at_max: Markdown  # what the factor leaves at the table's largest distance
    passage_distance: int  # where the forty-seven word example puts its evidence
    printed: int  # the chapter's printed powers
    all_match: bool
    table: pd.DataFrame  # the powers at SHOWN_DISTANCES, one column per factor
    printed_table: pd.DataFrame  # the chapter's printed powers against ours


def powers(results: str | Path | None = None) -> Powers:
    decay_table = res.table("decay", results=results)
    forty_seven = res.table("decay_47_words", text=["claimed", "computed_as_printed"], results=results)
    wide = decay_table[decay_table["distance"].isin(SHOWN_DISTANCES)].pivot(
        index="distance", columns="factor", values="value"
    )
    wide = wide.reset_index()
    wide.columns = ["distance"] + [f"{f:g}" for f in wide.columns[1:]]
    worked = forty_seven[forty_seven["factor"] == WORKED_FACTOR].iloc[0]
    max_distance = int(decay_table["distance"].max())
    at_max = decay_table[(decay_table["factor"] == WORKED_FACTOR) & (decay_table["distance"] == max_distance)]
    passage = forty_seven[forty_seven["example"] == "47-word passage"]
    return Powers(
        factors=int(decay_table["factor"].nunique()),
        max_distance=max_distance,
        factor=fixed(worked["factor"], 1),
        distance=int(worked["distance"]),
        remaining=percent(worked["remaining_percent"], 2),
        removed=percent(worked["removed_percent"], 2),
        chapter_bound=Markdown(worked["claimed"].split("%")[0].lstrip("> ") + "%"),
        left_at_max=sig(at_max["value"].iloc[0], 2),
        passage_distance=int(passage["distance"].iloc[0]),
        printed=len(forty_seven),
        all_match=bool(forty_seven["matches"].all()),
        table=wide,
        printed_table=forty_seven[["example", "factor", "distance", "claimed", "computed_as_printed", "matches"]],
    )


# How the gradient check's table names its two computations.
VARIANTS = {"bptt_full": "full BPTT", "chapter_per_step": "chapter's per-step formulas"}


@dataclass(frozen=True)
class BpttCheck:
    """tables/bptt_gradient_check.csv: the hand gradients of full BPTT and of the chapter's per-step formulas
    summed over time, each against autograd and central finite differences."""

    classes: int
    hidden: int
    embed: int
    full_passes: bool  # full BPTT agrees with both oracles for every parameter
    full_vs_autograd: Markdown  # its largest relative error against each
    full_vs_fd: Markdown
    exact: Markdown  # the parameters the per-step formulas get right ("$V$ and $b_y$")
    exact_error: Markdown  # their largest relative error
    wrong: Markdown  # the others, each with its relative error ("$U$ by 0.63, ...")
    table: pd.DataFrame  # relative errors per computation and parameter, and whether each passes


def bptt_check(results: str | Path | None = None) -> BpttCheck:
    check = res.table("bptt_gradient_check", results=results)
    shape = check.drop_duplicates("parameter").set_index("parameter")["shape"]
    classes, hidden = (int(n) for n in shape["V"].split("x"))
    full = check[check["variant"] == "bptt_full"]
    per_step = check[(check["variant"] == "chapter_per_step") & (check["reference"] == "autograd")]
    per_step = per_step.set_index("parameter")
    exact = [p for p in per_step.index if per_step.loc[p, "passes"]]
    wrong = [p for p in per_step.index if not per_step.loc[p, "passes"]]
    table = check.pivot_table(
        index=["variant", "parameter", "shape"], columns="reference", values="rel_error", sort=False
    ).reset_index()
    table.columns.name = None
    passes = check.groupby(["variant", "parameter"], sort=False)["passes"].all().reset_index()
    table = table.merge(passes, on=["variant", "parameter"])
    table["variant"] = table["variant"].map(lambda v: VARIANTS.get(v, humanize(v)))
    table["parameter"] = table["parameter"].map(lambda p: Markdown(f"${p}$"))  # the symbols the equations use
    table["shape"] = table["shape"].str.replace("x", " × ")
    return BpttCheck(
        classes=classes,
        hidden=hidden,
        embed=int(shape["W"].split("x")[1]),
        full_passes=bool(full["passes"].all()),
        full_vs_autograd=sci(full.loc[full["reference"] == "autograd", "rel_error"].max()),
        full_vs_fd=sci(full.loc[full["reference"] == "finite_difference", "rel_error"].max()),
        exact=words(f"${p}$" for p in exact),
        exact_error=sci(per_step.loc[exact, "rel_error"].max() if exact else float("nan")),
        wrong=words(f"${p}$ by {fixed(per_step.loc[p, 'rel_error'], 2)}" for p in wrong),
        table=table,
    )


@dataclass(frozen=True)
class Jacobian:
    """tables/jacobian_product.csv: the product of Jacobians of a seeded network with U rescaled to several spectral
    radii, and tables/jacobian_width.csv: the same recipe at two widths beside the measured untrained networks."""

    radii: Markdown
    max_distance: int
    agreement: Markdown  # autograd against the explicit product: the largest relative difference
    largest: Markdown  # the largest radius, the product there at the last step, and U's power there
    largest_product: Markdown
    largest_power: Markdown
    shrank_all: bool  # the product had shrunk below one by the last step at every radius
    grown: Markdown  # the radii at which it had grown
    fit_from: int  # the distance the rate is fitted from
    beside: decay.WorkedBeside
    wide_growing: Markdown  # the radii at which the wide network's product grows
    table: pd.DataFrame  # per radius: the product at a few distances, U's power, the rate and the mean tanh'
    headers: dict[str, Markdown]  # the table's columns in the equations' symbols


def jacobian(results: str | Path | None = None) -> Jacobian:
    product = res.table("jacobian_product", results=results)
    product = product.assign(radius=product["spectral_radius"].round(2))
    width = res.table("jacobian_width", results=results)
    radii = sorted(product["radius"].unique())
    max_distance = int(product["distance"].max())
    at_end = product[product["distance"] == max_distance].set_index("radius")
    grown = [r for r in radii if at_end.loc[r, "jacobian_norm"] > 1]
    beside = decay.worked_beside_measured(width, decay.untrained_rates(results))
    rates = beside.table.set_index("radius")
    rows = []
    tenth = min(10, max_distance)
    for r in radii:
        at = product[product["radius"] == r].set_index("distance")
        rows.append(
            {
                "radius": r,
                "first": at.loc[1, "jacobian_norm"],
                "tenth": at.loc[tenth, "jacobian_norm"],
                "last": at.loc[max_distance, "jacobian_norm"],
                "power": at.loc[max_distance, "u_power_norm"],
                "rate": rates.loc[r, "small_rate"],
                "slope": at["mean_tanh_slope"].mean(),
            }
        )
    largest = max(radii)
    return Jacobian(
        radii=words(f"{r:g}" for r in radii),
        max_distance=max_distance,
        agreement=sci(product["rel_diff"].max()),
        largest=Markdown(f"{largest:g}"),
        largest_product=sig(at_end.loc[largest, "jacobian_norm"]),
        largest_power=sig(at_end.loc[largest, "u_power_norm"]),
        shrank_all=not grown,
        grown=words(f"{r:g}" for r in grown) or NONE,
        fit_from=int(width["fit_from"].min()),
        beside=beside,
        wide_growing=words(f"{r:g}" for r in rates.index[rates["wide_rate"] > 0]) or NONE,
        table=pd.DataFrame(rows),
        # \Vert, not \|: a pipe table reads any | as a cell's end, an escaped one as a bare |
        headers={
            "radius": Markdown("spectral radius of $U$"),
            "first": Markdown(r"$\Vert\partial h_1/\partial h_0\Vert$"),
            "tenth": Markdown(rf"$\Vert\partial h_{{{tenth}}}/\partial h_0\Vert$"),
            "last": Markdown(rf"$\Vert\partial h_{{{max_distance}}}/\partial h_0\Vert$"),
            "power": Markdown(rf"$\Vert U^{{{max_distance}}}\Vert$"),
            "rate": Markdown("rate a step"),
            "slope": Markdown(r"mean $\tanh'$"),
        },
    )


@dataclass(frozen=True)
class TrainedClipping:
    """The clipping of the runs the gradient analyses read trained networks from (rnnbench.book.recipe_clipping)."""

    runs: Markdown  # how many of them clipped the global gradient norm
    thresholds: Markdown
    shares: Markdown  # the share of a run's steps the threshold acted on, lowest to highest
    regimes: Markdown  # runs per regime


def trained_clipping(results: str | Path | None = None) -> TrainedClipping:
    records = [res.analysis_record(name, results) for name in res.analysis_names(results)]
    found = recipe_clipping.recipe_clipping([r["study"] for r in records if r.get("study")], results)
    return TrainedClipping(
        runs=integer(found.runs if found else 0),
        thresholds=words(sig(t) for t in found.thresholds) if found else NONE,
        shares=between(found.share_min, found.share_max, share) if found else NONE,
        regimes=recipe_clipping.tally(found),
    )


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
    """A sentence on each activation but tanh measured above the edge, its verdict in words ("In the untrained ReLU
    network it still vanishes at ..."); "No other activation is measured above the edge." where there is none."""
    said = [
        f"in the untrained {word('activation', activation)} network it "
        + ABOVE_EDGE_WORDS[rows["verdict"].iloc[0]].format(radii=vanishing_radii(rows))
        for activation, rows in others.groupby("activation", sort=False)
    ]
    text = "; ".join(said)
    return Markdown(f"{text[0].upper()}{text[1:]}." if said else "No other activation is measured above the edge.")


@dataclass(frozen=True)
class Passages:
    """The flags of the chapter's alternative sentences (passages())."""

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


def passages(results: str | Path | None = None) -> Passages:
    worked, check, product = powers(results), bptt_check(results), jacobian(results)
    beside = product.beside
    at, top = beside.at(beside.radius), beside.at(beside.largest)
    untrained = decay.untrained_rates(results)
    below, above = decay.below_edge(untrained), decay.above_edge(untrained)
    return Passages(
        all_match=worked.all_match,
        full_passes=check.full_passes,
        shrank_all=product.shrank_all,
        measured_grows=bool(at["measured_rate"] > 0),
        wide_grows=bool((beside.table["wide_rate"] > 0).any()),
        small_saturation=saturation(at["small_slope"], at["measured_slope"]),
        width_decides=bool(beside.width_decides),
        wide_saturation=saturation(top["wide_slope"], top["small_slope"]),
        wide_short=bool(at["wide_rate"] < at["measured_rate"]),
        same_width=beside.wide == beside.hidden,
        below_grows=bool(below["grows"].any()),
        tanh=above_edge(above[(above["family"] == "rnn") & (above["activation"] == "tanh")]),
        loose=decay.loose_bound(untrained) is not None,
        small_shrinks=bool((beside.table["small_rate"].dropna() < 0).all()),
    )
