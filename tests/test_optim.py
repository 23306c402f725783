import subprocess
import sys

import pytest
import torch

from rnnbench.training.optim import SGD, Adam, RowScatter, RowUpdate


def parameters(seed=0):
    """A matrix and a vector, as a layer's weight and bias."""
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.nn.Parameter(torch.randn(5, 3, generator=generator)),
        torch.nn.Parameter(torch.randn(7, generator=generator)),
    ]


def copies(params):
    return [torch.nn.Parameter(p.detach().clone()) for p in params]


def take_steps(runs, steps, seed=1):
    """For each of `steps` steps: the same random gradients into every run's parameters, then each
    run's optimiser steps. runs: (optimiser, its parameters) pairs."""
    generator = torch.Generator().manual_seed(seed)
    shapes = [p.shape for p in runs[0][1]]
    for _ in range(steps):
        grads = [torch.randn(shape, generator=generator) for shape in shapes]
        for optimizer, params in runs:
            for p, g in zip(params, grads, strict=True):
                p.grad = g.clone()
            optimizer.step()


def assert_same(ours_params, their_params):
    for p, q in zip(ours_params, their_params, strict=True):
        assert torch.equal(p, q)


def test_sgd_is_torch_sgd_bitwise():
    ours_params = parameters()
    their_params = copies(ours_params)
    theirs = torch.optim.SGD(their_params, lr=0.3)
    take_steps([(SGD(ours_params, lr=0.3), ours_params), (theirs, their_params)], steps=4)
    assert_same(ours_params, their_params)


def test_adam_is_torch_fused_adam_bitwise():
    ours_params = parameters()
    their_params = copies(ours_params)
    ours = Adam(ours_params, lr=0.01)
    take_steps([(ours, ours_params), (torch.optim.Adam(their_params, lr=0.01, fused=True), their_params)], steps=6)
    assert_same(ours_params, their_params)
    assert ours.state_dict()["state"][0]["step"].item() == 6.0


def test_adam_is_torch_default_adam_to_float_rounding():
    # torch's default CPU Adam (a per-tensor loop) computes the same rule in another order of operations.
    ours_params = parameters()
    their_params = copies(ours_params)
    theirs = torch.optim.Adam(their_params, lr=0.01)
    take_steps([(Adam(ours_params, lr=0.01), ours_params), (theirs, their_params)], steps=6)
    for p, q in zip(ours_params, their_params, strict=True):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)


def test_sgd_weight_decay_shrinks_the_weights_but_not_the_biases_by_hand():
    # w = 2, g = 0.5, lr = 0.1, decay 0.5: w <- 2 (1 - 0.1 * 0.5) - 0.1 * 0.5 = 1.9 - 0.05 = 1.85, the step of
    # the loss + (0.5 / 2) w^2 (its gradient 0.5 + 0.5 * 2 = 1.5 times lr 0.1 is 0.15 off 2). The bias takes the
    # plain step: 2 - 0.05 = 1.95.
    weight, bias = torch.nn.Parameter(torch.full((2, 2), 2.0)), torch.nn.Parameter(torch.full((2,), 2.0))
    weight.grad, bias.grad = torch.full((2, 2), 0.5), torch.full((2,), 0.5)
    SGD([weight, bias], lr=0.1, weight_decay=0.5).step()
    torch.testing.assert_close(weight.detach(), torch.full((2, 2), 1.85))
    torch.testing.assert_close(bias.detach(), torch.full((2,), 1.95))


def test_adam_weight_decay_is_torch_adamw_on_the_weights_alone():
    ours_params = parameters()
    their_params = copies(ours_params)
    weight, bias = their_params
    theirs = torch.optim.AdamW(
        [{"params": [weight], "weight_decay": 0.1}, {"params": [bias], "weight_decay": 0.0}], lr=0.01, fused=True
    )
    take_steps([(Adam(ours_params, lr=0.01, weight_decay=0.1), ours_params), (theirs, their_params)], steps=6)
    for p, q in zip(ours_params, their_params, strict=True):
        torch.testing.assert_close(p, q, rtol=1e-6, atol=1e-7)
    # and the decay did something: without it the weights end elsewhere
    plain = copies(parameters())
    take_steps([(Adam(plain, lr=0.01), plain)], steps=6)
    assert not torch.allclose(plain[0], ours_params[0]) and torch.equal(plain[1], ours_params[1])


def test_a_negative_weight_decay_is_refused():
    with pytest.raises(ValueError, match="weight_decay must be 0 or more, got -0.1"):
        SGD(parameters(), lr=0.1, weight_decay=-0.1)


def sparse_rows(rows, values, shape=(4, 2)):
    return torch.sparse_coo_tensor(torch.tensor([rows]), torch.tensor(values), shape)


def test_a_sparse_gradient_scattered_into_the_table_leaves_no_row_of_the_one_before():
    scatter = RowScatter(torch.nn.Parameter(torch.ones(4, 2)))
    # token 1 twice and token 3: the repeated row summed, (1, 2) + (2, 2)
    first = scatter.dense(sparse_rows([1, 1, 3], [[1.0, 2.0], [2.0, 2.0], [12.0, 0.0]]))
    assert first.tolist() == [[0.0, 0.0], [3.0, 4.0], [0.0, 0.0], [12.0, 0.0]]
    # token 2 alone: rows 1 and 3 are zero again
    second = scatter.dense(sparse_rows([2], [[1.0, -1.0]]))
    assert second.tolist() == [[0.0, 0.0], [0.0, 0.0], [1.0, -1.0], [0.0, 0.0]]


def test_adam_with_sparse_gradients_is_adam_with_their_dense_form():
    # An embedding-like table and a bias; each step's table gradient uses a few random rows, some repeated.
    generator = torch.Generator().manual_seed(2)
    sparse_params = [
        torch.nn.Parameter(torch.randn(50, 3, generator=generator)),
        torch.nn.Parameter(torch.randn(3, generator=generator)),
    ]
    dense_params = copies(sparse_params)
    sparse, dense = Adam(sparse_params, lr=0.01), Adam(dense_params, lr=0.01)
    for _ in range(6):
        rows = torch.randint(0, 50, (8,), generator=generator)
        table_grad = torch.sparse_coo_tensor(rows[None], torch.randn(8, 3, generator=generator), (50, 3)).coalesce()
        bias_grad = torch.randn(3, generator=generator)
        sparse_params[0].grad, sparse_params[1].grad = table_grad, bias_grad.clone()
        dense_params[0].grad, dense_params[1].grad = table_grad.to_dense(), bias_grad.clone()
        sparse.step()
        dense.step()
    assert_same(sparse_params, dense_params)


@pytest.mark.parametrize("rule", [SGD, Adam])
def test_the_trial_update_is_the_step_it_foretells_and_changes_nothing(rule):
    # A table whose gradient is sparse (rows 3 and 7, row 3 twice), a matrix and a bias, in float64, with weight
    # decay (on the table and the matrix, not the bias), after two steps so that Adam's moments are not fresh; a
    # fourth parameter has no gradient, and no update. The trial's update is the change step() then makes.
    generator = torch.Generator().manual_seed(3)
    params = [
        torch.nn.Parameter(torch.randn(10, 4, generator=generator, dtype=torch.float64)),
        torch.nn.Parameter(torch.randn(4, 3, generator=generator, dtype=torch.float64)),
        torch.nn.Parameter(torch.randn(3, generator=generator, dtype=torch.float64)),
        torch.nn.Parameter(torch.randn(2, generator=generator, dtype=torch.float64)),
    ]
    optimizer = rule(params, lr=0.05, weight_decay=0.1)

    def gradients():
        rows = torch.tensor([[3, 7, 3]])
        values = torch.randn(3, 4, generator=generator, dtype=torch.float64)
        params[0].grad = torch.sparse_coo_tensor(rows, values, (10, 4))
        params[1].grad = torch.randn(4, 3, generator=generator, dtype=torch.float64)
        params[2].grad = torch.randn(3, generator=generator, dtype=torch.float64)

    for _ in range(2):
        gradients()
        optimizer.step()
    gradients()
    state = {i: {k: v.clone() for k, v in s.items()} for i, s in optimizer.state.items()}
    before = [p.detach().clone() for p in params]
    grads = [p.grad.to_dense().clone() for p in params[:3]]
    updates = optimizer.trial_updates()
    assert len(updates) == 3 and all(u.shape == p.shape for u, p in zip(updates, params, strict=False))
    # the rows the table's gradient uses, alone, each once: the same update of those rows; the others whole
    table, *others = optimizer.trial_updates(used_rows=True)
    assert isinstance(table, RowUpdate) and table.rows.tolist() == [3, 7]
    assert torch.allclose(table.values, updates[0][[3, 7]], rtol=0, atol=1e-15)
    assert all(torch.allclose(o, u, rtol=0, atol=1e-15) for o, u in zip(others, updates[1:], strict=True))
    # nothing changed: parameters, gradients, moments, step counts
    assert all(torch.equal(p, b) for p, b in zip(params, before, strict=True))
    assert all(torch.equal(p.grad.to_dense(), g) for p, g in zip(params, grads, strict=False))
    assert all(torch.equal(optimizer.state[i][k], v) for i, s in state.items() for k, v in s.items())
    optimizer.step()
    for p, b, u in zip(params, before, updates, strict=False):
        assert torch.allclose(p.detach() - b, u, rtol=0, atol=1e-14)
    assert torch.equal(params[3], before[3])


def test_a_new_learning_rate_in_param_groups_takes_effect_at_the_next_step():
    # The loop halves the rate between epochs by writing param_groups[0]["lr"], as with torch.optim.
    p = torch.nn.Parameter(torch.tensor([1.0]))
    optimizer = SGD([p], lr=1.0)
    optimizer.param_groups[0]["lr"] = 0.25
    p.grad = torch.tensor([2.0])
    optimizer.step()
    assert p.item() == 0.5  # 1 - 0.25 * 2


def test_a_parameter_without_gradient_is_left_alone_and_gets_no_moments():
    used, unused = torch.nn.Parameter(torch.tensor([1.0])), torch.nn.Parameter(torch.tensor([5.0]))
    optimizer = Adam([used, unused], lr=0.1)
    used.grad = torch.tensor([1.0])
    optimizer.step()
    assert unused.item() == 5.0 and used.item() == pytest.approx(0.9)  # first Adam step: lr sign(g)
    assert list(optimizer.state_dict()["state"]) == [0]


def test_zero_grad_drops_the_gradients():
    p = torch.nn.Parameter(torch.tensor([1.0]))
    optimizer = SGD([p], lr=1.0)
    p.grad = torch.tensor([2.0])
    optimizer.zero_grad(set_to_none=True)
    assert p.grad is None


def test_adam_resumes_from_a_checkpoint_written_by_torch_optim_as_if_never_interrupted(tmp_path):
    their_params = parameters()
    theirs = torch.optim.Adam(their_params, lr=0.01, fused=True)
    take_steps([(theirs, their_params)], steps=3)
    torch.save(theirs.state_dict(), tmp_path / "optimizer.pt")
    resumed_params = copies(their_params)
    resumed = Adam(resumed_params, lr=0.5)  # the rate, too, comes from the checkpoint
    resumed.load_state_dict(torch.load(tmp_path / "optimizer.pt"))
    assert resumed.lr == 0.01
    take_steps([(resumed, resumed_params), (theirs, their_params)], steps=3, seed=2)
    assert_same(resumed_params, their_params)


def test_adam_state_round_trips_through_its_own_state_dict(tmp_path):
    ours_params = parameters()
    ours = Adam(ours_params, lr=0.01)
    take_steps([(ours, ours_params)], steps=2)
    torch.save(ours.state_dict(), tmp_path / "optimizer.pt")
    resumed_params = copies(ours_params)
    resumed = Adam(resumed_params, lr=0.01)
    resumed.load_state_dict(torch.load(tmp_path / "optimizer.pt"))
    take_steps([(ours, ours_params), (resumed, resumed_params)], steps=3, seed=2)
    assert_same(ours_params, resumed_params)


def test_a_state_for_another_model_is_refused_naming_both_sizes():
    saved = Adam(parameters(), lr=0.01).state_dict()
    with pytest.raises(ValueError, match="for 2 parameters, this model has 1"):
        Adam([torch.nn.Parameter(torch.zeros(2))], lr=0.01).load_state_dict(saved)


def test_an_optimiser_without_parameters_is_refused():
    with pytest.raises(ValueError, match="no parameters"):
        SGD([], lr=0.1)


def test_training_steps_do_not_import_the_compiler():
    # The reason this module exists: torch.optim's first use imports torch._dynamo, >1 s of every job's start.
    program = (
        "import sys, torch\n"
        "from rnnbench.training.optim import SGD, Adam\n"
        "for make in (SGD, Adam):\n"
        "    p = torch.nn.Parameter(torch.ones(3))\n"
        "    optimizer = make([p], lr=0.1)\n"
        "    p.grad = torch.ones(3)\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad()\n"
        "    optimizer.load_state_dict(optimizer.state_dict())\n"
        "assert 'torch._dynamo' not in sys.modules, 'torch._dynamo was imported'\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True)
