"""The book's decay chapter, read from the analyses' results (results/analyses/<name>/, see rnnbench.paths).

    analysis_names      the analyses with a record
    backward_rates      one analysis's measured rate (backward, dL/dh) beside the predictions, seeds averaged
    untrained_rates     every untrained analysis's rates in one table: family, activation, radius, hidden
    trained_rates       every study-sourced analysis's rates: run, snapshot
    passage_rows        the passage's word "partner" (the evidence) per network
    analysis_section    one analysis's section: what it measured, its figure and its rates table

Rates are logs of the per-step factor (0: the edge, below 0: vanishing), as rnnbench.decay.rates writes them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rnnbench import paths
from rnnbench.report import STAGING_DIR, Markdown, _root, label_slug, markdown_table, sig, stage_figure, words

PREDICTIONS = {
    "jacobian_rate": "log mean ‖diag(f′) U‖",
    "pascanu_rate": "log σ_max(U) max f′",
    "radius_rate": "log ρ(U)",
}
SNAPSHOT_NAMES = {"0": "at initialisation", "final": "at the end of training"}


def analysis_names(results: str | Path | None = None) -> list[str]:
    root = Path(_root(results)) / "analyses"
    return sorted(p.parent.name for p in root.glob("*/analysis.json"))


def analysis_record(name: str, results: str | Path | None = None) -> dict[str, Any]:
    return json.loads(Path(paths.analysis_record(_root(results), name)).read_text(encoding="utf-8"))


def _read(name: str, table: str, results: str | Path | None) -> pd.DataFrame:
    return pd.read_csv(paths.analysis_table(_root(results), name, table), dtype={"snapshot": str})


def backward_rates(name: str, results: str | Path | None = None, quantity: str = "h") -> pd.DataFrame:
    """One row per network the analysis varies (seeds averaged): the measured rate, its range over seeds, the
    per-step factor it means, the three predictions and rho(U)."""
    record = analysis_record(name, results)
    rates = _read(name, "rates", results)
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
        **{column: (column, "mean") for column in PREDICTIONS},
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
        rates = _read(name, "rates", results)
        rates = rates[(rates["direction"] == "backward") & (rates["method"] == "one_pass") & (rates["quantity"] == "h")]
        frames.append(rates.assign(analysis=name))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def untrained_rates(results: str | Path | None = None) -> pd.DataFrame:
    """Every untrained network of every analysis: family, activation, radius, hidden -> measured rate (mean over seeds
    and analyses) beside log rho(U) and the Jacobian prediction."""
    rates = _all_rates("untrained", results)
    if rates.empty:
        return pd.DataFrame(
            columns=["family", "activation", "radius", "hidden", "measured", "radius_rate", "jacobian_rate", "networks"]
        )
    return (
        rates.assign(family=rates.get("family", "rnn"))
        .groupby(["family", "activation", "radius", "hidden"], dropna=False)
        .agg(
            measured=("rate", "mean"),
            radius_rate=("radius_rate", "mean"),
            jacobian_rate=("jacobian_rate", "mean"),
            networks=("rate", "size"),
        )
        .reset_index()
    )


def trained_rates(results: str | Path | None = None) -> pd.DataFrame:
    """Every study-sourced network: analysis, run, snapshot -> measured rate, rho(U) and the predictions."""
    rates = _all_rates("study", results)
    if rates.empty:
        return pd.DataFrame(columns=["analysis", "run_id", "snapshot", "rate", "rho", *PREDICTIONS])
    return rates[["analysis", "run_id", "family", "snapshot", "rate", "rho", *PREDICTIONS]].reset_index(drop=True)


def passage_rows(results: str | Path | None = None) -> pd.DataFrame:
    """The evidence word of the passage (its first occurrence) through each network of each passage analysis."""
    frames = []
    for name in analysis_names(results):
        if analysis_record(name, results)["kind"] != "passage":
            continue
        table = _read(name, "passage", results)
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
    image = stage_figure(paths.analysis_figure(_root(results), name, "png"), f"analysis-{slug}.png", staging)
    headers = {
        "measured": "measured rate",
        "lowest": "lowest",
        "highest": "highest",
        "factor": "per-step factor",
        "rho": "ρ(U)",
        **PREDICTIONS,
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
        f"@tbl-analysis-{slug} gives each network's measured rate of the gradient beside the predicted ones.",
        "",
        f"![{record['description'] or name}. Top row: ‖dL/dh‖, backward; bottom row: the move of h per unit move of the "
        f"first word's embedding, forward (exact). From {os.path.relpath(paths.analysis_figure('.', name, 'png'))}, rule "
        "analysis_figure.]"
        f"({image}){{#fig-analysis-{slug}}}",
        "",
        markdown_table(table, formats={c: sig for c in table.columns if c in headers}, headers=headers),
        "",
        f": Measured rate (slope of log ‖dL/dh‖ against distance) beside the predicted ones, per network of {name}. "
        f"From {os.path.relpath(paths.analysis_table('.', name, 'rates'))}, rule decay_analysis. {{#tbl-analysis-{slug}}}",
        "",
    ]
    return Markdown("\n".join(lines))


# ----------------------------------------------------------------------------------------------------------
# The chapter's prose: each paragraph from the measured tables, empty when its networks were not measured


def _rate(value: float) -> str:
    return f"{sig(value)} per step (factor {sig(np.exp(value))})"


def holds_text(untrained: pd.DataFrame) -> Markdown:
    """Tanh networks with rho(U) < 1: the measured rate beside log rho."""
    rows = untrained[(untrained["activation"] == "tanh") & (untrained["radius"] < 1)].sort_values("radius")
    if rows.empty:
        return Markdown("")
    cases = [
        f"at ρ(U) = {sig(r.radius)} the measured rate is {_rate(r.measured)} against log ρ = {sig(r.radius_rate)}"
        for r in rows.itertuples()
    ]
    gap = float((rows["measured"] - rows["radius_rate"]).abs().max())
    growing = rows[rows["measured"] >= 0]
    lead = (
        "Below the edge the gradient vanishes in every untrained tanh network, as the chapter's story says"
        if growing.empty
        else f"Below the edge the story fails at ρ = {words([sig(v) for v in growing['radius']])}: the gradient does "
        "not shrink there"
    )
    return Markdown(
        f"{lead}. For untrained tanh networks {words(cases, 'and')}: the gradient changes by a near-constant factor "
        f"per step, and log ρ(U) predicts that factor to within {sig(gap)} in the log. Over the chapter's 47 words "
        "that is a factor of "
        f"{words([sig(np.exp(47 * r.measured)) + f' (ρ = {sig(r.radius)})' for r in rows.itertuples()])}."
    )


def fails_text(untrained: pd.DataFrame) -> Markdown:
    """rho(U) > 1: where the measured rate and log rho part ways, per activation."""
    rows = untrained[untrained["radius"] > 1].sort_values(["activation", "radius"])
    if rows.empty:
        return Markdown("")
    parts = []
    for activation, group in rows.groupby("activation", sort=False):
        cases = "; ".join(
            f"ρ = {sig(r.radius)}: {sig(r.measured)} against log ρ = {sig(r.radius_rate)}" for r in group.itertuples()
        )
        vanishing = group[group["measured"] < 0]
        if len(vanishing):
            verdict = f"still vanishes at ρ = {words([sig(v) for v in vanishing['radius']])}"
        elif (group["measured"] < group["radius_rate"]).all():
            verdict = "grows, but slower than log ρ says"
        else:
            verdict = "grows"
        parts.append(f"with {activation} the gradient {verdict} ({cases})")
    lead = (
        "Above 1 the story fails where the eigenvalues say the gradient should grow"
        if (rows["measured"] < 0).any()
        else "Above 1 the gradient grows, as the story says, but at its own rate"
    )
    return Markdown(
        f"{lead}: each step multiplies by $\\mathrm{{diag}}(f'(a_t))\\,U$, not by $U$, and a saturated or silent unit passes "
        "little or nothing back. Measured rates per step: " + "; ".join(parts) + "."
    )


def lstm_text(untrained: pd.DataFrame) -> Markdown:
    """The untrained LSTM's rate beside the Elman networks of the same size."""
    lstm = untrained[untrained["family"] == "lstm"]
    sentences = []
    for r in lstm.itertuples():
        elman = untrained[
            (untrained["family"] == "rnn") & (untrained["hidden"] == r.hidden) & (untrained["activation"] == "tanh")
        ]
        beside = words([f"{sig(e.measured)} at ρ = {sig(e.radius)}" for e in elman.itertuples()])
        sentences.append(
            f"The LSTM with H = {int(r.hidden)}, as initialised, measures {_rate(r.measured)} on ‖dL/dh‖"
            + (f", against the tanh Elman network's {beside}." if len(elman) else ".")
        )
    return Markdown(" ".join(sentences))


def training_text(trained: pd.DataFrame) -> Markdown:
    """Each study run's rate and radius, snapshot by snapshot: the numbers alone. Whether a change is more than the
    measurement's noise, and whether training holds the rate at the edge, is the findings' to say (lambda_not_held,
    which reads only runs that learned)."""
    sentences = []
    for (analysis, run_id), group in trained.groupby(["analysis", "run_id"], sort=False):
        steps = [f"{snapshot_name(r.snapshot)} {sig(r.rate)} (ρ(U) = {sig(r.rho)})" for r in group.itertuples()]
        sentences.append(f"Run `{run_id}` ({analysis}): measured rate {words(steps)}.")
    return Markdown(" ".join(sentences))


def passage_text(passage: pd.DataFrame, worked: pd.DataFrame) -> Markdown:
    """The evidence word's share of the last word's gradient, beside the chapter's powers at 47 steps."""
    if passage.empty:
        return Markdown("")
    chapter = worked[worked["distance"] == 47]
    powers = words([f"${r.factor:g}^{{47}}$ = {sig(r.computed)}" for r in chapter.itertuples()])
    cases = [
        f"{snapshot_name(r.snapshot)} the gradient reaching “{r.word}” is {sig(r.h_relative)} of the one at the last word"
        for r in passage.itertuples()
    ]
    distance = int(passage.iloc[0]["distance"])
    return Markdown(
        f"With PTB's tokenisation “{passage.iloc[0]['word']}” is {distance} tokens back from the last word of the passage. "
        f"Through the trained PTB RNN, {'; '.join(cases)}. The chapter's worked numbers for 47 steps are {powers}."
    )
