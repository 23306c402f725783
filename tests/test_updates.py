"""The step budget: the updates an epoch holds, the updates a run takes across epochs under max_steps, when training
stops (across an epoch boundary, and after a resume), and which settings are one run. Hand-worked numbers first,
then the training loop on a small corpus."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import torch

from rnnbench.config import updates
from rnnbench.config.files import ConfigError
from rnnbench.config.runs import RunConfig
from rnnbench.config.settings import load_config
from rnnbench.data import load_corpus
from rnnbench.data.corpus_facts import known_sizes
from rnnbench.training.loop import train_run
from rnnbench.training.reading import reading_for

torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[1]

# --- the arithmetic, by hand ------------------------------------------------------------------------------------


def test_an_update_reads_batch_times_k_tokens():
    assert updates.tokens_per_update(20, 10) == 200
    assert updates.tokens_per_update(20, 70) == 1_400
    assert updates.tokens_per_update(32, 2) == 64


def test_an_epoch_of_a_stream_holds_its_columns_in_segments_of_k():
    # 4,200 tokens in 20 columns of 210: 209 input steps (the last row is only a target), 20 segments of 10 and one
    # of 9: 21 updates, 20 of 200 tokens and one of 180, 4,180 tokens in all.
    assert updates.stream_updates(4_200, 20, 10) == 21
    assert 20 * updates.tokens_per_update(20, 10) + 20 * 9 == 4_180 == 20 * (4_200 // 20 - 1)
    # PTB's first 465,000 tokens in 20 columns: 23,249 input steps a column
    assert [updates.stream_updates(465_000, 20, k) for k in (10, 35, 70)] == [2_325, 665, 333]


def test_an_epoch_of_sentences_or_windows_holds_one_update_per_batch():
    assert updates.sentence_updates(8_000, 32) == 250
    assert updates.sentence_updates(50, 16) == 4  # 16, 16, 16 and 2 sentences
    assert updates.window_updates(1_000, 4, 256) == 4  # 996 windows: 256, 256, 256, 228


def test_training_stops_where_the_budget_is_spent_across_an_epoch_boundary():
    # 21 updates an epoch, max_steps 50, max_epochs 5: 21 + 21 = 42 after two epochs, 8 left, the third stops there
    assert updates.planned_updates(21, 5, 50) == (21, 21, 8)
    # max_epochs comes first: 2 epochs of 21 and the budget is never spent
    assert updates.planned_updates(21, 2, 50) == (21, 21)
    # a budget that ends on an epoch's last update: two whole epochs
    assert updates.planned_updates(21, 5, 42) == (21, 21)
    # a budget below one epoch stops the first part way
    assert updates.planned_updates(21, 5, 8) == (8,)
    # no budget: every epoch whole
    assert updates.planned_updates(21, 3, None) == (21, 21, 21)


def test_after_a_resume_the_budget_counts_the_updates_taken_before():
    # resumed after epoch 1 (21 taken): the second epoch is whole, the third takes what is left, then none is left
    assert updates.epoch_updates(21, 21, 50) == 21
    assert updates.epoch_updates(21, 42, 50) == 8
    assert updates.epoch_updates(21, 50, 50) == 0
    assert updates.epoch_updates(21, 42, None) == 21


def test_the_budget_is_written_as_the_epochs_and_cap_the_run_takes():
    ptb = known_sizes("ptb", {})
    half = {"family": "rnn", "bptt": 70, "batch_size": 20, "train_tokens": 465_000, "max_steps_per_epoch": None}
    # 333 updates an epoch at k = 70: a cap of 333 in one epoch is the epoch itself; 665 takes two, the second cut
    assert updates.budget({**half, "max_epochs": 1, "max_steps": 333}, ptb) == (1, None)
    assert updates.budget({**half, "max_epochs": 9, "max_steps": 665}, ptb) == (2, 665)
    assert updates.budget({**half, "max_epochs": 9, "max_steps": 666}, ptb) == (2, None)
    assert updates.budget({**half, "max_epochs": 1, "max_steps": 5_000}, ptb) == (1, None)  # never reached
    # whole sentences: 8,000 of them in batches of 32 are 250 updates an epoch, so 3,000 are 12 epochs
    options = {"train_sentences": 8_000, "valid_sentences": 500, "test_sentences": 1_500, "max_distance": 12}
    sentences = {"family": "rnn", "bptt": 0, "batch_size": 32, "train_tokens": None, "max_steps_per_epoch": None}
    assert updates.budget({**sentences, "max_epochs": 22, "max_steps": 3_000}, known_sizes("agreement", options)) == (
        12,
        None,
    )
    # a stream of the agreement corpus: its length is known only once it is generated, so the settings stand
    stream = {**sentences, "bptt": 20}
    assert updates.budget({**stream, "max_epochs": 22, "max_steps": 3_000}, known_sizes("agreement", options)) == (
        22,
        3_000,
    )


# --- run ids: one run for the same updates ------------------------------------------------------------------------


PTB_HALF = {"family": "rnn", "corpus": "ptb", "train_tokens": 465_000, "hidden": 100, "schedule": "constant"}


def test_a_cap_the_run_never_reaches_is_the_same_run():
    plain = RunConfig.from_settings({**PTB_HALF, "bptt": 35, "max_epochs": 1})
    capped = RunConfig.from_settings({**PTB_HALF, "bptt": 35, "max_epochs": 2, "max_steps": 665})
    assert capped.run_id == plain.run_id and plain.budget == capped.budget == (1, None)


def test_a_cap_that_stops_an_epoch_part_way_is_a_new_run():
    plain = RunConfig.from_settings({**PTB_HALF, "bptt": 10, "max_epochs": 1})
    capped = RunConfig.from_settings({**PTB_HALF, "bptt": 10, "max_epochs": 2, "max_steps": 665})
    assert capped.run_id != plain.run_id and capped.budget == (1, 665)
    # the same cap written with more epochs than it needs is the same run
    wider = RunConfig.from_settings({**PTB_HALF, "bptt": 10, "max_epochs": 7, "max_steps": 665})
    assert wider.run_id == capped.run_id


def test_a_run_without_a_budget_keeps_its_id():
    # max_steps was added after run ids existed: null, its default, leaves every earlier id as it was
    cfg = RunConfig.from_settings({**PTB_HALF, "bptt": 10, "max_epochs": 1})
    assert "max_steps" not in cfg.settings() and cfg.settings()["max_epochs"] == 1


# --- the config -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, r"^config\.studies\.s\.fixed\.max_steps: 0 is out of range; allowed: \{'minimum': 1\}"),
        ("many", r"^config\.studies\.s\.fixed\.max_steps: "),
        (2.5, r"^config\.studies\.s\.fixed\.max_steps: "),
    ],
)
def test_a_bad_step_budget_fails_at_load_naming_the_key(value, expected):
    config = {
        "studies": {
            "s": {"family": "rnn", "corpus": "ptb", "fixed": {"max_steps": value}, "vary": {"bptt": [10, 35]}},
        }
    }
    with pytest.raises(ConfigError, match=expected):
        load_config(config)


def test_a_step_budget_loads_and_is_each_run_s_setting():
    config = load_config(
        {"studies": {"s": {"family": "rnn", "corpus": "ptb", "fixed": {"max_steps": 500}, "vary": {"bptt": [10]}}}}
    )
    (_, cfg), *_ = config.study_runs("s")
    assert cfg.max_steps == 500 and cfg.to_json()["max_steps"] == 500


def study_comment(name: str) -> str:
    """The comment lines above study ``name`` in config/config.yaml, joined."""
    lines = (REPO / "config" / "config.yaml").read_text(encoding="utf-8").splitlines()
    at = lines.index(f"  {name}:")
    above = []
    for line in reversed(lines[:at]):
        if not line.strip().startswith("#"):
            break
        above.append(line.strip().lstrip("#").strip())
    return " ".join(reversed(above))


def counts_per_k(text: str) -> dict[int, int]:
    """'2,325 at k = 10, 665 at k = 35' -> {10: 2325, 35: 665}; a bare 'at 35' continues the k of the list."""
    found = {}
    for number, k in re.findall(r"([\d,]+) (?:updates )?at (?:k = )?(\d+)", text):
        found.setdefault(int(k), int(number.replace(",", "")))
    return found


def test_the_ptb_designs_state_the_updates_and_tokens_each_length_takes():
    config = load_config(REPO / "config" / "config.yaml")
    tokens = study_comment("truncation_ptb")
    planned = {
        p["bptt"]: sum(updates.planned_updates(updates.stream_updates(cfg.train_tokens, 20, cfg.bptt), 1, None))
        for p, cfg in config.study_runs("truncation_ptb")
    }
    assert counts_per_k(tokens.split("Equal tokens")[1]) == planned == {10: 2_325, 35: 665, 70: 333}

    equal = study_comment("truncation_updates_ptb")
    held = {cfg.max_steps for _, cfg in config.study_runs("truncation_updates_ptb")}
    assert held == {665} and "same 665 optimiser steps" in equal and planned[35] == 665
    read = {}
    for point, cfg in config.study_runs("truncation_updates_ptb"):
        per_epoch = updates.stream_updates(cfg.train_tokens, cfg.batch_size, cfg.bptt)
        plan = updates.planned_updates(per_epoch, cfg.max_epochs, cfg.max_steps)
        assert sum(plan) == 665
        # tokens: every update B x k, the last segment of a whole epoch shorter (its column's 23,249 steps)
        column = cfg.train_tokens // cfg.batch_size - 1
        read[point["bptt"]] = sum(cfg.batch_size * (column if n == per_epoch else n * cfg.bptt) for n in plan)
    stated = {int(k): int(n.replace(",", "")) for n, k in re.findall(r"([\d,]+) at k = (\d+)", equal)}
    assert stated == read == {10: 133_000, 35: 464_980, 70: 929_780}


def test_the_agreement_design_states_the_updates_each_length_takes(cache_dir):
    config = load_config(REPO / "config" / "config.yaml")
    text = study_comment("truncation_agreement")
    runs = [(p, cfg) for p, cfg in config.study_runs("truncation_agreement") if p["seed"] == 1]
    corpus = load_corpus("agreement", cache_dir=cache_dir, **runs[0][1].corpus_options)
    per_epoch, epochs, three = {}, {}, {}
    for point, cfg in runs:
        n = reading_for(cfg, corpus).steps_per_epoch()
        per_epoch[point["bptt"]], three[point["bptt"]] = n, 3 * n
        plan = updates.planned_updates(n, cfg.max_epochs, cfg.max_steps)
        assert sum(plan) == cfg.max_steps == 3_000  # every length reaches the budget within max_epochs
        epochs[point["bptt"]] = len(plan)
    assert max(epochs.values()) == runs[0][1].max_epochs  # max_epochs is the longest length's need, no more
    equal_epochs, rest = text.split("equal epochs (3) would give ")[1].split(". An epoch holds ")
    assert counts_per_k(equal_epochs.replace("bptt 0", "0")) == three
    holds, take = rest.split(" (rnnbench.config.updates), so 3,000 take ")
    assert counts_per_k(holds.replace("bptt 0", "0")) == per_epoch
    stated = [int(n) for n in re.findall(r"\d+", take.split(" epochs")[0])]
    assert stated == [epochs[k] for k in (2, 5, 10, 20, 0)]


# --- the loop -----------------------------------------------------------------------------------------------------

# 50 training sentences in batches of 16: 4 updates an epoch (16, 16, 16 and 2 sentences), generated in well
# under a second
FIFTY = {"seed": 0, "train_sentences": 50, "valid_sentences": 20, "test_sentences": 20}


def small(**settings) -> RunConfig:
    return RunConfig.from_settings(
        {
            "family": "rnn",
            "corpus": "agreement",
            "corpus_options": FIFTY,
            "hidden": 8,
            "embed_dim": 4,
            "output": "full",
            "batch_size": 16,
            "bptt": 0,
            "optimizer": "adam",
            "lr": 0.01,
            "schedule": "constant",
            **settings,
        }
    )


def records(out: Path) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    return (
        json.loads((out / "metrics.json").read_text()),
        pd.read_csv(out / "epochs.csv"),
        pd.read_csv(out / "steps.csv"),
    )


def test_the_loop_stops_part_way_through_the_epoch_that_spends_the_budget(tmp_path, cache_dir):
    cfg = small(max_epochs=5, max_steps=10)
    assert cfg.budget == (3, 10)  # 4 + 4 + 2
    metrics = train_run(cfg, tmp_path, cache_dir=cache_dir)
    metrics, epochs, steps = records(tmp_path)
    assert metrics["steps"] == 10 and metrics["epochs"] == 3
    assert epochs["steps"].tolist() == [4, 4, 2]
    assert steps["step"].tolist() == list(range(1, 11))
    assert steps["epoch"].tolist() == [1] * 4 + [2] * 4 + [3] * 2
    assert epochs["valid_ppl"].notna().all()  # the cut epoch is validated like any other
    assert json.loads((tmp_path / "config.json").read_text())["max_steps"] == 10  # the run's record holds its budget


def test_a_resumed_run_spends_what_is_left_of_its_budget(tmp_path, cache_dir):
    cfg = small(max_epochs=5, max_steps=10)
    whole = train_run(cfg, tmp_path / "whole", cache_dir=cache_dir)
    first = train_run(cfg, tmp_path / "split", cache_dir=cache_dir, epoch_limit=1)
    assert first == {"run_id": cfg.run_id, "interrupted_after_epoch": 1}
    resumed = train_run(cfg, tmp_path / "split", cache_dir=cache_dir)
    assert resumed["steps"] == whole["steps"] == 10 and resumed["epochs"] == 3
    for key in ("test_ppl", "valid_ppl", "agreement_accuracy"):
        assert resumed[key] == whole[key], key
    _, epochs, steps = records(tmp_path / "split")
    assert epochs["steps"].tolist() == [4, 4, 2] and steps["step"].tolist() == list(range(1, 11))


def test_a_budget_that_ends_an_epoch_trains_the_run_its_epochs_train(tmp_path, cache_dir):
    capped, plain = small(max_epochs=5, max_steps=8), small(max_epochs=2)
    assert capped.run_id == plain.run_id  # one run: the same 8 updates in the same 2 epochs
    a = train_run(capped, tmp_path / "capped", cache_dir=cache_dir)
    b = train_run(plain, tmp_path / "plain", cache_dir=cache_dir)
    for key in ("steps", "epochs", "test_ppl", "valid_ppl", "agreement_accuracy"):
        assert a[key] == b[key], key


def test_every_update_of_a_stream_reads_batch_times_k_tokens(tmp_path, cache_dir):
    cfg = small(bptt=5, batch_size=4, max_epochs=3, max_steps=7)  # 7 updates, well inside the first epoch
    train_run(cfg, tmp_path, cache_dir=cache_dir)
    metrics, epochs, _ = records(tmp_path)
    assert metrics["steps"] == 7 and epochs["tokens"].tolist() == [7 * updates.tokens_per_update(4, 5)]


def test_the_smoke_build_holds_each_ptb_design_as_the_default_does():
    from rnnbench.config.files import merge_config_files

    smoke = load_config(merge_config_files([REPO / "config" / "config.yaml", REPO / "config" / "smoke.yaml"]))
    for _, cfg in smoke.study_runs("truncation_ptb"):  # every length reads its whole slice: within the epoch's cap
        whole = updates.stream_updates(cfg.train_tokens, cfg.batch_size, cfg.bptt)
        assert whole <= cfg.max_steps_per_epoch and cfg.budget == (1, None)
    plans = {cfg.bptt: cfg.budget for _, cfg in smoke.study_runs("truncation_updates_ptb")}
    assert set(plans.values()) == {(1, 10)}  # the step budget binds, below both the epoch and its cap
