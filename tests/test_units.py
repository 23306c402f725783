"""Silent hidden units: derivatives read off outputs by hand, and networks built so that a chosen unit is silent."""

import numpy as np
import pandas as pd
import pytest
import torch

from rnnbench.data.batching import batchify, bptt_segments, sentence_batches
from rnnbench.models import build_model
from rnnbench.models.base import ModelConfig
from rnnbench.results.silent_units import UNIT_COLUMNS, derivative_from_output, silent_units, unit_table
from rnnbench.training.reading import Batch


def test_the_derivative_is_read_off_the_output_by_hand():
    h = torch.tensor([0.5, 0.0, -0.5])
    # tanh: 1 - h^2 = 0.75, 1, 0.75
    torch.testing.assert_close(derivative_from_output(h, "tanh"), torch.tensor([0.75, 1.0, 0.75]))
    # sigmoid at h = 0.5 (a = 0) has its largest slope, 1/4; at h = 0.9, 0.9 * 0.1 = 0.09
    torch.testing.assert_close(derivative_from_output(torch.tensor([0.5, 0.9]), "sigmoid"), torch.tensor([0.25, 0.09]))
    # relu: 1 where the unit fired, 0 where its input was 0 or below (its output is 0 there)
    torch.testing.assert_close(derivative_from_output(torch.tensor([0.0, 2.0]), "relu"), torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match="no derivative for activation 'softsign'"):
        derivative_from_output(h, "softsign")


def network(activation: str, bias_of_unit_0: float) -> torch.nn.Module:
    """A 4-unit Elman LM whose unit 0 reads nothing (zero rows of W and U) but its bias: its input is that bias at
    every step, whatever the text. The other units' biases are 1, far above what the small initial weights add
    or take away, so that they fire at every step."""
    torch.manual_seed(0)
    model = build_model(ModelConfig("rnn", vocab_size=20, embed_dim=3, hidden=4, activation=activation, output="full"))
    with torch.no_grad():
        model.cell.W[0].zero_()
        model.cell.U[0].zero_()
        model.cell.b_h.fill_(1.0)
        model.cell.b_h[0] = bias_of_unit_0
    return model


STREAM = np.random.default_rng(0).integers(0, 20, size=400)


def stream_batches(stream=STREAM, batch_size=4, bptt=7) -> list[Batch]:
    return [Batch(i, t) for i, t in bptt_segments(batchify(stream, batch_size), bptt)]


def test_a_relu_unit_whose_input_is_always_negative_is_silent_and_the_others_are_not():
    silent, positions = silent_units(network("relu", -1.0), stream_batches(), carry_state=True)
    assert silent.tolist() == [True, False, False, False]
    assert positions == 4 * 99  # 100 steps a column, the last one only a target
    # the same unit with a positive input passes gradient at every step
    silent, _ = silent_units(network("relu", 1.0), stream_batches(), carry_state=True)
    assert not silent.any()


def test_a_unit_that_fires_only_on_a_long_carried_state_is_silent_when_each_sentence_starts_from_zero():
    # Unit 1 counts steps: h1_t = relu(h1_{t-1} + 0.1) = 0.1 t. Unit 0 reads it: a0_t = h1_{t-1} - 1 = 0.1 (t - 1) - 1,
    # above zero from t = 12 on. Sentences of 6 tokens (5 words and <eos>), each read from h_0 = 0, stop at t = 6:
    # unit 0 never fires. The same text as one stream, the state carried, reaches t = 12 within its first segments.
    model = network("relu", -1.0)
    with torch.no_grad():
        model.cell.U[0, 1] = 1.0
        model.cell.W[1].zero_()
        model.cell.U[1].zero_()
        model.cell.U[1, 1] = 1.0
        model.cell.b_h[1] = 0.1
    words = np.random.default_rng(1).integers(1, 20, size=(40, 5))
    text = np.concatenate([words, np.zeros((40, 1), dtype=words.dtype)], axis=1).ravel()  # <eos> = 0 ends each
    by_sentence = [Batch(i, t) for i, t, _ in sentence_batches(text, np.arange(0, text.size, 6), 8)]
    silent, positions = silent_units(model, by_sentence, carry_state=False)
    assert silent.tolist() == [True, False, False, False]
    assert positions == 40 * 6  # every token of every sentence is a target once, the padding none
    silent, _ = silent_units(model, stream_batches(text, batch_size=2, bptt=5), carry_state=True)
    assert not silent.any()


def test_a_tanh_unit_saturated_to_one_in_float32_passes_no_gradient():
    # tanh(20) = 1 - 8.5e-18 is 1.0 in float32: 1 - h^2 = 0 exactly
    assert torch.tanh(torch.tensor(20.0)).item() == 1.0
    silent, _ = silent_units(network("tanh", 20.0), stream_batches(), carry_state=True)
    assert silent.tolist() == [True, False, False, False]
    silent, _ = silent_units(network("tanh", 2.0), stream_batches(), carry_state=True)
    assert not silent.any()


def test_the_unit_table_counts_each_runs_silent_units_and_leaves_a_diverged_runs_counts_empty():
    runs = pd.DataFrame(
        {
            "run_id": ["a", "b", "c"],
            "activation": ["relu", "relu", "tanh"],
            "seed": [1, 2, 1],
            "outcome": ["learned", "learned", "diverged"],
            "diverged": [False, False, True],
        }
    )
    silent = {"a": (np.array([True, False, False, False]), 396), "b": (np.array([True, True, False, False]), 396)}
    table = unit_table(runs, silent, ["activation"])
    assert table["run_id"].tolist() == ["a", "b", "c"]
    assert table["silent_units"].tolist()[:2] == [1, 2] and table["silent_fraction"].tolist()[:2] == [0.25, 0.5]
    assert table["units"].tolist()[:2] == [4, 4] and table["positions"].tolist()[:2] == [396, 396]
    assert table.iloc[2][list(UNIT_COLUMNS)].isna().all() and table.iloc[2]["outcome"] == "diverged"


def test_a_studys_runs_are_counted_from_their_model_files_as_their_evaluation_reads_them(tmp_path, cache_dir):
    # rule study_extra_table ("units") counts each run's units from its model.pt over its corpus's validation split;
    # a diverged run is left out (unit_table keeps its row, its counts empty)
    from test_train import tiny

    from rnnbench.data.corpora import load_corpus
    from rnnbench.decay.analysis import load_run
    from rnnbench.results.silent_units import silent_units_by_run
    from rnnbench.training.loop import train_run
    from rnnbench.training.reading import reading_for

    configs = [tiny(max_epochs=1), tiny(max_epochs=1, seed=2)]
    for cfg in configs:
        train_run(cfg, tmp_path / cfg.run_id, cache_dir=cache_dir)
    runs = pd.DataFrame({"run_id": [c.run_id for c in configs], "diverged": [False, True]})
    models = {c.run_id: str(tmp_path / c.run_id / "model.pt") for c in configs}
    found = silent_units_by_run(runs, models, data_dir=None, cache_dir=str(cache_dir))
    assert list(found) == [configs[0].run_id]
    cfg, model = load_run(models[configs[0].run_id])
    reading = reading_for(cfg, load_corpus(cfg.corpus, cache_dir=cache_dir, **cfg.corpus_options))
    mask, positions = silent_units(model, reading.eval_batches("valid"), carry_state=reading.carries_state)
    assert found[configs[0].run_id][0].tolist() == mask.tolist() and found[configs[0].run_id][1] == positions > 0
    assert mask.size == cfg.hidden
