"""rnnbench.book.explorables: the data each explorable writes into the page, from hand-made results.

The explorables themselves (reports/explorables.js in a browser) are tests/test_explorables_browser.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from rnnbench import paths
from rnnbench.book import explorables
from rnnbench.worked import TABLES


@pytest.fixture
def results(tmp_path) -> Path:
    root = tmp_path / "results"
    (root / "tables").mkdir(parents=True)
    for name in ("unroll", "unroll_weights", "params_ff_vs_rnn", "decay_47_words"):
        TABLES[name]().to_csv(paths.table(str(root), name), index=False)
    return root


def write_analysis(results: Path, name: str, network: str, keys: list[str], points: list[dict]) -> None:
    """An analysis's curves and rates: point i falls by 0.5 per step from 1, with rate log(0.5) and rho 0.9 + i."""
    Path(paths.analysis_dir(str(results), name)).mkdir(parents=True)
    curves, rates = [], []
    for i, point in enumerate(points):
        for quantity in ("h", "x"):  # only dL/dh is drawn
            for d in range(4):
                norm = 0.5**d if quantity == "h" else 7.0
                curves.append(
                    {**point, "direction": "backward", "method": "one_pass", "quantity": quantity, "distance": d}
                    | {"median": norm, "q10": 0.8 * norm, "q90": 1.2 * norm}
                )
            rates.append(
                {**point, "direction": "backward", "method": "one_pass", "quantity": quantity}
                | {"rate": math.log(0.5) if quantity == "h" else 9.0, "rho": 0.9 + i}
            )
        curves.append({**point, "direction": "forward", "method": "jvp", "quantity": "h", "distance": 0, "median": 3.0})
    pd.DataFrame(curves).to_csv(paths.analysis_table(str(results), name, "curves"), index=False)
    pd.DataFrame(rates).to_csv(paths.analysis_table(str(results), name, "rates"), index=False)
    record = {"name": name, "kind": "gradient_decay", "network": network, "keys": keys}
    Path(paths.analysis_record(str(results), name)).write_text(json.dumps(record), encoding="utf-8")


def test_unroll_data_is_the_chapters_network_and_sentence(results):
    data = explorables.unroll_data(results)
    assert data["W"] == [[0.6, -0.3], [0.2, 0.5]]  # as the chapter prints W: rows are units
    assert data["U"] == [[0.4, 0.1], [-0.2, 0.7]]
    assert data["b"] == [0.05, -0.05]
    assert [s["word"] for s in data["steps"]] == ["the", "dog", "ran"]
    assert [s["x"] for s in data["steps"]] == [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]


def test_params_data_starts_at_the_lectures_sizes(results):
    assert explorables.params_data(results) == {"vocab": 10_000, "embed": 100, "hidden": 500, "context": 3}
    with pytest.raises(ValueError, match=r"context 99 is not in tables/params_ff_vs_rnn.csv"):
        explorables.params_data(results, context=99)


def test_decay_data_reads_each_networks_measured_curve(results):
    keys = ["family", "radius", "activation", "hidden", "embed_dim", "seed"]
    write_analysis(
        results,
        "sweep",
        "untrained",
        keys,
        [
            {"family": "rnn", "radius": 0.5, "activation": "relu", "hidden": 8, "embed_dim": 4, "seed": 0},
            {"family": "lstm", "radius": None, "activation": None, "hidden": 8, "embed_dim": 4, "seed": 0},
        ],
    )
    data = explorables.decay_data(results)
    relu, lstm = data["networks"]
    assert relu["activation"] == "relu" and relu["snapshot"] == "untrained"
    assert relu["radius"] == 0.5 and relu["radius_measured"] is False  # the radius U was set to, not rho
    assert relu["distance"] == [0, 1, 2, 3]
    assert relu["median"] == [1.0, 0.5, 0.25, 0.125]  # dL/dh, backward, one pass: as written, not refitted
    assert relu["q10"] == [0.8, 0.4, 0.2, 0.1] and relu["q90"] == [1.2, 0.6, 0.3, 0.15]
    assert relu["rate"] == pytest.approx(math.log(0.5))
    assert relu["source"] == "analyses/sweep/curves.csv"
    assert lstm["activation"] == "LSTM" and lstm["radius"] is None and lstm["keys"]["radius"] is None
    assert data["factors"] == [0.01, 0.5, 0.9, 1.2]  # the chapter's printed powers
    json.dumps(data, allow_nan=False)  # nothing JSON cannot hold


def test_a_trained_network_shows_its_measured_radius_and_its_runs_activation(results):
    keys = ["run_id", "family", "hidden", "seed", "snapshot"]
    run = "rnn-ptb-abc"
    Path(paths.run_dir(str(results), run)).mkdir(parents=True)
    Path(paths.run_config(str(results), run)).write_text(json.dumps({"activation": "sigmoid"}), encoding="utf-8")
    points = [{"run_id": run, "family": "rnn", "hidden": 8, "seed": 1, "snapshot": s} for s in ("0", "final")]
    write_analysis(results, "trained", "study", keys, points)
    first, last = explorables.decay_data(results)["networks"]
    assert (first["snapshot"], first["snapshot_label"]) == ("0", "at initialisation")
    assert (last["snapshot"], last["snapshot_label"]) == ("final", "at the end of training")
    assert first["activation"] == "sigmoid"  # from the run's config.json
    assert (first["radius"], last["radius"]) == (0.9, 1.9) and first["radius_measured"]  # rho(U) measured


def test_underflow_and_unfitted_rates_are_null_not_nan(results):
    write_analysis(results, "edge", "untrained", ["radius", "seed"], [{"radius": 2.0, "seed": 0}])
    curves_file = paths.analysis_table(str(results), "edge", "curves")
    curves = pd.read_csv(curves_file)
    curves.loc[(curves["quantity"] == "h") & (curves["distance"] == 3), "median"] = math.inf
    curves.to_csv(curves_file, index=False)
    rates_file = paths.analysis_table(str(results), "edge", "rates")
    pd.read_csv(rates_file).assign(rate=math.nan).to_csv(rates_file, index=False)
    network = explorables.decay_data(results)["networks"][0]
    assert network["median"][3] is None and network["rate"] is None
    assert network["activation"] == "rnn"  # no activation key, no run: named by its family


def test_explorable_is_a_raw_html_block_holding_its_data():
    block = explorables.explorable("params", {"note": "</script><b>", "n": 3})
    assert block.startswith("```{=html}\n") and block.rstrip().endswith("```")
    assert 'data-explorable="params"' in block
    assert "</script><b>" not in block  # the data cannot end its own <script> element
    payload = block.split('<script type="application/json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(payload) == {"note": "</script><b>", "n": 3}
    with pytest.raises(ValueError, match=r"explorable kind 'plot' is not one of \['unroll', 'params', 'decay'\]"):
        explorables.explorable("plot", {})
    with pytest.raises(ValueError):
        explorables.explorable("decay", {"value": math.nan})  # NaN is not JSON: refused, not written
