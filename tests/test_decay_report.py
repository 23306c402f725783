"""The decay chapter's readers and prose, on hand-made analysis results: the numbers it quotes are the tables'."""

import json
import math
from pathlib import Path

import pandas as pd

from rnnbench import analysis_report as ar
from rnnbench import paths


def write_analysis(
    results: Path, name: str, points: list[dict], rates: list[dict], *, network: str = "untrained"
) -> None:
    Path(paths.analysis_dir(str(results), name)).mkdir(parents=True)
    keys = list(points[0])
    vary = [k for k in keys if len({str(p[k]) for p in points}) > 1]
    record = {
        "name": name,
        "kind": "gradient_decay",
        "description": name,
        "network": network,
        "study": None,
        "keys": keys,
        "vary": vary,
        "fixed": {},
        "seeds": [0],
        "snapshots": [],
        "run_ids": [],
        "points": points,
        "measure": {"corpus": "ptb", "split": "valid", "steps": 150, "sequences": 16, "dtype": "float32"},
        "figure": {"hue": vary[0] if vary else "seed", "panel": None},
    }
    Path(paths.analysis_record(str(results), name)).write_text(json.dumps(record))
    rows = [
        {**point, "direction": "backward", "method": "one_pass", "quantity": "h", **rate}
        for point, rate in zip(points, rates, strict=True)
    ]
    pd.DataFrame(rows).to_csv(paths.analysis_table(str(results), name, "rates"), index=False)


def tanh(radius, seed, rate):
    point = {"family": "rnn", "radius": radius, "activation": "tanh", "hidden": 20, "embed_dim": 20, "seed": seed}
    return point, {
        "rate": rate,
        "radius_rate": math.log(radius),
        "jacobian_rate": 0.1,
        "pascanu_rate": 0.2,
        "rho": radius,
    }


def test_rates_average_the_seeds_and_the_prose_quotes_them(tmp_path):
    cases = [tanh(0.5, 0, -0.70), tanh(0.5, 1, -0.74), tanh(1.5, 0, -0.02), tanh(1.5, 1, -0.04)]
    write_analysis(tmp_path, "sweep", [p for p, _ in cases], [r for _, r in cases])

    table = ar.backward_rates("sweep", tmp_path)
    assert list(table["radius"]) == [0.5, 1.5]
    assert list(table["measured"].round(6)) == [-0.72, -0.03]  # mean over the two seeds
    assert list(table["lowest"]) == [-0.74, -0.04] and list(table["seeds"]) == [2, 2]
    assert table["factor"].iloc[0] == math.exp(-0.72)

    untrained = ar.untrained_rates(tmp_path)
    holds = ar.holds_text(untrained)
    assert holds.startswith("Below the edge the gradient vanishes in every untrained tanh network")
    assert "ρ(U) = 0.5 the measured rate is -0.72 per step (factor 0.487) against log ρ = -0.693" in holds
    fails = ar.fails_text(untrained)
    assert fails.startswith("Above 1 the story fails")
    assert "with tanh the gradient still vanishes at ρ = 1.5 (ρ = 1.5: -0.03 against log ρ = 0.405)" in fails


def test_a_tanh_network_below_the_edge_whose_gradient_grows_fails_the_story(tmp_path):
    cases = [tanh(0.9, 0, 0.02)]
    write_analysis(tmp_path, "odd", [p for p, _ in cases], [r for _, r in cases])
    holds = ar.holds_text(ar.untrained_rates(tmp_path))
    assert holds.startswith("Below the edge the story fails at ρ = 0.9: the gradient does not shrink there.")


def test_growth_above_one_is_reported_as_growth(tmp_path):
    cases = [tanh(2.0, 0, 0.12)]
    write_analysis(tmp_path, "grow", [p for p, _ in cases], [r for _, r in cases])
    fails = ar.fails_text(ar.untrained_rates(tmp_path))
    assert fails.startswith("Above 1 the gradient grows, as the story says")
    assert "grows, but slower than log ρ says" in fails
    assert ar.holds_text(ar.untrained_rates(tmp_path)) == ""  # no network below the edge: nothing to say


def test_training_text_gives_the_rates_and_leaves_the_verdict_to_the_findings(tmp_path):
    points = [
        {"run_id": "rnn-ptb-0123456789", "family": "rnn", "hidden": 200, "seed": 1, "snapshot": s}
        for s in ("0", "1", "final")
    ]
    rates = [
        {"rate": r, "rho": rho, "jacobian_rate": 0.0, "pascanu_rate": 0.0, "radius_rate": math.log(rho)}
        for r, rho in ((-0.5, 0.6), (-0.2, 1.2), (-0.1, 1.6))
    ]
    write_analysis(tmp_path, "trained", points, rates, network="study")
    text = ar.training_text(ar.trained_rates(tmp_path))
    assert (
        "at initialisation -0.5 (ρ(U) = 0.6), after epoch 1 -0.2 (ρ(U) = 1.2) and at the end of training -0.1" in text
    )
    # a change of rate is a number here, never a direction: whether it is more than noise is lambda_not_held's
    assert "edge" not in text and text.endswith("at the end of training -0.1 (ρ(U) = 1.6).")
