"""The decay chapter's values (reports/decay.qmd), from the analyses' results (results/analyses/<name>/, read
through rnnbench.book.results).

    backward_rates      one analysis's measured rate (backward, dL/dh) beside its bounds and log rho, seeds averaged
    untrained_rates     every untrained analysis's rates in one table: family, activation, radius, hidden
    trained_rates       every study-sourced analysis's rates: run, snapshot
    passage_rows        the passage's word "partner" (the evidence) per network
    analysis_section    one analysis's section: what it measured, its figure and its rates table

Rates are logs of the per-step factor (0: the edge, below 0: vanishing), as rnnbench.decay.rates writes them.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR, stage_figure
from rnnbench.book.format import Markdown, label_slug, markdown_table, sig, words
from rnnbench.book.results import analysis_names, analysis_record, analysis_table, results_root

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


def backward_rates(name: str, results: str | Path | None = None, quantity: str = "h") -> pd.DataFrame:
    """One row per network the analysis varies (seeds averaged): the measured rate, its range over seeds, the
    per-step factor it means, the two bounds, log rho(U) and rho(U)."""
    record = analysis_record(name, results)
    rates = analysis_table(name, "rates", results, text=SNAPSHOT_TEXT)
    rates = rates[
        (rates["direction"] == "backward") & (rates["method"] == "one_pass") & (rates["quantity"] == quantity)
    ]
    keys = [k for k in record["keys"] if k not in ("seed", "run_id") and (k in record["vary"] or k == "activation")]
    keys = [k for k in keys if k in rates.columns] or ["analysis"]
    rates = rates.assign(analysis=name)
    grouped = rates.groupby(keys, sort=False, dropna=False)  # an LSTM has no radius or activation: NaN keys
    table = grouped.agg(
        measured=("rate", "mean"),
        lowest=("rate", "min"),
        highest=("rate", "max"),
        seeds=("rate", "size"),
        **{column: (column, "mean") for column in BESIDE},
        rho=("rho", "mean"),
    ).reset_index()
    table.insert(len(keys) + 1, "factor", np.exp(table["measured"]))
    return table


def _all_rates(network: str, results: str | Path | None) -> pd.DataFrame:
    frames = []
    for name in analysis_names(results):
        record = analysis_record(name, results)
        if record["kind"] != "gradient_decay" or record["network"] != network:
            continue
        rates = analysis_table(name, "rates", results, text=SNAPSHOT_TEXT)
        rates = rates[(rates["direction"] == "backward") & (rates["method"] == "one_pass") & (rates["quantity"] == "h")]
        frames.append(rates.assign(analysis=name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def untrained_rates(results: str | Path | None = None) -> pd.DataFrame:
    """Every untrained network of every analysis: family, activation, radius, hidden -> measured rate (mean over seeds
    and analyses) beside log rho(U) and the Jacobian bound."""
    rates = _all_rates("untrained", results)
    if rates.empty:
        return pd.DataFrame(
            columns=[
                "family",
                "activation",
                "radius",
                "hidden",
                "measured",
                "radius_rate",
                "jacobian_bound",
                "networks",
            ]
        )
    return (
        rates.assign(family=rates.get("family", "rnn"))
        .groupby(["family", "activation", "radius", "hidden"], dropna=False)
        .agg(
            measured=("rate", "mean"),
            radius_rate=("radius_rate", "mean"),
            jacobian_bound=("jacobian_bound", "mean"),
            networks=("rate", "size"),
        )
        .reset_index()
    )


def trained_rates(results: str | Path | None = None) -> pd.DataFrame:
    """Every study-sourced network: analysis, run, snapshot -> measured rate, rho(U), the bounds and log rho(U)."""
    rates = _all_rates("study", results)
    if rates.empty:
        return pd.DataFrame(columns=["analysis", "run_id", "snapshot", "rate", "rho", *BESIDE])
    return rates[["analysis", "run_id", "family", "snapshot", "rate", "rho", *BESIDE]].reset_index(drop=True)


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
            f"the run{'s' if len(record['run_ids']) != 1 else ''} {words(f'`{r}`' for r in record['run_ids'])} of study "
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
    }
    if table["seeds"].max() <= 1:
        table = table.drop(columns=["lowest", "highest"])
    lines = [
        f"## `{name}` {{#sec-analysis-{slug}}}",
        "",
        f"{record['description'] or name}. The analysis measures {what} on {measure['sequences']} windows of "
        f"{measure['steps']} steps of {corpus}'s {measure['split']} split ({measure['dtype']}). "
        f"@fig-analysis-{slug} plots the gradient's norm against distance (top row) and, on the same distances, how "
        "far the state moves per unit move of the first word's embedding (bottom row: the forward pass, exact); "
        f"@tbl-analysis-{slug} gives each network's measured rate of the gradient beside two upper bounds on it and "
        "log ρ(U), the rate of the chapter's eigenvalue story.",
        "",
        f"![{record['description'] or name}. Top row: ‖dL/dh‖, backward; bottom row: the move of h per unit move of the "
        f"first word's embedding, forward (exact). From {os.path.relpath(paths.analysis_figure('.', name, 'png'))}, rule "
        "analysis_figure.]"
        f"({image}){{#fig-analysis-{slug}}}",
        "",
        markdown_table(table, formats={c: sig for c in table.columns if c in headers}, headers=headers),
        "",
        f": Measured rate (slope of log ‖dL/dh‖ against distance) beside two upper bounds on it and log ρ(U), per "
        f"network of {name}. "
        f"From {os.path.relpath(paths.analysis_table('.', name, 'rates'))}, rule decay_analysis. {{#tbl-analysis-{slug}}}",
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
