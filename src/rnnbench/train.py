"""The training loop: truncated BPTT, clipping, Mikolov's schedule, divergence, checkpoints, metrics.

One run = one resolved ``RunConfig`` trained into one directory::

    results/runs/<run_id>/
        config.json     the resolved settings (and the run id)
        epochs.csv      per epoch: lr, train/valid perplexity, time, tokens/s, clipping statistics
        steps.csv       per optimiser step (evenly thinned): loss, pre-clip gradient norm, clipped flag
        metrics.json    final test perplexity, divergence, parameter count, speed
        agreement.csv   per-distance agreement accuracy (synthetic corpus only)
        model.pt        state_dict + config of the best epoch (never a pickled module)
        checkpoint.pt   only while the run is unfinished: a rerun resumes from it

Truncated BPTT over a batchified stream (``bptt`` > 0) carries the hidden state from one segment to
the next but cuts the graph between them (``detach_state``)::

    stream columns (B of them), time running down:
      seg 1  | x1  .. x35 |  forward + backward through 35 steps, state h35 kept
      seg 2  | x36 .. x70 |  starts from h35 *detached*: values flow forward, gradients stop at the cut

With ``bptt`` = 0 each batch is a set of whole sentences read from h_0 = 0: full BPTT.
"""

from __future__ import annotations

import copy
import logging
import math
import random
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd
import torch

from rnnbench.config import RunConfig
from rnnbench.data.batching import batchify, bptt_segments, ngram_windows, sentence_batches
from rnnbench.data.corpora import Corpus, load_corpus
from rnnbench.evaluate import Likelihood, agreement_by_distance, perplexity, sentence_likelihood, stream_likelihood
from rnnbench.io import write_csv, write_json, write_torch
from rnnbench.models import ModelConfig, build_model

log = logging.getLogger("rnnbench.train")


# --------------------------------------------------------------------------------------------------
# The three small mechanisms the chapter names: truncation, clipping, the learning-rate schedule.


def detach_state(state):
    """Truncated BPTT: keep the state's values for the next segment, drop the graph that made them."""
    if state is None:
        return None
    if isinstance(state, torch.Tensor):
        return state.detach()
    return tuple(detach_state(s) for s in state)  # LSTM: (h, c)


def clip_gradients(parameters, mode: str, threshold: float) -> tuple[float, bool]:
    """Clip in place; return the global gradient norm *before* clipping and whether anything changed.

    ``norm``: if ||g|| > threshold, g <- threshold / ||g|| * g (the chapter's 12.7; direction kept).
    ``value``: every component clamped to [-threshold, threshold] (Mikolov's +-15; direction may change).
    """
    grads = [p.grad for p in parameters if p.grad is not None]
    norm = float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])))
    if mode == "norm":
        clipped = norm > threshold
        if clipped:
            for g in grads:
                g.mul_(threshold / norm)
        return norm, clipped
    if mode == "value":
        clipped = any(bool((g.abs() > threshold).any()) for g in grads)
        for g in grads:
            g.clamp_(-threshold, threshold)
        return norm, clipped
    return norm, False


@dataclass(frozen=True)
class Schedule:
    """Mikolov's rule: keep the rate while validation log-likelihood improves by at least a factor of
    ``min_improvement``; after the first epoch that does not, halve it every epoch; stop at the next
    epoch that does not. ``constant`` never changes the rate and stops only at max_epochs."""

    kind: str
    lr: float
    min_improvement: float
    decaying: bool = False
    done: bool = False

    def after_epoch(self, previous_nll: float, current_nll: float) -> "Schedule":
        if self.kind == "constant":
            return self
        # Mikolov compares log-likelihoods: improvement = previous / current (both positive NLLs).
        improved = previous_nll / current_nll >= self.min_improvement if math.isfinite(previous_nll) else True
        if self.decaying and not improved:
            return replace(self, done=True)
        if self.decaying or not improved:
            return replace(self, lr=self.lr / 2, decaying=True)
        return self


# --------------------------------------------------------------------------------------------------
# Batches: what one epoch feeds the optimiser.


@dataclass(frozen=True)
class Batch:
    inputs: torch.Tensor  # (t, B) recurrent, (N, n-1) feed-forward
    targets: torch.Tensor  # (t, B) recurrent, (N,) feed-forward
    carry_state: bool  # True: continue from the previous batch's (detached) state


def epoch_batches(cfg: RunConfig, corpus: Corpus, train: np.ndarray, epoch: int) -> Iterator[Batch]:
    """The training batches of one epoch; shuffling (where there is any) is seeded by (seed, epoch)."""
    if cfg.family == "ff":
        contexts, targets = ngram_windows(train, cfg.context)  # (N, n-1), (N,)
        order = torch.as_tensor(np.random.default_rng([cfg.seed, epoch]).permutation(len(targets)))
        for start in range(0, len(order), cfg.batch_size):
            index = order[start : start + cfg.batch_size]
            yield Batch(contexts[index], targets[index], carry_state=False)
    elif cfg.bptt == 0:
        starts = _train_sentence_starts(corpus, train)
        for inputs, targets, _ in sentence_batches(train, starts, cfg.batch_size, shuffle_seed=cfg.seed * 1000 + epoch):
            yield Batch(inputs, targets, carry_state=False)
    else:
        data = batchify(train, cfg.batch_size)  # (T, B): B contiguous columns of the stream
        for inputs, targets in bptt_segments(data, cfg.bptt):
            yield Batch(inputs, targets, carry_state=True)


def _train_sentence_starts(corpus: Corpus, train: np.ndarray) -> np.ndarray:
    starts = corpus.sentence_starts["train"]
    return starts[starts < len(train)]


def split_stream(corpus: Corpus, split: str, limit: int | None) -> np.ndarray:
    """A split's tokens, cut to ``limit`` (at a sentence boundary when the corpus has sentences)."""
    stream = getattr(corpus, split)
    if limit is None or limit >= len(stream):
        return stream
    cut = limit
    if corpus.sentence_starts is not None:
        starts = corpus.sentence_starts[split]
        cut = int(starts[starts <= cut].max()) or int(starts[1])  # keep at least one whole sentence
    return stream[:cut]


# --------------------------------------------------------------------------------------------------
# Records.


@dataclass(frozen=True)
class StepRecord:
    step: int
    epoch: int
    lr: float
    loss: float
    grad_norm: float
    clipped: bool


@dataclass(frozen=True)
class Divergence:
    step: int
    epoch: int
    reason: str


def thin_steps(records: list[StepRecord], max_rows: int, keep: int | None = None) -> list[StepRecord]:
    """At most ``max_rows`` evenly spaced records from the first, always including the last and the step ``keep``."""
    if len(records) <= max_rows:
        return records
    # Room is left for the last record and ``keep`` (the divergence step is usually the last one too),
    # so the evenly spaced rows plus those two never exceed max_rows.
    extra = {len(records) - 1} | {i for i, r in enumerate(records) if r.step == keep}
    stride = math.ceil(len(records) / (max_rows - len(extra)))
    return [records[i] for i in sorted(set(range(0, len(records), stride)) | extra)]


# --------------------------------------------------------------------------------------------------
# The run.


@dataclass
class TrainingState:
    """Everything a checkpoint must hold to resume bit-for-bit (with the model and optimiser)."""

    epoch: int = 0
    global_step: int = 0
    best_valid_nll: float = math.inf
    previous_valid_nll: float = math.inf
    epochs: list[dict[str, Any]] | None = None
    steps: list[StepRecord] | None = None
    divergence: Divergence | None = None


def model_config(cfg: RunConfig, vocab_size: int) -> ModelConfig:
    if cfg.output == "adaptive" and max(cfg.adaptive_cutoffs) >= vocab_size:
        raise ValueError(
            f"output 'adaptive' needs adaptive_cutoffs below the vocabulary size ({vocab_size}); got "
            f"{list(cfg.adaptive_cutoffs)}. Use output: full for a small vocabulary, or smaller cutoffs."
        )
    return ModelConfig(
        family=cfg.family,
        vocab_size=vocab_size,
        embed_dim=cfg.embed_dim,
        hidden=cfg.hidden,
        context=cfg.context,
        activation=cfg.activation,
        impl=cfg.impl,
        output=cfg.output,
        adaptive_cutoffs=tuple(cfg.adaptive_cutoffs),
        direct=cfg.direct,
        dropout=cfg.dropout,
    )


def make_optimizer(cfg: RunConfig, model: torch.nn.Module) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=cfg.lr)
    return torch.optim.SGD(model.parameters(), lr=cfg.lr)


def train_run(
    cfg: RunConfig,
    out_dir: str | Path,
    *,
    data_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    epoch_limit: int | None = None,
) -> dict[str, Any]:
    """Train one run into ``out_dir`` and return its final metrics.

    A checkpoint from an earlier, interrupted call with the same config is resumed. ``epoch_limit``
    ends this call after that many epochs (leaving the checkpoint), as a time-limited cluster job would.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(cfg.threads)
    write_json(out / "config.json", {"run_id": cfg.run_id, **cfg.to_dict()})

    corpus = load_corpus(cfg.corpus, data_dir=data_dir, cache_dir=cache_dir, **cfg.corpus_options)
    train = split_stream(corpus, "train", cfg.train_tokens)
    torch.manual_seed(cfg.seed)
    model = build_model(model_config(cfg, len(corpus.vocab)))
    optimizer = make_optimizer(cfg, model)
    schedule = Schedule(cfg.schedule, cfg.lr, cfg.min_improvement)
    state = TrainingState(epochs=[], steps=[])
    best_weights = copy.deepcopy(model.state_dict())

    checkpoint_path = out / "checkpoint.pt"
    if checkpoint_path.exists():
        model_state, optimizer_state, schedule, state, best_weights = _load_checkpoint(checkpoint_path, cfg)
        model.load_state_dict(model_state)
        optimizer.load_state_dict(optimizer_state)
        log.info("resuming %s after epoch %d", cfg.run_id, state.epoch)

    epochs_this_call = 0
    while state.epoch < cfg.max_epochs and not schedule.done and state.divergence is None:
        if epoch_limit is not None and epochs_this_call >= epoch_limit:
            return {"run_id": cfg.run_id, "interrupted_after_epoch": state.epoch}
        _set_lr(optimizer, schedule.lr)
        row = _train_epoch(cfg, model, optimizer, corpus, train, state, schedule.lr)
        if state.divergence is None:
            valid = _likelihood(cfg, model, corpus, "valid")
            row.update(valid_ppl=valid.perplexity, valid_nll=valid.mean_nll)
            if valid.mean_nll < state.best_valid_nll:
                state.best_valid_nll = valid.mean_nll
                best_weights = copy.deepcopy(model.state_dict())
            else:
                # Mikolov: an epoch that made validation worse is undone before the rate is halved.
                model.load_state_dict(best_weights)
            schedule = schedule.after_epoch(state.previous_valid_nll, valid.mean_nll)
            state.previous_valid_nll = min(state.previous_valid_nll, valid.mean_nll)
        state.epochs.append(row)
        state.epoch += 1
        epochs_this_call += 1
        _save_checkpoint(checkpoint_path, cfg, model, optimizer, schedule, state, best_weights)

    metrics = _finish(cfg, out, model, corpus, state, best_weights)
    checkpoint_path.unlink(missing_ok=True)
    return metrics


def _train_epoch(cfg, model, optimizer, corpus, train, state: TrainingState, lr: float) -> dict[str, Any]:
    model.train()
    hidden = model.init_state(cfg.batch_size) if cfg.family != "ff" else None
    nll_sum, n_tokens, n_steps, n_clipped, norms = 0.0, 0, 0, 0, []
    expected_steps = _steps_per_epoch(cfg, train)
    report_every = max(1, expected_steps // 10)
    start = time.perf_counter()
    for batch in epoch_batches(cfg, corpus, train, state.epoch):
        if cfg.max_steps_per_epoch is not None and n_steps >= cfg.max_steps_per_epoch:
            break
        hidden = detach_state(hidden) if batch.carry_state else None
        loss, n, hidden = model.nll(batch.inputs, batch.targets, hidden)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm, clipped = clip_gradients(model.parameters(), cfg.clip_mode, cfg.clip)
        state.global_step += 1
        n_steps += 1
        loss_value = float(loss.detach())
        state.steps.append(StepRecord(state.global_step, state.epoch + 1, lr, loss_value, grad_norm, clipped))
        reason = _divergence_reason(loss_value, grad_norm, cfg.divergence_norm)
        if reason:
            state.divergence = Divergence(state.global_step, state.epoch + 1, reason)
            log.warning("run %s diverged at step %d: %s", cfg.run_id, state.global_step, reason)
            break
        optimizer.step()
        nll_sum += loss_value * n
        n_tokens += n
        n_clipped += clipped
        norms.append(grad_norm)
        if n_steps % report_every == 0:
            elapsed = time.perf_counter() - start
            log.info(
                "epoch %d step %d/%d | lr %.4g | ppl %.1f | %.0f tok/s",
                state.epoch + 1, n_steps, expected_steps, lr, perplexity(nll_sum / n_tokens), n_tokens / elapsed,
            )
    seconds = time.perf_counter() - start
    return {
        "epoch": state.epoch + 1,
        "lr": lr,
        "steps": n_steps,
        "train_ppl": perplexity(nll_sum / n_tokens) if n_tokens else math.nan,
        "seconds": seconds,
        "tokens_per_second": n_tokens / seconds if seconds > 0 else math.nan,
        "clipped_fraction": n_clipped / n_steps if n_steps else math.nan,
        "grad_norm_median": float(np.median(norms)) if norms else math.nan,
        # Filled in by validation; NaN in the epoch that diverged, so epochs.csv always has these columns.
        "valid_ppl": math.nan,
        "valid_nll": math.nan,
    }


def _steps_per_epoch(cfg: RunConfig, train: np.ndarray) -> int:
    if cfg.family == "ff":
        steps = math.ceil(max(len(train) - cfg.context, 0) / cfg.batch_size)
    elif cfg.bptt == 0:
        steps = 0  # unknown until the sentences are batched; progress lines then count steps only
    else:
        steps = math.ceil((len(train) // cfg.batch_size - 1) / cfg.bptt)
    return min(steps, cfg.max_steps_per_epoch) if cfg.max_steps_per_epoch and steps else steps


def _divergence_reason(loss: float, grad_norm: float, limit: float) -> str | None:
    if not math.isfinite(loss):
        return f"non-finite loss ({loss})"
    if not math.isfinite(grad_norm):
        return f"non-finite gradient norm ({grad_norm})"
    if grad_norm > limit:
        return f"gradient norm {grad_norm:.3g} above divergence_norm {limit:.3g}"
    return None


def _likelihood(cfg: RunConfig, model, corpus: Corpus, split: str) -> Likelihood:
    stream = split_stream(corpus, split, cfg.eval_tokens)
    if cfg.family != "ff" and cfg.bptt == 0:
        starts = corpus.sentence_starts[split]
        return sentence_likelihood(model, stream, starts[starts < len(stream)], batch_size=cfg.eval_batch_size)
    return stream_likelihood(
        model, stream, family=cfg.family, batch_size=cfg.eval_batch_size, bptt=max(cfg.bptt, 1), context=cfg.context
    )


def _set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr


def _finish(cfg, out: Path, model, corpus, state: TrainingState, best_weights) -> dict[str, Any]:
    """Evaluate the best epoch's weights on test and write every output file of the run."""
    model.load_state_dict(best_weights)
    diverged = state.divergence is not None
    completed = [e for e in state.epochs if not math.isnan(e["valid_ppl"])]  # not the diverged one
    test = _likelihood(cfg, model, corpus, "test") if not diverged else None
    metrics: dict[str, Any] = {
        "run_id": cfg.run_id,
        "test_ppl": test.perplexity if test else None,
        "valid_ppl": perplexity(state.best_valid_nll) if math.isfinite(state.best_valid_nll) else None,
        "epochs": len(state.epochs),
        "steps": state.global_step,
        "diverged": diverged,
        "diverged_step": state.divergence.step if diverged else None,
        "diverged_reason": state.divergence.reason if diverged else None,
        "parameters": model.count_parameters(),
        "train_seconds": float(sum(e["seconds"] for e in state.epochs)),
        "tokens_per_second": float(np.mean([e["tokens_per_second"] for e in completed])) if completed else None,
        "clipped_fraction": float(np.mean([s.clipped for s in state.steps])) if state.steps else None,
    }
    if corpus.probes is not None and not diverged:
        table = agreement_by_distance(
            model, corpus, "test", family=cfg.family, context=cfg.context, batch_size=cfg.eval_batch_size
        )
        write_csv(out / "agreement.csv", table)
        metrics["agreement_accuracy"] = float((table["accuracy"] * table["n"]).sum() / table["n"].sum())
    kept = thin_steps(state.steps, cfg.steps_max_rows, keep=metrics["diverged_step"])
    write_csv(out / "epochs.csv", pd.DataFrame(state.epochs))
    write_csv(out / "steps.csv", pd.DataFrame([asdict(s) for s in kept], columns=list(StepRecord.__dataclass_fields__)))
    write_torch(out / "model.pt", {"config": cfg.to_dict(), "state_dict": best_weights})
    write_json(out / "metrics.json", metrics)
    return metrics


# --------------------------------------------------------------------------------------------------
# Checkpoints: everything needed to continue as if never interrupted, RNG states included.


def _save_checkpoint(path: Path, cfg, model, optimizer, schedule: Schedule, state: TrainingState, best_weights) -> None:
    write_torch(
        path,
        {
            "config": cfg.to_dict(),
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "schedule": asdict(schedule),
            "state": {**asdict(state), "steps": [asdict(s) for s in state.steps]},
            "best_weights": best_weights,
            "rng": {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()},
        },
    )


def _load_checkpoint(path: Path, cfg: RunConfig):
    saved = torch.load(path, weights_only=False)
    # Compared as the run id is: a rerun with more threads (another machine, a cluster) resumes.
    current = cfg.settings()
    written = RunConfig.from_settings(saved["config"]).settings()
    if written != current:
        raise ValueError(
            f"{path} was written for a different configuration; remove it to start this run afresh "
            f"(differing keys: {sorted(k for k in written.keys() | current.keys() if written.get(k) != current.get(k))})"
        )
    torch.set_rng_state(saved["rng"]["torch"])
    np.random.set_state(saved["rng"]["numpy"])
    random.setstate(saved["rng"]["python"])
    raw = saved["state"]
    state = TrainingState(
        epoch=raw["epoch"],
        global_step=raw["global_step"],
        best_valid_nll=raw["best_valid_nll"],
        previous_valid_nll=raw["previous_valid_nll"],
        epochs=raw["epochs"],
        steps=[StepRecord(**s) for s in raw["steps"]],
        divergence=Divergence(**raw["divergence"]) if raw["divergence"] else None,
    )
    return saved["model"], saved["optimizer"], Schedule(**saved["schedule"]), state, saved["best_weights"]
