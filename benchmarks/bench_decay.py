"""Time of one gradient-decay curve: one backward pass against one backward pass per step.

    python benchmarks/bench_decay.py [--steps 1000] [--hidden 200] [--sequences 32] [--naive-steps 10] [--threads 1]

The curve is ||dL_T/dh_t|| and ||dL_T/dx_t|| for every t = 1..T, N sequences, an untrained tanh Elman LM with
PTB's 10,000-word softmax, d = H, float32, U at spectral radius 1.
  one pass   rnnbench.decay.backward_decay: the reference cell unrolled, one autograd.grad call for all steps
  per step   rnnbench.decay.naive_backward_decay: for each t, a forward pass with x_t as its own leaf and a
             backward pass asking for the gradient at step t only (T passes in all)
The per-step method is timed on --naive-steps steps spread evenly over 1..T and extrapolated to all T (the
mean over evenly spread t is the mean over all t: each pass runs the whole forward and the T - t + 1 backward
steps from the loss to t). Both methods are checked to give the same norms on the steps timed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from rnnbench import decay

VOCAB = 10_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="T, the sequence length")
    parser.add_argument("--hidden", type=int, default=200, help="H (and the embedding size d)")
    parser.add_argument("--sequences", type=int, default=32, help="N, sequences in the batch")
    parser.add_argument("--naive-steps", type=int, default=10, help="steps timed with the per-step method")
    parser.add_argument("--rounds", type=int, default=3, help="one-pass timings; the best is kept")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    T, H, N = args.steps, args.hidden, args.sequences
    model = decay.untrained_rnn(vocab_size=VOCAB, radius=1.0, hidden=H, embed_dim=H, seed=0, dtype=torch.float32)
    tokens = torch.randint(0, VOCAB, (T + 1, N), generator=torch.Generator().manual_seed(0))

    one_pass = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        curves = decay.backward_decay(model, tokens)
        one_pass.append(time.perf_counter() - start)
    best = min(one_pass)

    timed = np.unique(np.linspace(1, T, args.naive_steps).round().astype(int)).tolist()
    start = time.perf_counter()
    slow = decay.naive_backward_decay(model, tokens, timed)
    per_pass = (time.perf_counter() - start) / len(timed)
    naive_total = per_pass * T

    merged = curves.merge(slow, on=["sequence", "quantity", "distance"], suffixes=("_one", "_step"))
    rel_diff = float(((merged["norm_one"] - merged["norm_step"]).abs() / merged["norm_step"].abs()).max())

    print(f"gradient-decay curve: T = {T}, H = d = {H}, N = {N}, |V| = {VOCAB:,}, float32, {args.threads} thread(s)")
    print(
        f"  one backward pass         {best:9.3f} s   (best of {args.rounds}: {', '.join(f'{t:.3f}' for t in one_pass)})"
    )
    print(
        f"  one pass per step         {naive_total:9.1f} s   (extrapolated: {len(timed)} of {T} steps timed, "
        f"{per_pass:.3f} s per pass)"
    )
    print(f"  speed-up                  {naive_total / best:9.0f}x")
    print(f"  largest relative difference of the norms on the steps timed: {rel_diff:.1e}")


if __name__ == "__main__":
    main()
