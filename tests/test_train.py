"""Training: hand-worked clipping, truncation and schedule; thinning; divergence as data; resume; smoke runs."""

import json
import logging
import math
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from rnnbench.config.files import ConfigError
from rnnbench.config.runs import RunConfig
from rnnbench.data import load_corpus
from rnnbench.metrics import MACHINE_METRICS
from rnnbench.models import ModelConfig, build_model
from rnnbench.training import optim
from rnnbench.training.clipping import clip_gradients, clip_gradients_
from rnnbench.training.divergence import step_divergence, validation_divergence
from rnnbench.training.loop import train_run
from rnnbench.training.optim import make_optimizer
from rnnbench.training.reading import detach_state, reading_for, split_stream
from rnnbench.training.records import StepRecord, step_statistics, thin_steps
from rnnbench.training.schedule import Schedule

torch.set_num_threads(1)

# A small agreement corpus (generated in well under a second) cut further by train/eval_tokens.
SMALL_AGREEMENT = {"seed": 0, "train_sentences": 400, "valid_sentences": 60, "test_sentences": 60}
STEPS_COLUMNS = ["step", "epoch", "lr", "loss", "grad_norm", "clipped", "clip_cosine", "update_cosine"]
EPOCHS_COLUMNS = [
    "epoch",
    "lr",
    "steps",
    "train_ppl",
    "seconds",
    "tokens",
    "tokens_per_second",
    "clipped_fraction",
    "grad_norm_median",
    "valid_ppl",
    "valid_nll",
]
RUN_FILES = ("config.json", "epochs.csv", "steps.csv", "metrics.json", "model.pt")
TIMING_COLUMNS = ["seconds", "tokens_per_second"]


def tiny(**settings) -> RunConfig:
    """A run of a few dozen optimiser steps on the small agreement corpus: seconds, not minutes."""
    return RunConfig.from_settings(
        {
            "family": "rnn",
            "corpus": "agreement",
            "corpus_options": SMALL_AGREEMENT,
            "train_tokens": 3000,
            "eval_tokens": 500,
            "max_steps_per_epoch": 15,
            "max_epochs": 2,
            "hidden": 16,
            "embed_dim": 8,
            "output": "full",
            "batch_size": 8,
            "bptt": 10,
            "eval_batch_size": 16,
            **settings,
        }
    )


def params(*values):
    """Float64 leaf tensors whose .grad is the given vector (clipping only reads and rescales .grad)."""
    out = []
    for v in values:
        p = torch.zeros(len(v), dtype=torch.float64, requires_grad=True)
        p.grad = torch.tensor(v, dtype=torch.float64)
        out.append(p)
    return out


# --- clipping --------------------------------------------------------------------------------------------


def test_clip_by_norm_rescales_to_the_threshold_and_keeps_the_direction():
    (p,) = params([3.0, 4.0])
    # ||(3, 4)|| = sqrt(9 + 16) = 5 > 1: g <- 1/5 * (3, 4) = (0.6, 0.8)
    norm, clipped = clip_gradients([p], "norm", 1.0)
    assert norm == pytest.approx(5.0)  # the norm *before* clipping is what gets recorded
    assert clipped is True
    assert p.grad.tolist() == pytest.approx([0.6, 0.8])
    assert float(torch.linalg.vector_norm(p.grad)) == pytest.approx(1.0)
    # same direction: cos((3, 4), (0.6, 0.8)) = (1.8 + 3.2) / (5 * 1) = 1
    cosine = (3.0 * p.grad[0] + 4.0 * p.grad[1]) / (5.0 * torch.linalg.vector_norm(p.grad))
    assert float(cosine) == pytest.approx(1.0)


def test_clip_by_norm_below_the_threshold_leaves_the_gradient_alone():
    (p,) = params([3.0, 4.0])
    norm, clipped = clip_gradients([p], "norm", 10.0)  # 5 <= 10
    assert (norm, clipped) == (pytest.approx(5.0), False)
    assert p.grad.tolist() == [3.0, 4.0]


def test_clip_by_value_clamps_each_component_and_reports_the_pre_clip_norm():
    (p,) = params([3.0, 4.0])
    # element-wise to [-3.5, 3.5]: 3 stays, 4 -> 3.5; the direction changes (Mikolov's +-15 rule)
    norm, clipped = clip_gradients([p], "value", 3.5)
    assert p.grad.tolist() == [3.0, 3.5]
    assert clipped is True
    assert norm == pytest.approx(5.0)  # not ||(3, 3.5)|| = 4.61
    (q,) = params([3.0, -4.0])
    assert clip_gradients([q], "value", 15.0) == (pytest.approx(5.0), False)
    assert q.grad.tolist() == [3.0, -4.0]


def test_the_cosine_of_the_clipped_update():
    # norm clipping rescales (3, 4) to (0.6, 0.8): same direction, cosine 1
    (p,) = params([3.0, 4.0])
    assert float(clip_gradients_([p], "norm", 1.0).cosine) == 1.0
    # value clipping at 3.5 turns (3, 4) into (3, 3.5):
    #   cos = (3*3 + 4*3.5) / (||(3, 4)|| ||(3, 3.5)||) = 23 / (5 sqrt(21.25)) = 23 / 23.049 = 0.99788
    (q,) = params([3.0, 4.0])
    result = clip_gradients_([q], "value", 3.5)
    assert bool(result.clipped) and float(result.norm) == pytest.approx(5.0)
    assert float(result.cosine) == pytest.approx((9 + 14) / (5 * math.sqrt(21.25)), rel=1e-12)
    assert float(result.cosine) == pytest.approx(0.997880, abs=1e-6)
    # across two tensors the dot product and both norms are global: (3,) and (4,) give the same cosine
    a, b = params([3.0], [4.0])
    assert float(clip_gradients_([a, b], "value", 3.5).cosine) == pytest.approx(float(result.cosine), rel=1e-12)
    # nothing clipped: the update is the gradient, cosine 1
    (r,) = params([3.0, 4.0])
    assert float(clip_gradients_([r], "value", 15.0).cosine) == 1.0


def test_clip_mode_none_measures_and_never_clips():
    (p,) = params([300.0, 400.0])
    norm, clipped = clip_gradients([p], "none", 1.0)
    assert (norm, clipped) == (pytest.approx(500.0), False)
    assert p.grad.tolist() == [300.0, 400.0]


def test_the_norm_is_global_over_all_parameters():
    # grads (3,) and (4,): sqrt(3^2 + 4^2) = 5, the same as the single vector (3, 4)
    a, b = params([3.0], [4.0])
    norm, clipped = clip_gradients([a, b], "norm", 1.0)
    assert (norm, clipped) == (pytest.approx(5.0), True)
    # each tensor scaled by the same factor 1/5, not each to norm 1 on its own
    assert (a.grad.item(), b.grad.item()) == (pytest.approx(0.6), pytest.approx(0.8))


def test_parameters_without_a_gradient_are_skipped():
    a, b = params([3.0, 4.0], [1.0])
    b.grad = None  # e.g. an embedding row never used
    assert clip_gradients([a, b], "norm", 10.0) == (pytest.approx(5.0), False)


def sparse_embedding_gradient():
    """A 4-row embedding whose sparse gradient repeats row 1: tokens (1, 1, 3) with output gradients
    (1, 2), (2, 2), (12, 0). The dense gradient is row 1 = (3, 4), row 3 = (12, 0), norm sqrt(9 + 16 + 144) = 13;
    taken entry by entry without summing the repeats it would read sqrt(1 + 4 + 4 + 4 + 144) = 12.53."""
    embedding = torch.nn.Embedding(4, 2, sparse=True)
    embedding(torch.tensor([1, 1, 3])).backward(torch.tensor([[1.0, 2.0], [2.0, 2.0], [12.0, 0.0]]))
    assert embedding.weight.grad.is_sparse
    return embedding.weight


def test_a_sparse_gradient_is_clipped_as_its_dense_form_by_norm():
    p = sparse_embedding_gradient()
    norm, clipped = clip_gradients([p], "norm", 6.5)
    assert (norm, clipped) == (pytest.approx(13.0), True)
    # scaled by 6.5 / 13 = 1/2; the unused rows stay zero
    assert p.grad.to_dense().tolist() == [[0.0, 0.0], [1.5, 2.0], [0.0, 0.0], [6.0, 0.0]]


def test_a_sparse_gradient_is_clipped_as_its_dense_form_by_value():
    p = sparse_embedding_gradient()
    result = clip_gradients_([p], "value", 3.5)
    # the summed row (3, 4) clamps to (3, 3.5), not (1, 2) + (2, 2) clamped apart; (12, 0) -> (3.5, 0)
    assert p.grad.to_dense().tolist() == [[0.0, 0.0], [3.0, 3.5], [0.0, 0.0], [3.5, 0.0]]
    # cos = (3*3 + 4*3.5 + 12*3.5) / (13 sqrt(9 + 12.25 + 12.25)) = 65 / (13 sqrt(33.5)) = 0.86387
    assert float(result.norm) == pytest.approx(13.0)
    assert float(result.cosine) == pytest.approx(65 / (13 * math.sqrt(33.5)), rel=1e-6)  # float32 norms


def test_clipping_turns_adams_update_though_it_only_rescales_the_gradient():
    # Two scalar parameters a, b; Adam with lr 0.1, betas (0.5, 0.5) for numbers that work out on paper, eps 1e-8.
    # Step 1, g = (-2, 0): m = (1 - 0.5) g = (-1, 0), v = (1 - 0.5) g^2 = (2, 0).
    # Step 2, g = (3, 4): ||g|| = 5, clipped to norm 1 it is (0.6, 0.8). t = 2: 1 - 0.5^2 = 0.75 both corrections.
    #   unclipped: m = 0.5 (-1, 0) + 0.5 (3, 4) = (1, 2)          v = 0.5 (2, 0) + 0.5 (9, 16) = (5.5, 8)
    #              m_hat = (4/3, 8/3)                            v_hat = (22/3, 32/3)
    #              step = m_hat / sqrt(v_hat) = (4 / sqrt(66), sqrt(2/3)) = (0.492366, 0.816497)
    #   clipped:   m = 0.5 (-1, 0) + 0.5 (0.6, 0.8) = (-0.2, 0.4)  v = 0.5 (2, 0) + 0.5 (0.36, 0.64) = (1.18, 0.32)
    #              m_hat = (-4/15, 8/15)                         v_hat = (118/75, 32/75)
    #              step = (-(4/15) sqrt(75/118), sqrt(2/3)) = (-0.212598, 0.816497)
    #   The clipped gradient is the unclipped one's direction (cosine 1), yet a's step changes sign: scaled down,
    #   the new gradient no longer outweighs the momentum of step 1. b has no history, so its step is sign(g) scaled
    #   the same either way. Both updates are -lr times the steps; the cosine is
    #   (0.492366 * -0.212598 + 2/3) / (sqrt(0.492366^2 + 2/3) sqrt(0.212598^2 + 2/3)) = 0.561991 / 0.804456 = 0.698597
    a, b = torch.nn.Parameter(torch.tensor(0.0)), torch.nn.Parameter(torch.tensor(0.0))
    optimizer = optim.Adam([a, b], lr=0.1, betas=(0.5, 0.5), eps=1e-8)
    a.grad, b.grad = torch.tensor(-2.0), torch.tensor(0.0)
    optimizer.step()
    a.grad, b.grad = torch.tensor(3.0), torch.tensor(4.0)
    before = (a.item(), b.item())
    result = clip_gradients_([a, b], "norm", 1.0, optimizer)
    assert bool(result.clipped) and float(result.cosine) == 1.0  # the gradient kept its direction
    unclipped = (4 / math.sqrt(66), math.sqrt(2 / 3))
    clipped = (-(4 / 15) * math.sqrt(75 / 118), math.sqrt(2 / 3))
    by_hand = sum(u * c for u, c in zip(unclipped, clipped, strict=True)) / (
        math.hypot(*unclipped) * math.hypot(*clipped)
    )
    assert by_hand == pytest.approx(0.698597, abs=1e-6)
    assert float(result.update_cosine) == pytest.approx(by_hand, rel=1e-6)
    optimizer.step()  # the update taken is the clipped one: -0.1 times its step
    assert (a.item() - before[0], b.item() - before[1]) == pytest.approx([-0.1 * c for c in clipped], rel=1e-5)


@pytest.mark.parametrize("mode, threshold", [("norm", 2.0), ("value", 0.5)])
def test_the_update_cosine_of_an_embedding_is_taken_over_the_whole_table(mode, threshold):
    # An embedding whose gradient is sparse (rows 1 and 3, row 1 twice) and a bias, after one Adam step: every row's
    # moments move the update. The loop measures the clipped update on the rows used alone (the others move the
    # same either way); the cosine is the one of the whole updates, by the optimiser's trial before and after.
    model = torch.nn.Module()
    model.embedding, model.bias = torch.nn.Embedding(4, 2), torch.nn.Parameter(torch.zeros(2))
    optimizer = make_optimizer(tiny(optimizer="adam", lr=0.1, weight_decay=0.01), model)

    def backward(tokens, output_grad, bias_grad):
        optimizer.zero_grad()
        model.embedding(torch.tensor(tokens)).backward(torch.tensor(output_grad))
        model.bias.grad = torch.tensor(bias_grad)

    backward([0, 2], [[1.0, -1.0], [0.5, 2.0]], [0.3, -0.1])
    optimizer.step()
    backward([1, 1, 3], [[1.0, 2.0], [2.0, 2.0], [12.0, 0.0]], [1.0, -2.0])
    unclipped = optimizer.trial_updates()
    result = clip_gradients_(optimizer.params, mode, threshold, optimizer)
    assert bool(result.clipped)
    clipped = optimizer.trial_updates()  # whole, after clipping
    dot = sum(float((u.double() * c.double()).sum()) for u, c in zip(unclipped, clipped, strict=True))
    norms = [math.sqrt(sum(float((x.double() ** 2).sum()) for x in xs)) for xs in (unclipped, clipped)]
    assert float(result.update_cosine) == pytest.approx(dot / (norms[0] * norms[1]), abs=1e-6)
    assert float(result.update_cosine) < 1


def test_where_clipping_does_not_act_the_update_cosine_is_exactly_one_and_no_step_counts_as_measured():
    # ||(3, 4)|| = 5 under a threshold of 10: the gradient is left alone, and so is Adam's update
    a, b = torch.nn.Parameter(torch.tensor(0.0)), torch.nn.Parameter(torch.tensor(0.0))
    optimizer = optim.Adam([a, b], lr=0.1)
    a.grad, b.grad = torch.tensor(3.0), torch.tensor(4.0)
    result = clip_gradients_([a, b], "norm", 10.0, optimizer)
    assert not bool(result.clipped) and float(result.update_cosine) == 1.0
    record = StepRecord(1, 1, 0.1, 5.0, float(result.norm), False, 1.0, float(result.update_cosine))
    stats = step_statistics([record], None)
    assert (stats["update_cosine_mean"], stats["update_cosine_min"], stats["update_cosine_steps"]) == (None, None, 0)
    # without an optimiser to ask, nothing is measured: NaN, not 1
    assert math.isnan(float(clip_gradients_(params([3.0, 4.0]), "norm", 1.0).update_cosine))


@pytest.mark.parametrize(
    "settings, measures",
    [
        ({"optimizer": "sgd", "clip_mode": "norm", "clip": 0.3}, False),  # -lr g: the gradient's cosine says it all
        ({"optimizer": "sgd", "clip_mode": "value", "clip": 0.3}, False),
        ({"optimizer": "sgd", "clip_mode": "norm", "clip": 0.3, "weight_decay": 0.01}, True),  # decay is not scaled
        ({"optimizer": "adam", "clip_mode": "norm", "clip": 0.3}, True),
        ({"optimizer": "adam", "clip_mode": "value", "clip": 0.3}, True),
        ({"optimizer": "adam", "clip_mode": "none", "clip": 0.3}, False),  # clipping never acts
        ({"optimizer": "adam", "clip_mode": "norm", "clip": math.inf}, False),
    ],
)
def test_a_run_measures_the_update_where_clipping_can_turn_it(settings, measures):
    assert tiny(**settings).measures_update_cosine is measures


# --- truncation ------------------------------------------------------------------------------------------


def scalar_rnn_gradient(w_value: float, keep_last: int | None) -> tuple[float, float]:
    """h_t = w h_{t-1} + x_t, h_0 = 0, x = (1, 1, 1), L = h_3; the state is detached (with the training
    loop's own detach_state) before the last ``keep_last`` steps. Returns (L, dL/dw)."""
    w = torch.tensor(w_value, dtype=torch.float64, requires_grad=True)
    x = [1.0, 1.0, 1.0]
    h = torch.tensor(0.0, dtype=torch.float64)
    for t, x_t in enumerate(x):
        if keep_last is not None and t == len(x) - keep_last:
            h = detach_state(h)  # the cut: h keeps its value, loses the graph that made it
        h = w * h + x_t
    h.backward()
    return h.detach().item(), w.grad.item()


def test_full_bptt_on_the_scalar_linear_rnn():
    # h_1 = 1, h_2 = w + 1 = 1.5, h_3 = w^2 + w + 1 = 0.25 + 0.5 + 1 = 1.75
    # dL/dw = d(w^2 + w + 1)/dw = 2w + 1 = 2.0
    assert scalar_rnn_gradient(0.5, keep_last=None) == (pytest.approx(1.75), pytest.approx(2.0))


def test_truncating_to_the_last_step_keeps_only_h2():
    # h_2 = 1.5 is a constant after the cut; h_3 = w h_2 + x_3, so dL/dw = h_2 = 1.5
    # (the forward value is unchanged: truncation only cuts gradients)
    assert scalar_rnn_gradient(0.5, keep_last=1) == (pytest.approx(1.75), pytest.approx(1.5))


def test_truncating_to_two_steps_loses_nothing_here():
    # h_1 = 1 is a constant; h_2 = w h_1 + 1, h_3 = w h_2 + 1:
    #   dL/dw = h_2 + w dh_2/dw = h_2 + w h_1 = 1.5 + 0.5 * 1 = 2.0
    # equal to full BPTT because the lost term, w^2 dh_1/dw = w^2 h_0, is zero when h_0 = 0
    assert scalar_rnn_gradient(0.5, keep_last=2) == (pytest.approx(1.75), pytest.approx(2.0))
    # with w = 2 the same holds: full 2w + 1 = 5, two steps h_2 + w h_1 = 3 + 2 = 5, one step h_2 = 3
    assert scalar_rnn_gradient(2.0, keep_last=None)[1] == pytest.approx(5.0)
    assert scalar_rnn_gradient(2.0, keep_last=2)[1] == pytest.approx(5.0)
    assert scalar_rnn_gradient(2.0, keep_last=1)[1] == pytest.approx(3.0)


def test_detach_state_keeps_values_and_handles_lstm_pairs_and_none():
    w = torch.tensor(2.0, requires_grad=True)
    h, c = w * 3.0, w * 4.0
    dh, dc = detach_state((h, c))
    assert (float(dh), float(dc)) == (6.0, 8.0)
    assert not dh.requires_grad and not dc.requires_grad
    assert h.requires_grad  # the original graph is untouched
    assert detach_state(None) is None


# --- Mikolov's schedule ----------------------------------------------------------------------------------


def run_schedule(kind, nlls, lr=1.0, min_improvement=1.003):
    """Feed validation NLLs epoch by epoch; record (lr for the next epoch, done) after each."""
    schedule, previous, trace = Schedule(kind, lr, min_improvement), math.inf, []
    for nll in nlls:
        schedule = schedule.after_epoch(previous, nll)
        previous = min(previous, nll)
        trace.append((schedule.lr, schedule.done))
        if schedule.done:
            break
    return trace


def test_mikolov_schedule_halves_after_the_first_small_gain_and_stops_at_the_next():
    # improvement = previous / current, against 1.003:
    #   inf  -> 5.0   first epoch, always kept       lr 1
    #   5.0  -> 4.5   5.0 / 4.5 = 1.111  >= 1.003    lr 1
    #   4.5  -> 4.49  4.5 / 4.49 = 1.0022 < 1.003   halve: lr 0.5 (decaying from now on)
    #   4.49 -> 4.3   1.044, but decaying            lr 0.25
    #   4.3  -> 4.2   1.024                          lr 0.125
    #   4.2  -> 4.199 1.00024 < 1.003                done (lr not halved again)
    trace = run_schedule("mikolov", [5.0, 4.5, 4.49, 4.3, 4.2, 4.199, 4.0])
    assert trace == [(1.0, False), (1.0, False), (0.5, False), (0.25, False), (0.125, False), (0.125, True)]


def test_a_worse_epoch_counts_as_an_insufficient_gain():
    # 5.0 -> 5.2: 5.0 / 5.2 = 0.96 < 1.003 -> halve; then 5.0 -> 5.1 (still worse than the best) -> done
    assert run_schedule("mikolov", [5.0, 5.2, 5.1]) == [(1.0, False), (0.5, False), (0.5, True)]


def test_min_improvement_threshold_is_a_ratio_of_nlls():
    # 4.0 / 3.9 = 1.0256: enough for 1.02, not for 1.03
    assert run_schedule("mikolov", [4.0, 3.9], min_improvement=1.02)[-1] == (1.0, False)
    assert run_schedule("mikolov", [4.0, 3.9], min_improvement=1.03)[-1] == (0.5, False)


def test_plateau_schedule_halves_only_after_a_small_gain_and_keeps_a_rate_that_still_helps():
    # the same validation losses as Mikolov's test above, against 1.003:
    #   inf  -> 5.0   first epoch                    lr 1
    #   5.0  -> 4.5   1.111                          lr 1
    #   4.5  -> 4.49  1.0022 < 1.003                 halve: lr 0.5
    #   4.49 -> 4.3   1.044: the halved rate helps   lr 0.5 (Mikolov's: 0.25)
    #   4.3  -> 4.2   1.024                          lr 0.5 (Mikolov's: 0.125)
    #   4.2  -> 4.199 1.00024 < 1.003                halve: lr 0.25 (Mikolov's: done)
    #   4.199 -> 4.0  1.05                           lr 0.25
    trace = run_schedule("plateau", [5.0, 4.5, 4.49, 4.3, 4.2, 4.199, 4.0])
    assert trace == [(1.0, False), (1.0, False), (0.5, False), (0.5, False), (0.5, False), (0.25, False), (0.25, False)]
    # two epochs in a row without the gain: halve at the first, stop at the second
    assert run_schedule("plateau", [5.0, 5.2, 5.1]) == [(1.0, False), (0.5, False), (0.5, True)]


def test_constant_schedule_never_changes():
    trace = run_schedule("constant", [5.0, 5.2, 5.1, 5.3, 5.3], lr=0.001)
    assert trace == [(0.001, False)] * 5


# --- the optimiser ---------------------------------------------------------------------------------------


def test_adam_as_the_loop_builds_it_follows_the_bias_corrected_update_by_hand():
    # lr 0.1, betas (0.9, 0.999), eps 1e-8; p = (1, -2).
    # step 1, g = (0.5, -0.25): m = 0.1 g, v = 0.001 g^2; m / (1 - 0.9) = g, v / (1 - 0.999) = g^2,
    #         so each coordinate moves by lr g / |g| = 0.1 against its gradient's sign   -> p = (0.9, -1.9)
    # step 2, g = (0.5, 0.25), the second gradient's sign flipped:
    #         m = 0.9 m + 0.1 g = (0.095, 0.0025)          m_hat = m / (1 - 0.81)    = (0.5, 0.0025 / 0.19)
    #         v = 0.999 v + 0.001 g^2 = (0.00049975, 0.0001249375)
    #                                                      v_hat = v / (1 - 0.998001) = (0.25, 0.0625)
    #         p -= 0.1 m_hat / sqrt(v_hat) = 0.1 (0.5 / 0.5, (0.0025 / 0.19) / 0.25) = (0.1, 0.1 / 19)
    #         -> p = (0.8, -1.9 - 1 / 190): the momentum holds the flipped coordinate almost in place
    model = torch.nn.Module()
    model.p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    optimizer = make_optimizer(tiny(optimizer="adam", lr=0.1), model)
    for grad, expected in (([0.5, -0.25], [0.9, -1.9]), ([0.5, 0.25], [0.8, -1.9 - 1 / 190])):
        model.p.grad = torch.tensor(grad)
        optimizer.step()
        assert model.p.detach().tolist() == pytest.approx(expected, abs=1e-6)


def test_sgd_as_the_loop_builds_it_is_the_plain_update():
    model = torch.nn.Module()
    model.p = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    optimizer = make_optimizer(tiny(optimizer="sgd", lr=0.5), model)
    model.p.grad = torch.tensor([0.5, -0.25])
    optimizer.step()
    assert model.p.detach().tolist() == [0.75, -1.875]  # p - 0.5 g, exact in binary


def test_sgd_as_the_loop_builds_it_moves_only_the_embedding_rows_a_step_used():
    # The embedding hands SGD its gradient as the rows used: token 1 twice, token 3 once (see
    # sparse_embedding_gradient): row 1 -= 0.5 (3, 4), row 3 -= 0.5 (12, 0); rows 0 and 2 stay as they were.
    model = torch.nn.Module()
    model.embedding = torch.nn.Embedding(4, 2)
    torch.nn.init.ones_(model.embedding.weight)
    optimizer = make_optimizer(tiny(optimizer="sgd", lr=0.5), model)
    model.embedding(torch.tensor([1, 1, 3])).backward(torch.tensor([[1.0, 2.0], [2.0, 2.0], [12.0, 0.0]]))
    assert model.embedding.weight.grad.is_sparse
    optimizer.step()
    assert model.embedding.weight.tolist() == [[1.0, 1.0], [-0.5, -1.0], [1.0, 1.0], [-5.0, 1.0]]


def test_adam_as_the_loop_builds_it_moves_every_embedding_row_its_moments_move():
    # The embedding hands Adam its gradient as the rows used; Adam moves the rows its moments move.
    # lr 0.1. Step 1, tokens (1, 1, 3) as in sparse_embedding_gradient: g row 1 = (3, 4), row 3 = (12, 0).
    #   A nonzero coordinate moves by lr g / |g| (step 1 of the hand-worked Adam above); a zero one has m = v = 0
    #   and stays: row 1 -> (0.9, 0.9), row 3 -> (0.9, 1).
    # Step 2 (bias corrections 1 - 0.81 and 1 - 0.998001 for every row), token 2 alone, g row 2 = (1, -1):
    #   m_hat = 0.1 g / 0.19, v_hat = 0.001 g^2 / 0.001999, so row 2 moves by 0.1 (1 / 1.9) / sqrt(1 / 1.999) =
    #   0.0744 against its gradient's sign. Row 1's gradient is now zero, but its moments are not:
    #   m_hat = 0.9 * 0.1 g / 0.19, v_hat = 0.999 * 0.001 g^2 / 0.001999, so it moves by
    #   0.1 (9 / 19) / sqrt(999 / 1999) = 0.0670 more (0.1 again, had step 1's rows been handed to it twice);
    #   so does row 3's first coordinate. Row 0 was never used: it stays.
    model = torch.nn.Module()
    model.embedding = torch.nn.Embedding(4, 2)
    torch.nn.init.ones_(model.embedding.weight)
    optimizer = make_optimizer(tiny(optimizer="adam", lr=0.1), model)
    for tokens, output_grad in (([1, 1, 3], [[1.0, 2.0], [2.0, 2.0], [12.0, 0.0]]), ([2], [[1.0, -1.0]])):
        optimizer.zero_grad()
        model.embedding(torch.tensor(tokens)).backward(torch.tensor(output_grad))
        assert model.embedding.weight.grad.is_sparse
        optimizer.step()
    momentum = 0.9 - 0.1 * (9 / 19) / math.sqrt(999 / 1999)
    first = 0.1 * (1 / 1.9) / math.sqrt(1 / 1.999)
    expected = torch.tensor([[1.0, 1.0], [momentum, momentum], [1 - first, 1 + first], [momentum, 1.0]])
    assert torch.allclose(model.embedding.weight.detach(), expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    "settings",
    [
        {"optimizer": "sgd", "clip_mode": "norm", "clip": 0.3},
        {"optimizer": "sgd", "clip_mode": "value", "clip": 0.02},
        {"optimizer": "adam", "lr": 0.01, "clip_mode": "norm", "clip": 0.3},
    ],
)
def test_a_run_with_sparse_embedding_gradients_matches_one_with_dense_gradients(
    settings, tmp_path, cache_dir, monkeypatch
):
    cfg = tiny(**settings)
    sparse = train_run(cfg, tmp_path / "sparse", cache_dir=cache_dir)
    monkeypatch.setattr(optim, "sparse_embedding_gradients", lambda model: None)
    dense = train_run(cfg, tmp_path / "dense", cache_dir=cache_dir)
    assert sparse["clipped_fraction"] > 0  # the clipping acted on the sparse gradients
    # the same sums in another order: equal to float rounding
    for key in ("test_ppl", "valid_ppl", "clipped_fraction", "grad_norm_median"):
        assert sparse[key] == pytest.approx(dense[key], rel=1e-5), key


# --- thinning steps.csv ----------------------------------------------------------------------------------


def records(n):
    return [
        StepRecord(step=i, epoch=1, lr=1.0, loss=float(i), grad_norm=1.0, clipped=False, clip_cosine=1.0)
        for i in range(1, n + 1)
    ]


@pytest.mark.parametrize("keep", [None, 50, 100, 1, 99])
@pytest.mark.parametrize("max_rows", [10, 11, 33, 99])
def test_thin_steps_keeps_at_most_max_rows_with_first_last_and_the_kept_step(keep, max_rows):
    kept = [r.step for r in thin_steps(records(100), max_rows, keep=keep)]
    assert len(kept) <= max_rows
    assert kept == sorted(set(kept))  # in order, no duplicates
    assert kept[0] == 1 and kept[-1] == 100
    if keep is not None:
        assert keep in kept


def test_step_statistics_hand_worked():
    def step(i, norm, clipped, cosine):
        return StepRecord(i, 1, 1.0, 5.0, norm, clipped, cosine)

    steps = [
        step(1, 1.0, False, 1.0),
        step(2, 2.0, True, 0.9),
        step(3, 3.0, True, 0.7),
        step(4, 4.0, False, 1.0),
        step(5, 5.0, False, 1.0),
        step(6, math.inf, True, 0.1),
    ]
    # step 6 diverged: it enters no statistic. Norms 1..5: median 3, max 5; the 5% quantile by linear
    # interpolation 1 + 0.05 * 4 * (2 - 1) = 1.2, the 95% one 4 + 0.8 * (5 - 4) = 4.8
    # cosine over the clipped steps 2 and 3: (0.9 + 0.7) / 2 = 0.8
    stats = step_statistics(steps, diverged_step=6)
    assert stats == {
        "grad_norm_q05": pytest.approx(1.2),
        "grad_norm_median": 3.0,
        "grad_norm_q95": pytest.approx(4.8),
        "grad_norm_max": 5.0,
        "clip_cosine_mean": pytest.approx(0.8),
        "update_cosine_mean": None,  # no update measured
        "update_cosine_min": None,
        "update_cosine_steps": 0,
    }
    assert step_statistics(steps[:1], None)["clip_cosine_mean"] is None  # no step clipped: nothing to average
    # The update measured at steps 1 (not clipped: 1), 2 (0.6), 4 (not clipped) and 6 (diverged: left out); step 3
    # clipped but not measured (NaN). Over the clipped steps measured: step 2 alone.
    measured = [
        replace(s, update_cosine=c) for s, c in zip(steps, [1.0, 0.6, math.nan, 1.0, math.nan, 0.2], strict=True)
    ]
    stats = step_statistics(measured, diverged_step=6)
    assert (stats["update_cosine_mean"], stats["update_cosine_min"], stats["update_cosine_steps"]) == (0.6, 0.6, 1)


def test_thin_steps_spacing_and_short_lists():
    # 100 records, 10 rows, last step reserved: stride ceil(100 / 9) = 12 -> steps 1, 13, ..., 97, then 100
    assert [r.step for r in thin_steps(records(100), 10)] == [1, 13, 25, 37, 49, 61, 73, 85, 97, 100]
    # the divergence step is the last record: kept once, not twice
    assert [r.step for r in thin_steps(records(100), 10, keep=100)] == [1, 13, 25, 37, 49, 61, 73, 85, 97, 100]
    short = records(10)
    assert thin_steps(short, 10, keep=3) == short


# --- runs ------------------------------------------------------------------------------------------------


def read_run(out):
    return (
        json.loads((out / "metrics.json").read_text()),
        pd.read_csv(out / "epochs.csv"),
        pd.read_csv(out / "steps.csv"),
    )


@pytest.mark.parametrize(
    "family, settings",
    [
        ("ff", {"context": 3, "batch_size": 32, "optimizer": "adam", "lr": 0.01}),
        ("rnn", {"bptt": 0}),  # full BPTT over whole sentences
        ("lstm", {"bptt": 5, "dropout": 0.1}),
    ],
)
def test_short_run_per_family_writes_every_output(family, settings, tmp_path, cache_dir):
    cfg = tiny(family=family, max_epochs=1, max_steps_per_epoch=5, **settings)
    metrics = train_run(cfg, tmp_path, cache_dir=cache_dir)
    for name in RUN_FILES + ("agreement.csv",):
        assert (tmp_path / name).stat().st_size > 0, name
    assert not (tmp_path / "checkpoint.pt").exists()
    saved, epochs, steps = read_run(tmp_path)
    assert saved == metrics
    assert metrics["run_id"] == cfg.run_id and metrics["diverged"] is False
    assert metrics["steps"] == 5 and metrics["epochs"] == 1
    # a model that has seen 5 batches is still far from uniform over 313 words, and better than it
    vocab = 313
    assert 1.0 < metrics["test_ppl"] < vocab * 1.2 and 1.0 < metrics["valid_ppl"] < vocab * 1.2
    assert 0.0 <= metrics["agreement_accuracy"] <= 1.0
    assert list(steps.columns) == STEPS_COLUMNS
    assert steps["step"].tolist() == [1, 2, 3, 4, 5]
    assert list(epochs.columns) == EPOCHS_COLUMNS
    assert epochs["valid_ppl"].iloc[0] == pytest.approx(metrics["valid_ppl"])
    config = json.loads((tmp_path / "config.json").read_text())
    assert (
        config["run_id"] == cfg.run_id
        and RunConfig.from_settings({k: v for k, v in config.items() if k != "run_id"}) == cfg
    )
    model = torch.load(tmp_path / "model.pt", weights_only=False)
    assert model["config"] == cfg.to_dict() and set(model) == {"config", "state_dict"}
    # the validation probes scored by the same weights: the whole split's share of probes right
    corpus = load_corpus(cfg.corpus, cache_dir=cache_dir, **cfg.corpus_options)
    net = build_model(ModelConfig.from_run(cfg, len(corpus.vocab)))
    net.load_state_dict(model["state_dict"])
    valid = reading_for(cfg, corpus).agreement(net, "valid")
    right = (valid["accuracy"] * valid["n"]).sum() / valid["n"].sum()
    assert metrics["valid_agreement_accuracy"] == pytest.approx(right, abs=1e-12) and valid["split"].eq("valid").all()


def test_sentence_segments_differ_from_full_bptt_only_where_backward_stops(tmp_path, cache_dir):
    # This agreement corpus's sentences have at most 26 tokens: a cut every 40 steps never falls inside one, so the
    # run is full-sentence BPTT's step for step (same batches, order, zero states, updates); every 2 steps, only
    # the first step's loss (before any update) is the same.
    corpus = load_corpus("agreement", cache_dir=cache_dir, **SMALL_AGREEMENT)
    starts = corpus.sentence_starts["train"]
    assert np.diff(np.append(starts, len(corpus.train))).max() == 26
    runs = {}
    cut = {"segments": "sentence"}
    for name, settings in (("full", {"bptt": 0}), ("k40", {"bptt": 40, **cut}), ("k2", {"bptt": 2, **cut})):
        cfg = tiny(max_epochs=2, max_steps_per_epoch=6, **settings)
        train_run(cfg, tmp_path / name, cache_dir=cache_dir)
        saved = torch.load(tmp_path / name / "model.pt", weights_only=False)["state_dict"]
        runs[name] = (read_run(tmp_path / name)[2], saved)
    (full_steps, full_weights), (k40_steps, k40_weights), (k2_steps, k2_weights) = runs.values()
    assert full_steps["loss"].tolist() == k40_steps["loss"].tolist()
    assert full_steps["grad_norm"].tolist() == k40_steps["grad_norm"].tolist()
    assert all(torch.equal(full_weights[key], k40_weights[key]) for key in full_weights)
    assert len(k2_steps) == len(full_steps) == 12
    assert k2_steps["loss"].iloc[0] == full_steps["loss"].iloc[0]
    assert k2_steps["grad_norm"].iloc[0] != full_steps["grad_norm"].iloc[0]  # the same loss, another gradient
    assert not torch.equal(full_weights["cell.U"], k2_weights["cell.U"])


def test_snapshots_of_the_initialisation_and_every_epoch(tmp_path, cache_dir):
    from rnnbench.models import ModelConfig, build_model
    from rnnbench.paths import run_snapshot

    cfg = tiny(max_epochs=2)
    train_run(cfg, tmp_path / "runs" / cfg.run_id, cache_dir=cache_dir)
    saved = [torch.load(run_snapshot(str(tmp_path), cfg.run_id, k), weights_only=True) for k in range(3)]
    assert not (tmp_path / "runs" / cfg.run_id / "snapshots" / "epoch-003.pt").exists()
    assert all(set(s) == {"config", "state_dict"} and s["config"] == cfg.to_dict() for s in saved)
    torch.manual_seed(cfg.seed)  # epoch 0 is the initialisation: the model built from the seed
    initial = build_model(ModelConfig.from_run(cfg, 313)).state_dict()
    assert all(torch.equal(initial[k], saved[0]["state_dict"][k]) for k in initial)
    assert not torch.equal(saved[0]["state_dict"]["cell.U"], saved[1]["state_dict"]["cell.U"])  # trained
    assert not torch.equal(saved[1]["state_dict"]["cell.U"], saved[2]["state_dict"]["cell.U"])


def test_recorded_steps_follow_the_clipping_setting(tmp_path, cache_dir):
    # a threshold below any gradient norm: every step is clipped and the recorded norm is the pre-clip one
    metrics = train_run(
        tiny(clip_mode="norm", clip=1e-6, max_epochs=1, max_steps_per_epoch=6), tmp_path, cache_dir=cache_dir
    )
    _, epochs, steps = read_run(tmp_path)
    assert steps["clipped"].all() and (steps["grad_norm"] > 1e-6).all()
    assert metrics["clipped_fraction"] == 1.0 and epochs["clipped_fraction"].iloc[0] == 1.0
    assert (steps["lr"] == 1.0).all() and (steps["epoch"] == 1).all()


def test_a_threshold_from_a_planted_norm_trace_is_its_median_times_the_multiple():
    # A reference run's pre-clip norms, step by step: 0.5, 0.3, 9.0 (a spike), 0.4, 0.45, 0.35, then a step that
    # diverged, which enters no statistic. Sorted, the six kept: 0.3, 0.35, 0.4, 0.45, 0.5, 9.0; the median of an
    # even count is the mean of the middle two, (0.4 + 0.45) / 2 = 0.425, which the spike does not move. Twice it,
    # 0.85, clips the spike and leaves every ordinary step alone; half of it, 0.2125, clips every step.
    norms = [0.5, 0.3, 9.0, 0.4, 0.45, 0.35, math.inf]
    trace = [StepRecord(i, 1, 0.5, 5.0, norm, False, 1.0) for i, norm in enumerate(norms, start=1)]
    median = step_statistics(trace, diverged_step=7)["grad_norm_median"]
    assert median == pytest.approx(0.425)
    relative = tiny(clip_times_median=2, clip_reference_lr=0.5)
    reference = {"run_id": relative.clip_reference().run_id, "diverged": False, "grad_norm_median": median}
    threshold = relative.with_clip_from(reference).clip
    assert threshold == pytest.approx(0.85)
    assert [n > threshold for n in norms[:6]] == [False, False, True, False, False, False]  # the spike alone
    half = tiny(clip_times_median=0.5, clip_reference_lr=0.5)
    assert half.with_clip_from(reference | {"run_id": half.clip_reference().run_id}).clip == pytest.approx(0.2125)


def test_a_run_resolves_its_threshold_from_its_reference_and_records_it(tmp_path, cache_dir):
    """The reference trains unclipped (clip_times_median .inf, at the reference rate); the relative run reads its
    metrics.json, clips at the multiple of its median and writes the threshold to config.json and metrics.json."""
    relative = tiny(clip_times_median=1, clip_reference_lr=0.5, lr=2.0, max_epochs=1)
    reference = relative.clip_reference()
    never = train_run(reference, tmp_path / reference.run_id, cache_dir=cache_dir)
    assert never["clipped_fraction"] == 0.0 and never["clip_threshold"] is None  # never clipped: no threshold
    assert json.loads((tmp_path / reference.run_id / "config.json").read_text())["clip"] == "inf"
    with pytest.raises(ConfigError, match="whose metrics were not given"):
        train_run(relative, tmp_path / "without", cache_dir=cache_dir)
    assert not (tmp_path / "without").exists()
    metrics = train_run(
        relative,
        tmp_path / relative.run_id,
        cache_dir=cache_dir,
        clip_reference=tmp_path / reference.run_id / "metrics.json",
    )
    threshold = 1 * never["grad_norm_median"]
    assert metrics["clip_threshold"] == pytest.approx(threshold) and metrics["run_id"] == relative.run_id
    assert (metrics["clip_reference_run"], metrics["clip_reference_median"]) == (
        reference.run_id,
        never["grad_norm_median"],
    )
    config = json.loads((tmp_path / relative.run_id / "config.json").read_text())
    assert config["clip"] == pytest.approx(threshold) and config["clip_times_median"] == 1
    assert RunConfig.from_settings({k: v for k, v in config.items() if k != "run_id"}).run_id == relative.run_id
    _, _, steps = read_run(tmp_path / relative.run_id)
    assert steps["clipped"].tolist() == (steps["grad_norm"] > threshold).tolist()  # clipped where the norm is above


def test_divergence_is_data_not_a_crash(tmp_path, cache_dir):
    # relu units, no clipping and lr 1e6: the second step's loss is already NaN
    cfg = tiny(activation="relu", lr=1e6, clip_mode="none", max_epochs=3)
    metrics = train_run(cfg, tmp_path, cache_dir=cache_dir)
    assert metrics["diverged"] is True
    assert isinstance(metrics["diverged_step"], int) and metrics["diverged_step"] < 3 * 15
    assert metrics["diverged_reason"]
    assert metrics["test_ppl"] is None and metrics["valid_ppl"] is None
    assert metrics["steps"] == metrics["diverged_step"]  # ended early, at that step
    for name in RUN_FILES:
        assert (tmp_path / name).stat().st_size > 0, name
    assert not (tmp_path / "checkpoint.pt").exists()
    assert not (tmp_path / "agreement.csv").exists()  # no probe of a diverged model
    saved, epochs, steps = read_run(tmp_path)
    assert saved == metrics
    assert steps["step"].iloc[-1] == metrics["diverged_step"]  # the step that diverged is recorded
    assert len(epochs) == metrics["epochs"] and pd.isna(epochs["valid_ppl"].iloc[-1])


def test_the_clipped_fraction_counts_only_the_steps_taken(tmp_path, cache_dir):
    # Unclipped, this run's pre-clip norms rise 0.18, 0.21, 0.25, 0.20, 0.28, 0.29, 0.37, ... With the threshold
    # and the divergence limit both at 0.3, steps 1-6 are taken unclipped and step 7 (0.37) ends the run: its
    # norm was "clipped", but its update never counts, so the share is 0 of 6, not 1 of 7.
    cfg = tiny(clip_mode="norm", clip=0.3, divergence_norm=0.3, max_epochs=1)
    metrics = train_run(cfg, tmp_path, cache_dir=cache_dir)
    _, _, steps = read_run(tmp_path)
    assert (metrics["diverged"], metrics["diverged_step"], metrics["diverged_reason"]) == (
        True,
        7,
        "grad_norm_above_limit",
    )
    assert steps["clipped"].tolist() == [False] * 6 + [True]
    assert metrics["clipped_fraction"] == 0.0


def test_divergence_by_gradient_norm(tmp_path, cache_dir):
    # divergence_norm below any real gradient norm: the first step's pre-clip norm ends the run
    metrics = train_run(tiny(divergence_norm=1e-9), tmp_path, cache_dir=cache_dir)
    assert (metrics["diverged"], metrics["diverged_step"], metrics["steps"]) == (True, 1, 1)
    assert metrics["diverged_reason"] == "grad_norm_above_limit"


LOG_V = math.log(313)  # the small agreement corpus's vocabulary: the uniform model's NLL, 5.746 nats


@pytest.mark.parametrize(
    "loss, grad_norm, reason",
    [
        (5.0, 1.0, None),  # better than uniform, a moderate gradient
        (2 * LOG_V, 1.0, None),  # exactly at the margin 2 log |V| (perplexity |V|^2): not yet
        (2 * LOG_V + 0.01, 1.0, "loss_above_uniform"),  # confidently wrong: saturated units
        (800.0, 5.0, "loss_above_uniform"),  # finite, gradient small, loss exploded (saturated tanh)
        (math.nan, 1.0, "non_finite_loss"),
        (math.inf, 1.0, "non_finite_loss"),
        (5.0, math.nan, "non_finite_grad_norm"),
        (5.0, math.inf, "non_finite_grad_norm"),
        (5.0, 2e6, "grad_norm_above_limit"),  # above divergence_norm 1e6
        (math.nan, math.nan, "non_finite_loss"),  # the loss is named first
    ],
)
def test_step_divergence_reasons(loss, grad_norm, reason):
    assert step_divergence(loss, grad_norm, norm_limit=1e6, uniform_nll=LOG_V) == reason


@pytest.mark.parametrize(
    "valid_nll, best_nll, reason",
    [
        (5.0, math.inf, None),  # the first epoch
        (5.0, 4.5, None),  # 5.0 / 4.5 = 1.11: worse, below the rising factor 1.5
        (6.76, 4.5, "loss_rising"),  # 6.76 / 4.5 = 1.502 > 1.5 (still under 2 log |V| = 11.49)
        (12.0, 4.5, "loss_above_uniform"),  # above 2 log |V| whatever the best was
        (12.0, math.inf, "loss_above_uniform"),
        (math.inf, 4.5, "non_finite_loss"),
        (math.nan, math.inf, "non_finite_loss"),
    ],
)
def test_validation_divergence_reasons(valid_nll, best_nll, reason):
    assert validation_divergence(valid_nll, best_nll, uniform_nll=LOG_V) == reason


def test_saturated_units_end_the_run_as_diverged(tmp_path, cache_dir):
    # units saturated by lr 1e6 without clipping: the loss explodes while staying finite and the gradient
    # norm stays under divergence_norm; before, such a run reported test perplexity inf, diverged false
    cfg = tiny(
        hidden=8,
        embed_dim=16,
        optimizer="sgd",
        lr=1e6,
        clip_mode="none",
        schedule="constant",
        max_epochs=1,
        max_steps_per_epoch=30,
        train_tokens=20000,
        eval_tokens=5000,
    )
    metrics = train_run(cfg, tmp_path, cache_dir=cache_dir)
    assert metrics["diverged"] is True and metrics["diverged_reason"] == "loss_above_uniform"
    assert metrics["steps"] == metrics["diverged_step"] <= 30
    assert metrics["test_ppl"] is None and "agreement_accuracy" not in metrics


def test_a_huge_finite_loss_is_a_divergence_not_an_overflow(tmp_path, cache_dir):
    # lr 1e3 without clipping sends the loss far above the uniform model's (and above 709 nats, where
    # exp() overflows a float): the run ends diverged, with its records written, and nothing raised
    metrics = train_run(tiny(lr=1e3, clip_mode="none"), tmp_path, cache_dir=cache_dir)
    saved, epochs, steps = read_run(tmp_path)
    assert saved == metrics
    assert metrics["diverged"] is True and metrics["diverged_reason"] == "loss_above_uniform"
    assert steps["loss"].iloc[-1] > 2 * LOG_V and steps["step"].iloc[-1] == metrics["diverged_step"]
    assert metrics["test_ppl"] is None


@pytest.mark.parametrize(
    "settings",
    [
        {"dropout": 0.2},  # the dropout masks come from torch's RNG: its state must be restored
        {"family": "ff", "context": 3, "optimizer": "adam", "lr": 0.01},  # Adam's moments must be restored
    ],
)
def test_resumed_run_ends_exactly_like_an_uninterrupted_one(settings, tmp_path, cache_dir):
    cfg = tiny(max_epochs=3, **settings)
    whole = train_run(cfg, tmp_path / "whole", cache_dir=cache_dir)
    assert whole["epochs"] == 3  # the comparison covers epochs after the interruption

    first = train_run(cfg, tmp_path / "split", cache_dir=cache_dir, epoch_limit=1)
    assert first == {"run_id": cfg.run_id, "interrupted_after_epoch": 1}
    assert (tmp_path / "split" / "checkpoint.pt").exists() and not (tmp_path / "split" / "metrics.json").exists()
    resumed = train_run(cfg, tmp_path / "split", cache_dir=cache_dir)

    assert not (tmp_path / "split" / "checkpoint.pt").exists()
    for key in ("test_ppl", "valid_ppl", "agreement_accuracy", "epochs", "steps", "clipped_fraction"):
        assert resumed[key] == whole[key], key
    _, whole_epochs, whole_steps = read_run(tmp_path / "whole")
    _, split_epochs, split_steps = read_run(tmp_path / "split")
    pd.testing.assert_frame_equal(split_epochs.drop(columns=TIMING_COLUMNS), whole_epochs.drop(columns=TIMING_COLUMNS))
    pd.testing.assert_frame_equal(split_steps, whole_steps)


def test_a_run_counts_its_own_cpu_time_and_a_resumed_run_adds_what_its_checkpoint_carries(tmp_path, cache_dir):
    cfg = tiny(max_epochs=2)
    before = time.process_time()
    whole = train_run(cfg, tmp_path / "whole", cache_dir=cache_dir)
    spent = time.process_time() - before
    assert 0 < whole["cpu_seconds"] <= spent  # this call's CPU time, not the process's since it started
    assert whole["peak_rss_mb"] > 0

    train_run(cfg, tmp_path / "split", cache_dir=cache_dir, epoch_limit=1)
    checkpoint = tmp_path / "split" / "checkpoint.pt"
    saved = torch.load(checkpoint, weights_only=False)
    assert 0 < saved["state"]["cpu_seconds"] <= spent
    # As if the first call had taken 1000 CPU seconds and 5 GB: the resumed run adds its own call's time to them.
    saved["state"].update(cpu_seconds=1000.0, peak_rss_mb=5000.0)
    torch.save(saved, checkpoint)
    before = time.process_time()
    resumed = train_run(cfg, tmp_path / "split", cache_dir=cache_dir)
    second_call = time.process_time() - before
    assert 1000.0 < resumed["cpu_seconds"] <= 1000.0 + second_call
    assert resumed["peak_rss_mb"] == 5000.0  # the larger of the calls' peaks


@pytest.mark.parametrize("key", ["clip", "divergence_norm"])
def test_a_run_with_an_infinite_setting_resumes_from_its_config_json(key, tmp_path, cache_dir):
    cfg = tiny(**{key: math.inf})
    train_run(cfg, tmp_path, cache_dir=cache_dir, epoch_limit=1)
    assert json.loads((tmp_path / "config.json").read_text())[key] == "inf"  # JSON has no infinity
    metrics = train_run(cfg, tmp_path, cache_dir=cache_dir)
    assert metrics["epochs"] == 2 and not (tmp_path / "checkpoint.pt").exists()
    if key == "clip":
        assert metrics["clipped_fraction"] == 0.0  # an infinite threshold never clips


def damaged(checkpoint: Path, how: str) -> None:
    """Damage a checkpoint as a crash, a full disk or another program could."""
    if how == "truncated":
        checkpoint.write_bytes(checkpoint.read_bytes()[: checkpoint.stat().st_size // 2])
    elif how == "empty":
        checkpoint.write_bytes(b"")
    elif how == "not a checkpoint":
        torch.save({"model": {}}, checkpoint)
    else:  # every part there, its training state not
        saved = torch.load(checkpoint, weights_only=False)
        torch.save({**saved, "state": {"epoch": 1}}, checkpoint)


@pytest.mark.parametrize("how", ["truncated", "empty", "not a checkpoint", "state unreadable"])
def test_a_checkpoint_that_cannot_be_read_is_set_aside_and_the_run_starts_again(how, tmp_path, cache_dir, caplog):
    cfg = tiny(max_epochs=2)
    whole = train_run(cfg, tmp_path / "whole", cache_dir=cache_dir)
    run, checkpoint = tmp_path / "run", tmp_path / "run" / "checkpoint.pt"
    train_run(cfg, run, cache_dir=cache_dir, epoch_limit=1)
    damaged(checkpoint, how)
    damage = checkpoint.read_bytes()

    with caplog.at_level(logging.INFO, logger="rnnbench.training"):  # the loop and its checkpoints
        metrics = train_run(cfg, run, cache_dir=cache_dir)  # no error: the rerun that used to fail every time

    (aside,) = run.glob("checkpoint.pt.corrupt-*")
    assert aside.read_bytes() == damage and not checkpoint.exists()  # kept for a look, never read again
    warning = next(r for r in caplog.records if r.levelno == logging.WARNING)
    assert warning.getMessage().startswith(f"run {cfg.run_id}: the checkpoint {checkpoint} cannot be read (")
    assert warning.getMessage().endswith(f"; set aside as {aside}, training from scratch")
    assert "resuming" not in caplog.text
    # from scratch is the run as if never interrupted: the same numbers as an uninterrupted one
    for key in ("test_ppl", "valid_ppl", "epochs", "steps"):
        assert metrics[key] == whole[key], key
    pd.testing.assert_frame_equal(read_run(run)[2], read_run(tmp_path / "whole")[2])


@pytest.mark.parametrize("finished", [False, True])
def test_another_config_in_the_same_directory_is_refused_before_anything_is_written(finished, tmp_path, cache_dir):
    train_run(tiny(max_epochs=2), tmp_path, cache_dir=cache_dir, epoch_limit=None if finished else 1)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=r"other settings.*\['hidden'\].*nothing was changed"):
        train_run(tiny(max_epochs=2, hidden=12), tmp_path, cache_dir=cache_dir)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # config.json included


@pytest.mark.parametrize(
    ("files", "listed"),
    [
        ({"metrics.json": '{"mine": 1}\n', "notes.txt": "my notes\n"}, "metrics.json, notes.txt"),
        ({f"{i}.txt": "x" for i in range(7)}, "0.txt, 1.txt, 2.txt, 3.txt, 4.txt and 2 more"),
    ],
)
def test_a_folder_that_is_not_empty_and_holds_no_run_is_refused_untouched(tmp_path, cache_dir, files, listed):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ValueError) as caught:
        train_run(tiny(), tmp_path, cache_dir=cache_dir)
    assert str(caught.value) == (
        f"run directory {tmp_path} is not empty and holds no run (no config.json, checkpoint.pt, snapshots; it holds "
        f"{listed}); nothing was changed. Allowed: a folder that is new, empty or holds this run"
    )
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == files


def test_an_empty_folder_and_an_interrupted_run_without_its_config_are_trained_into(tmp_path, cache_dir):
    (tmp_path / "empty").mkdir()
    train_run(tiny(max_epochs=1), tmp_path / "empty", cache_dir=cache_dir)
    # a workflow rerun deletes an interrupted job's declared outputs, config.json among them, and keeps its checkpoint
    train_run(tiny(max_epochs=2), tmp_path / "run", cache_dir=cache_dir, epoch_limit=1)
    (tmp_path / "run" / "config.json").unlink()
    assert train_run(tiny(max_epochs=2), tmp_path / "run", cache_dir=cache_dir)["epochs"] == 2


def test_a_run_that_fails_at_the_start_leaves_no_directory(tmp_path, cache_dir):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="output: full"):  # cutoffs beyond the 313-word vocabulary
        train_run(tiny(output="adaptive", adaptive_cutoffs=[2000, 6000]), out, cache_dir=cache_dir)
    with pytest.raises(Exception, match="nowhere"):  # PTB from a folder that does not hold it
        train_run(tiny(corpus="ptb", corpus_options={}), out, data_dir=tmp_path / "nowhere", cache_dir=tmp_path / "c")
    assert not out.exists()


def test_a_run_that_fails_in_its_first_epoch_leaves_no_directory(tmp_path, cache_dir, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr("rnnbench.training.loop._train_epoch", fail)
    with pytest.raises(RuntimeError, match="out of memory"):
        train_run(tiny(), tmp_path / "run", cache_dir=cache_dir)
    assert not (tmp_path / "run").exists()  # not a folder holding only config.json


def test_a_checkpoint_resumes_with_another_thread_count(tmp_path, cache_dir):
    # threads is left out of the run id, so the same run directory may be resumed with more threads
    train_run(tiny(max_epochs=2), tmp_path, cache_dir=cache_dir, epoch_limit=1)
    metrics = train_run(tiny(max_epochs=2, threads=2), tmp_path, cache_dir=cache_dir)
    torch.set_num_threads(1)
    assert metrics["epochs"] == 2 and not (tmp_path / "checkpoint.pt").exists()


def test_adaptive_cutoffs_beyond_the_vocabulary_fail_with_the_fix(tmp_path, cache_dir):
    with pytest.raises(ValueError, match="output: full"):
        train_run(tiny(output="adaptive", adaptive_cutoffs=[2000, 6000]), tmp_path, cache_dir=cache_dir)


def test_split_stream_cuts_at_a_sentence_boundary(cache_dir):
    from rnnbench.data import load_corpus

    corpus = load_corpus("agreement", cache_dir=cache_dir, **SMALL_AGREEMENT)
    cut = split_stream(corpus, "train", 1000)
    starts = corpus.sentence_starts["train"]
    # the largest sentence start <= 1000: the stream ends with a whole sentence, i.e. with <eos>
    assert len(cut) == starts[starts <= 1000].max() and len(cut) <= 1000
    assert corpus.vocab.decode([cut[-1]]) == ["<eos>"]
    assert split_stream(corpus, "train", None) is corpus.train


# --- what the loop computes, pinned ----------------------------------------------------------------------

# Computed by the loop as it was before its records moved to the tensor side and its reading of the data
# moved to rnnbench.training.reading (one value per step read back each step, the family asked in the loop):
# speed changes must leave these alone. The tolerance allows only float32 rounding: another CPU's kernels,
# or the loss evaluated in an algebraically equal order (log p from the softmax instead of log_softmax moved
# the n-gram run's validation perplexity by 1.4e-6 of itself); any change in what is computed (an update, a
# batch, a clipping decision) moves them by far more.
PINNED = {
    "stream": (
        {"clip_mode": "norm", "clip": 0.34},
        (
            152.4113495388536,
            155.71707700901547,
            0.5,
            0.5,
            229.04175654790117,
            151.15126318293176,
            4.932094097137451,
            0.34921547770500183,
        ),
    ),
    "sentences": (
        {"bptt": 0, "clip_mode": "value", "clip": 0.05},
        (
            154.13158999443925,
            160.46836977537927,
            0.48333333333333334,
            0.4,
            233.76283532964433,
            156.79400932540148,
            5.04209041595459,
            0.27853256464004517,
        ),
    ),
    "windows": (
        {"family": "ff", "context": 3, "batch_size": 32, "optimizer": "adam", "lr": 0.01},
        (
            154.5160516439697,
            154.9679951461889,
            0.5,
            0.8333333333333334,
            275.7627728550354,
            182.1656803117916,
            4.638015270233154,
            0.5054745674133301,
        ),
    ),
}


@pytest.mark.parametrize("mode", PINNED)
def test_metrics_of_a_fixed_seed_run_are_pinned(mode, tmp_path, cache_dir):
    settings, expected = PINNED[mode]
    metrics = train_run(tiny(max_epochs=2, **settings), tmp_path, cache_dir=cache_dir)
    _, epochs, steps = read_run(tmp_path)
    got = (
        metrics["test_ppl"],
        metrics["valid_ppl"],
        metrics["agreement_accuracy"],
        metrics["clipped_fraction"],
        *epochs["train_ppl"],
        steps["loss"].iloc[-1],
        steps["grad_norm"].iloc[-1],
    )
    assert got == pytest.approx(expected, rel=1e-5)
    assert metrics["steps"] == 30 and len(steps) == 30


@pytest.mark.parametrize("settings", [{}, {"lr": 1e3, "clip_mode": "none"}])  # an ordinary run, a diverging one
def test_records_do_not_depend_on_how_often_they_are_read_back(settings, tmp_path, cache_dir, monkeypatch):
    runs = {}
    for every in (1, 4, 1000):
        monkeypatch.setattr("rnnbench.training.loop.READ_EVERY", every)
        metrics = train_run(tiny(**settings), tmp_path / str(every), cache_dir=cache_dir)
        _, epochs, steps = read_run(tmp_path / str(every))
        runs[every] = (
            {k: v for k, v in metrics.items() if k not in MACHINE_METRICS},
            epochs.drop(columns=TIMING_COLUMNS),
            steps,
        )
    for every in (4, 1000):
        assert runs[every][0] == runs[1][0]
        pd.testing.assert_frame_equal(runs[every][1], runs[1][1])
        pd.testing.assert_frame_equal(runs[every][2], runs[1][2])


@pytest.mark.parametrize(
    "settings",
    [
        {"optimizer": "adam", "lr": 0.01, "clip_mode": "norm", "clip": 0.3},
        {"optimizer": "adam", "lr": 0.01, "clip_mode": "value", "clip": 0.02, "weight_decay": 0.01},
    ],
)
def test_measuring_the_update_leaves_the_trained_model_bit_for_bit_as_it_was(
    settings, tmp_path, cache_dir, monkeypatch
):
    # Measured at every step, and not at all (as before it was measured): the same weights, losses and norms.
    monkeypatch.setattr("rnnbench.training.loop.UPDATE_COSINE_EVERY", 1)
    cfg = tiny(**settings)
    measured = train_run(cfg, tmp_path / "measured", cache_dir=cache_dir)
    monkeypatch.setattr(RunConfig, "measures_update_cosine", property(lambda self: False))
    plain = train_run(cfg, tmp_path / "plain", cache_dir=cache_dir)
    weights = [
        torch.load(tmp_path / run / "model.pt", weights_only=False)["state_dict"] for run in ("measured", "plain")
    ]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    snapshots = [
        torch.load(tmp_path / run / "snapshots" / "epoch-002.pt", weights_only=False) for run in ("measured", "plain")
    ]
    assert all(torch.equal(snapshots[0]["state_dict"][k], snapshots[1]["state_dict"][k]) for k in weights[0])
    steps = {run: read_run(tmp_path / run)[2] for run in ("measured", "plain")}
    pd.testing.assert_frame_equal(
        steps["measured"].drop(columns="update_cosine"), steps["plain"].drop(columns="update_cosine")
    )
    assert steps["plain"]["update_cosine"].isna().all()
    clipped = steps["measured"]["clipped"]
    assert clipped.any() and (steps["measured"].loc[~clipped, "update_cosine"] == 1.0).all()
    turned = steps["measured"].loc[clipped, "update_cosine"]
    # the first step's is 1 to rounding (fresh moments: each coordinate moves by lr sign(g) either way)
    assert turned.notna().all() and (turned <= 1).all() and (turned.iloc[1:] < 1).all() and (turned > 0).all()
    assert measured["update_cosine_steps"] == int(clipped.sum()) and plain["update_cosine_steps"] == 0
    assert measured["update_cosine_mean"] == pytest.approx(turned.mean()) and plain["update_cosine_mean"] is None
    same = [k for k in measured if k not in MACHINE_METRICS and not k.startswith("update_cosine")]
    assert {k: measured[k] for k in same} == {k: plain[k] for k in same}


def test_the_update_is_measured_every_few_steps_and_a_plain_sgd_run_leaves_it_out(tmp_path, cache_dir):
    # 2 epochs of 15 steps: measured at steps 1, 17 (UPDATE_COSINE_EVERY = 16), across the epoch boundary
    from rnnbench.metrics import UPDATE_COSINE_EVERY

    adam = train_run(
        tiny(optimizer="adam", lr=0.01, clip_mode="norm", clip=1e-6), tmp_path / "adam", cache_dir=cache_dir
    )
    steps = read_run(tmp_path / "adam")[2]
    assert steps["clipped"].all() and UPDATE_COSINE_EVERY == 16
    assert steps.loc[steps["update_cosine"].notna(), "step"].tolist() == [1, 17]
    assert adam["update_cosine_steps"] == 2 and adam["update_cosine_min"] <= adam["update_cosine_mean"] < 1
    sgd = train_run(tiny(clip_mode="norm", clip=1e-6), tmp_path / "sgd", cache_dir=cache_dir)
    assert read_run(tmp_path / "sgd")[2]["update_cosine"].isna().all()
    assert (sgd["update_cosine_steps"], sgd["update_cosine_mean"], sgd["clip_cosine_mean"]) == (0, None, 1.0)
