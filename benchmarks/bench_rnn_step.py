"""Tokens/s of one RNN LM training step (forward + backward + SGD step), ours against a plain loop.

    python benchmarks/bench_rnn_step.py [--threads 2] [--steps 5] [--rounds 10] [--tokens zipf|uniform]
        [--glibc-default-malloc]

Shapes are PTB-sized: |V| = 10,000, d = H = 200, batch 20, bptt 35 (700 tokens per step). Contenders:
  plain            word_language_model's step as that example takes it (benchmarks/plain_loop.py, shared
                   with bench_train_e2e.py): nn.Embedding + nn.RNN + nn.Linear + log_softmax + NLLLoss,
                   clip_grad_norm_, manual SGD update, loss.item()
  ours full        rnnbench ElmanLM, impl="fast", full softmax
  ours adaptive    rnnbench ElmanLM, impl="fast", adaptive softmax, one row per candidate cutoffs
  embedding gradient dense
                   reference rows: ours full and ours adaptive (the first cutoffs) with the embedding's whole
                   gradient, where ours take the rows a step used (rnnbench.training.optim)
  products alone   a reference row, not a contender: the full-softmax step's matrix products and nothing
                   else (same shapes and layouts, preallocated outputs): a step that computes them through
                   this BLAS takes at least this long, so this row's rate bounds the full-softmax step's
Ours take the training loop's step: zero grads, nll of a (bptt, batch) segment with the state carried in
(detached, as truncated BPTT does), backward, rnnbench's global-norm clipping (on the tensor side), the loop's
SGD step (rnnbench.training.optim; the embedding's gradient sparse, as the loop takes it). Both clip at 0.25,
which clips nearly every step on these random tokens.

All contenders share one process, which keeps freed memory as train_run does (rnnbench.training.allocator), so the
comparison is of the steps alone; --glibc-default-malloc leaves glibc's malloc as it is, and the page faults
a step takes (printed per contender) show what that costs each of them.

Tokens are drawn at random from a Zipf law over ids (ids are ordered by descending frequency, as in
rnnbench.data.vocab), which is how a real corpus spreads its tokens over an adaptive softmax's clusters;
--tokens uniform puts 80% of them in the tail clusters instead (the adaptive softmax's worst case).

FLOP rate: the machine's measured dense float32 matmul rate (best of several large square matmuls, same
thread count). Each step's FLOPs are counted analytically: 2 FLOPs per multiply-add in every matmul of the
forward pass, twice that for the backward pass (gradients w.r.t. inputs and weights), plus 2 per parameter
for the SGD update; elementwise work (tanh, softmax, embedding lookup) is not counted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import plain_loop

from rnnbench.models import ModelConfig, build_model
from rnnbench.training.allocator import retain_freed_memory
from rnnbench.training.clipping import clip_gradients_
from rnnbench.training.optim import SGD, sparse_embedding_gradients

CLIP = 0.25


def sample_tokens(n: int, vocab_size: int, kind: str, generator: torch.Generator) -> torch.Tensor:
    if kind == "uniform":
        return torch.randint(0, vocab_size, (n,), generator=generator)
    ranks = torch.arange(1, vocab_size + 1, dtype=torch.float64)
    return torch.multinomial(1.0 / ranks, n, replacement=True, generator=generator)  # Zipf, exponent 1


def matmul_flop_rate(n: int = 2048, repeats: int = 5) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best


def recurrent_flops(tokens: int, d: int, h: int) -> float:
    return tokens * (2 * d * h + 2 * h * h)  # W x_t and U h_{t-1}, forward only


def full_output_flops(tokens: int, h: int, vocab: int) -> float:
    return tokens * 2 * h * vocab


def adaptive_output_flops(targets: torch.Tensor, h: int, vocab: int, cutoffs: tuple[int, ...], div: float) -> float:
    """The head for every token; tail cluster i only for the tokens whose target falls in it (as torch computes)."""
    bounds = [*cutoffs, vocab]
    flops = targets.numel() * 2 * h * (cutoffs[0] + len(cutoffs))
    for i in range(len(cutoffs)):
        in_cluster = int(((targets >= bounds[i]) & (targets < bounds[i + 1])).sum())
        proj = int(h // div ** (i + 1))
        flops += in_cluster * 2 * (h * proj + proj * (bounds[i + 1] - bounds[i]))
    return flops


def training_flops(forward_matmul: float, n_params: int) -> float:
    return 3 * forward_matmul + 2 * n_params


def matmul_floor_step(vocab: int, d: int, h: int, batch: int, bptt: int) -> Callable[[int], None]:
    """The matrix products of one full-softmax training step of ElmanLM's fast path and nothing else: the same
    shapes and operand layouts, on preallocated operands and outputs. A step that computes these products
    through this BLAS takes at least as long as they do alone, so their rate bounds the step's.
      forward   x W^T (all steps at once), h_{t-1} U^T (T times), h V^T (the scores)
      backward  dz V, dz^T h (output layer); delta_t U (T - 1 times), delta W, delta^T x, delta^T h_prev
    """
    n = batch * bptt
    x, W, U = torch.randn(n, d), torch.randn(h, d) * 0.1, torch.randn(h, h) * 0.05  # (N, d), (H, d), (H, H)
    out_weight = torch.randn(vocab, h) * 0.1  # (V, H)
    states = torch.randn(bptt + 1, batch, h)  # (T + 1, B, H): h_0..h_T
    deltas = torch.randn(bptt, batch, h)  # (T, B, H)
    scores = torch.empty(n, vocab)  # (N, V): the scores, then dz in their place
    d_h, d_out = torch.empty(n, h), torch.empty(vocab, h)  # (N, H), (V, H)
    inputs_w, g = torch.empty(bptt, batch, h), torch.empty(batch, h)  # (T, B, H), (B, H)
    d_x, d_w, d_u = torch.empty(n, d), torch.empty(h, d), torch.empty(h, h)
    outputs, prev = states[1:].reshape(n, h), states[:-1].reshape(n, h)  # (N, H) each
    flat_deltas = deltas.view(n, h)

    def step(i: int) -> None:
        torch.mm(x, W.t(), out=inputs_w.view(n, h))
        for t in range(bptt):
            torch.addmm(inputs_w[t], states[t], U.t(), out=states[t + 1])
        torch.mm(outputs, out_weight.t(), out=scores)
        torch.mm(scores, out_weight, out=d_h)
        torch.mm(scores.t(), outputs, out=d_out)
        for t in range(bptt - 1, 0, -1):
            torch.mm(deltas[t], U, out=g)
        torch.mm(flat_deltas, W, out=d_x)
        torch.mm(flat_deltas.t(), x, out=d_w)
        torch.mm(flat_deltas.t(), prev, out=d_u)

    return step


def time_interleaved(steps: dict[str, Callable[[int], None]], n_steps: int, warmup: int, rounds: int) -> dict:
    """Per contender: seconds per step (best round, median round) and page faults per step, rounds
    interleaved across contenders so that load from other processes falls on all of them alike."""
    for step in steps.values():
        for i in range(warmup):
            step(i)
    per_round: dict[str, list[float]] = {name: [] for name in steps}
    faults = dict.fromkeys(steps, 0)
    for r in range(rounds):
        for name, step in steps.items():
            faults0, t0 = plain_loop.minor_faults(), time.perf_counter()
            for i in range(n_steps):
                step(r * n_steps + i)
            per_round[name].append((time.perf_counter() - t0) / n_steps)
            faults[name] += plain_loop.minor_faults() - faults0
    return {name: (min(v), statistics.median(v), faults[name] / (rounds * n_steps)) for name, v in per_round.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=10_000)
    parser.add_argument("--embed", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=200)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--bptt", type=int, default=35)
    parser.add_argument("--steps", type=int, default=5, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--tokens", choices=("zipf", "uniform"), default="zipf")
    parser.add_argument(
        "--cutoffs",
        nargs="+",
        default=["2000,6000", "1000,5000", "1000,3000", "500,2500", "2000"],
        help="adaptive softmax cutoffs to try, each comma-separated",
    )
    parser.add_argument("--div-value", type=float, default=4.0)
    parser.add_argument("--glibc-default-malloc", action="store_true", help="do not keep freed memory")
    args = parser.parse_args()
    retained = False if args.glibc_default_malloc else retain_freed_memory()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    V, d, H, B, T = args.vocab, args.embed, args.hidden, args.batch, args.bptt
    n_segments = 8  # distinct batches cycled through, so no step sees cached inputs only
    gen = torch.Generator().manual_seed(0)
    stream = sample_tokens(n_segments * B * T + B, V, args.tokens, gen)
    segments = [
        (stream[k * B * T : (k + 1) * B * T].view(T, B), stream[k * B * T + B : (k + 1) * B * T + B].view(T, B))
        for k in range(n_segments)
    ]  # (inputs (T, B), targets (T, B)) pairs
    all_targets = torch.stack([t for _, t in segments])
    lr = 0.1

    peak = matmul_flop_rate()
    rec = recurrent_flops(B * T, d, H)
    full_flops = rec + full_output_flops(B * T, H, V)
    contenders: dict[str, Callable[[int], None]] = {}
    flops: dict[str, float] = {}
    n_params: dict[str, int] = {}

    # -- plain loop
    plain = plain_loop.PlainRNNLM(V, d, H)
    criterion = nn.NLLLoss()
    plain_h = {"h": plain.init_hidden(B)}

    def plain_step(i: int) -> None:
        x, y = segments[i % n_segments]
        _, plain_h["h"] = plain_loop.train_step(plain, criterion, x, y.reshape(-1), plain_h["h"], lr, CLIP)

    name = "plain nn.RNN loop, full softmax"
    contenders[name], flops[name] = plain_step, full_flops
    n_params[name] = sum(p.numel() for p in plain.parameters())

    # -- ours
    def our_step(cfg: ModelConfig, sparse: bool = True) -> tuple[Callable[[int], None], int]:
        model = build_model(cfg)
        if sparse:  # as the loop runs
            sparse_embedding_gradients(model)
        optimizer = SGD(model.parameters(), lr=lr)
        carry = {"state": model.init_state(B)}

        def step(i: int) -> None:
            x, y = segments[i % n_segments]
            optimizer.zero_grad(set_to_none=True)
            loss, _, new_state = model.nll(x, y, carry["state"])
            loss.backward()
            clip_gradients_(model.parameters(), "norm", CLIP)
            optimizer.step()
            carry["state"] = new_state.detach()

        return step, model.count_parameters()

    full_cfg = ModelConfig("rnn", V, embed_dim=d, hidden=H, output="full")
    name = "rnnbench ElmanLM, full softmax"
    contenders[name], n_params[name] = our_step(full_cfg)
    flops[name] = full_flops
    dense_rows = {"(full softmax, embedding gradient dense)": (full_cfg, full_flops)}
    adaptive_names = []
    for spec in args.cutoffs:
        cutoffs = tuple(int(c) for c in spec.split(","))
        cfg = ModelConfig(
            "rnn",
            V,
            embed_dim=d,
            hidden=H,
            output="adaptive",
            adaptive_cutoffs=cutoffs,
            adaptive_div_value=args.div_value,
        )
        name = f"rnnbench ElmanLM, adaptive {list(cutoffs)}"
        contenders[name], n_params[name] = our_step(cfg)
        flops[name] = rec + adaptive_output_flops(all_targets, H, V, cutoffs, args.div_value) / n_segments
        adaptive_names.append(name)
        if len(adaptive_names) == 1:
            dense_rows[f"(adaptive {list(cutoffs)}, embedding gradient dense)"] = (cfg, flops[name])
    # Reference rows, not contenders: the same steps with the whole embedding table's gradient, so that what the
    # sparse gradient gains is read beside them in the same run.
    for name, (cfg, step_flops) in dense_rows.items():
        contenders[name], n_params[name] = our_step(cfg, sparse=False)
        flops[name] = step_flops

    floor_name = "(matrix products alone, full softmax)"
    contenders[floor_name], flops[floor_name], n_params[floor_name] = matmul_floor_step(V, d, H, B, T), full_flops, 0

    load_before = os.getloadavg()[0]
    times = time_interleaved(contenders, args.steps, args.warmup, args.rounds)
    load_after = os.getloadavg()[0]
    peak = max(peak, matmul_flop_rate())  # measured before and after the runs: the better of the two

    tokens_per_step = B * T
    plain_name, full_name = list(contenders)[:2]
    base = times[plain_name][0]
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; |V|={V} d={d} H={H} batch={B} bptt={T}; "
        f"{args.tokens} tokens; {args.rounds} interleaved rounds x {args.steps} steps; "
        f"load average {load_before:.2f} before, {load_after:.2f} after; "
        f"freed memory {'retained (as train_run)' if retained else 'handed back (glibc default)'}"
    )
    print(f"measured dense float32 matmul rate: {peak / 1e9:.1f} GFLOP/s (2048 x 2048 @ 2048 x 2048)")
    print("best round (median round in brackets); training FLOPs counted analytically")
    width = max(len(name) for name in contenders)
    print(
        f"{'model':<{width}} {'params':>10} {'ms/step':>15} {'tokens/s':>9} {'vs plain':>8} {'GFLOP/step':>10}"
        f" {'of matmul':>9} {'faults':>7}"
    )
    for name in contenders:
        best, median, faults = times[name]
        step_flops = training_flops(flops[name], n_params[name])
        params = f"{n_params[name]:,}" if n_params[name] else "-"
        print(
            f"{name:<{width}} {params:>10} {best * 1e3:>6.1f} [{median * 1e3:>6.1f}] "
            f"{tokens_per_step / best:>9,.0f} {base / best:>7.2f}x {step_flops / 1e9:>10.2f} "
            f"{100 * step_flops / best / peak:>8.1f}% {faults:>7,.0f}"
        )
    full = times[full_name][0]
    fastest = min(adaptive_names, key=lambda n: times[n][0])
    print(f"target full softmax no slower than plain: {'met' if full <= base else 'NOT met'} ({base / full:.2f}x)")
    full_step_flops = training_flops(flops[full_name], n_params[full_name])
    full_rate = full_step_flops / full / peak
    floor = times[floor_name][0]
    floor_rate = training_flops(flops[floor_name], 0) / floor / peak
    print(
        f"target full softmax at least 80% of the matmul rate: {'met' if full_rate >= 0.8 else 'NOT met'} "
        f"({100 * full_rate:.1f}%; the step's matrix products alone reach {100 * floor_rate:.1f}%, "
        f"{floor * 1e3:.1f} ms, where 80% asks for a whole step in "
        f"{full_step_flops / (0.8 * peak) * 1e3:.1f} ms)"
    )
    print(
        f"target adaptive at least 4x plain: {'met' if base / times[fastest][0] >= 4 else 'NOT met'} "
        f"(fastest: {fastest}, {base / times[fastest][0]:.2f}x)"
    )


if __name__ == "__main__":
    main()
