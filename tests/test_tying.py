"""Tied input and output embeddings (tie_weights): the softmax's matrix V is the embedding table, one parameter read
at both ends of the network, so its gradient is the sum of the two uses and one update moves both."""

import pytest
import torch

from rnnbench.config.runs import RunConfig
from rnnbench.models import ModelConfig, build_model
from rnnbench.params import count, lstm_lm_shapes, rnn_lm_shapes
from rnnbench.training import optim

VOCAB = 10


def make(family="rnn", seed=0, **options):
    torch.manual_seed(seed)
    settings = {"embed_dim": 4, "hidden": 4, "output": "full", **options}
    return build_model(ModelConfig(family, VOCAB, **settings)).double()


def test_the_output_matrix_is_the_embedding_table_counted_once():
    model = make(tie_weights=True)
    assert model.output.V is model.embedding.weight
    # |V| = 10, d = H = 4. Untied: embedding 40 + W 16 + U 16 + b_h 4 + V 40 + b_y 10 = 126; tied, V is the
    # embedding's 40: 86.
    assert count(rnn_lm_shapes(VOCAB, 4, 4)) == 126
    assert count(rnn_lm_shapes(VOCAB, 4, 4, tied=True)) == 86
    assert model.count_parameters() == sum(p.numel() for p in model.parameters()) == 86
    # LSTM: embedding 40 + W 64 + U 64 + b 16 + V 40 + b_y 10 = 234, tied 194
    lstm = make("lstm", tie_weights=True)
    assert count(lstm_lm_shapes(VOCAB, 4, 4)) == 234
    assert lstm.count_parameters() == sum(p.numel() for p in lstm.parameters()) == 194


def test_the_tied_gradient_is_the_sum_of_the_inputs_and_the_outputs():
    tied, untied = make(tie_weights=True), make()
    with torch.no_grad():  # the same numbers everywhere, V a copy of the embedding in the untied network
        untied.load_state_dict({k: v for k, v in tied.state_dict().items() if k != "output.V"}, strict=False)
        untied.output.V.copy_(tied.embedding.weight)
    tokens = torch.randint(0, VOCAB, (6, 3), generator=torch.Generator().manual_seed(1))
    targets = torch.randint(0, VOCAB, (6, 3), generator=torch.Generator().manual_seed(2))
    for model in (tied, untied):
        loss, _, _ = model.nll(tokens, targets)
        loss.backward()
    assert torch.allclose(tied.embedding.weight.grad, untied.embedding.weight.grad + untied.output.V.grad)
    assert torch.allclose(tied.cell.U.grad, untied.cell.U.grad)  # the rest of the network is the same function


def test_one_update_moves_both_ends_and_the_table_keeps_a_dense_gradient():
    model = make(tie_weights=True)
    optim.sparse_embedding_gradients(model)
    assert not model.embedding.sparse  # the softmax's gradient has every row: a sparse table would gain nothing
    untied = make()
    optim.sparse_embedding_gradients(untied)
    assert untied.embedding.sparse
    cfg = RunConfig.from_settings({"family": "rnn", "output": "full", "embed_dim": 4, "hidden": 4, "tie_weights": True})
    rule = optim.make_optimizer(cfg, model)
    before = model.embedding.weight.detach().clone()
    tokens = torch.randint(0, VOCAB, (6, 3), generator=torch.Generator().manual_seed(1))
    loss, _, _ = model.nll(tokens, tokens)
    loss.backward()
    rule.step()
    assert model.output.V is model.embedding.weight and not torch.equal(model.embedding.weight, before)


def test_a_saved_tied_model_loads_tied():
    model, fresh = make(tie_weights=True, seed=0), make(tie_weights=True, seed=1)
    fresh.load_state_dict(model.state_dict())
    assert fresh.output.V is fresh.embedding.weight
    assert torch.equal(fresh.embedding.weight, model.embedding.weight)


@pytest.mark.parametrize(
    ("family", "options", "got"),
    [
        ("rnn", {"output": "adaptive", "adaptive_cutoffs": [5]}, "output 'adaptive'"),
        ("rnn", {"embed_dim": 3}, "embed_dim 3, hidden 4"),
        ("ff", {}, "family 'ff'"),
    ],
)
def test_tying_is_refused_where_the_shapes_cannot_agree(family, options, got):
    settings = {"embed_dim": 4, "hidden": 4, "output": "full", "tie_weights": True, **options}
    with pytest.raises(
        ValueError, match=r"^ModelConfig.tie_weights: true reads the embedding table as the output"
    ) as e:
        ModelConfig(family, VOCAB, **settings)
    assert got in str(e.value)
    with pytest.raises(ValueError, match="tie_weights"):
        RunConfig.from_settings({"family": family, **settings})


def test_an_untied_run_keeps_its_id_and_a_tied_one_is_described_so():
    from rnnbench.results.runs import describe

    base = {"family": "rnn", "output": "full", "embed_dim": 200, "hidden": 200}
    plain = RunConfig.from_settings(base)
    assert "tie_weights" not in plain.settings()
    assert RunConfig.from_settings({**base, "tie_weights": False}).run_id == plain.run_id
    tied = RunConfig.from_settings({**base, "tie_weights": True})
    assert tied.run_id != plain.run_id
    assert "tied embeddings" in describe({**tied.to_dict(), "run_id": "r"})


def test_a_tied_run_trains_and_its_best_weights_load_tied(tmp_path, cache_dir):
    from test_train import tiny

    from rnnbench.decay.analysis import load_trained
    from rnnbench.training.loop import train_run

    cfg = tiny(embed_dim=16, hidden=16, tie_weights=True, optimizer="adam", lr=0.01, clip_mode="norm", clip=0.5)
    metrics = train_run(cfg, tmp_path, cache_dir=cache_dir)
    model = load_trained(tmp_path / "model.pt")
    assert model.output.V is model.embedding.weight
    assert metrics["parameters"] == model.count_parameters() == sum(p.numel() for p in model.parameters())
    assert metrics["valid_ppl"] < model.cfg.vocab_size  # it learned: below the uniform model's perplexity
