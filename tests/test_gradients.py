"""BPTT by hand against autograd, finite differences and numbers worked out here; gradient decay; clipping."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
import torch

from rnnbench.worked import bptt as g


def scalar_problem(w: float, u: float, xs: list[float]) -> g.Problem:
    """H = d = 1, two classes with V = (1, -1)^T, b = 0, target class 0 at every step, h_0 = 0."""
    params = g.Elman(
        W=np.array([[w]]), U=np.array([[u]]), b_h=np.zeros(1), V=np.array([[1.0], [-1.0]]), b_y=np.zeros(2)
    )
    return g.Problem(params, np.array(xs)[:, None], np.zeros(len(xs), dtype=int), np.zeros(1))


def test_bptt_scalar_by_hand():
    # h_1 = tanh(1), h_2 = tanh(1 + 0.5 h_1). Scores (h, -h), so p_0 = 1 / (1 + e^{-2h}) and
    # dE_t/dh_t = V^T (yhat - y) = (p_0 - 1) - p_1 = 2 (p_0 - 1).
    p = scalar_problem(w=1.0, u=0.5, xs=[1.0, 1.0])
    h1 = math.tanh(1.0)
    h2 = math.tanh(1.0 + 0.5 * h1)

    def dE_dh(h):
        return 2 * (1 / (1 + math.exp(-2 * h)) - 1)

    delta2 = dE_dh(h2) * (1 - h2**2)
    delta1 = (dE_dh(h1) + 0.5 * delta2) * (1 - h1**2)  # the recurrent term: h_1 also feeds a_2
    grads = g.bptt(p.params, p.xs, p.targets, p.h0)
    assert grads["U"][0, 0] == pytest.approx(delta2 * h1 + delta1 * 0.0)
    assert grads["W"][0, 0] == pytest.approx(delta1 * 1.0 + delta2 * 1.0)
    assert grads["b_h"][0] == pytest.approx(delta1 + delta2)
    # V: sum_t (yhat_t - y_t) h_t; for class 0 that is (p_0 - 1) h.
    p0 = [1 / (1 + math.exp(-2 * h)) for h in (h1, h2)]
    assert grads["V"][0, 0] == pytest.approx((p0[0] - 1) * h1 + (p0[1] - 1) * h2)

    # The chapter's (12.4) summed over t leaves U * delta2 out of delta1.
    chapter = g.bptt(p.params, p.xs, p.targets, p.h0, recurrent=False)
    assert chapter["W"][0, 0] == pytest.approx(dE_dh(h1) * (1 - h1**2) + delta2)
    assert chapter["W"][0, 0] != pytest.approx(grads["W"][0, 0])
    assert chapter["V"][0, 0] == pytest.approx(grads["V"][0, 0])


def test_loss_is_the_summed_cross_entropy():
    p = scalar_problem(w=1.0, u=0.5, xs=[1.0, 1.0])
    h1 = math.tanh(1.0)
    h2 = math.tanh(1.0 + 0.5 * h1)
    expected = sum(math.log(1 + math.exp(-2 * h)) for h in (h1, h2))  # -log p_0 with p_0 = 1/(1+e^{-2h})
    assert g.loss(p.params, p.xs, p.targets, p.h0) == pytest.approx(expected)


def test_gradient_check_every_parameter_below_1e6():
    table = g.gradient_check()
    full = table[table.variant == "bptt_full"]
    assert set(full.parameter) == {"V", "b_y", "U", "W", "b_h"}
    assert set(full.reference) == {"autograd", "finite_difference"}
    assert (full.rel_error < 1e-6).all() and full.passes.all()
    assert (full[full.reference == "autograd"].rel_error < 1e-12).all()


def test_chapter_per_step_formulas_miss_the_recurrent_term():
    table = g.gradient_check()
    chapter = table[(table.variant == "chapter_per_step") & (table.reference == "autograd")].set_index("parameter")
    assert chapter.loc[["V", "b_y"], "passes"].all()  # (12.2) is exact: V is outside the recurrence
    assert (chapter.loc[["U", "W", "b_h"], "rel_error"] > 0.1).all()


def test_chapter_formulas_equal_bptt_when_u_is_zero():
    # With U = 0 there is no path through h_{t-1}, so (12.3)/(12.4) are the whole gradient.
    p = g.random_problem(seed=3)
    p = g.Problem(p.params.replace(U=np.zeros_like(p.params.U)), p.xs, p.targets, p.h0)
    full = g.bptt(p.params, p.xs, p.targets, p.h0)
    chapter = g.bptt(p.params, p.xs, p.targets, p.h0, recurrent=False)
    for name in g.PARAM_NAMES:
        np.testing.assert_allclose(chapter[name], full[name], rtol=0, atol=1e-15)


def test_changing_x1_changes_h_T():
    p = g.random_problem(steps=8)
    xs = p.xs.copy()
    xs[0] += 1.0
    h_before, _ = g.forward(p.params, p.xs, p.h0)
    h_after, _ = g.forward(p.params, xs, p.h0)
    assert np.abs(h_before[-1] - h_after[-1]).max() > 1e-6


def test_jacobian_chain_is_u_to_the_power_at_the_origin():
    # x = 0, b = 0, h_0 = 0: every h_t = 0 and tanh'(0) = 1, so dh_tau/dh_0 = U^tau = 0.5^tau.
    params = g.Elman(W=np.ones((1, 1)), U=np.array([[0.5]]), b_h=np.zeros(1), V=np.ones((2, 1)), b_y=np.zeros(2))
    p = g.Problem(params, np.zeros((10, 1)), np.zeros(10, dtype=int), np.zeros(1))
    chain = g.jacobian_chain(p)
    assert [c[0, 0] for c in chain] == pytest.approx([0.5**tau for tau in range(1, 11)])
    assert chain[9][0, 0] == pytest.approx(0.0009765625)  # 0.5^10 = 1/1024
    np.testing.assert_allclose(g.jacobian_autograd(p)[:, 0, 0], [c[0, 0] for c in chain], rtol=1e-14)


def test_jacobian_chain_matches_autograd_and_tanh_damps_it():
    table = g.jacobian_decay(radii=(0.5, 1.5), steps=30)
    assert (table.rel_diff < 1e-10).all()
    assert table.groupby("spectral_radius").size().tolist() == [30, 30]
    assert sorted(table.spectral_radius.unique()) == pytest.approx([0.5, 1.5])
    # Each factor diag(tanh') U has tanh' in (0, 1]: below radius 1 the product is gone by step 30.
    small = table[table.spectral_radius < 1]
    assert small.jacobian_norm.iloc[-1] < 1e-6
    assert (table.mean_tanh_slope <= 1).all()


def test_the_products_rate_is_the_slope_of_its_log_norm_and_its_swing_the_spread_of_one_step():
    # radius 0.5: ||dh_tau/dh_0|| = 0.5^tau, so every step adds log 0.5 to the log-norm: rate log 0.5, no spread.
    # radius 2: the log-norm alternates 0, log 2, 0, log 2, ...: each step changes it by +-log 2 (spread log 2).
    # The fit reads distances 5..21: 16 steps, eight up and eight down.
    tau = np.arange(1, 22)
    table = pd.DataFrame(
        {
            "spectral_radius": np.repeat([0.5, 2.0], 21),
            "distance": np.tile(tau, 2),
            "jacobian_norm": np.concatenate([0.5**tau, np.where(tau % 2 == 1, 2.0, 1.0)]),
            "mean_tanh_slope": np.concatenate([np.full(21, 0.3), np.tile([0.2, 0.4], 11)[:21]]),
        }
    )
    rates = g.jacobian_rates(table).set_index("spectral_radius")
    assert rates.loc[0.5, "rate"] == pytest.approx(math.log(0.5), abs=1e-12)
    assert rates.loc[0.5, "step_sd"] == pytest.approx(0.0, abs=1e-12)
    assert rates.loc[2.0, "step_sd"] == pytest.approx(math.log(2), abs=1e-12)
    assert (rates["fit_from"] == 5).all() and (rates["fit_to"] == 21).all()  # the analyses' fitted range, FIT_SKIP on
    assert rates["mean_tanh_slope"].tolist() == pytest.approx([0.3, (11 * 0.2 + 10 * 0.4) / 21])


def test_the_width_not_the_saturation_sets_the_sign_of_the_products_rate():
    # The same recipe at 8 and 200 units, radius 3: their units saturate alike (mean tanh' within 0.05), yet the
    # 8-unit product shrinks and the 200-unit one grows; one step swings the 8-unit log-norm far more.
    table = g.jacobian_width(radii=(3.0,)).set_index("hidden")
    assert table.loc[8, "rate"] < 0 < table.loc[200, "rate"]
    assert abs(table.loc[8, "mean_tanh_slope"] - table.loc[200, "mean_tanh_slope"]) < 0.05
    assert table.loc[8, "step_sd"] > 3 * table.loc[200, "step_sd"]


def test_relative_error():
    assert g.relative_error(np.array([1.0, 0.0]), np.array([1.0, 0.0])) == 0.0
    assert g.relative_error(np.zeros(2), np.zeros(2)) == 0.0
    assert g.relative_error(np.array([3.0, 4.0]), np.array([3.0, 3.0])) == pytest.approx(1 / 5)


def test_random_problem_spectral_radius_and_seed():
    a = g.random_problem(recurrent_radius=1.2, hidden=6, seed=7)
    b = g.random_problem(recurrent_radius=1.2, hidden=6, seed=7)
    assert g.spectral_radius(a.params.U) == pytest.approx(1.2)
    np.testing.assert_array_equal(a.params.W, b.params.W)


def test_lesson_gradient_reach_shrinks_and_is_reproducible():
    first = g.gradient_reach()
    again = g.gradient_reach()
    assert first.length.tolist() == [5, 20, 50, 100]
    assert first.grad_token1_mean_abs.tolist() == again.grad_token1_mean_abs.tolist()
    values = first.grad_token1_mean_abs.tolist()
    assert all(a > b for a, b in pairwise(values))
    assert values[-1] < 1e-20
    assert first.printed.tolist() == [f"{v:.0e}" for v in values]


def test_one_thread_restores_the_thread_count():
    before = torch.get_num_threads()
    with g.one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
