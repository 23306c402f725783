"""Analyses in the config: expansion into points (untrained specs, a study's runs at snapshots) and the
errors that name the key before any job runs."""

from pathlib import Path

import pytest

from rnnbench import paths
from rnnbench.config.files import ConfigError, merge_config_files
from rnnbench.config.settings import load_config

REPO = Path(__file__).resolve().parents[1]
STUDY = {"family": "rnn", "corpus": "ptb", "fixed": {"max_epochs": 3}, "vary": {"hidden": [50, 100]}, "seeds": [1]}
UNTRAINED = {"network": {"untrained": {"fixed": {"hidden": 20}, "vary": {"radius": [0.5, 1.5]}, "seeds": [0, 1]}}}


AGREEMENT = {
    "family": "rnn",
    "corpus": "agreement",
    "fixed": {"output": "full", "max_epochs": 2},
    "vary": {"bptt": [0, 5]},
    "seeds": [1, 2],
}
PROBE = {"kind": "probe", "network": {"study": "g", "where": {"bptt": 0}, "snapshots": [0, "final"]}}


def config(**analyses):
    return {"studies": {"h": STUDY}, "analyses": analyses}


def with_agreement(**analyses):
    """config() with g, an agreement study, beside h: what a probe reads."""
    return {"studies": {"h": STUDY, "g": AGREEMENT}, "analyses": analyses}


def error_of(source) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(source)
    return str(caught.value)


def trained(**network):
    return {"network": {"study": "h", **network}}


def test_untrained_points_are_every_varied_value_times_every_seed_with_the_defaults_filled_in():
    cfg = load_config(config(u=UNTRAINED))
    points = cfg.analysis_points("u")
    assert [(p.keys["radius"], p.keys["seed"]) for p in points] == [(0.5, 0), (0.5, 1), (1.5, 0), (1.5, 1)]
    assert points[0].keys == {
        "family": "rnn",
        "radius": 0.5,
        "activation": "tanh",
        "hidden": 20,
        "embed_dim": 200,
        "seed": 0,
    }
    assert all(p.run is None for p in points)
    measure = cfg.analyses["u"].measure
    assert (measure["steps"], measure["sequences"], measure["dtype"], measure["split"]) == (200, 32, "float32", "valid")
    assert cfg.analyses["u"].hue == "radius"  # the first varied setting


def test_an_untrained_lstm_beside_an_elman_network_has_no_radius_or_activation():
    contrast = {"network": {"untrained": {"fixed": {"radius": 1.0, "hidden": 20}, "vary": {"family": ["rnn", "lstm"]}}}}
    cfg = load_config(config(c=contrast))
    rnn, lstm = cfg.analysis_points("c")
    assert (rnn.keys["family"], rnn.keys["radius"], rnn.keys["activation"]) == ("rnn", 1.0, "tanh")
    assert (lstm.keys["family"], lstm.keys["radius"], lstm.keys["activation"]) == ("lstm", None, None)
    assert lstm.untrained == {"family": "lstm", "hidden": 20, "embed_dim": 200, "seed": 0}
    assert cfg.analyses["c"].hue == "family"


def test_a_studys_runs_are_shared_not_new_runs_and_each_snapshot_is_a_point():
    cfg = load_config(config(t=trained(where={"hidden": 100}, snapshots=[0, 2, "final"])))
    points = cfg.analysis_points("t")
    run_id = next(c.run_id for point, c in cfg.study_runs("h") if point["hidden"] == 100)
    assert [p.keys["snapshot"] for p in points] == ["0", "2", "final"]
    assert {p.keys["run_id"] for p in points} == {run_id}
    assert set(cfg.all_runs()) == {c.run_id for _, c in cfg.study_runs("h")}  # nothing added to train
    record = cfg.analyses["t"].record(points)
    assert record["run_ids"] == [run_id] and record["vary"] == ["snapshot"]


def test_a_probe_reads_a_studys_agreement_runs_at_its_snapshots_with_only_the_settings_it_uses():
    cfg = load_config(with_agreement(p={**PROBE, "roles": ["state_carries"], "measure": {"folds": 3}}))
    points = cfg.analysis_points("p")
    assert [(p.keys["seed"], p.keys["snapshot"]) for p in points] == [(1, "0"), (1, "final"), (2, "0"), (2, "final")]
    record = cfg.analyses["p"].record(points)
    assert record["kind"] == "probe" and record["measure"] == {
        "folds": 3,
        "l2": 0.01,
        "permutations": 10,
        "seed": 0,
        "dtype": "float32",
    }
    assert cfg.analyses["p"].roles == ("state_carries",)
    outputs = set(paths.expected_outputs(cfg, []))
    root = cfg.results_dir
    assert {
        f"{root}/analyses/p/{f}" for f in ("probe.csv", "probe.provenance.json", "figure.png", "figure.pdf")
    } <= outputs


def test_expected_outputs_list_each_analysis_tables_record_and_figure():
    cfg = load_config(config(u=UNTRAINED, p={"kind": "passage", **trained()}))
    outputs = set(paths.expected_outputs(cfg, []))
    root = cfg.results_dir
    assert {
        f"{root}/analyses/u/{f}" for f in ("curves.csv", "rates.csv", "analysis.json", "figure.png", "figure.pdf")
    } <= outputs
    assert {f"{root}/analyses/u/figure.provenance.json", f"{root}/analyses/p/passage.csv"} <= outputs
    assert f"{root}/analyses/p/figure.png" not in outputs  # a passage has a table, no figure


@pytest.mark.parametrize(
    "analysis, named",
    [
        ({**UNTRAINED, "measure": {"stepz": 10}}, r"config.analyses.a.measure: unknown key(s) 'stepz'"),
        (
            {"network": {"untrained": {"vary": {"radius": [0.5], "gain": [1]}}}},
            r"config.analyses.a.network.untrained.vary: unknown key(s) 'gain'",
        ),
        ({"network": {"study": "nope"}}, "analyses.a.network.study: 'nope' is not a study of this config; known: h"),
        (trained(snapshots=[0, 4]), "analyses.a.network.snapshots[1]: epoch 4 is past run rnn-ptb-"),
        (trained(where={"hidden": 70}), "analyses.a.network.where: no run of study 'h' has {'hidden': 70}"),
        (trained(where={"bptt": 35}), "analyses.a.network.where.bptt: not a setting study 'h' varies"),
        ({"network": {"untrained": {"fixed": {"radius": 1}}, "study": "h"}}, "analyses.a.network: give exactly one of"),
        (
            {"network": {"untrained": {"vary": {"activation": ["tanh"]}}}},
            "analyses.a.network.untrained: an Elman network needs a spectral radius",
        ),
        (
            {"network": {"untrained": {"fixed": {"family": "lstm", "radius": 1.0}}}},
            "analyses.a.network.untrained.fixed.radius: an LSTM has no",
        ),
        (
            {"network": {"untrained": {"vary": {"family": ["rnn", "lstm"], "radius": [0.5, 1]}}}},
            "analyses.a.network.untrained.vary.radius: an LSTM has no",
        ),
        ({**UNTRAINED, "figure": {"panel": "depth"}}, "analyses.a.figure.panel: 'depth' is not a column of its points"),
        (
            {**UNTRAINED, "measure": {"steps": 50, "fit": [5, 60]}},
            "analyses.a.measure.fit: [5, 60] must be two distances",
        ),
        (
            {**UNTRAINED, "kind": "passage", "measure": {"corpus": "brown"}},
            "analyses.a.kind: the passage is read with the PTB vocabulary",
        ),
        (
            {**UNTRAINED, "network": {**UNTRAINED["network"], "snapshots": [0]}},
            "analyses.a.network.snapshots: only for a study's runs",
        ),
        # a window is steps + 1 tokens of the split: PTB's valid split has 73,760, so 73,759 steps at most
        (
            {**UNTRAINED, "measure": {"steps": 73_760}},
            "analyses.a.measure.steps: 73760 needs windows of 73,761 tokens, and the ptb valid split has 73,760; "
            "allowed: steps <= 73,759",
        ),
        (
            {**UNTRAINED, "measure": {"corpus": "agreement", "split": "test", "steps": 60_000}},
            "analyses.a.measure.steps: 60000 needs windows of 60,001 tokens, and the agreement test split has at "
            "most 52,000; allowed: fewer steps, or more test_sentences",  # 2,000 sentences of at most 26 tokens
        ),
        (
            {**trained(), "measure": {"split": "test", "steps": 90_000}},  # a study's runs: their own corpus
            "analyses.a.measure.steps: 90000 needs windows of 90,001 tokens, and the ptb test split has 82,430",
        ),
    ],
)
def test_a_wrong_analysis_fails_at_load_naming_the_key(analysis, named):
    message = error_of(config(a=analysis))
    assert message.startswith(named), message


@pytest.mark.parametrize(
    "analysis, named",
    [
        ({**PROBE, "measure": {"fold": 3}}, r"config.analyses.a.measure: unknown key(s) 'fold'; allowed: "),
        ({**PROBE, "measure": {"folds": 1}}, "config.analyses.a.measure.folds: 1 is out of range"),
        ({**PROBE, "measure": {"l2": 0}}, "config.analyses.a.measure.l2: 0 is out of range"),
        (
            {**PROBE, "measure": {"steps": 10}},
            "analyses.a.measure.steps: a probe analysis does not read it; it reads: ",
        ),
        ({**UNTRAINED, "measure": {"folds": 3}}, "analyses.a.measure.folds: only a probe analysis reads it"),
        ({**PROBE, **UNTRAINED}, "analyses.a.network.untrained: a probe reads the networks a study trained"),
        ({**PROBE, **trained()}, "analyses.a.network.study: a probe reads the head noun's number"),
        ({**PROBE, "figure": {"panel": "seed"}}, "analyses.a.figure.panel: a probe's figure has panels of its own"),
    ],
)
def test_a_wrong_probe_fails_at_load_naming_the_key(analysis, named):
    message = error_of(with_agreement(a=analysis))
    assert message.startswith(named), message


def test_the_longest_window_a_split_holds_is_allowed():
    load_config(config(a={**UNTRAINED, "measure": {"steps": 73_759}}))  # 73,760 tokens: inputs and the last target


def test_the_shipped_configs_analyses_expand():
    for files in (["config/config.yaml"], ["config/config.yaml", "config/smoke.yaml"]):
        cfg = load_config(merge_config_files([REPO / f for f in files]))
        assert {"decay_radius", "decay_trained_ptb", "decay_passage"} <= set(cfg.analyses)
        for name, analysis in cfg.analyses.items():
            points = cfg.analysis_points(name)
            assert points, name
            if analysis.kind == "gradient_decay":
                assert analysis.measure["steps"] >= (120 if len(files) == 1 else 2), name  # distance >= 100 by default


def test_an_untrained_lstm_point_is_measured_with_the_lstms_own_quantities():
    import numpy as np

    from rnnbench.decay import decay_point

    ids = np.random.default_rng(0).integers(0, 30, size=200)
    spec = {"family": "lstm", "hidden": 6, "embed_dim": 4, "seed": 0}
    curves, rates = decay_point(spec, ids, 30, steps=20, count=2, keys={"family": "lstm"})
    backward = curves[curves["direction"] == "backward"]
    assert set(backward["quantity"]) == {"h", "x", "c"}  # the cell state's gradient as well
    assert backward["distance"].max() == 19
    assert rates["radius_rate"].isna().all() and rates["jacobian_bound"].isna().all()  # no diag(f') U


def test_a_window_longer_than_the_generated_split_is_refused_in_the_job_with_the_key_and_its_exact_length(tmp_path):
    from rnnbench import jobs

    # The default agreement test split: 2,000 sentences, at most 52,000 tokens by the grammar, 29,846 generated.
    # 40,000 steps pass the config's bound and are refused once the corpus exists, before anything is written.
    measure = {"corpus": "agreement", "split": "test", "steps": 40_000, "sequences": 2}
    cfg = load_config(config(a={**UNTRAINED, "measure": measure}))
    analysis, points = cfg.analyses["a"], cfg.analysis_points("a")
    job_points = [
        {
            "keys": dict(p.keys),
            "untrained": dict(p.untrained),
            "model": None,
            "corpus": "agreement",
            "corpus_options": {},
        }
        for p in points
    ]
    out = tmp_path / "analysis"
    outs = {name: str(out / f"{name}.csv") for name in paths.ANALYSIS_TABLES["gradient_decay"]}
    outs |= {f"{name}_provenance": str(out / f"{name}.json") for name in paths.ANALYSIS_TABLES["gradient_decay"]}
    outs["record"] = str(out / "analysis.json")
    with pytest.raises(ConfigError) as caught:
        jobs.decay_analysis(
            analysis.record(points), job_points, outs, data_dir=None, cache_dir=str(tmp_path), provenance={}
        )
    assert str(caught.value) == (
        "analyses.a.measure.steps: 40000 needs windows of 40,001 tokens, and the agreement test split has 29,846; "
        "allowed: steps <= 29,845, or more test_sentences"
    )
    assert not out.exists()
