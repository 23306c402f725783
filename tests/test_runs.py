"""Our runs read from their folders: a run's record, its status, the setting its seeds share."""

from __future__ import annotations

import json

import pytest

from rnnbench.config.runs import RunConfig
from rnnbench.results.runs import read_run, run_status, setting_key


def run_config(**settings) -> dict:
    cfg = RunConfig.from_settings(settings)
    return {"run_id": cfg.run_id, **cfg.to_dict()}


def run_metrics(**values) -> dict:
    base = {
        "test_ppl": 150.0,
        "valid_ppl": 155.0,
        "epochs": 3,
        "steps": 100,
        "diverged": False,
        "diverged_step": None,
        "diverged_reason": None,
        "parameters": 1000,
        "train_seconds": 10.0,
        "tokens_per_second": 1e4,
        "clipped_fraction": 0.0,
    }
    return {**base, **values}


def write_run(root, config: dict, metrics: dict):
    run_dir = root / config["run_id"]
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps(config))
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    return run_dir


# -------------------------------------------------------------------------------------------------
# Status: which of our rows can stand beside a published one.


def test_status_reads_how_the_run_ended():
    cfg = run_config(family="rnn", corpus="ptb", schedule="mikolov", max_epochs=25)
    assert run_status(cfg, run_metrics(epochs=14)) == "converged"  # the schedule stopped it
    assert run_status(cfg, run_metrics(epochs=25)) == "epoch cap"
    assert run_status({**cfg, "schedule": "constant"}, run_metrics(epochs=3)) == "epoch cap"
    assert run_status({**cfg, "schedule": "plateau"}, run_metrics(epochs=14)) == "converged"  # it stops on validation
    assert run_status({**cfg, "eval_tokens": 2000}, run_metrics(epochs=3)) == "subset"
    assert run_status(cfg, run_metrics(diverged=True, test_ppl=None)) == "diverged"
    # one of ten test columns at 46,146 against a median of 250: its perplexity is not the model's reading
    assert (
        run_status(cfg, run_metrics(epochs=14, test_column_worst=46146.0, test_column_median=250.0)) == "stuck column"
    )
    assert run_status(cfg, run_metrics(epochs=14, test_column_worst=330.0, test_column_median=250.0)) == "converged"
    # a step budget spent before the schedule stopped it is a cap, not convergence; one left unspent is not
    assert run_status({**cfg, "max_steps": 100}, run_metrics(epochs=14, steps=100)) == "epoch cap"
    assert run_status({**cfg, "max_steps": 500}, run_metrics(epochs=14, steps=100)) == "converged"


def test_missing_run_files_and_bad_scale_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="metrics.json is missing"):
        (tmp_path / "r").mkdir()
        (tmp_path / "r" / "config.json").write_text("{}")
        read_run(tmp_path / "r", "paper")
    with pytest.raises(ValueError, match=r"scale must be one of \('reference', 'paper', 'short'\)"):
        read_run(tmp_path / "r", "long")


def test_the_seeds_of_one_model_share_a_setting_key():
    config = {"run_id": "ff-ptb-1", "family": "ff", "corpus": "ptb", "hidden": 200, "seed": 1}
    other_seed = {**config, "run_id": "ff-ptb-2", "seed": 2}
    wider = {**config, "hidden": 400}
    assert setting_key(config) == setting_key(other_seed) != setting_key(wider)
    assert setting_key(config).startswith("ff-ptb-")
