"""A network two analyses measured counts once in every rate of a setting (rnnbench.results.decay_rates)."""

import math

import pandas as pd
import pytest

from rnnbench.results.decay_rates import backward_h, distinct_networks, network_rates, setting_rates

MEASURE = {"corpus": "ptb", "split": "valid", "steps": 150, "sequences": 16, "dtype": "float32", "fit": None, "seed": 0}
SETTING = ["family", "activation", "radius", "hidden"]


def untrained(points: list[dict], rates: list[float], measure: dict = MEASURE) -> tuple[dict, pd.DataFrame]:
    """An untrained analysis's record and rates.csv: one backward ||dL/dh|| row per network."""
    record = {"network": "untrained", "measure": measure, "points": points}
    rows = [
        {**point, "direction": "backward", "method": "one_pass", "quantity": "h", "rate": rate, "rho": point["radius"]}
        for point, rate in zip(points, rates, strict=True)
    ]
    return record, pd.DataFrame(rows)


def net(activation: str, radius: float | None, seed: int, family: str = "rnn") -> dict:
    return {"family": family, "radius": radius, "activation": activation, "hidden": 200, "embed_dim": 200, "seed": seed}


def test_a_network_two_analyses_measured_is_counted_once_and_named_with_both():
    # decay_radius: three seeds at radius 0.9, -0.12, -0.13, -0.14 a step. decay_activation measures seed 0 again
    # (-0.12, the same network) and a relu network. The tanh rate at 0.9 is (-0.12 - 0.13 - 0.14) / 3 = -0.13;
    # counting seed 0 twice would give (2 (-0.12) - 0.13 - 0.14) / 4 = -0.1275.
    analyses = {
        "decay_radius": untrained([net("tanh", 0.9, s) for s in (0, 1, 2)], [-0.12, -0.13, -0.14]),
        "decay_activation": untrained([net("tanh", 0.9, 0), net("relu", 0.9, 0)], [-0.12, -0.5]),
    }
    networks = backward_h(network_rates(analyses))
    assert len(networks) == 4
    shared = networks[(networks["activation"] == "tanh") & (networks["seed"] == 0)]
    assert shared["analyses"].tolist() == ["decay_activation, decay_radius"]
    table = setting_rates(networks, SETTING).set_index("activation")
    assert table.loc["tanh", "measured"] == pytest.approx(-0.13, abs=1e-15)
    assert table.loc["tanh", "networks"] == 3 and table.loc["relu", "networks"] == 1
    assert (table.loc["tanh", "lowest"], table.loc["tanh", "highest"]) == (-0.14, -0.12)
    assert table.loc["tanh", "analyses"] == "decay_activation, decay_radius"
    assert table.loc["relu", "analyses"] == "decay_activation"


def test_the_same_settings_measured_another_way_are_another_measurement():
    # The same network on windows of 50 steps instead of 150: a different measurement, so both rows stay.
    short = {**MEASURE, "steps": 50}
    analyses = {
        "long": untrained([net("tanh", 1.0, 0)], [-0.04]),
        "short": untrained([net("tanh", 1.0, 0)], [-0.06], short),
    }
    table = setting_rates(backward_h(network_rates(analyses)), SETTING)
    assert table["measured"].tolist() == pytest.approx([-0.05]) and table["networks"].tolist() == [2]


def test_one_network_measured_one_way_with_two_rates_is_refused():
    analyses = {"a": untrained([net("tanh", 1.0, 0)], [-0.04]), "b": untrained([net("tanh", 1.0, 0)], [-0.05])}
    with pytest.raises(ValueError, match="a, b measured the same network the same way"):
        network_rates(analyses)


def test_an_lstm_without_radius_or_activation_is_a_setting_of_its_own():
    lstm = net(None, None, 0, family="lstm")
    analyses = {"decay_lstm": untrained([net("tanh", 1.0, 0), lstm], [-0.04, -0.45])}
    table = setting_rates(backward_h(network_rates(analyses)), SETTING)
    assert table["family"].tolist() == ["rnn", "lstm"]
    assert math.isnan(table["radius"].iloc[1]) and table["measured"].tolist() == [-0.04, -0.45]


def test_the_networks_of_the_analyses_are_counted_once_each():
    radius, _ = untrained([net("tanh", r, s) for r in (0.9, 1.1) for s in (0, 1)], [-0.1, -0.1, 0.0, 0.0])
    activation, _ = untrained([net(a, 0.9, 0) for a in ("tanh", "relu")], [-0.1, -0.5])  # tanh 0.9, seed 0: again
    trained = {"network": "study", "points": [{"run_id": "rnn-ptb-1", "snapshot": s} for s in ("0", "final")]}
    passage = {"network": "study", "points": [{"run_id": "rnn-ptb-1", "snapshot": "final"}]}  # a run measured twice
    assert distinct_networks([radius, activation, trained, passage]) == 4 + 1 + 2
