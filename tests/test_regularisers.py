"""The recurrent network's regularisers: dropout with one mask per sequence, and connections of U dropped for a
whole segment (DropConnect). Masks are checked entry by entry: a kept unit is scaled by 1/(1-p), a dropped one is 0."""

import pytest
import torch

from rnnbench.config.runs import RunConfig
from rnnbench.models import ModelConfig, build_model
from rnnbench.models.base import SequenceDropout

VOCAB = 30


def make(seed=0, **options):
    torch.manual_seed(seed)
    return build_model(ModelConfig("rnn", VOCAB, embed_dim=6, hidden=5, output="full", **options)).double()


def tokens(T=8, B=3, seed=1):
    return torch.randint(0, VOCAB, (T, B), generator=torch.Generator().manual_seed(seed))


def test_a_sequence_mask_keeps_or_drops_a_unit_at_every_step_of_its_sequence():
    drop = SequenceDropout(0.5).train()
    torch.manual_seed(0)
    out = drop(torch.ones(6, 4, 5))  # (T, B, F)
    # p = 0.5: a kept unit is 1 / (1 - 0.5) = 2 at all six steps, a dropped one 0 at all six.
    assert set(out.unique().tolist()) == {0.0, 2.0}
    assert torch.equal(out, out[:1].expand_as(out))
    assert 0 < (out[0] == 0).sum() < 20  # some dropped, some kept: a mask, not all or nothing
    drop.eval()
    assert torch.equal(drop(torch.ones(6, 4, 5)), torch.ones(6, 4, 5))


def test_a_step_mask_is_drawn_afresh_at_each_step():
    model = make(dropout=0.5).train()
    x = torch.ones(6, 4, 5)
    torch.manual_seed(0)
    out = model.drop(x)
    assert not torch.equal(out, out[:1].expand_as(out))


def test_dropped_connections_use_one_mask_on_U_and_send_the_gradient_through_it():
    model = make(recurrent_dropout=0.5, impl="reference").train()
    cell = model.cell
    torch.manual_seed(3)
    with cell.dropped_connections(0.5):
        dropped = cell.recurrent_matrix
        # every entry is 0 or 2 U: kept and scaled by 1 / (1 - 0.5)
        ratio = dropped / cell.U
        assert set(ratio.detach().round(decimals=12).unique().tolist()) <= {0.0, 2.0}
        assert 0 < (ratio == 0).sum() < cell.U.numel()
        keep = (ratio != 0).double()
        dropped.sum().backward()
    torch.testing.assert_close(cell.U.grad, 2 * keep)  # d(sum 2 keep U)/dU: 2 where kept, 0 where dropped
    assert cell.recurrent_matrix is cell.U  # outside, U itself


@pytest.mark.parametrize("impl", ["reference", "fast"])
def test_the_mask_on_U_is_drawn_once_per_segment_so_cut_blocks_read_as_one_uncut_run(impl):
    model = make(recurrent_dropout=0.5, impl=impl).train()
    tok = tokens()
    torch.manual_seed(5)
    whole, _, _ = model.features(tok, None)
    torch.manual_seed(5)
    blocks, _, _ = model.features(tok, None, cut_every=2)
    torch.testing.assert_close(blocks, whole)  # four blocks, one mask: the values of the uncut run
    torch.manual_seed(6)
    other, _, _ = model.features(tok, None)
    assert (other - whole).abs().max() > 1e-6  # another draw, another network


def test_reference_and_fast_agree_under_the_same_dropped_connections():
    reference = make(recurrent_dropout=0.3, impl="reference").train()
    fast = make(recurrent_dropout=0.3, impl="fast").train()
    fast.load_state_dict(reference.state_dict())
    tok = tokens()
    losses = []
    for model in (reference, fast):
        torch.manual_seed(7)
        loss, _, _ = model.nll(tok[:-1], tok[1:])
        loss.backward()
        losses.append(loss)
    torch.testing.assert_close(losses[0], losses[1])
    torch.testing.assert_close(reference.cell.U.grad, fast.cell.U.grad)


def test_evaluation_reads_the_whole_network():
    plain = make()
    regularised = make(dropout=0.4, dropout_mask="sequence", recurrent_dropout=0.4)
    regularised.load_state_dict(plain.state_dict())
    tok = tokens()
    regularised.eval()
    torch.testing.assert_close(regularised(tok)[0], plain(tok)[0])


def test_the_settings_are_refused_where_there_is_nothing_for_them_to_act_on():
    with pytest.raises(ValueError, match=r"^ModelConfig.dropout_mask: a mask shared by a sequence's steps"):
        ModelConfig("ff", VOCAB, output="full", dropout=0.2, dropout_mask="sequence")
    with pytest.raises(ValueError, match=r"^ModelConfig.recurrent_dropout: it drops entries of an Elman network's"):
        ModelConfig("lstm", VOCAB, output="full", recurrent_dropout=0.2)
    with pytest.raises(ValueError, match=r"^ModelConfig.recurrent_dropout: 0.95 is out of range"):
        ModelConfig("rnn", VOCAB, output="full", recurrent_dropout=0.95)


def test_a_run_without_them_keeps_its_id_and_a_run_with_them_gets_a_new_one():
    base = {"family": "rnn", "output": "full", "dropout": 0.3}
    plain = RunConfig.from_settings(base)
    assert "dropout_mask" not in plain.settings() and "recurrent_dropout" not in plain.settings()
    assert RunConfig.from_settings({**base, "dropout_mask": "step", "recurrent_dropout": 0.0}).run_id == plain.run_id
    assert RunConfig.from_settings({**base, "dropout_mask": "sequence"}).run_id != plain.run_id
    assert RunConfig.from_settings({**base, "recurrent_dropout": 0.2}).run_id != plain.run_id


def test_a_run_is_described_with_its_regularisers():
    from rnnbench.results.runs import describe

    config = RunConfig.from_settings(
        {"family": "rnn", "output": "full", "dropout": 0.5, "dropout_mask": "sequence", "recurrent_dropout": 0.2}
    ).to_dict()
    assert "dropout 0.5 (one mask a sequence), dropout 0.2 on U" in describe({**config, "run_id": "r"})
