"""Gradient decay: exact cases a linear RNN makes hand-computable, and the one pass against T separate passes."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from rnnbench import decay
from rnnbench.data.vocab import Vocab
from rnnbench.models import ModelConfig, build_model

VOCAB = 12


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tokens(T: int, N: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, VOCAB, (T + 1, N), generator=torch.Generator().manual_seed(seed))


def linear(a: float, *, hidden: int = 6, embed_dim: int = 4) -> torch.nn.Module:
    model = decay.untrained_rnn(vocab_size=VOCAB, radius=1.0, hidden=hidden, embed_dim=embed_dim, seed=1)
    return decay.make_linear(model, a)


def lstm() -> torch.nn.Module:
    torch.manual_seed(3)
    cfg = ModelConfig(family="lstm", vocab_size=VOCAB, embed_dim=4, hidden=5, impl="reference", output="full")
    return build_model(cfg).double()


@pytest.mark.parametrize("a", [0.5, 1.0, 1.5])
def test_linear_rnn_with_u_equal_a_identity_decays_as_a_to_the_distance(a):
    # h_t = W x_t + a h_{t-1} + b: every Jacobian is a I, so dL/dh_{T-d} = a^d dL/dh_T, and
    # dL/dx_{T-d} = W^T dL/dh_{T-d} = a^d W^T dL/dh_T.
    T = 30
    curves = decay.backward_decay(linear(a), tokens(T, 3))
    for quantity in ("h", "x"):
        table = curves[curves["quantity"] == quantity]
        np.testing.assert_allclose(table["relative"], a ** table["distance"].to_numpy(dtype=float), rtol=1e-12)
    assert len(curves) == 2 * T * 3


def test_gradient_at_the_last_state_is_v_transposed_times_softmax_error():
    # Distance 0 by hand: dL_T/dh_T = V^T (p_T - onehot(y_T)), the output layer's error (12.2).
    model = linear(0.7)
    toks = tokens(8, 2)
    curves = decay.backward_decay(model, toks)
    with torch.no_grad():
        h = model.embedding(toks[:-1])
        state = model.init_state(2)
        for x_t in h:
            state = x_t @ model.cell.W.T + state @ model.cell.U.T + model.cell.b_h
        p = torch.softmax(state @ model.output.V.T + model.output.b_y, dim=-1)  # (N, V)
        p[torch.arange(2), toks[-1]] -= 1.0
        expected = (p @ model.output.V).norm(dim=-1)  # (N,)
    got = curves[(curves["quantity"] == "h") & (curves["distance"] == 0)].sort_values("sequence")["norm"]
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-12)


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "relu", "lstm"])
def test_one_backward_pass_equals_one_pass_per_step(activation):
    if activation == "lstm":
        model = lstm()
    else:
        model = decay.untrained_rnn(vocab_size=VOCAB, radius=1.1, activation=activation, hidden=6, embed_dim=4, seed=2)
    toks = tokens(12, 3, seed=5)
    fast = decay.backward_decay(model, toks)
    slow = decay.naive_backward_decay(model, toks)
    merged = fast.merge(slow, on=["sequence", "quantity", "distance"], suffixes=("_one", "_per_step"))
    assert len(merged) == len(fast) == len(slow)
    assert set(merged["quantity"]) == ({"h", "x", "c"} if activation == "lstm" else {"h", "x"})
    np.testing.assert_allclose(merged["norm_one"], merged["norm_per_step"], rtol=1e-10, atol=0)


def test_forward_perturbation_of_a_linear_rnn_is_a_to_the_distance_times_w_v():
    # x_1 -> x_1 + eps v moves h_1 by eps W v and h_{1+d} by eps a^d W v (h_0 = 0 and the map is linear).
    a = 0.8
    model = linear(a)
    table = decay.forward_decay(model, tokens(20, 2), eps=1e-6, seed=4)
    v = decay.direction(model.cfg.embed_dim, seed=4, dtype=torch.float64)
    w_v = float((model.cell.W.detach() @ v).norm())
    h = table[table["quantity"] == "h"]
    expected = w_v * a ** h["distance"].to_numpy(dtype=float)
    np.testing.assert_allclose(h["jvp"], expected, rtol=1e-12)
    np.testing.assert_allclose(h["finite"], expected, rtol=1e-6)


def test_forward_perturbation_of_the_output_matches_the_softmax_jacobian():
    # d log p = (I - 1 p^T) V dh: the output's move by hand, at distance 5 of the linear RNN.
    a, d = 0.8, 5
    model = linear(a)
    toks = tokens(10, 1)
    table = decay.forward_decay(model, toks, eps=1e-6, seed=4)
    v = decay.direction(model.cfg.embed_dim, seed=4, dtype=torch.float64)
    with torch.no_grad():
        x = model.embedding(toks[:-1, 0])  # (T, d)
        h = torch.zeros(model.cfg.hidden, dtype=torch.float64)
        for x_t in x[: d + 1]:
            h = model.cell.W @ x_t + model.cell.U @ h + model.cell.b_h
        p = torch.softmax(model.output.V @ h + model.output.b_y, dim=0)  # (V,)
        dz = model.output.V @ (a**d * (model.cell.W @ v))  # (V,): move of the logits
        expected = float((dz - p @ dz).norm())
    row = table[(table["quantity"] == "log_probs") & (table["distance"] == d)].iloc[0]
    assert row["jvp"] == pytest.approx(expected, rel=1e-12)
    assert row["finite"] == pytest.approx(expected, rel=1e-5)


def test_changing_the_first_input_changes_the_last_state():
    # The dependence test: a network that ignored x_1 would show zero here.
    model = decay.untrained_rnn(vocab_size=VOCAB, radius=1.0, hidden=8, embed_dim=4, seed=0)
    table = decay.forward_decay(model, tokens(40, 2))
    last = table[(table["quantity"] == "h") & (table["distance"] == 39)]
    assert (last["jvp"] > 1e-8).all() and (last["finite"] > 1e-8).all()


@pytest.mark.parametrize("a", [0.6, 1.0, 1.3])
def test_rates_of_a_linear_rnn_with_u_equal_a_identity_are_all_log_a(a):
    model = linear(a)
    toks = tokens(40, 2)
    table = decay.rates(model, toks, decay.backward_decay(model, toks), fit=(5, 30))
    assert list(table["quantity"]) == ["h", "x"]
    # a linear unit's slope is 1 everywhere, so every bound is attained and the eigenvalue story is exact
    for column in ("rate", "jacobian_bound", "jacobian_log_bound", "pascanu_bound", "radius_rate"):
        np.testing.assert_allclose(table[column], math.log(a), atol=1e-10, err_msg=column)
    assert (table["mean_slope"] == 1.0).all()
    assert (table["fit_from"] == 5).all() and (table["fit_to"] == 30).all() and (table["fit_points"] == 26).all()
    forward = decay.forward_rates(model, toks, decay.forward_decay(model, toks), fit=(5, 30))
    for column in ("jacobian_bound", "jacobian_log_bound", "pascanu_bound", "radius_rate"):
        np.testing.assert_allclose(forward[column], math.log(a), atol=1e-10, err_msg=column)
    h = forward[forward["quantity"] == "h"].set_index("method")["rate"]
    assert h["jvp"] == pytest.approx(math.log(a), abs=1e-10)
    # finite: a move of eps a^30 ~ 1e-13 on states of size 1 keeps only ~3 float64 digits at the far end
    assert h["finite"] == pytest.approx(math.log(a), abs=1e-3)


def test_step_jacobian_of_tanh_is_tanh_slope_times_u():
    # J_t = diag(1 - h_t^2) U: its spectral norm at the last step t = T = 6.
    model = decay.untrained_rnn(vocab_size=VOCAB, radius=0.9, hidden=5, embed_dim=3, seed=0)
    toks = tokens(6, 1)
    with torch.no_grad():
        h = model.init_state(1)
        for x_t in model.embedding(toks[:-1]):
            h = torch.tanh(x_t @ model.cell.W.T + h @ model.cell.U.T + model.cell.b_h)
        expected = torch.linalg.matrix_norm((1 - h[0] ** 2)[:, None] * model.cell.U, ord=2)
    got = decay.step_jacobian_norms(model, toks, [6])
    assert float(got[0, 0]) == pytest.approx(float(expected), rel=1e-12)
    slope = decay.step_slopes(model, toks, [6])  # (1, 1, 5): tanh' = 1 - h_6^2, unit by unit
    torch.testing.assert_close(slope[0, 0], 1 - h[0] ** 2, rtol=1e-12, atol=0)


def test_the_bounds_stand_above_the_measured_rate_and_the_mean_slope_is_the_trajectorys():
    # On every window ||g_{d+1}|| <= ||J_t|| ||g_d||: the mean log ||J_t|| over the crossed steps bounds the growth
    # per step, log mean ||J_t|| (Jensen) bounds that, and sigma_max(U) max f' bounds every ||J_t||.
    model = decay.untrained_rnn(vocab_size=VOCAB, radius=1.5, hidden=6, embed_dim=4, seed=1)
    toks = tokens(40, 3)
    row = decay.rates(model, toks, decay.backward_decay(model, toks), fit=(5, 30)).iloc[0]
    assert row["rate"] <= row["jacobian_log_bound"] <= row["jacobian_bound"] <= row["pascanu_bound"]
    crossed = [40 - d + 1 for d in range(6, 31)]  # the steps the fitted distances 5..30 cross
    picks = np.linspace(0, len(crossed) - 1, decay.JACOBIAN_STEPS).round().astype(int)
    slope = decay.step_slopes(model, toks, sorted({crossed[i] for i in picks}))
    assert row["mean_slope"] == pytest.approx(float(slope.mean()), rel=1e-12)
    assert 0 < row["mean_slope"] < 1  # tanh' = 1 only at a_t = 0


def test_fit_stops_at_the_first_underflow():
    # 0.5^d for 20 distances, then zeros (underflowed): the fit keeps 5..19 and finds log 0.5.
    d = np.arange(40)
    norms = np.where(d < 20, 0.5**d, 0.0)
    table = pd.DataFrame({"sequence": 0, "quantity": "h", "distance": d, "norm": norms})
    # a second sequence whose loss had no gradient at all (saturated softmax) is left out, not fitted
    dead = pd.DataFrame({"sequence": 1, "quantity": "h", "distance": d, "norm": 0.0})
    fit = decay.fit_rate(pd.concat([table, dead]), fit=(5, 39), dtype=torch.float64)
    assert fit["fit_from"] == 5 and fit["fit_to"] == 19 and fit["fit_points"] == 15 and fit["fit_sequences"] == 1
    assert fit["rate"] == pytest.approx(math.log(0.5), abs=1e-12)


def test_summary_gives_spread_over_sequences():
    table = pd.DataFrame({"sequence": [0, 1, 2, 3], "quantity": "h", "distance": 7, "norm": [1.0, 2.0, 4.0, 8.0]})
    row = decay.summarise(table).iloc[0]
    assert row["mean"] == 3.75 and row["median"] == 3.0 and row["min"] == 1.0 and row["max"] == 8.0
    assert row["geo_mean"] == pytest.approx(2**1.5)  # exp(mean(log)) = 2^((0+1+2+3)/4)
    assert row["q10"] == pytest.approx(1.3) and row["q90"] == pytest.approx(6.8)  # linear interpolation
    assert row["count"] == 4


@pytest.mark.parametrize("radius", [0.5, 2.0])
def test_untrained_rnn_has_the_asked_spectral_radius(radius):
    model = decay.untrained_rnn(vocab_size=VOCAB, radius=radius, hidden=10, embed_dim=3, seed=7)
    assert decay.spectral_radius(model.cell.U) == pytest.approx(radius, rel=1e-10)
    assert model.cfg.family == "rnn" and model.cfg.impl == "reference" and model.cell.W.dtype == torch.float64


def test_sequences_are_consecutive_windows_of_the_split():
    ids = np.arange(100)
    windows = decay.sequences(ids, 9, 4, seed=1)
    assert windows.shape == (10, 4)
    assert ((windows[1:] - windows[:-1]) == 1).all()
    with pytest.raises(ValueError, match="at least 10"):
        decay.sequences(np.arange(9), 9, 1)


def test_feed_forward_model_is_refused_by_name():
    model = build_model(ModelConfig(family="ff", vocab_size=VOCAB, embed_dim=3, hidden=4, context=2, output="full"))
    with pytest.raises(ValueError, match="recurrent model.*FeedForwardLM"):
        decay.backward_decay(model, tokens(5, 1))


def test_ptb_words_follow_the_corpus_conventions():
    text = "In 1987 sales didn't rise 3.5% to $1,000 & more. Then, it's done"
    assert decay.ptb_words(text) == [
        "in", "N", "sales", "did", "n't", "rise", "N", "to", "$", "N", "&", "more", "<eos>", "then", "it", "'s", "done",
    ]  # fmt: skip


def test_passage_gradient_reaches_partner_through_a_tiny_vocabulary():
    words = decay.ptb_words(decay.PASSAGE)
    assert len(words) == 46 and words[6] == "partner" and words[-1] == "his" and words.count("<eos>") == 3
    vocab = Vocab(("<unk>", "<eos>", "partner", "his", "to", "said", "raj", "a"), unk_token="<unk>")
    torch.manual_seed(0)
    cfg = ModelConfig(family="rnn", vocab_size=len(vocab), embed_dim=4, hidden=6, impl="reference", output="full")
    model = decay.make_linear(build_model(cfg).double(), 0.9)
    table = decay.passage_decay(model, vocab)
    assert len(table) == 46
    evidence = table[table["evidence"]]
    assert list(evidence["position"]) == [7] and list(evidence["distance"]) == [39]
    assert table.loc[table["word"] == "coffeeday", "token"].item() == "<unk>"
    # linear, U = 0.9 I: the blame reaching "partner" is 0.9^39 of the blame at "his"
    assert evidence["h_relative"].item() == pytest.approx(0.9**39, rel=1e-12)
    assert evidence["x_relative"].item() == pytest.approx(0.9**39, rel=1e-12)


def test_an_untrained_point_gives_curves_and_rates_keyed_by_its_settings():
    ids = np.arange(300) % VOCAB
    spec = {"radius": 0.9, "activation": "tanh", "hidden": 6, "embed_dim": 4, "seed": 0}
    curves, table = decay.decay_point(spec, ids, VOCAB, steps=30, count=3, keys={"radius": 0.9, "seed": 0})
    assert list(curves.columns[:5]) == ["radius", "seed", "direction", "method", "quantity"]
    assert set(zip(curves["direction"], curves["method"], curves["quantity"], strict=True)) == {
        ("backward", "one_pass", "h"), ("backward", "one_pass", "x"),
        ("forward", "jvp", "h"), ("forward", "jvp", "log_probs"),
        ("forward", "finite", "h"), ("forward", "finite", "log_probs"),
    }  # fmt: skip
    reach = curves.groupby("quantity")["distance"].agg(["max", "count"])
    assert reach.loc["h", "max"] == 29 and reach.loc["h", "count"] == 3 * 30  # every distance, three methods
    assert reach.loc["log_probs", "max"] == 25 and reach.loc["log_probs", "count"] == 2 * 6  # every 5th
    assert (curves["count"] == 3).all()
    assert len(table) == 2 + 4 and table["rate"].notna().all()
    np.testing.assert_allclose(table["radius_rate"], math.log(0.9), rtol=1e-10)


def test_a_trained_model_file_is_measured_on_its_own_vocabulary(tmp_path):
    from rnnbench.config.runs import RunConfig
    from rnnbench.io import write_torch

    cfg = RunConfig.from_settings({"family": "lstm", "corpus": "ptb", "hidden": 5, "embed_dim": 4, "output": "full"})
    torch.manual_seed(0)
    model = build_model(ModelConfig.from_run(cfg, VOCAB))
    write_torch(tmp_path / "epoch-1.pt", {"config": cfg.to_dict(), "state_dict": model.state_dict()})
    ids = np.arange(100) % VOCAB
    curves, table = decay.decay_point(
        tmp_path / "epoch-1.pt", ids, VOCAB, steps=12, count=2, keys={"run_id": "lstm-ptb-x", "epoch": 1}
    )
    assert set(curves["quantity"]) == {"h", "x", "c", "log_probs"} and (curves["run_id"] == "lstm-ptb-x").all()
    assert table["pascanu_bound"].isna().all()  # the LSTM's step Jacobian is not diag(f') U
    with pytest.raises(ValueError, match="reads 12 words but the corpus has 50"):
        decay.decay_point(tmp_path / "epoch-1.pt", np.arange(100), 50, steps=12, count=2)


def test_an_unknown_untrained_setting_is_named():
    with pytest.raises(ValueError, match=r"unknown untrained-network settings \['radious'\]"):
        decay.network({"radious": 0.9}, VOCAB, torch.float64)


def test_decay_curves_figure_has_one_log_panel_per_sweep_value(tmp_path):
    from rnnbench.plots.decay_figures import decay_curves_figure
    from rnnbench.plots.style import save

    ids = np.arange(300) % VOCAB
    tables = []
    for radius in (0.5, 1.5):
        spec = {"radius": radius, "hidden": 6, "embed_dim": 4}
        curves = decay.decay_point(spec, ids, VOCAB, steps=101, count=2, keys={"radius": radius})[0]
        tables += [curves.assign(activation="tanh"), curves.assign(activation="relu")]  # two panels, same lines
    fig = decay_curves_figure(pd.concat(tables), hue="radius", panel="activation", title="t")
    axes = fig.get_axes()
    # the backward gradient on top, the forward move of the state below it, one column per activation
    assert [ax.get_title() for ax in axes] == ["activation = relu", "activation = tanh", "", ""]
    assert [ax.get_ylabel() for ax in axes] == [
        "backward: ||dL/dh||",
        "",
        "forward: move of h\nper unit move of x_1",
        "",
    ]
    assert all(ax.get_yscale() == "log" for ax in axes)
    assert all(len(ax.get_lines()) == 2 for ax in axes)  # one median line per radius
    assert max(axes[0].get_lines()[0].get_xdata()) >= 100
    # a table of the backward pass alone draws its one row
    backward = pd.concat(tables).query("direction == 'backward'")
    assert len(decay_curves_figure(backward, hue="radius", panel="activation").get_axes()) == 2
    save(fig, str(tmp_path / "decay.png"))
    assert (tmp_path / "decay.png").stat().st_size > 0


def test_finite_perturbation_lost_in_rounding_is_not_reported():
    # a = 0.1: after d steps the move is 1e-6 * 0.1^d; beside states of size ~0.1 it drowns in float64
    # rounding (~1e-17) within a few steps, where the JVP goes on exactly.
    model = linear(0.1)
    table = decay.forward_decay(model, tokens(30, 1), eps=1e-6)
    h = table[table["quantity"] == "h"].set_index("distance")
    assert h.loc[0:2, "finite"].notna().all() and h.loc[10:, "finite"].isna().all()
    assert h["jvp"].notna().all() and h.loc[29, "jvp"] > 0
