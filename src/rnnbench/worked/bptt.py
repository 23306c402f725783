"""Backpropagation through time by hand, checked against autograd and finite differences; gradient decay.

The model is the chapter's Elman language model on given input vectors x_t (the embeddings, held fixed):

    a_t = W x_t + U h_{t-1} + b_h          h_t = tanh(a_t)          (12.8)
    o_t = V h_t + b_y                      yhat_t = softmax(o_t)    (12.9)
    L   = sum_t E_t,   E_t = -log yhat_t[y_t]                       (12.1)

BPTT walks the sequence backwards carrying the error at the pre-activation, delta_t = dL/da_t:

    dL/dh_t = V^T (yhat_t - y_t)  +  U^T delta_{t+1}        (second term: h_t also feeds a_{t+1}; zero at t = T)
    delta_t = dL/dh_t * (1 - h_t^2)

    dL/dV = sum_t (yhat_t - y_t) h_t^T      dL/db_y = sum_t (yhat_t - y_t)                       (12.2)
    dL/dU = sum_t delta_t h_{t-1}^T         dL/dW   = sum_t delta_t x_t^T      dL/db_h = sum_t delta_t

The chapter's (12.3) and (12.4) write the bracket as [V^T (yhat_t - y_t)] * (1 - h_t^2): that is the first
term of dL/dh_t only. It is the derivative of E_t with h_{t-1} held fixed, so summing it over t cuts every
path through the recurrence, which is one-step truncated BPTT, not the gradient. (12.2) is exact as printed,
because V does not enter the recurrence. `bptt(..., recurrent=False)` computes the chapter's version so the
gap can be measured.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from rnnbench.decay.rates import fit_rate

PARAM_NAMES = ("V", "b_y", "U", "W", "b_h")
# The spectral radii U is rescaled to for the Jacobian product: below, at and above the chapter's edge |lambda| = 1.
JACOBIAN_RADII = (0.5, 0.9, 1.0, 1.5, 2.0, 3.0)
# The same recipe at two widths: this chapter's 8 units, and the 200 of the default config's decay analyses
# (config/config.yaml, analyses: decay_radius). Between the two only the width changes, not how hard the units
# saturate, so the width's effect on the product is read apart from the saturation's.
JACOBIAN_WIDTHS = (8, 200)


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one thread, then restore: these tensors are tiny, and on a busy machine extra threads
    spin and slow each op a hundredfold; one thread also makes the lesson's seeded numbers reproducible."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@dataclass(frozen=True)
class Elman:
    """Parameters of the Elman LM in float64 numpy, named as in the chapter."""

    W: np.ndarray  # (H, d)
    U: np.ndarray  # (H, H)
    b_h: np.ndarray  # (H,)
    V: np.ndarray  # (K, H)
    b_y: np.ndarray  # (K,)

    def as_dict(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in PARAM_NAMES}

    def replace(self, **arrays: np.ndarray) -> Elman:
        return Elman(**{**self.as_dict(), **arrays})


@dataclass(frozen=True)
class Problem:
    """A small seeded BPTT problem: parameters, inputs x_1..x_T, targets y_1..y_T and h_0."""

    params: Elman
    xs: np.ndarray  # (T, d)
    targets: np.ndarray  # (T,) int, class index of y_t
    h0: np.ndarray  # (H,)


def spectral_radius(matrix: np.ndarray) -> float:
    """max |lambda| over the eigenvalues, on one thread (see `jacobian_chain`)."""
    with one_thread():
        return float(torch.linalg.eigvals(torch.from_numpy(np.asarray(matrix, dtype=np.float64))).abs().max())


def random_problem(
    *,
    vocab_size: int = 5,
    embed_dim: int = 3,
    hidden: int = 4,
    steps: int = 6,
    recurrent_radius: float = 0.9,
    seed: int = 0,
) -> Problem:
    """Seeded small problem; U is rescaled to the given spectral radius and h_0 is nonzero so its path counts."""
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((hidden, hidden))
    U *= recurrent_radius / spectral_radius(U)
    params = Elman(
        W=rng.standard_normal((hidden, embed_dim)) * 0.5,
        U=U,
        b_h=rng.standard_normal(hidden) * 0.1,
        V=rng.standard_normal((vocab_size, hidden)) * 0.5,
        b_y=rng.standard_normal(vocab_size) * 0.1,
    )
    xs = rng.standard_normal((steps, embed_dim))
    targets = rng.integers(0, vocab_size, size=steps)
    h0 = rng.standard_normal(hidden) * 0.1
    return Problem(params, xs, targets, h0)


def _softmax(o: np.ndarray) -> np.ndarray:
    e = np.exp(o - o.max())
    return e / e.sum()


def forward(params: Elman, xs: np.ndarray, h0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """States and output distributions: hs (T+1, H) with hs[0] = h_0, yhats (T, K)."""
    hs = [h0]
    yhats = []
    for x in xs:
        hs.append(np.tanh(params.W @ x + params.U @ hs[-1] + params.b_h))  # (H,)
        yhats.append(_softmax(params.V @ hs[-1] + params.b_y))  # (K,)
    return np.stack(hs), np.stack(yhats)


def loss(params: Elman, xs: np.ndarray, targets: np.ndarray, h0: np.ndarray) -> float:
    """L = sum_t -log yhat_t[y_t]  (12.1)."""
    _, yhats = forward(params, xs, h0)
    return float(-np.log(yhats[np.arange(len(targets)), targets]).sum())


def bptt(
    params: Elman, xs: np.ndarray, targets: np.ndarray, h0: np.ndarray, *, recurrent: bool = True
) -> dict[str, np.ndarray]:
    """Gradients of L by the BPTT recursion in the module docstring (no autograd).

    `recurrent=False` drops U^T delta_{t+1} from dL/dh_t, which is the chapter's (12.3)/(12.4) summed over t.
    """
    hs, yhats = forward(params, xs, h0)  # (T+1, H), (T, K)
    T = len(xs)
    err_out = yhats.copy()  # (T, K): yhat_t - y_t, the softmax + cross-entropy error
    err_out[np.arange(T), targets] -= 1.0
    grads = {name: np.zeros_like(value) for name, value in params.as_dict().items()}
    delta_next = np.zeros_like(h0)  # (H,): delta_{T+1} = 0, nothing after the last step
    for t in range(T - 1, -1, -1):
        h_t, h_prev = hs[t + 1], hs[t]
        grads["V"] += np.outer(err_out[t], h_t)  # (12.2)
        grads["b_y"] += err_out[t]
        dh = params.V.T @ err_out[t]  # (H,): dE_t/dh_t, the chapter's bracket
        if recurrent:
            dh = dh + params.U.T @ delta_next  # h_t also feeds a_{t+1}: the term (12.3)/(12.4) leave out
        delta = dh * (1.0 - h_t**2)  # (H,): through tanh' = 1 - tanh^2
        grads["U"] += np.outer(delta, h_prev)  # (12.3)
        grads["W"] += np.outer(delta, xs[t])  # (12.4)
        grads["b_h"] += delta
        delta_next = delta
    return grads


def autograd_grads(params: Elman, xs: np.ndarray, targets: np.ndarray, h0: np.ndarray) -> dict[str, np.ndarray]:
    """The same gradients by torch autograd in float64: an independent oracle for `bptt`."""
    leaves = {n: torch.tensor(v, dtype=torch.float64, requires_grad=True) for n, v in params.as_dict().items()}
    x = torch.tensor(xs, dtype=torch.float64)  # (T, d)
    h = torch.tensor(h0, dtype=torch.float64)  # (H,)
    total = torch.zeros((), dtype=torch.float64)
    with one_thread():
        for t in range(len(xs)):
            h = torch.tanh(leaves["W"] @ x[t] + leaves["U"] @ h + leaves["b_h"])  # (H,)
            log_probs = torch.log_softmax(leaves["V"] @ h + leaves["b_y"], dim=0)  # (K,)
            total = total - log_probs[int(targets[t])]
        total.backward()
    return {n: leaf.grad.numpy().copy() for n, leaf in leaves.items()}


def finite_difference_grads(
    params: Elman, xs: np.ndarray, targets: np.ndarray, h0: np.ndarray, *, eps: float = 1e-6
) -> dict[str, np.ndarray]:
    """Central differences (L(p + eps) - L(p - eps)) / 2 eps, one scalar at a time, in float64."""
    grads = {}
    for name, value in params.as_dict().items():
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            plus, minus = value.copy(), value.copy()
            plus[index] += eps
            minus[index] -= eps
            up = loss(params.replace(**{name: plus}), xs, targets, h0)
            down = loss(params.replace(**{name: minus}), xs, targets, h0)
            grad[index] = (up - down) / (2 * eps)
        grads[name] = grad
    return grads


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """||a - b|| / max(||a||, ||b||), 0 when both are zero."""
    scale = max(np.linalg.norm(a), np.linalg.norm(b))
    return 0.0 if scale == 0 else float(np.linalg.norm(a - b) / scale)


def gradient_check(problem: Problem | None = None, *, tolerance: float = 1e-6) -> pd.DataFrame:
    """Hand BPTT (full, and the chapter's per-step formulas) against autograd and central differences.

    One row per (variant, parameter, reference). `passes` is rel_error < tolerance; the chapter's per-step
    variant is expected to fail for U, W and b_h and to pass for V and b_y.
    """
    p = problem or random_problem()
    args = (p.params, p.xs, p.targets, p.h0)
    references = {"autograd": autograd_grads(*args), "finite_difference": finite_difference_grads(*args)}
    variants = {"bptt_full": bptt(*args), "chapter_per_step": bptt(*args, recurrent=False)}
    rows = []
    for variant, grads in variants.items():
        for name in PARAM_NAMES:
            for reference, ref_grads in references.items():
                err = relative_error(grads[name], ref_grads[name])
                rows.append(
                    {
                        "variant": variant,
                        "parameter": name,
                        "shape": "x".join(map(str, grads[name].shape)),
                        "reference": reference,
                        "rel_error": err,
                        "max_abs_error": float(np.max(np.abs(grads[name] - ref_grads[name]))),
                        "grad_norm": float(np.linalg.norm(ref_grads[name])),
                        "passes": err < tolerance,
                    }
                )
    return pd.DataFrame(rows)


def jacobian_chain(problem: Problem) -> list[np.ndarray]:
    """dh_tau/dh_0 for tau = 1..T as the explicit product J_tau ... J_1, J_t = diag(1 - h_t^2) U  (12.5, 12.6).

    The products are torch's on one thread: numpy's BLAS spreads a 200 x 200 product over every core, and on a
    busy machine that is a hundred times slower."""
    hs, _ = forward(problem.params, problem.xs, problem.h0)  # (T+1, H)
    slopes = torch.from_numpy(1.0 - hs[1:] ** 2)  # (T, H): tanh'(a_t)
    U = torch.from_numpy(problem.params.U)  # (H, H)
    product = torch.eye(len(problem.h0), dtype=torch.float64)  # (H, H): dh_0/dh_0
    chain = []
    with one_thread():
        for slope in slopes:
            product = (slope[:, None] * U) @ product  # (H, H): diag(tanh'(a_t)) U, times dh_{t-1}/dh_0
            chain.append(product.numpy())
    return chain


def spectral_norms(matrices: Sequence[np.ndarray]) -> np.ndarray:
    """||M||_2 of each matrix: (len(matrices),), on one thread (see `jacobian_chain`)."""
    with one_thread():
        return torch.linalg.matrix_norm(torch.from_numpy(np.stack(matrices)), ord=2).numpy()


def jacobian_autograd(problem: Problem) -> np.ndarray:
    """dh_tau/dh_0 for tau = 1..T by torch autograd (one reverse pass): (T, H, H).

    The sequence runs on T*H copies of h_0; copy (tau, j) contributes only h_tau[j] to the summed output, so
    the gradient reaching that copy's h_0 is row j of dh_tau/dh_0.
    """
    p = {n: torch.tensor(v, dtype=torch.float64) for n, v in problem.params.as_dict().items()}
    x = torch.tensor(problem.xs, dtype=torch.float64)  # (T, d)
    T, H = len(x), len(problem.h0)
    h0 = torch.tensor(problem.h0, dtype=torch.float64).repeat(T * H, 1).requires_grad_()  # (T*H, H)
    copy_step = torch.arange(T * H) // H  # (T*H,): tau - 1 of each copy
    copy_unit = torch.arange(T * H) % H  # (T*H,): j of each copy
    h, total = h0, torch.zeros((), dtype=torch.float64)
    with one_thread():
        for t in range(T):
            h = torch.tanh(x[t] @ p["W"].T + h @ p["U"].T + p["b_h"])  # (T*H, H)
            mine = copy_step == t
            total = total + h[mine, copy_unit[mine]].sum()
        total.backward()
    return h0.grad.reshape(T, H, H).numpy()  # [tau - 1, j, i] = d h_tau[j] / d h_0[i]


def jacobian_decay(
    radii: Sequence[float] = JACOBIAN_RADII,
    *,
    steps: int = 50,
    hidden: int = 8,
    embed_dim: int = 4,
    seed: int = 0,
    check: bool = True,
) -> pd.DataFrame:
    """Norm of dh_tau/dh_0 against distance tau, for U rescaled to several spectral radii.

    Columns: spectral_radius (of U), distance, jacobian_norm (spectral norm of the explicit product),
    autograd_norm, rel_diff (explicit vs autograd, relative Frobenius error), u_power_norm (||U^tau||, the
    product without tanh'), mean_tanh_slope (mean of 1 - h_tau^2 at that step). ``check=False`` leaves out the
    autograd check and ||U^tau|| (the three columns between), which a table of rates does not read.
    """
    rows = []
    for radius in radii:
        problem = random_problem(
            vocab_size=2, embed_dim=embed_dim, hidden=hidden, steps=steps, recurrent_radius=radius, seed=seed
        )
        chain = jacobian_chain(problem)
        columns = {
            "spectral_radius": spectral_radius(problem.params.U),
            "distance": np.arange(1, steps + 1),
            "jacobian_norm": spectral_norms(chain),
        }
        if check:
            auto = jacobian_autograd(problem)  # (T, H, H)
            powers = list(itertools.accumulate([problem.params.U] * steps, lambda power, U: U @ power))  # U^tau
            columns |= {
                "autograd_norm": spectral_norms(list(auto)),
                "rel_diff": [relative_error(product, a) for product, a in zip(chain, auto, strict=True)],
                "u_power_norm": spectral_norms(powers),
            }
        hs, _ = forward(problem.params, problem.xs, problem.h0)  # (T+1, H)
        columns["mean_tanh_slope"] = np.mean(1.0 - hs[1:] ** 2, axis=1)  # (T,)
        rows.append(pd.DataFrame(columns))
    return pd.concat(rows, ignore_index=True)


def jacobian_rates(table: pd.DataFrame) -> pd.DataFrame:
    """Per spectral radius of a `jacobian_decay` table, the product's rate measured as the decay analyses measure
    a gradient's (rnnbench.decay.rates.fit_rate: the least-squares slope of log ||dh_tau/dh_0|| against tau, over
    distances FIT_SKIP on), with dh_0/dh_0 = I at distance 0.

    Columns: spectral_radius, rate, fit_from, fit_to, mean_tanh_slope (over the whole sequence), step_sd (the
    standard deviation of one step's change of log ||dh_tau/dh_0||, tau - 1 to tau, over the fitted distances).
    """
    rows = []
    for radius, group in table.groupby("spectral_radius", sort=False):
        norms = np.concatenate([[1.0], group["jacobian_norm"].to_numpy()])  # (T + 1,): distances 0..T
        curve = pd.DataFrame({"sequence": 0, "distance": np.arange(len(norms)), "norm": norms})
        fit = fit_rate(curve, dtype=torch.float64)
        changes = np.diff(np.log(norms))[fit["fit_from"] : fit["fit_to"]]  # (fit_to - fit_from,): each step's
        rows.append(
            {
                "spectral_radius": radius,
                "rate": fit["rate"],
                "fit_from": fit["fit_from"],
                "fit_to": fit["fit_to"],
                "mean_tanh_slope": float(group["mean_tanh_slope"].mean()),
                "step_sd": float(np.std(changes)),
            }
        )
    return pd.DataFrame(rows)


def jacobian_width(
    radii: Sequence[float] = JACOBIAN_RADII, widths: Sequence[int] = JACOBIAN_WIDTHS, *, seed: int = 0
) -> pd.DataFrame:
    """`jacobian_rates` of the same recipe (`jacobian_decay`'s network, inputs and seed) at each width:
    hidden, then jacobian_rates' columns."""
    tables = [
        jacobian_rates(jacobian_decay(radii, hidden=hidden, seed=seed, check=False)).assign(hidden=hidden)
        for hidden in widths
    ]
    table = pd.concat(tables, ignore_index=True)
    return table[["hidden", *[c for c in table.columns if c != "hidden"]]]


def gradient_reach(lengths: Sequence[int] = (5, 20, 50, 100)) -> pd.DataFrame:
    """The lesson's measurement: mean |d out[-1].sum() / d x_1| for an untrained nn.RNN(8, 32), seeded as printed.

    The lesson's code, transcribed: one thread and manual_seed(0) before building the RNN and before each
    input, so the numbers are the lesson's own. `printed` is its format, `.0e`.
    """
    rows = []
    with one_thread():  # as the lesson: same results on every run
        torch.manual_seed(0)
        rnn = torch.nn.RNN(8, 32, batch_first=True)
        for T in lengths:
            torch.manual_seed(0)
            x = torch.randn(1, T, 8, requires_grad=True)  # (B=1, T, 8), batch-first as in the lesson
            out, _ = rnn(x)  # (1, T, 32)
            out[0, -1].sum().backward()  # loss uses only the last step
            value = x.grad[0, 0].abs().mean().item()
            rows.append({"length": T, "grad_token1_mean_abs": value, "printed": f"{value:.0e}"})
    return pd.DataFrame(rows)
