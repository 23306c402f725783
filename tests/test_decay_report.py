"""The decay chapter's readers and prose, on hand-made analysis results: the numbers it quotes are the tables'."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from rnnbench import paths
from rnnbench.book import decay


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
        "jacobian_bound": 0.1,
        "pascanu_bound": 0.2,
        "rho": radius,
        "mean_slope": 0.9,
    }


def test_rates_average_the_seeds_and_the_prose_quotes_them(tmp_path):
    cases = [tanh(0.5, 0, -0.70), tanh(0.5, 1, -0.74), tanh(1.5, 0, -0.02), tanh(1.5, 1, -0.04)]
    write_analysis(tmp_path, "sweep", [p for p, _ in cases], [r for _, r in cases])

    table = decay.backward_rates("sweep", tmp_path)
    assert list(table["radius"]) == [0.5, 1.5]
    assert list(table["measured"].round(6)) == [-0.72, -0.03]  # mean over the two seeds
    assert list(table["lowest"]) == [-0.74, -0.04] and list(table["seeds"]) == [2, 2]
    assert table["factor"].iloc[0] == math.exp(-0.72)

    untrained = decay.untrained_rates(tmp_path)
    below = decay.below_edge(untrained)
    assert below[["radius", "measured"]].round(6).values.tolist() == [[0.5, -0.72]] and not below["grows"].any()
    assert below["factor"].iloc[0] == math.exp(-0.72) and below["over_passage"].iloc[0] == math.exp(47 * -0.72)
    above = decay.above_edge(untrained)
    # at rho 1.5 the tanh network's gradient still shrinks (-0.03 a step), where log rho says +0.405
    assert above[["radius", "verdict"]].values.tolist() == [[1.5, decay.STILL_VANISHES]]


def test_a_network_two_analyses_measured_is_one_network_in_every_table(tmp_path):
    # The sweep measures seeds 0, 1, 2 at radius 0.9 (-0.12, -0.13, -0.14 a step); the activation analysis measures
    # seed 0 again. The chapter's table, its sentences and the sweep's own section all read -0.13, not -0.1275.
    sweep = [tanh(0.9, s, r) for s, r in ((0, -0.12), (1, -0.13), (2, -0.14))]
    write_analysis(tmp_path, "sweep", [p for p, _ in sweep], [r for _, r in sweep])
    write_analysis(tmp_path, "activation", [sweep[0][0]], [sweep[0][1]])
    untrained = decay.untrained_rates(tmp_path)
    assert untrained["measured"].tolist() == pytest.approx([-0.13], abs=1e-15)
    assert untrained["networks"].tolist() == [3] and untrained["analyses"].tolist() == ["activation, sweep"]
    assert decay.below_edge(untrained)["measured"].tolist() == untrained["measured"].tolist()
    own = decay.backward_rates("sweep", tmp_path)
    assert own["measured"].tolist() == untrained["measured"].tolist() and own["also"].tolist() == ["activation"]
    theirs = decay.backward_rates("activation", tmp_path)
    assert theirs["measured"].tolist() == [-0.12] and theirs["seeds"].tolist() == [1]
    assert theirs["also"].tolist() == ["sweep"]


def test_the_findings_and_the_decay_chapter_quote_one_rate_at_a_radius(tmp_path):
    # The findings read the analyses of role radius (the sweep); the chapter reads every analysis. With the network
    # they share counted once, both quote (-0.12 - 0.13 - 0.14) / 3 = -0.13 at radius 0.9.
    from rnnbench.findings import decay as claims
    from rnnbench.findings.evidence import Evidence, Roles

    sweep = [tanh(0.9, s, r) for s, r in ((0, -0.12), (1, -0.13), (2, -0.14))]
    write_analysis(tmp_path, "sweep", [p for p, _ in sweep], [r for _, r in sweep])
    write_analysis(tmp_path, "activation", [sweep[0][0]], [sweep[0][1]])
    evidence = Evidence(tmp_path, Roles(analyses={"radius": ("sweep",)}))
    keys = evidence.analysis("sweep")["keys"]
    [(_, networks)] = claims.setting_rates(keys, claims.backward_rates(evidence, "sweep"))
    [chapter] = decay.untrained_rates(tmp_path)["measured"]
    assert networks["rate"].mean() == pytest.approx(chapter, abs=1e-15) and chapter == pytest.approx(-0.13, abs=1e-15)


def test_a_tanh_network_below_the_edge_whose_gradient_grows_is_marked(tmp_path):
    cases = [tanh(0.9, 0, 0.02)]
    write_analysis(tmp_path, "odd", [p for p, _ in cases], [r for _, r in cases])
    assert decay.below_edge(decay.untrained_rates(tmp_path))["grows"].tolist() == [True]


def test_growth_above_one_slower_than_log_rho_and_faster_are_told_apart(tmp_path):
    # log 2 = 0.693: a rate of 0.12 grows slower than the eigenvalue story says; at rho 1.1 (log 0.0953) 0.2 grows faster
    cases = [tanh(2.0, 0, 0.12)]
    write_analysis(tmp_path, "grow", [p for p, _ in cases], [r for _, r in cases])
    untrained = decay.untrained_rates(tmp_path)
    assert decay.above_edge(untrained)["verdict"].tolist() == [decay.GROWS_SLOWER]
    assert decay.below_edge(untrained).empty  # no network below the edge: nothing to say
    fast = [tanh(1.1, 0, 0.2)]
    write_analysis(tmp_path, "fast", [p for p, _ in fast], [r for _, r in fast])
    verdicts = decay.above_edge(decay.untrained_rates(tmp_path)).set_index("radius")["verdict"]
    assert verdicts.to_dict() == {
        1.1: decay.GROWS,
        2.0: decay.GROWS,
    }  # one verdict per activation: not every rate is slower


def test_the_trained_rates_keep_each_snapshot_of_a_run_in_order(tmp_path):
    points = [
        {"run_id": "rnn-ptb-0123456789", "family": "rnn", "hidden": 200, "seed": 1, "snapshot": s}
        for s in ("0", "1", "final")
    ]
    rates = [
        {"rate": r, "rho": rho, "jacobian_bound": 0.0, "pascanu_bound": 0.0, "radius_rate": math.log(rho)}
        for r, rho in ((-0.5, 0.6), (-0.2, 1.2), (-0.1, 1.6))
    ]
    write_analysis(tmp_path, "trained", points, rates, network="study")
    trained = decay.trained_rates(tmp_path)
    assert trained[["snapshot", "rate", "rho"]].values.tolist() == [
        ["0", -0.5, 0.6],
        ["1", -0.2, 1.2],
        ["final", -0.1, 1.6],
    ]
    assert [decay.snapshot_name(s) for s in trained["snapshot"]] == [
        "at initialisation",
        "after epoch 1",
        "at the end of training",
    ]


def write_probe(results: Path, trained: float, attracted: float) -> None:
    """A probe of two seeds' runs at initialisation (chance) and trained (``trained`` on every example,
    ``attracted`` where the nearest noun has the other number), 200 examples a distance; its figure and the
    study's summary (both runs learned)."""
    from rnnbench.book.probe import TRAINED, UNTRAINED

    name, root = "probe_x", str(results)
    Path(paths.analysis_dir(root, name)).mkdir(parents=True)
    record = {"name": name, "kind": "probe", "study": "s", "where": {"bptt": 0}, "snapshots": ["0", "final"]}
    record["measure"] = {"folds": 5, "l2": 0.01, "permutations": 10, "seed": 0, "dtype": "float32"}
    Path(paths.analysis_record(root, name)).write_text(json.dumps(record))
    rows = []
    for run_id in ("r1", "r2"):
        for snapshot in (UNTRAINED, TRAINED):
            for labels, subset, d in [
                (la, su, d) for la in ("true", "shuffled") for su in ("all", "attractor") for d in (0, 1, 2)
            ]:
                if subset == "attractor" and d == 0:
                    continue
                read = trained if subset == "all" else attracted
                accuracy = read if snapshot == TRAINED and labels == "true" else 0.5
                rows.append(
                    {
                        "run_id": run_id,
                        "snapshot": snapshot,
                        "labels": labels,
                        "subset": subset,
                        "distance": d,
                        "n_scored": 200,
                        "accuracy": accuracy,
                        "accuracy_low": accuracy - 0.07,
                        "accuracy_high": accuracy + 0.07,
                        "chance": 0.5,
                        "nearest_noun": 0.8,
                        "gradient_relative": 0.1**d,
                    }
                )
    pd.DataFrame(rows).to_csv(paths.analysis_table(root, name, "probe"), index=False)
    for fmt in paths.FIGURE_FORMATS:
        Path(paths.analysis_figure(root, name, fmt)).write_bytes(b"figure")
    # its record, as the figure rule writes it: three panels of three distances each (rnnbench.plots.drawn)
    drawn = {"points": 36, "panels": [{"points": 12, "positions": 3}] * 3}
    Path(paths.provenance(paths.analysis_figure(root, name, "png"))).write_text(json.dumps({"drawn": drawn}))
    Path(paths.study_summary(root, "s")).parent.mkdir(parents=True)
    pd.DataFrame({"run_id": ["r1", "r2"], "outcome": ["learned", "learned"]}).to_csv(paths.study_summary(root, "s"))


def test_the_probe_section_quotes_the_farthest_distance_and_says_the_state_carries_the_number(tmp_path):
    from rnnbench.book import probe

    write_probe(tmp_path, trained=0.95, attracted=0.9)
    values = probe.probe_values(tmp_path, staging=tmp_path / "staged")
    assert (values.far, values.trained, values.attracted, values.untrained) == ("2", "0.950", "0.900", "0.500")
    # both seeds learned: "2 seeds, all of which learned"
    assert (values.fall, values.networks, values.learned, values.carries) == ("0.01", "2 seeds", "all", probe.CARRIES)
    assert (tmp_path / "staged" / "probe-probe-x.png").is_file() and values.study == "`s` (`bptt = 0`)"


def test_a_state_read_no_better_than_the_nearest_noun_does_not_carry_the_number(tmp_path):
    from rnnbench.book import probe

    write_probe(tmp_path, trained=0.8, attracted=0.5)  # above chance, but the nearest noun's number scores 0.8
    assert probe.probe_values(tmp_path, staging=tmp_path / "staged").carries == probe.NOT_CARRIED
