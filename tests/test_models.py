"""Models: a hand-worked Elman step, reference == fast, dependence, parameter counts, output layers."""

import itertools
import math

import pytest
import torch

from rnnbench.models import IGNORE_INDEX, ModelConfig, build_model
from rnnbench.models.recurrence import ElmanRecurrence
from rnnbench.params import count

VOCAB = 30
CUTOFFS = (5, 15)


def make(family, dtype=torch.float64, seed=0, **options):
    torch.manual_seed(seed)
    options = {
        "embed_dim": 6,
        "hidden": 5,
        "output": "full",
        **options,
    }  # the schema's adaptive default needs |V| > 5000
    if options.get("output") == "adaptive":
        options.setdefault("adaptive_cutoffs", CUTOFFS)
        options.setdefault("adaptive_div_value", 2.0)
    return build_model(ModelConfig(family, VOCAB, **options)).to(dtype)


def tokens(T=7, B=3, seed=1):
    return torch.randint(0, VOCAB, (T, B), generator=torch.Generator().manual_seed(seed))  # (T, B)


# --- the chapter's two-unit example ---------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["reference", "fast"])
def test_hand_worked_elman_steps(impl):
    model = make("rnn", embed_dim=2, hidden=2, impl=impl)
    with torch.no_grad():
        model.cell.W.copy_(torch.tensor([[0.6, -0.3], [0.2, 0.5]], dtype=torch.float64))
        model.cell.U.copy_(torch.tensor([[0.4, 0.1], [-0.2, 0.7]], dtype=torch.float64))
        model.cell.b_h.copy_(torch.tensor([0.05, -0.05], dtype=torch.float64))
        model.embedding.weight[:3] = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # the, dog, ran
    # h_1 = tanh(W x_the + U h_0 + b_h), x_the = (1, 0), h_0 = 0:
    #   W x_the = (0.6, 0.2)  ->  pre = (0.65, 0.15)
    h1 = (math.tanh(0.65), math.tanh(0.15))  # (0.571670, 0.148885)
    # h_2 = tanh(W x_dog + U h_1 + b_h), x_dog = (0, 1): W x_dog = (-0.3, 0.5)
    #   U h_1 = (0.4 h1[0] + 0.1 h1[1], -0.2 h1[0] + 0.7 h1[1]) = (0.243557, -0.010115)
    u_h1 = (0.4 * h1[0] + 0.1 * h1[1], -0.2 * h1[0] + 0.7 * h1[1])
    h2 = (
        math.tanh(-0.3 + u_h1[0] + 0.05),
        math.tanh(0.5 + u_h1[1] - 0.05),
    )  # tanh(-0.006444), tanh(0.439886) = (-0.006443, 0.413550)
    assert h1 == pytest.approx((0.571670, 0.148885), abs=1e-6)
    assert h2 == pytest.approx((-0.006443, 0.413550), abs=1e-6)

    x = model.embedding(torch.tensor([[0], [1]]))  # (T=2, B=1, d=2)
    out, h_T = model.recur(x, model.init_state(1))  # (2, 1, 2)
    assert out[0, 0].tolist() == pytest.approx(h1, abs=1e-12)
    assert out[1, 0].tolist() == pytest.approx(h2, abs=1e-12)
    assert h_T[0].tolist() == pytest.approx(h2, abs=1e-12)


def test_hand_worked_activations_of_the_cell():
    # pre-activation (0.65, -0.15) from W x + b_h with x = (1, 0), h_0 = 0 and b_h = (0.05, -0.35)
    for activation, expected in [
        ("tanh", (math.tanh(0.65), math.tanh(-0.15))),
        ("sigmoid", (1 / (1 + math.exp(-0.65)), 1 / (1 + math.exp(0.15)))),
        ("relu", (0.65, 0.0)),
    ]:
        model = make("rnn", embed_dim=2, hidden=2, activation=activation, impl="reference")
        with torch.no_grad():
            model.cell.W.copy_(torch.tensor([[0.6, -0.3], [0.2, 0.5]], dtype=torch.float64))
            model.cell.b_h.copy_(torch.tensor([0.05, -0.35], dtype=torch.float64))
        h1, _ = model.cell(torch.tensor([[1.0, 0.0]], dtype=torch.float64), model.init_state(1))
        assert h1[0].tolist() == pytest.approx(expected, abs=1e-12), activation


# --- the recurrent matrix's start (Le et al. 2015) -------------------------------------------------------


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_identity_init_is_s_times_I_with_zero_bias_and_leaves_the_rest_as_default(scale):
    default = make("rnn", activation="relu")
    irnn = make("rnn", activation="relu", recurrent_init="identity", recurrent_scale=scale)
    assert torch.equal(irnn.cell.U, scale * torch.eye(5, dtype=torch.float64))  # U = s I, exactly
    assert torch.equal(irnn.cell.b_h, torch.zeros(5, dtype=torch.float64))
    assert not torch.equal(default.cell.U, irnn.cell.U) and default.cell.b_h.abs().min() > 0
    for name, p in default.named_parameters():  # the same seed draws every other parameter as the default does
        if name not in ("cell.U", "cell.b_h"):
            assert torch.equal(p, dict(irnn.named_parameters())[name]), name


@pytest.mark.parametrize("scale", [1.0, 0.9, 2.0])
def test_orthogonal_init_has_every_singular_value_s_and_zero_bias(scale):
    U = make("rnn", hidden=7, recurrent_init="orthogonal", recurrent_scale=scale).cell.U.detach()
    eye = torch.eye(7, dtype=torch.float64)
    # drawn in float32, as every model is built: orthogonal to float32's precision
    torch.testing.assert_close(U @ U.T, scale**2 * eye, atol=1e-6, rtol=0)  # W W^T = s^2 I
    torch.testing.assert_close(U.T @ U, scale**2 * eye, atol=1e-6, rtol=0)
    torch.testing.assert_close(torch.linalg.svdvals(U), torch.full((7,), scale, dtype=torch.float64), atol=1e-6, rtol=0)
    assert not torch.allclose(U, scale * eye)  # a rotation, not the identity
    assert torch.equal(make("rnn", recurrent_init="orthogonal").cell.b_h, torch.zeros(5, dtype=torch.float64))


@pytest.mark.parametrize("impl", ["reference", "fast"])
def test_identity_relu_carries_a_state_unchanged_and_twice_the_identity_doubles_it(impl):
    # No input (W = 0) and h_0 = (0.5, 0, 1.5) >= 0: h_t = relu(s h_{t-1}) = s^t h_0. The lesson's example: a
    # recurrent weight of 2, twenty steps, the state times 2^20 = 1,048,576; tanh keeps it inside (-1, 1).
    h0 = torch.tensor([[0.5, 0.0, 1.5]], dtype=torch.float64)
    x = torch.zeros(20, 1, 4, dtype=torch.float64)  # (T, B, d)
    for activation, scale, expected in [("relu", 1.0, h0), ("relu", 2.0, 2.0**20 * h0)]:
        model = make("rnn", embed_dim=4, hidden=3, activation=activation, recurrent_init="identity",
                     recurrent_scale=scale, impl=impl)  # fmt: skip
        with torch.no_grad():
            model.cell.W.zero_()
        _, h_T = model.recur(x, h0)
        torch.testing.assert_close(h_T, expected, atol=1e-9, rtol=0)
    assert 2.0**20 == 1_048_576
    bounded = make("rnn", embed_dim=4, hidden=3, recurrent_init="identity", recurrent_scale=2.0, impl=impl)
    _, h_T = bounded.recur(x, h0)
    assert h_T.abs().max() < 1


def test_recurrent_init_is_refused_where_there_is_no_one_recurrent_matrix():
    with pytest.raises(ValueError, match=r"^ModelConfig.recurrent_init: 'identity' sets an Elman network's"):
        ModelConfig("lstm", VOCAB, output="full", recurrent_init="identity")
    with pytest.raises(ValueError, match=r"^ModelConfig.recurrent_scale: the gain of an identity or orthogonal U"):
        ModelConfig("rnn", VOCAB, output="full", recurrent_scale=0.5)
    with pytest.raises(ValueError, match=r"^ModelConfig.recurrent_init: 'eye' is not allowed"):
        ModelConfig("rnn", VOCAB, output="full", recurrent_init="eye")


# --- reference path == fast path -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "family, activation, output",
    [
        ("rnn", "tanh", "full"),
        ("rnn", "sigmoid", "full"),
        ("rnn", "relu", "full"),
        ("rnn", "tanh", "adaptive"),
        ("rnn", "relu-identity", "full"),
        ("lstm", "tanh", "full"),
    ],
)
def test_reference_and_fast_agree_in_outputs_and_gradients(family, activation, output):
    activation, _, init = activation.partition("-")
    options = {"activation": activation, "output": output, **({"recurrent_init": init} if init else {})}
    ref = make(family, impl="reference", **options)
    fast = make(family, impl="fast", **options)
    fast.load_state_dict(ref.state_dict())  # one state_dict serves both
    tok, tgt = tokens(T=9, B=4, seed=2), tokens(T=9, B=4, seed=3)
    # A non-zero carried-in state, as in truncated BPTT.
    state0 = ref.init_state(4)
    state0 = tuple(s + 0.3 for s in state0) if isinstance(state0, tuple) else state0 + 0.3
    results = []
    for model in (ref, fast):
        log_probs, state = model(tok, state0)
        loss, _n, _ = model.nll(tok, tgt, state0)
        hidden = state[0] if isinstance(state, tuple) else state
        (loss + hidden.square().sum() + log_probs[-1].exp()[:, :3].sum()).backward()
        results.append((log_probs, state, {k: p.grad for k, p in model.named_parameters()}))
    (lp_r, st_r, g_r), (lp_f, st_f, g_f) = results
    torch.testing.assert_close(lp_f, lp_r, atol=1e-6, rtol=0)
    for a, b in zip(
        st_f if isinstance(st_f, tuple) else (st_f,), st_r if isinstance(st_r, tuple) else (st_r,), strict=True
    ):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)
    assert g_r.keys() == g_f.keys()
    for name in g_r:
        torch.testing.assert_close(g_f[name], g_r[name], atol=1e-6, rtol=0, msg=name)


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "relu"])
def test_hand_worked_backward_through_time(activation):
    # One unit, two steps: a_t = W x_t + b + U h_{t-1}, h_t = act(a_t); W = 0.5, U = 0.8, b = 0.1,
    # x = (1, -0.4), h_0 = 0.5; loss L = 3 h_1 + h_2 (the outputs) + 2 h_2 (the final state).
    act, slope = {
        "tanh": (math.tanh, lambda h: 1 - h * h),
        "sigmoid": (lambda a: 1 / (1 + math.exp(-a)), lambda h: h * (1 - h)),
        "relu": (lambda a: max(a, 0.0), lambda h: float(h > 0)),
    }[activation]
    a1 = 0.5 * 1 + 0.1 + 0.8 * 0.5  # 1.0
    h1 = act(a1)  # tanh: 0.761594; sigmoid: 0.731059; relu: 1.0
    a2 = 0.5 * -0.4 + 0.1 + 0.8 * h1  # tanh: 0.509275; sigmoid: 0.484847; relu: 0.7
    h2 = act(a2)
    delta2 = (1 + 2) * slope(h2)  # dL/da_2: output and final state both read h_2
    delta1 = (3 + 0.8 * delta2) * slope(h1)  # dL/da_1 = (dL/dh_1 from the output + U delta_2) act'(a_1)
    expected = {
        "x1": 0.5 * delta1,  # W delta_t
        "x2": 0.5 * delta2,
        "h0": 0.8 * delta1,  # U delta_1
        "W": delta1 * 1 + delta2 * -0.4,  # sum_t delta_t x_t
        "U": delta1 * 0.5 + delta2 * h1,  # sum_t delta_t h_{t-1}
        "b": delta1 + delta2,
    }
    leaf = lambda *v: torch.tensor(v, dtype=torch.float64, requires_grad=True)  # noqa: E731
    x, h0, W, U, b = leaf(1.0, -0.4), leaf(0.5), leaf(0.5), leaf(0.8), leaf(0.1)
    outputs, last = ElmanRecurrence.apply(x.view(2, 1, 1), h0.view(1, 1), W.view(1, 1), U.view(1, 1), b, activation)
    assert outputs.flatten().tolist() == pytest.approx([h1, h2], abs=1e-12)
    assert last.item() == pytest.approx(h2, abs=1e-12)
    (3 * outputs[0].sum() + outputs[1].sum() + 2 * last.sum()).backward()
    got = {
        "x1": x.grad[0].item(),
        "x2": x.grad[1].item(),
        "h0": h0.grad.item(),
        "W": W.grad.item(),
        "U": U.grad.item(),
        "b": b.grad.item(),
    }
    assert got == pytest.approx(expected, abs=1e-12)


def test_recurrence_gradients_pass_gradcheck_with_a_carried_in_state():
    torch.manual_seed(0)
    T, B, d, H = 4, 3, 2, 3
    inputs = [
        torch.randn(*shape, dtype=torch.float64, requires_grad=True)
        for shape in ((T, B, d), (B, H), (H, d), (H, H), (H,))
    ]
    for activation in ("tanh", "sigmoid", "relu"):
        assert torch.autograd.gradcheck(lambda *a, f=activation: ElmanRecurrence.apply(*a, f), inputs)


def test_an_empty_segment_returns_the_carried_in_state():
    h0 = torch.randn(2, 3, requires_grad=True)
    outputs, last = ElmanRecurrence.apply(
        torch.zeros(0, 2, 4), h0, torch.randn(3, 4), torch.randn(3, 3), torch.zeros(3), "tanh"
    )
    assert outputs.shape == (0, 2, 3) and torch.equal(last, h0)
    last.sum().backward()
    assert torch.equal(h0.grad, torch.ones(2, 3))


# --- dependence: the recurrence remembers, the window forgets ------------------------------------------


@pytest.mark.parametrize("family, impl", [("rnn", "reference"), ("rnn", "fast"), ("lstm", "reference")])
def test_changing_x1_changes_h_T(family, impl):
    model = make(family, impl=impl)
    tok = tokens(T=20, B=1)
    changed = tok.clone()
    changed[0, 0] = (tok[0, 0] + 1) % VOCAB
    (_, s_a), (_, s_b) = model(tok), model(changed)
    h_a = s_a[0] if isinstance(s_a, tuple) else s_a
    h_b = s_b[0] if isinstance(s_b, tuple) else s_b
    assert (h_a - h_b).abs().max() > 1e-12
    # ... and h_T has a non-zero gradient with respect to x_1, taken through every intermediate h_t.
    x = model.embedding(tok).detach().requires_grad_()  # (T, 1, d)
    outputs, states = model.unroll(x, model.init_state(1))
    assert len(states) == 20
    (grad_x,) = torch.autograd.grad(outputs[-1].sum(), x)
    assert grad_x[0].abs().max() > 0


def test_ff_prediction_ignores_tokens_outside_its_window():
    n_minus_1 = 3
    model = make("ff", context=n_minus_1, hidden=7, direct=True)
    stream = torch.randint(0, VOCAB, (12,), generator=torch.Generator().manual_seed(4))

    def predict(s, t):  # distribution for the word at position t, from s[t-3], s[t-2], s[t-1]
        log_probs, state = model(s[t - n_minus_1 : t].unsqueeze(0))  # (1, V)
        assert state is None
        return log_probs[0]

    t = 8
    outside, inside = stream.clone(), stream.clone()
    outside[t - n_minus_1 - 1] = (stream[t - n_minus_1 - 1] + 1) % VOCAB  # one word before the window
    inside[t - n_minus_1] = (stream[t - n_minus_1] + 1) % VOCAB  # the window's oldest word
    assert torch.equal(predict(outside, t), predict(stream, t))
    assert (predict(inside, t) - predict(stream, t)).abs().max() > 1e-9


def test_carrying_state_across_segments_equals_one_long_pass():
    for impl in ("reference", "fast"):
        model = make("rnn", impl=impl)
        tok = tokens(T=10, B=2)
        whole, _ = model(tok)
        first, state = model(tok[:6])
        second, _ = model(tok[6:], state)
        torch.testing.assert_close(torch.cat([first, second]), whole, atol=1e-12, rtol=0)


# --- gradient cut every k steps (segments 'sentence') ------------------------------------------------------


@pytest.mark.parametrize("impl", ["reference", "fast"])
def test_hand_worked_cut_every_two_steps(impl):
    # ReLU with positive pre-activations is the scalar linear RNN h_t = w h_{t-1} + x_t, h_0 = 0, w = U = 0.5,
    # x = (1, 1, 1, 1): h = (1, 1.5, 1.75, 1.875), and L = h_4.
    #   full BPTT   dL/dw = h_3 + w (h_2 + w h_1) = 1.75 + 0.5 * 2.0 = 2.75;  dL/dx_t = w^(4-t) = (0.125, 0.25, 0.5, 1)
    #   cut at 2    h_2 arrives detached: dL/dw = h_3 + w h_2 = 1.75 + 0.75 = 2.5;  dL/dx = (0, 0, 0.5, 1)
    model = make("rnn", embed_dim=1, hidden=1, activation="relu", impl=impl)
    with torch.no_grad():
        model.cell.W.fill_(1.0)
        model.cell.U.fill_(0.5)
        model.cell.b_h.zero_()
    for cut_every, grad_w, grad_x in ((None, 2.75, [0.125, 0.25, 0.5, 1.0]), (2, 2.5, [0.0, 0.0, 0.5, 1.0])):
        model.zero_grad()
        x = torch.ones(4, 1, 1, dtype=torch.float64, requires_grad=True)  # (T, B, d)
        out, h_T = model.recur(x, model.init_state(1), cut_every)
        assert out.flatten().tolist() == [1.0, 1.5, 1.75, 1.875] and h_T.item() == 1.875  # values never cut
        out[-1].sum().backward()
        assert model.cell.U.grad.item() == grad_w
        assert x.grad.flatten().tolist() == grad_x


@pytest.mark.parametrize("family, impl", [("rnn", "reference"), ("rnn", "fast"), ("lstm", "reference")])
def test_a_late_loss_reaches_its_own_block_and_nothing_before_it(family, impl):
    # k = 3 on T = 10 steps: blocks 0-2, 3-5, 6-8, 9. The output at step 7 depends on steps 6 and 7 only by
    # gradient (exactly zero before 6), though its value is the uncut run's, which every input shaped.
    model = make(family, impl=impl)
    x = model.embedding(tokens(T=10, B=2)).detach().requires_grad_()  # (T, B, d)
    whole, _ = model.recur(x, model.init_state(2))
    out, _ = model.recur(x, model.init_state(2), 3)
    torch.testing.assert_close(out, whole, atol=1e-12, rtol=0)
    (grad_x,) = torch.autograd.grad(out[7].sum(), x)  # (T, B, d)
    assert torch.all(grad_x[:6] == 0)
    assert all(grad_x[t].abs().max() > 1e-6 for t in (6, 7))
    assert torch.all(grad_x[8:] == 0)  # nor after it: the future never enters the past
    (grad_uncut,) = torch.autograd.grad(whole[7].sum(), x)
    assert grad_uncut[:6].abs().max() > 1e-9  # uncut, the earlier steps do get a gradient


@pytest.mark.parametrize(
    "family, impl", [("rnn", "reference"), ("rnn", "fast"), ("lstm", "reference"), ("lstm", "fast")]
)
def test_a_cut_no_shorter_than_the_batch_is_full_bptt_exactly(family, impl):
    model = make(family, impl=impl, dropout=0.3)
    tok, targets = tokens(T=9, B=3), tokens(T=9, B=3, seed=2)
    gradients = []
    for cut_every in (None, 9, 40):
        model.zero_grad()
        torch.manual_seed(5)  # the same dropout masks
        loss, _, _ = model.nll(tok, targets, None, cut_every)
        loss.backward()
        gradients.append([p.grad.clone() for p in model.parameters()])
    for cut in gradients[1:]:
        assert all(torch.equal(a, b) for a, b in zip(gradients[0], cut, strict=True))


def test_a_cut_needs_a_recurrence_and_a_positive_length():
    with pytest.raises(ValueError, match="cut_every=2: a window has no recurrence"):
        make("ff", context=3).nll(tokens(T=3, B=4).t(), tokens(T=4, B=1).flatten(), None, 2)  # (N, n-1), (N,)
    with pytest.raises(ValueError, match="cut_every must be >= 1"):
        make("rnn").nll(tokens(), tokens(), None, 0)


# --- parameter counts: formula == torch ------------------------------------------------------------------

COMBINATIONS = (
    [
        ("ff", {"hidden": h, "direct": d, "output": o})
        for h, d, o in itertools.product((0, 7), (False, True), ("full", "adaptive"))
        if not (d and (h == 0 or o == "adaptive"))
    ]
    + [
        ("rnn", {"impl": i, "activation": a, "output": o})
        for i, a, o in itertools.product(("reference", "fast"), ("tanh", "sigmoid", "relu"), ("full", "adaptive"))
    ]
    + [("lstm", {"impl": i, "output": o}) for i, o in itertools.product(("reference", "fast"), ("full", "adaptive"))]
)


@pytest.mark.parametrize("family, options", COMBINATIONS)
def test_count_parameters_matches_torch(family, options):
    model = make(family, **options)
    params = list(model.parameters())
    assert model.count_parameters() == sum(p.numel() for p in params)
    # Shape by shape, not only in total.
    assert sorted(model.shapes().values()) == sorted(tuple(p.shape) for p in params)
    assert count(model.shapes()) == model.count_parameters()


def test_count_parameters_hand_worked():
    # |V| = 30, d = 6, H = 5: embedding 180, W 30, U 25, b_h 5, V 150, b_y 30.
    assert make("rnn").count_parameters() == 180 + 30 + 25 + 5 + 150 + 30 == 420
    # ff, n-1 = 4: embedding 180, W_h 5*24 = 120, b_h 5, V 150, b_y 30, W_direct 30*24 = 720.
    assert make("ff", context=4, direct=True).count_parameters() == 180 + 120 + 5 + 150 + 30 + 720 == 1205
    # lstm: W 20*6 = 120, U 20*5 = 100, b 20.
    assert make("lstm").count_parameters() == 180 + 120 + 100 + 20 + 150 + 30 == 600


# --- output layers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["ff", "rnn", "lstm"])
@pytest.mark.parametrize("output", ["full", "adaptive"])
def test_one_batch_forward_backward_smoke(family, output):
    model = make(family, output=output, dtype=torch.float32, dropout=0.2)
    model.train()
    if family == "ff":
        inputs, targets = tokens(T=16, B=4)[:, :4], torch.arange(16) % VOCAB  # (N, n-1), (N,)
    else:
        inputs, targets = tokens(), (torch.arange(21) % VOCAB).reshape(7, 3)  # every cluster gets targets
    log_probs, _ = model(inputs)
    assert log_probs.shape == ((16, VOCAB) if family == "ff" else (7, 3, VOCAB))
    loss, n, _ = model.nll(inputs, targets)
    assert n == targets.numel() and torch.isfinite(loss)
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    before = loss.item()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.5 * p.grad
    assert torch.isfinite(model.nll(inputs, targets)[0]) and before > 0


@pytest.mark.parametrize("family", ["ff", "rnn"])
def test_adaptive_log_probs_are_a_distribution_and_nll_uses_them(family):
    model = make(family, output="adaptive", context=4)
    inputs = tokens(T=8, B=4)[:, :4] if family == "ff" else tokens()
    log_probs, _ = model(inputs)  # (..., V)
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(log_probs.shape[:-1], dtype=torch.float64))
    targets = torch.randint(0, VOCAB, log_probs.shape[:-1], generator=torch.Generator().manual_seed(5))
    mean, _n, _ = model.nll(inputs, targets)
    picked = log_probs.gather(-1, targets.unsqueeze(-1))  # (..., 1)
    torch.testing.assert_close(mean, -picked.mean())


@pytest.mark.parametrize("output", ["full", "adaptive"])
def test_nll_ignores_padding_targets(output):
    model = make("rnn", output=output)
    tok = tokens()
    targets = tokens(seed=6)
    targets[4:, 0] = IGNORE_INDEX  # a short sentence in column 0
    targets[6, 2] = IGNORE_INDEX
    log_probs, _ = model(tok)  # (7, 3, V)
    keep = targets != IGNORE_INDEX
    expected = -log_probs[keep].gather(-1, targets[keep].unsqueeze(-1)).mean()
    mean, n, _ = model.nll(tok, targets)
    assert n == 21 - 3 - 1 == 17
    torch.testing.assert_close(mean, expected)
    all_ignored = torch.full_like(targets, IGNORE_INDEX)
    mean, n, _ = model.nll(tok, all_ignored)
    assert n == 0 and mean.item() == 0.0


def test_dropout_is_active_only_in_training():
    plain = make("rnn", dropout=0.0)
    dropped = make("rnn", dropout=0.5)
    dropped.load_state_dict(plain.state_dict())
    tok = tokens()
    dropped.eval()
    torch.testing.assert_close(dropped(tok)[0], plain(tok)[0])
    dropped.train()
    assert (dropped(tok)[0] - plain(tok)[0]).abs().max() > 1e-6


def test_config_refuses_bad_values_naming_the_key():
    with pytest.raises(ValueError, match=r"^ModelConfig.family: 'gru' is not allowed"):
        ModelConfig("gru", VOCAB, output="full")
    with pytest.raises(ValueError, match=r"^ModelConfig.dropout: 0.95 is out of range"):  # the schema's range
        ModelConfig("rnn", VOCAB, output="full", dropout=0.95)
    with pytest.raises(ValueError, match=r"^ModelConfig.direct: true needs family 'ff'"):
        ModelConfig("ff", VOCAB, direct=True, output="adaptive", adaptive_cutoffs=CUTOFFS)
    with pytest.raises(ValueError, match=r"^ModelConfig.hidden: 0 \(no hidden layer\)"):
        ModelConfig("rnn", VOCAB, hidden=0, output="full")
    with pytest.raises(ValueError, match=r"^ModelConfig.adaptive_cutoffs: cutoffs must be strictly increasing"):
        ModelConfig("rnn", VOCAB, output="adaptive", adaptive_cutoffs=(20, 10))
    with pytest.raises(
        ValueError, match=r"^ModelConfig.adaptive_cutoffs: cutoffs must be below the vocabulary size \(30\)"
    ):
        ModelConfig("rnn", VOCAB, output="adaptive", adaptive_cutoffs=(10, 30))
    cfg = ModelConfig("rnn", 10_000, output="adaptive", adaptive_cutoffs=[2000, 6000])
    assert cfg.adaptive_cutoffs == (2000, 6000)  # lists (from JSON) become tuples: the config stays hashable


def test_model_defaults_are_the_schemas_and_a_run_builds_its_model():
    from rnnbench.config.runs import RunConfig
    from rnnbench.config.schema import run_defaults

    cfg = ModelConfig("rnn", 10_000)
    defaults = run_defaults()
    for key in ("embed_dim", "hidden", "context", "activation", "impl", "output", "direct", "dropout"):
        assert getattr(cfg, key) == defaults[key], key
    assert cfg.adaptive_cutoffs == tuple(defaults["adaptive_cutoffs"])
    run = RunConfig.from_settings({"family": "ff", "context": 3, "hidden": 0, "embed_dim": 7, "output": "full"})
    assert ModelConfig.from_run(run, 50) == ModelConfig("ff", 50, embed_dim=7, hidden=0, context=3, output="full")


@pytest.mark.parametrize("with_bias, ignored", [(True, False), (True, True), (False, True)])
def test_linear_cross_entropy_matches_torch_value_and_gradients(with_bias, ignored):
    from torch.nn import functional as F

    from rnnbench.models.output import LinearCrossEntropy

    g = torch.Generator().manual_seed(7)
    h = torch.randn(13, 5, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(7, 5, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(7, dtype=torch.float64, generator=g, requires_grad=True) if with_bias else None
    t = torch.randint(0, 7, (13,), generator=g)
    if ignored:
        t[[2, 5]] = IGNORE_INDEX
    inputs = (h, w) + ((b,) if with_bias else ())
    ours = LinearCrossEntropy.apply(h, w, b, t)
    theirs = F.cross_entropy(F.linear(h, w, b), t, reduction="sum")
    torch.testing.assert_close(ours, theirs)
    expected = torch.autograd.grad(1.7 * theirs, inputs)
    # Twice over a retained graph: dz is made once (over the kept probabilities), the saved tensors are not touched.
    for _ in range(2):
        got = torch.autograd.grad(1.7 * ours, inputs, retain_graph=True)
        for a, c in zip(got, expected, strict=True):
            torch.testing.assert_close(a, c)


def test_linear_cross_entropy_is_exact_when_the_target_probability_underflows():
    # float32 scores 0, 200 and -300 for three classes: p(class 2) = e^-500 is 0 in float32, so its
    # log-probability cannot come from the probability; by hand it is -300 - log(e^0 + e^200 + e^-300) = -500.
    from rnnbench.models.output import LinearCrossEntropy

    h = torch.tensor([[1.0], [1.0]], requires_grad=True)  # (N=2, H=1)
    w = torch.tensor([[0.0], [200.0], [-300.0]], requires_grad=True)  # (K=3, H=1)
    t = torch.tensor([2, 1])  # nll 500 and log(1 + e^-200 + e^-500) = 0 in float32
    loss = LinearCrossEntropy.apply(h, w, None, t)
    assert loss.item() == pytest.approx(500.0, rel=1e-6)
    (grad_w,) = torch.autograd.grad(loss, [w])
    # dz = softmax - onehot: row 1 is (0, 1, -1) (its target's probability is 0), row 2 is (0, 0, 0); dW = dz^T h.
    torch.testing.assert_close(grad_w, torch.tensor([[0.0], [1.0], [-1.0]]))


def test_adaptive_nll_matches_torch_module():
    model = make("rnn", output="adaptive")
    h = torch.randn(40, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(8))
    t = torch.arange(40) % VOCAB  # every cluster
    module = model.output.adaptive
    total, n = model.output.nll_sum(h, t)
    assert n == 40
    torch.testing.assert_close(total, -module(h, t).output.sum())
    ours = torch.autograd.grad(total, list(module.parameters()))
    theirs = torch.autograd.grad(-module(h, t).output.sum(), list(module.parameters()))
    for a, c in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a, c)


@pytest.mark.parametrize("output", ["full", "adaptive"])
def test_two_losses_alive_at_once_give_the_sum_of_their_gradients(output):
    # Both graphs hold their own probabilities; only the scratch buffer of the scores is shared, and only transiently.
    model = make("rnn", output=output)
    a, b = tokens(seed=9), tokens(seed=10)
    ta, tb = tokens(seed=11), tokens(seed=12)
    loss = model.nll(a, ta)[0] + model.nll(b, tb)[0]
    got = torch.autograd.grad(loss, list(model.parameters()))

    def exact_nll(x, t):  # from the full distribution, no custom backward
        log_probs, _ = model(x)
        return -log_probs.gather(-1, t.unsqueeze(-1)).mean()

    expected = torch.autograd.grad(exact_nll(a, ta) + exact_nll(b, tb), list(model.parameters()))
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e)
