"""Tokens/s of a whole training run: rnnbench's train_run against the plain word_language_model loop.

    RNNBENCH_DATA=<folder with ptb/> python benchmarks/bench_train_e2e.py [--threads 1 2] [--rounds 3]
        [--train-tokens 150000] [--eval-tokens 20000] [--only TEXT ...]

Every contender trains a one-layer tanh RNN LM (d = H = 200, batch 20, bptt 35, SGD at lr 5 unless the row
names Adam, global-norm clipping 0.25) for one epoch on the same fixed slice of real PTB (the first
--train-tokens training tokens), then evaluates on the first --eval-tokens validation and test tokens (eval
batch 10, as word_language_model):
  plain             benchmarks/plain_loop.py: the example's own loop (manual SGD update, clip_grad_norm_,
                    loss.item() every step), full softmax, run as the example runs (glibc's malloc as is)
  plain, retained   the same loop in a process that first keeps freed memory as train_run does
                    (rnnbench.training.allocator): not a contender, a reference row, so that what the loop gains
                    can be told apart from what the allocator setting gains
  rnnbench full     rnnbench.training.loop.train_run, the function every workflow job calls, output full
  rnnbench adaptive the same with output adaptive, cutoffs [1000, 5000]
  rnnbench adaptive, Adam
                    the same with Adam at the default run's rate (config/config.yaml), as the workflow's
                    default runs train
  Adam, for-loop    a reference row: the same with torch's Adam as it runs on CPU unless asked for its fused
                    kernel (a loop over the parameters, several passes each), so that the fused update's gain
                    can be read beside it
  Adam, torch.optim fused
                    torch's public API for the same update, torch.optim.Adam(fused=True): the same kernel as
                    rnnbench's Adam, plus the import of torch._dynamo that building any torch.optim optimiser
                    costs a fresh process (rnnbench.training.optim's docstring), with the embedding's gradient dense
                    (torch's fused Adam takes no sparse gradient); so that the private operator's whole-run
                    gain can be read beside it
  Adam, embedding gradient dense
                    a reference row: rnnbench's Adam given the embedding's whole gradient, as backward writes it
                    when the embedding is not sparse, where the loop scatters the rows a step used into a kept
                    table (rnnbench.training.optim.RowScatter)
Each contender runs in a fresh Python process per round (so no setting, cache or allocator state of one
reaches another), contenders interleaved round after round, so load from other processes falls on all of
them alike. Printed per contender: tokens/s of the training epoch (best round, median in brackets), its
ratio to the baseline, plain unless --only leaves it out (best against best, and the median over rounds of
the ratio within a round), tokens/s of the
whole run (training tokens / process wall time from corpus loading to results written), the share of the
training epoch spent outside forward (with the loss), backward and the parameter update (timers wrapped
around those three calls), the page faults per training step taken inside them, and test perplexity.

Test perplexity shows that every contender trained; it does not rank them. SGD at lr 5 with clipping at 0.25
on a slice this short is chaotic: a difference in float rounding alone (the order of one sum) grows from 1e-7
in the loss to several percent within ~40 steps and moves the final perplexity by tens of percent (with
--train-tokens 60000, the full softmax: 918 with the embedding's gradient dense, 1,090 with it sparse, the
same update to float rounding).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import plain_loop

import rnnbench.training.loop as train_module
from rnnbench.config.files import read_yaml
from rnnbench.config.runs import RunConfig
from rnnbench.data.corpora import load_corpus
from rnnbench.training import optim
from rnnbench.training.allocator import retain_freed_memory
from rnnbench.training.loop import train_run
from rnnbench.training.reading import split_stream

SHAPES = {"embed_dim": 200, "hidden": 200, "batch_size": 20, "bptt": 35}
LR, CLIP, EVAL_BATCH = 5.0, 0.25, 10
# The Adam rows train at the default run's rate, as config/config.yaml sets it.
ADAM_LR = read_yaml(Path(__file__).resolve().parents[1] / "config" / "config.yaml")["run"]["lr"]


def run_config(output: str, threads: int, train_tokens: int, eval_tokens: int, optimizer: str = "sgd") -> RunConfig:
    """The benchmarked run as train_run takes it: one epoch of the shapes above, on the first tokens of PTB."""
    return RunConfig.from_settings(
        {
            "family": "rnn",
            "corpus": "ptb",
            "output": output,
            "adaptive_cutoffs": [1000, 5000],
            **SHAPES,
            "optimizer": optimizer,
            "lr": LR if optimizer == "sgd" else ADAM_LR,
            "clip_mode": "norm",
            "clip": CLIP,
            "schedule": "constant",
            "max_epochs": 1,
            "train_tokens": train_tokens,
            "eval_tokens": eval_tokens,
            "eval_batch_size": EVAL_BATCH,
            "seed": 1,
            "threads": threads,
        }
    )


@contextlib.contextmanager
def timed_parts(timers: plain_loop.Timers):
    """Add the time of every training forward (model.nll with gradients on), backward and update (clipping and
    optimiser step, as the plain loop's timers count them) that train_run takes to ``timers``, by wrapping
    the model, clipping and optimiser it uses."""
    build_model, make_optimizer, backward = train_module.build_model, train_module.make_optimizer, torch.Tensor.backward
    clip = train_module.clip_gradients_

    def add(part, fn, ends_step=False):
        def wrapped(*args, **kwargs):
            if not torch.is_grad_enabled():  # evaluation: not part of the step
                return fn(*args, **kwargs)
            faults0, t0 = plain_loop.minor_faults(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                setattr(timers, part, getattr(timers, part) + time.perf_counter() - t0)
                timers.faults += plain_loop.minor_faults() - faults0
                timers.steps += ends_step

        return wrapped

    def timed_model(cfg):
        model = build_model(cfg)
        model.nll = add("forward", model.nll)
        return model

    def timed_optimizer(cfg, model):
        optimizer = make_optimizer(cfg, model)
        optimizer.step = add("update", optimizer.step, ends_step=True)
        return optimizer

    train_module.build_model, train_module.make_optimizer = timed_model, timed_optimizer
    train_module.clip_gradients_ = add("update", clip)
    torch.Tensor.backward = add("backward", backward)
    try:
        yield
    finally:
        train_module.build_model, train_module.make_optimizer = build_model, make_optimizer
        train_module.clip_gradients_ = clip
        torch.Tensor.backward = backward


def run_ours(
    output: str,
    threads: int,
    args,
    optimizer: str = "sgd",
    torch_adam: str | None = None,
    dense_embedding: bool = False,
) -> dict:
    cfg = run_config(output, threads, args.train_tokens, args.eval_tokens, optimizer)
    # Both in this child process only.
    if torch_adam is not None:  # "for-loop" or "fused": torch.optim.Adam instead of rnnbench.training.optim.Adam
        fused = torch_adam == "fused"
        train_module.make_optimizer = lambda cfg, model: torch.optim.Adam(model.parameters(), lr=cfg.lr, fused=fused)
    if dense_embedding:
        optim.sparse_embedding_gradients = lambda model: None  # make_optimizer calls it through its module
    timers = plain_loop.Timers()
    with tempfile.TemporaryDirectory() as out, timed_parts(timers):
        t0 = time.perf_counter()
        metrics = train_run(cfg, out, data_dir=args.data_dir, cache_dir=args.cache_dir)
        wall = time.perf_counter() - t0
        epoch = pd.read_csv(Path(out) / "epochs.csv").iloc[0]
    tokens = epoch["tokens_per_second"] * epoch["seconds"]
    inside = timers.forward + timers.backward + timers.update
    return {
        "epoch_tps": float(epoch["tokens_per_second"]),
        "run_tps": float(tokens / wall),
        "outside": 1 - inside / float(epoch["seconds"]),
        "faults_per_step": timers.faults / timers.steps,
        "test_ppl": float(metrics["test_ppl"]),
    }


def run_plain(threads: int, args, retain: bool = False) -> dict:
    if retain:
        retain_freed_memory()
    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    corpus = load_corpus("ptb", data_dir=args.data_dir, cache_dir=args.cache_dir)
    # the same slices train_run reads
    train = torch.as_tensor(split_stream(corpus, "train", args.train_tokens))
    valid = torch.as_tensor(split_stream(corpus, "valid", args.eval_tokens))
    test = torch.as_tensor(split_stream(corpus, "test", args.eval_tokens))
    torch.manual_seed(1)
    model = plain_loop.PlainRNNLM(len(corpus.vocab), SHAPES["embed_dim"], SHAPES["hidden"])
    train_data = plain_loop.batchify(train, SHAPES["batch_size"])
    timers = plain_loop.Timers()
    e0 = time.perf_counter()
    plain_loop.train_epoch(model, train_data, bptt=SHAPES["bptt"], lr=LR, clip=CLIP, timers=timers)
    seconds = time.perf_counter() - e0
    plain_loop.evaluate(model, plain_loop.batchify(valid, EVAL_BATCH), bptt=SHAPES["bptt"])
    test_nll = plain_loop.evaluate(model, plain_loop.batchify(test, EVAL_BATCH), bptt=SHAPES["bptt"])
    torch.save(model.state_dict(), os.devnull)
    wall = time.perf_counter() - t0
    tokens = (train_data.size(0) - 1) * train_data.size(1)
    inside = timers.forward + timers.backward + timers.update
    return {
        "epoch_tps": tokens / seconds,
        "run_tps": tokens / wall,
        "outside": 1 - inside / seconds,
        "faults_per_step": timers.faults / timers.steps,
        "test_ppl": float(torch.tensor(test_nll).exp()),
    }


CONTENDERS = {
    "plain word_language_model, full": lambda t, args: run_plain(t, args),
    "  (plain, freed memory retained)": lambda t, args: run_plain(t, args, retain=True),
    "rnnbench train_run, full": lambda t, args: run_ours("full", t, args),
    "rnnbench train_run, adaptive [1000, 5000]": lambda t, args: run_ours("adaptive", t, args),
    "rnnbench train_run, adaptive, Adam": lambda t, args: run_ours("adaptive", t, args, "adam"),
    "  (adaptive, Adam, torch's for-loop Adam)": lambda t, args: run_ours("adaptive", t, args, "adam", "for-loop"),
    "  (adaptive, Adam, torch.optim fused)": lambda t, args: run_ours(
        "adaptive", t, args, "adam", "fused", dense_embedding=True
    ),
    "  (adaptive, Adam, embedding gradient dense)": lambda t, args: run_ours(
        "adaptive", t, args, "adam", dense_embedding=True
    ),
}


def run_in_fresh_process(name: str, threads: int, args) -> dict:
    """One contender, one round, in a new interpreter; its result comes back as JSON on stdout."""
    command = [
        sys.executable,
        __file__,
        "--one",
        name,
        "--threads",
        str(threads),
        "--train-tokens",
        str(args.train_tokens),
        "--eval-tokens",
        str(args.eval_tokens),
        "--data-dir",
        args.data_dir,
    ]
    if args.cache_dir:
        command += ["--cache-dir", args.cache_dir]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name} at {threads} thread(s) failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--train-tokens", type=int, default=150_000)
    parser.add_argument("--eval-tokens", type=int, default=20_000)
    parser.add_argument("--data-dir", default=os.environ.get("RNNBENCH_DATA"))
    parser.add_argument("--cache-dir", default=os.environ.get("RNNBENCH_CACHE"))
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="TEXT",
        help="run only the contenders whose name contains one of these texts; the first one run is the baseline",
    )
    parser.add_argument("--one", choices=list(CONTENDERS), help=argparse.SUPPRESS)  # a child process's contender
    args = parser.parse_args()
    if args.one:
        (threads,) = args.threads
        print(json.dumps(CONTENDERS[args.one](threads, args)))
        return
    if not args.data_dir:
        parser.error("set RNNBENCH_DATA (or --data-dir) to the folder holding ptb/")
    chosen = [name for name in CONTENDERS if not args.only or any(text in name for text in args.only)]
    if not chosen:
        parser.error(f"--only {' '.join(args.only)}: no contender's name contains these; names: {list(CONTENDERS)}")
    load_corpus("ptb", data_dir=args.data_dir, cache_dir=args.cache_dir)  # prepare the cache outside the timing

    load_before = os.getloadavg()
    results = {}
    for threads in args.threads:
        rounds = {name: [] for name in chosen}
        for _ in range(args.rounds):
            for name in chosen:
                rounds[name].append(run_in_fresh_process(name, threads, args))
                print(f"{threads} thread(s), {name.strip()}: {rounds[name][-1]}", file=sys.stderr, flush=True)
        results[threads] = rounds
    load_after = os.getloadavg()

    print(
        f"torch {torch.__version__}; PTB first {args.train_tokens} training tokens, {args.eval_tokens} eval tokens; "
        f"d=H=200 batch 20 bptt 35 SGD lr {LR} (Adam rows: lr {ADAM_LR}) clip {CLIP}; {args.rounds} interleaved "
        f"rounds; load average "
        f"{load_before[0]:.2f}/{load_before[1]:.2f} before, {load_after[0]:.2f}/{load_after[1]:.2f} after (1/5 min)"
    )
    base_name = chosen[0]
    print(
        f"epoch tok/s: best round [median]; x base ({base_name.strip()}): best against best [median over rounds of the ratio within "
        "a round]; outside: share of the training epoch outside forward/backward/update; faults: page faults a step"
    )
    width = max(len(name) for name in chosen)
    print(
        f"{'threads':>7} {'contender':<{width}} {'epoch tok/s':>17} {'x base':>14} {'run tok/s':>17} {'x base':>14} "
        f"{'outside':>7} {'faults':>7} {'test ppl':>8}"
    )
    for threads, rounds in results.items():
        for name, runs in rounds.items():
            cells = []
            for key in ("epoch_tps", "run_tps"):
                values, base = [r[key] for r in runs], [r[key] for r in rounds[base_name]]
                paired = statistics.median(v / b for v, b in zip(values, base, strict=True))
                cells.append(
                    f"{max(values):>7,.0f} [{statistics.median(values):>7,.0f}] "
                    f"{max(values) / max(base):>5.2f}x [{paired:>4.2f}x]"
                )
            outside = statistics.median(r["outside"] for r in runs)
            faults = statistics.median(r["faults_per_step"] for r in runs)
            print(
                f"{threads:>7} {name:<{width}} {cells[0]} {cells[1]} {100 * outside:>6.1f}% {faults:>7,.0f} "
                f"{runs[-1]['test_ppl']:>8.1f}"
            )


if __name__ == "__main__":
    main()
