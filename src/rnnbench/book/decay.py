"""The decay chapter's values (reports/decay.qmd), from the analyses' results (results/analyses/<name>/, read
through rnnbench.book.results).

    networks            every network the gradient-decay analyses measured, once, with the analyses that did
    network_count       how many networks every analysis together measures, each once
    backward_rates      one analysis's measured rate (backward, dL/dh) beside its bounds and log rho, seeds averaged
    untrained_rates     every untrained network's rates in one table: family, activation, radius, hidden
    trained_rates       every study-sourced network's rates: run, snapshot
    passage_rows        the passage's word "partner" (the evidence) per network
    analysis_section    one analysis's section: what it measured, its figure and its rates table
    worked_beside_measured  the worked Jacobian product at two widths beside the measured untrained networks

Rates are logs of the per-step factor (0: the edge, below 0: vanishing), as rnnbench.decay.rates writes them. A
network two analyses measured counts once (rnnbench.results.decay_rates): every rate of a setting this chapter
quotes is setting_rates' mean over distinct networks, whichever table or sentence quotes it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR, stage_figure
from rnnbench.book.format import NONE, Markdown, integer, label_slug, markdown_table, sig, words
from rnnbench.book.results import analysis_names, analysis_record, analysis_table, results_root, table
from rnnbench.numbers import plural
from rnnbench.results.decay_rates import SEP, backward_h, distinct_networks, network_rates, setting_rates

# What stands beside a measured rate (rnnbench.decay.rates): two upper bounds on it, and the chapter's eigenvalue
# story, the rate of a linear network (f' = 1) with the same U.
BESIDE = {
    "jacobian_bound": "bound: log mean ‖diag(f′) U‖",
    "pascanu_bound": "bound: log σ_max(U) max f′",
    "radius_rate": "log ρ(U)",
}
SNAPSHOT_NAMES = {"0": "at initialisation", "final": "at the end of training"}
SNAPSHOT_TEXT = ("snapshot",)  # "0" and "final" name snapshots: read as text, never as numbers
PASSAGE_WORDS = 47  # the length of the chapter's passage, over which its decay table raises each factor
UNTRAINED_SETTING = ["family", "activation", "radius", "hidden"]  # what a row of the untrained table is


# A radius rescaled to 1 is measured as 1 + 1e-8 or so (the power iteration's precision): its log, below this, is 0.
RADIUS_PRECISION = 1e-6


def log_radius(value: float) -> Markdown:
    """log ρ(U) as a table prints it: 0 where ρ(U) is 1 to the precision it is measured to, not 1.37 × 10⁻⁸."""
    return sig(0.0 if abs(value) < RADIUS_PRECISION else value)


def network_count(results: str | Path | None = None) -> int:
    """How many networks the analyses measure, each once however many analyses measure it."""
    return distinct_networks([analysis_record(name, results) for name in analysis_names(results)])


def networks(results: str | Path | None = None) -> pd.DataFrame:
    """Every network of every gradient-decay analysis, once: its keys, its measured rate of ||dL/dh|| and what
    stands beside it; ``network`` (untrained, study) and ``analyses``, the analyses that measured it."""
    analyses = {}
    for name in analysis_names(results):
        record = analysis_record(name, results)
        if record["kind"] == "gradient_decay":
            analyses[name] = (record, analysis_table(name, "rates", results, text=SNAPSHOT_TEXT))
    return backward_h(network_rates(analyses))


def backward_rates(name: str, results: str | Path | None = None) -> pd.DataFrame:
    """One row per network setting the analysis varies (seeds averaged): the measured rate, its range over seeds,
    the per-step factor it means, the two bounds, log rho(U), rho(U), and ``also``: the other analyses that
    measured its networks."""
    record = analysis_record(name, results)
    measured = networks(results)
    mine = measured[measured["analyses"].str.split(SEP).map(lambda names: name in names)]
    keys = [k for k in record["keys"] if k not in ("seed", "run_id") and (k in record["vary"] or k == "activation")]
    keys = [k for k in keys if k in mine.columns] or ["analysis"]
    # an LSTM has no radius or activation: NaN keys
    table = setting_rates(mine.assign(analysis=name), keys, beside=[*BESIDE, "rho"])
    order = backward_h(analysis_table(name, "rates", results, text=SNAPSHOT_TEXT).assign(analysis=name))[keys]
    table = order.drop_duplicates().merge(table, on=keys, how="left")  # the analysis's own order of its settings
    table.insert(len(keys) + 1, "factor", np.exp(table["measured"]))
    also = table.pop("analyses").str.split(SEP).map(lambda names: SEP.join(n for n in names if n != name))
    return table.rename(columns={"networks": "seeds"}).assign(also=also)


def untrained_rates(results: str | Path | None = None) -> pd.DataFrame:
    """Every untrained network setting (family, activation, radius, hidden), its rate the mean over its distinct
    networks, beside log rho(U), the Jacobian bound and the mean slope f' along the trajectory; ``networks``
    counts them and ``analyses`` names the analyses that measured them."""
    measured = networks(results)
    untrained = measured[measured["network"] == "untrained"]
    table = setting_rates(untrained, UNTRAINED_SETTING, beside=["radius_rate", "jacobian_bound", "mean_slope"])
    return table.sort_values(UNTRAINED_SETTING, na_position="first").reset_index(drop=True)


def trained_rates(results: str | Path | None = None) -> pd.DataFrame:
    """Every study-sourced network, once: analyses, run, snapshot -> measured rate, rho(U), the bounds and
    log rho(U)."""
    measured = networks(results)
    trained = measured[measured["network"] == "study"]
    columns = ["analyses", "run_id", "family", "snapshot", "rate", "rho", *BESIDE]
    return trained[columns].reset_index(drop=True) if len(trained) else pd.DataFrame(columns=columns)


def trained_summary(trained: pd.DataFrame, results: str | Path | None = None) -> pd.DataFrame:
    """trained_rates() per group of trained networks (the analyses that measured them) and snapshot: what they are
    (the first analysis's description), how many networks, their measured rate and rho(U), mean and range.

        networks (description), snapshot (as the book names it), count, rate_mean, rate_min, rate_max, rho_min, rho_max
    """
    rows = []
    for (analyses, snapshot), group in trained.groupby(["analyses", "snapshot"], sort=False):
        first = str(analyses).split(",")[0].strip()
        rows.append(
            {
                "networks": analysis_record(first, results)["description"].split(":")[0],
                "snapshot": snapshot_name(snapshot),
                "count": len(group),
                "rate_mean": float(group["rate"].mean()),
                "rate_min": float(group["rate"].min()),
                "rate_max": float(group["rate"].max()),
                "rho_min": float(group["rho"].min()),
                "rho_max": float(group["rho"].max()),
            }
        )
    columns = ["networks", "snapshot", "count", "rate_mean", "rate_min", "rate_max", "rho_min", "rho_max"]
    return pd.DataFrame(rows, columns=columns)


def passage_rows(results: str | Path | None = None) -> pd.DataFrame:
    """The evidence word of the passage (its first occurrence) through each network of each passage analysis."""
    frames = []
    for name in analysis_names(results):
        if analysis_record(name, results)["kind"] != "passage":
            continue
        table = analysis_table(name, "passage", results, text=SNAPSHOT_TEXT)
        evidence = table[table["evidence"]].sort_values("position")
        frames.append(evidence.drop_duplicates(["run_id", "snapshot"]).assign(analysis=name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def snapshot_name(snapshot: str) -> str:
    return SNAPSHOT_NAMES.get(str(snapshot), f"after epoch {snapshot}")


def analysis_section(name: str, results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> Markdown:
    """A gradient-decay analysis's section: heading, what it measured, its figure and its rates table."""
    record = analysis_record(name, results)
    slug = label_slug(name)
    measure = record["measure"]
    table = backward_rates(name, results)
    if record["network"] == "untrained":
        what = (
            f"{len(record['points'])} untrained networks ({words(f'`{k}`' for k in record['vary']) or 'one setting'} "
            f"varied, fixed {', '.join(f'`{k}` = {v}' for k, v in record['fixed'].items())})"
        )
        corpus = f"the {measure['corpus']} corpus"
    else:
        what = (
            f"the {plural(len(record['run_ids']), 'run')} {words(f'`{r}`' for r in record['run_ids'])} of study "
            f"`{record['study']}`, {words(snapshot_name(s) for s in record['snapshots'])}"
        )
        corpus = "the corpus each run was trained on"
    image = stage_figure(paths.analysis_figure(results_root(results), name, "png"), f"analysis-{slug}.png", staging)
    headers = {
        "measured": "measured rate",
        "lowest": "lowest",
        "highest": "highest",
        "factor": "per-step factor",
        "rho": "ρ(U)",
        **BESIDE,
        "also": "also measured by",
    }
    if table["seeds"].max() <= 1:
        table = table.drop(columns=["lowest", "highest"])
    if not table["also"].any():
        table = table.drop(columns=["also"])
    lines = [
        f"## `{name}` {{#sec-analysis-{slug}}}",
        "",
        f"{record['description'] or name}. The analysis measures {what} on {measure['sequences']} windows of "
        f"{measure['steps']} steps of {corpus}'s {measure['split']} split ({measure['dtype']}). "
        f"@fig-analysis-{slug} plots the gradient's norm against distance (top row) and, on the same distances, how "
        "far the state moves per unit move of the first word's embedding (bottom row: the forward pass, exact); "
        f"@tbl-analysis-{slug} gives each network's measured rate of the gradient beside two upper bounds on it and "
        "log ρ(U), the rate of the chapter's eigenvalue story; the looser bound, from σ_max(U) and the largest f′, is "
        "that of @pascanu2013.",
        "",
        f"![{record['description'] or name}. Top row: ‖dL/dh‖, backward; bottom row: the move of h per unit move of the "
        f"first word's embedding, forward (exact). From {os.path.relpath(paths.analysis_figure('.', name, 'png'))}, rule "
        "analysis_figure.]"
        f"({image}){{#fig-analysis-{slug}}}",
        "",
        markdown_table(table, formats={c: sig for c in table.columns if c in headers and c != "also"}, headers=headers),
        "",
        f": Measured rate (slope of log ‖dL/dh‖ against distance) beside two upper bounds on it and log ρ(U), per "
        f"network setting of {name}, over its own seeds"
        + (
            "; a setting's rate over every network measured at it, whichever analysis measured it, is in "
            "@tbl-decay-untrained. "
            if record["network"] == "untrained"
            else ". "
        )
        + f"From {os.path.relpath(paths.analysis_table('.', name, 'rates'))}, rule decay_analysis. {{#tbl-analysis-{slug}}}",
        "",
    ]
    return Markdown("\n".join(lines))


# ----------------------------------------------------------------------------------------------------------
# The values the decay chapter's sentences print (reports/decay.qmd holds the sentences)


def below_edge(untrained: pd.DataFrame) -> pd.DataFrame:
    """The untrained tanh networks with rho(U) < 1, by radius: the measured rate, its per-step factor, log rho, and
    what the measured factor does over the chapter's PASSAGE_WORDS words; ``grows`` where the gradient does not
    shrink."""
    rows = untrained[(untrained["activation"] == "tanh") & (untrained["radius"] < 1)].sort_values("radius")
    return rows.assign(
        factor=np.exp(rows["measured"]),
        over_passage=np.exp(PASSAGE_WORDS * rows["measured"]),
        grows=rows["measured"] >= 0,
    ).reset_index(drop=True)


# What the gradient does above the edge, per activation (above_edge's ``verdict``).
STILL_VANISHES, GROWS_SLOWER, GROWS = "still vanishes", "grows slower than log rho", "grows"


def above_edge(untrained: pd.DataFrame) -> pd.DataFrame:
    """The untrained networks with rho(U) > 1, by activation and radius, each with its activation's ``verdict``:
    STILL_VANISHES when some of them have a measured rate below 0, else GROWS_SLOWER when every rate is below
    log rho, else GROWS."""
    rows = untrained[untrained["radius"] > 1].sort_values(["activation", "radius"])
    verdicts = {}
    for activation, group in rows.groupby("activation", sort=False):
        if (group["measured"] < 0).any():
            verdicts[activation] = STILL_VANISHES
        elif (group["measured"] < group["radius_rate"]).all():
            verdicts[activation] = GROWS_SLOWER
        else:
            verdicts[activation] = GROWS
    return rows.assign(verdict=rows["activation"].map(verdicts)).reset_index(drop=True)


def loose_bound(untrained: pd.DataFrame) -> pd.Series | None:
    """The tanh Elman setting of smallest radius whose gradient shrinks while its upper bound, the log of the mean
    Jacobian norm, is above 0 (a bound that allows growth where there is none); None when there is none."""
    rows = untrained[
        (untrained["family"] == "rnn")
        & (untrained["activation"] == "tanh")
        & (untrained["measured"] < 0)
        & (untrained["jacobian_bound"] > 0)
    ]
    return rows.sort_values("radius").iloc[0] if len(rows) else None


def lstm_beside_elman(untrained: pd.DataFrame) -> list[tuple[pd.Series, pd.DataFrame]]:
    """Each untrained LSTM, with the untrained tanh Elman networks of its hidden size."""
    pairs = []
    for _, lstm in untrained[untrained["family"] == "lstm"].iterrows():
        elman = untrained[
            (untrained["family"] == "rnn")
            & (untrained["hidden"] == lstm["hidden"])
            & (untrained["activation"] == "tanh")
        ]
        pairs.append((lstm, elman))
    return pairs


def lstm_display(untrained: pd.DataFrame) -> pd.DataFrame:
    """lstm_beside_elman as a table: each untrained LSTM's hidden size, measured rate and per-step factor, and the
    rates of the untrained tanh Elman networks of its size, each at its spectral radius."""
    rows = [
        {
            "H": integer(lstm["hidden"]),
            "LSTM rate": sig(lstm["measured"]),
            "LSTM per-step factor": sig(np.exp(lstm["measured"])),
            "tanh Elman rate, at ρ(U)": words([f"{sig(e.measured)} at {sig(e.radius)}" for e in elman.itertuples()])
            or NONE,
        }
        for lstm, elman in lstm_beside_elman(untrained)
    ]
    return pd.DataFrame(rows, columns=["H", "LSTM rate", "LSTM per-step factor", "tanh Elman rate, at ρ(U)"])


@dataclass(frozen=True)
class Passage:
    """The chapter's passage through a trained PTB network: its evidence word, how far back it is in PTB's tokens,
    the share of the last word's gradient that reaches it at each snapshot, and the chapter's powers over its words."""

    word: Markdown
    distance: Markdown
    reaching: Markdown  # "at initialisation 0.0123 and at the end of training 0.0456"
    powers: Markdown  # "$0.9^{47}$ = 0.00708 and ..."


def passage_values(results: str | Path | None = None) -> Passage:
    """passage_rows() and the chapter's powers as values; every one "–" where no analysis reads the passage."""
    rows = passage_rows(results)
    if rows.empty:
        return Passage(*([NONE] * 4))
    chapter = table("decay_47_words", results)
    chapter = chapter[chapter["distance"] == PASSAGE_WORDS]
    first = rows.iloc[0]
    return Passage(
        word=Markdown(str(first["word"])),
        distance=integer(first["distance"]),
        reaching=words([f"{snapshot_name(r.snapshot)} {sig(r.h_relative)}" for r in rows.itertuples()]),
        powers=words([f"${r.factor:g}^{{{PASSAGE_WORDS}}}$ = {sig(r.computed)}" for r in chapter.itertuples()]),
    )


# ----------------------------------------------------------------------------------------------------------
# The worked Jacobian product (reports/bptt.qmd) beside the untrained networks measured here: both chapters read
# their comparison from this one function.


@dataclass(frozen=True)
class WorkedBeside:
    """tables/jacobian_width.csv (the worked recipe at two widths) beside the widest untrained tanh Elman networks
    the analyses measure (untrained_rates).

    ``table``: one row per radius either measures: ``small_*`` and ``wide_*`` the worked widths' rate, mean tanh'
    and step_sd, ``measured_*`` the measured networks' rate and mean slope (NaN where one has no such radius).
    ``radius``: the largest radius above the edge that both measure, where the chapters compare them; ``lowest``:
    the smallest radius both measure; ``largest``: the worked table's largest radius."""

    table: pd.DataFrame
    small: int
    wide: int
    hidden: int
    radius: float
    lowest: float
    largest: float

    def at(self, radius: float) -> pd.Series:
        return self.table.set_index("radius").loc[radius]

    @property
    def width_decides(self) -> bool:
        """At the largest worked radius, the small product shrinks and the wide one grows, their units saturating
        alike (saturation_verdict): the width, not the saturation, sets the sign."""
        top = self.at(self.largest)
        alike = saturation_verdict(top["small_slope"], top["wide_slope"]) == "alike"
        return bool(top["small_rate"] < 0 < top["wide_rate"] and alike)


def worked_beside_measured(width: pd.DataFrame, untrained: pd.DataFrame) -> WorkedBeside:
    """The comparison WorkedBeside describes; ValueError when the two share no radius above the edge."""
    width = width.assign(radius=width["spectral_radius"].round(2))
    small, wide = int(width["hidden"].min()), int(width["hidden"].max())
    columns = {"rate": "rate", "mean_tanh_slope": "slope", "step_sd": "sd"}

    def worked(hidden: int, prefix: str) -> pd.DataFrame:
        rows = width[width["hidden"] == hidden].set_index("radius")[list(columns)]
        return rows.rename(columns={c: f"{prefix}_{short}" for c, short in columns.items()})

    elman = untrained[(untrained["family"] == "rnn") & (untrained["activation"] == "tanh")]
    hidden = int(elman["hidden"].max())
    measured = elman[elman["hidden"] == hidden].set_index("radius")[["measured", "mean_slope"]]
    measured = measured.rename(columns={"measured": "measured_rate", "mean_slope": "measured_slope"})
    table = worked(small, "small").join(worked(wide, "wide"), how="outer").join(measured, how="outer")
    both = table.dropna(subset=["small_rate", "measured_rate"]).index
    above = [r for r in both if r > 1]
    if not above:
        raise ValueError(
            f"the worked radii {sorted(width['radius'].unique())} and the measured tanh networks' share none above 1"
        )
    return WorkedBeside(
        table=table.rename_axis("radius").reset_index(),
        small=small,
        wide=wide,
        hidden=hidden,
        radius=float(max(above)),
        lowest=float(min(both)),
        largest=float(width["radius"].max()),
    )


# Two mean slopes within this of each other saturate alike: tanh' = 1 - h^2 moves by 0.1 when |h| moves from
# 0.71 to 0.77, a difference a reader would not call more saturated.
ALIKE = 0.1


def saturation_verdict(here: float, there: float) -> str:
    """ "alike" when two mean tanh' are within ALIKE of each other; else "here" or "there", the network whose
    units saturate more (the smaller mean slope)."""
    if abs(here - there) <= ALIKE:
        return "alike"
    return "here" if here < there else "there"


def worked_beside_headers(beside: WorkedBeside) -> dict[str, str]:
    """The column headers of WorkedBeside.table, each naming its network's width."""
    headers = {"radius": "ρ(U)"}
    for prefix, units in (("small", beside.small), ("wide", beside.wide)):
        headers |= {
            f"{prefix}_rate": f"rate, {units} units",
            f"{prefix}_slope": f"mean tanh′, {units} units",
            f"{prefix}_sd": f"step spread, {units} units",
        }
    return headers | {
        "measured_rate": f"measured rate, {beside.hidden} units",
        "measured_slope": f"measured mean tanh′, {beside.hidden} units",
    }
