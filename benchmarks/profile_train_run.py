"""Where a training step of train_run spends its time: torch.profiler over steps of a real PTB run.

    RNNBENCH_DATA=<folder with ptb/> python benchmarks/profile_train_run.py [--threads 1] [--output full]
        [--optimizer sgd] [--steps 20] [--top 12]

The run is bench_train_e2e.py's (one-layer tanh RNN LM, d = H = 200, batch 20, bptt 35, SGD or Adam, clipping
0.25), trained by rnnbench.training.loop.train_run itself. The profiler skips the first 50 steps, warms up on 2, records the
next --steps (counted at each optimiser step) and prints the operators that took the most time of their own,
with their share of the recorded steps and milliseconds per step.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, schedule

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train_e2e import SHAPES, run_config

import rnnbench.training.loop as train_module

WAIT, WARMUP = 50, 2  # past the first steps, while the heap still grows to its size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--output", choices=("full", "adaptive"), default="full")
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--data-dir", default=os.environ.get("RNNBENCH_DATA"))
    parser.add_argument("--cache-dir", default=os.environ.get("RNNBENCH_CACHE"))
    args = parser.parse_args()
    if not args.data_dir:
        parser.error("set RNNBENCH_DATA (or --data-dir) to the folder holding ptb/")
    steps = WAIT + WARMUP + args.steps
    tokens_per_step = SHAPES["batch_size"] * SHAPES["bptt"]
    cfg = run_config(
        args.output,
        args.threads,
        train_tokens=(steps + 1) * tokens_per_step,
        eval_tokens=2000,
        optimizer=args.optimizer,
    )
    profiler = profile(
        activities=[ProfilerActivity.CPU], schedule=schedule(wait=WAIT, warmup=WARMUP, active=args.steps, repeat=1)
    )
    make_optimizer = train_module.make_optimizer

    def stepping_optimizer(cfg, model):
        optimizer = make_optimizer(cfg, model)
        step = optimizer.step

        def step_and_tell_profiler(*a, **k):
            result = step(*a, **k)
            profiler.step()
            return result

        optimizer.step = step_and_tell_profiler
        return optimizer

    train_module.make_optimizer = stepping_optimizer
    try:
        with profiler, tempfile.TemporaryDirectory() as out:
            train_module.train_run(cfg, out, data_dir=args.data_dir, cache_dir=args.cache_dir)
    finally:
        train_module.make_optimizer = make_optimizer

    events = [e for e in profiler.key_averages() if e.self_cpu_time_total > 0]
    total = sum(e.self_cpu_time_total for e in events)
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), output {args.output}, {args.optimizer}: "
        f"{args.steps} steps of train_run "
        f"after {WAIT + WARMUP}; {total / 1e3 / args.steps:.1f} ms of operator time a step"
    )
    print(f"{'operator':<44} {'share':>6} {'ms/step':>8} {'calls/step':>10}")
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[: args.top]:
        print(
            f"{e.key:<44} {100 * e.self_cpu_time_total / total:>5.1f}% {e.self_cpu_time_total / 1e3 / args.steps:>8.2f} "
            f"{e.count / args.steps:>10.1f}"
        )


if __name__ == "__main__":
    main()
