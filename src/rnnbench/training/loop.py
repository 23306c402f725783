"""The training loop: truncated BPTT, clipping, Mikolov's schedule, divergence, checkpoints, metrics.

One run = one resolved ``RunConfig`` trained into one directory::

    results/runs/<run_id>/
        config.json     the resolved settings (and the run id)
        epochs.csv      per epoch: lr, train/valid perplexity, time, tokens/s, clipping statistics
        steps.csv       per optimiser step (evenly thinned): loss, pre-clip gradient norm, clipped flag,
                        cosine between the clipped and the unclipped update
        metrics.json    final test perplexity (and each evaluation column's, for a stream), divergence (step
                        and reason), parameter count, speed, CPU time and peak memory, share of steps
                        clipped, pre-clip gradient-norm quantiles, mean clip cosine
        agreement.csv   per-distance agreement accuracy (synthetic corpus only)
        model.pt        state_dict + config of the best epoch (never a pickled module)
        snapshots/      epoch-000.pt (the initialisation) and epoch-<k>.pt, the weights at the end of
                        epoch k, each state_dict + config like model.pt (for the gradient-decay analyses)
        checkpoint.pt   only while the run is unfinished: a rerun resumes from it (one that cannot be read is
                        renamed checkpoint.pt.corrupt-<time>, with a warning, and the run starts from scratch)

How a run reads its data (a stream in truncated-BPTT segments, whole sentences, n-gram windows) is
decided once, by ``rnnbench.training.reading``; this loop never asks which model family it trains.

Truncated BPTT over a batchified stream (``bptt`` > 0) carries the hidden state from one segment to
the next but cuts the graph between them (``detach_state``)::

    stream columns (B of them), time running down:
      seg 1  | x1  .. x35 |  forward + backward through 35 steps, state h35 kept
      seg 2  | x36 .. x70 |  starts from h35 *detached*: values flow forward, gradients stop at the cut

With ``bptt`` = 0 each batch is a set of whole sentences read from h_0 = 0: full BPTT. With ``segments``
'sentence' and ``bptt`` = k the batches are those same sentences, and the gradient stops at steps k, 2k, ...
of each (the batch's ``cut_every``; the model's recurrence runs in blocks of k steps).

A step's loss, pre-clip gradient norm, clipped flag and clip cosine stay tensors until every
``READ_EVERY`` steps (and the epoch end), when they are read back together: no host round trip per
step, and every recorded number is the exact value of that step. A run that diverged is found at the
read-back and its records cut at the first diverged step, as if it had stopped there.
"""

from __future__ import annotations

import copy
import itertools
import json
import logging
import math
import random
import resource
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from rnnbench.config import locations
from rnnbench.config.runs import RunConfig
from rnnbench.data.corpora import load_corpus
from rnnbench.io import write_csv, write_json, write_torch
from rnnbench.metrics import GRAD_NORM_QUANTILES
from rnnbench.models import ModelConfig, build_model
from rnnbench.paths import snapshot_in
from rnnbench.training import optim
from rnnbench.training.allocator import retain_freed_memory
from rnnbench.training.clipping import Clipped, clip_gradients_
from rnnbench.training.divergence import step_divergence, validation_divergence
from rnnbench.training.evaluate import perplexity
from rnnbench.training.reading import Reading, reading_for
from rnnbench.training.stuck_columns import worst_and_median

log = logging.getLogger("rnnbench.training.loop")


# --------------------------------------------------------------------------------------------------
# The three small mechanisms the chapter names: truncation (``rnnbench.training.reading.detach_state``),
# clipping (``rnnbench.training.clipping``), the learning-rate schedule.


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

    def after_epoch(self, previous_nll: float, current_nll: float) -> Schedule:
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
# Records (divergence is judged by ``rnnbench.training.divergence``).


@dataclass(frozen=True)
class StepRecord:
    step: int
    epoch: int
    lr: float
    loss: float
    grad_norm: float
    clipped: bool
    clip_cosine: float = math.nan  # absent from checkpoints written before it was recorded


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

READ_EVERY = 32  # steps between read-backs of the per-step records (and divergence checks)


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
    # The run's cost in the calls before this one (a resumed run), up to their last checkpoint: the work after it
    # was lost and is done again, so it is not counted twice.
    cpu_seconds: float = 0.0
    peak_rss_mb: float = 0.0


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (getrusage: kilobytes on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def make_optimizer(cfg: RunConfig, model: torch.nn.Module) -> optim.Optimizer:
    # torch's update rules without torch.optim's start-up cost: Adam fused; the embedding's gradient as the rows a
    # step used, not the whole table (rnnbench.training.optim says why each).
    optim.sparse_embedding_gradients(model)
    rule = optim.Adam if cfg.optimizer == "adam" else optim.SGD
    return rule(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)


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
    A directory holding another configuration's run is refused before anything in it is touched, and a
    call that fails before its first checkpoint leaves no directory behind that it created.
    """
    # The run counts its own CPU time: Snakemake's benchmark samples a job's process every 30 s after its first
    # 15 s and keeps the last sample, which leaves out up to 30 s of a job's CPU time.
    cpu_start = time.process_time()
    out = Path(out_dir)
    if problem := locations.unwritable(out):  # known now, not after the corpus has loaded
        raise ValueError(f"run directory {out} {problem}; allowed: a folder that is new or holds this run")
    _refuse_other_run(out, cfg)
    torch.set_num_threads(cfg.threads)
    if not retain_freed_memory():
        log.info("malloc is not glibc's: freed blocks may go back to the kernel and be faulted in every step")
    corpus = load_corpus(cfg.corpus, data_dir=data_dir, cache_dir=cache_dir, **cfg.corpus_options)
    reading = reading_for(cfg, corpus)
    torch.manual_seed(cfg.seed)
    model = build_model(ModelConfig.from_run(cfg, len(corpus.vocab)))
    created = not out.exists()
    try:
        return _train(cfg, out, reading, model, epoch_limit, cpu_start)
    except Exception:
        if created and not (out / "checkpoint.pt").exists():
            shutil.rmtree(out, ignore_errors=True)
        raise


# What marks a folder as a run's even without its config.json (a workflow rerun deletes an interrupted job's
# declared outputs, config.json among them, and keeps these): a checkpoint (compared with the run's settings when
# it is read) and the weights snapshots.
RUN_MARKS = ("config.json", "checkpoint.pt", "snapshots")


def _refuse_other_run(out: Path, cfg: RunConfig) -> None:
    """Refuse, before anything in ``out`` is touched, a folder holding another configuration's run, or a folder
    that is not empty and holds no run at all (the user's own files: training would replace its metrics.json)."""
    written = out / "config.json"
    if not written.exists():
        entries = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
        if entries and not any((out / mark).exists() for mark in RUN_MARKS):
            shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
            raise ValueError(
                f"run directory {out} is not empty and holds no run (no {', '.join(RUN_MARKS)}; it holds {shown}); "
                f"nothing was changed. Allowed: a folder that is new, empty or holds this run"
            )
        return
    saved = json.loads(written.read_text(encoding="utf-8"))
    saved.pop("run_id", None)
    before, now = RunConfig.from_settings(saved).settings(), cfg.settings()
    if before != now:
        differing = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
        raise ValueError(
            f"{out} holds a run with other settings (differing keys: {differing}); nothing was changed. "
            f"Train into another directory, or remove {out} to replace that run."
        )


def _train(
    cfg: RunConfig, out: Path, reading: Reading, model, epoch_limit: int | None, cpu_start: float
) -> dict[str, Any]:
    optimizer = make_optimizer(cfg, model)
    schedule = Schedule(cfg.schedule, cfg.lr, cfg.min_improvement)
    state = TrainingState(epochs=[], steps=[])
    best_weights = copy.deepcopy(model.state_dict())
    uniform_nll = math.log(len(reading.corpus.vocab))

    checkpoint_path = out / "checkpoint.pt"
    resumed = _load_checkpoint(checkpoint_path, cfg) if checkpoint_path.exists() else None
    if resumed is not None:
        model_state, optimizer_state, schedule, state, best_weights = resumed
        model.load_state_dict(model_state)
        optimizer.load_state_dict(optimizer_state)
        log.info("resuming %s after epoch %d", cfg.run_id, state.epoch)
    else:
        _save_snapshot(out, cfg, model, 0)
    earlier_cpu, earlier_peak = state.cpu_seconds, state.peak_rss_mb

    def count_cost() -> None:
        state.cpu_seconds = earlier_cpu + time.process_time() - cpu_start
        state.peak_rss_mb = max(earlier_peak, peak_rss_mb())

    # Also on resuming: a workflow rerun deletes an interrupted job's declared outputs, config.json among them.
    write_json(out / "config.json", {"run_id": cfg.run_id, **cfg.to_json()})

    epochs_this_call = 0
    while state.epoch < cfg.max_epochs and not schedule.done and state.divergence is None:
        if epoch_limit is not None and epochs_this_call >= epoch_limit:
            return {"run_id": cfg.run_id, "interrupted_after_epoch": state.epoch}
        _set_lr(optimizer, schedule.lr)
        row = _train_epoch(cfg, model, optimizer, reading, state, schedule.lr, uniform_nll)
        if state.divergence is None:
            _save_snapshot(out, cfg, model, state.epoch + 1)
            valid = reading.likelihood(model, "valid")
            row.update(valid_ppl=valid.perplexity, valid_nll=valid.mean_nll)
            reason = validation_divergence(valid.mean_nll, state.best_valid_nll, uniform_nll=uniform_nll)
            if reason:
                state.divergence = Divergence(state.global_step, state.epoch + 1, reason)
                log.warning("run %s diverged in validation after step %d: %s", cfg.run_id, state.global_step, reason)
            elif valid.mean_nll < state.best_valid_nll:
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
        count_cost()
        _save_checkpoint(checkpoint_path, cfg, model, optimizer, schedule, state, best_weights)

    metrics = _finish(cfg, out, model, reading, state, best_weights, count_cost)
    checkpoint_path.unlink(missing_ok=True)
    return metrics


def _train_epoch(cfg, model, optimizer, reading: Reading, state: TrainingState, lr: float, uniform_nll: float) -> dict:
    model.train()
    hidden = reading.first_state(model)
    expected_steps = reading.steps_per_epoch()
    epoch = state.epoch + 1
    pending: list[tuple[torch.Tensor, int, Clipped]] = []  # steps taken, not yet read back
    records: list[tuple[StepRecord, int]] = []  # read back: (record, tokens)
    start = time.perf_counter()

    def read_back() -> None:
        if not pending:
            return
        values = torch.stack(
            [torch.stack([loss.double(), c.norm.double(), c.clipped.double(), c.cosine]) for loss, _, c in pending]
        ).tolist()  # one host read for all pending steps
        for (loss, norm, clipped, cosine), (_, n, _) in zip(values, pending, strict=True):
            state.global_step += 1
            records.append((StepRecord(state.global_step, epoch, lr, loss, norm, bool(clipped), cosine), n))
            reason = step_divergence(loss, norm, norm_limit=cfg.divergence_norm, uniform_nll=uniform_nll)
            if reason:
                state.divergence = Divergence(state.global_step, epoch, reason)
                log.warning("run %s diverged at step %d: %s", cfg.run_id, state.global_step, reason)
                break
        pending.clear()
        log.info(
            "epoch %d step %d/%d | lr %.4g | %.0f tok/s",
            epoch,
            len(records),
            expected_steps,
            lr,
            sum(n for _, n in records) / (time.perf_counter() - start),
        )

    for step, batch in enumerate(reading.batches(state.epoch)):
        if step >= expected_steps or state.divergence is not None:
            break
        hidden = reading.next_state(hidden)
        loss, n, hidden = model.nll(batch.inputs, batch.targets, hidden, batch.cut_every)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        pending.append((loss.detach(), n, clip_gradients_(model.parameters(), cfg.clip_mode, cfg.clip)))
        # A diverged step's update is never taken into account: the records stop at it and the model
        # goes back to the best epoch's weights, so updating here before the check changes nothing.
        optimizer.step()
        if len(pending) == READ_EVERY:
            read_back()
    read_back()
    seconds = time.perf_counter() - start
    state.steps.extend(r for r, _ in records)
    # The diverged step counts as taken, but its loss, norm and clipping enter no statistic.
    kept = records[:-1] if state.divergence is not None else records
    nll_sum, n_tokens = 0.0, 0
    for record, n in kept:
        nll_sum += record.loss * n
        n_tokens += n
    return {
        "epoch": epoch,
        "lr": lr,
        "steps": len(records),
        "train_ppl": perplexity(nll_sum / n_tokens) if n_tokens else math.nan,
        "seconds": seconds,
        "tokens_per_second": n_tokens / seconds if seconds > 0 else math.nan,
        "clipped_fraction": sum(r.clipped for r, _ in kept) / len(records) if records else math.nan,
        "grad_norm_median": float(np.median([r.grad_norm for r, _ in kept])) if kept else math.nan,
        # Filled in by validation; NaN in the epoch that diverged, so epochs.csv always has these columns.
        "valid_ppl": math.nan,
        "valid_nll": math.nan,
    }


def _set_lr(optimizer: optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr


def _save_snapshot(out: Path, cfg: RunConfig, model, epoch: int) -> None:
    write_torch(snapshot_in(out, epoch), {"config": cfg.to_dict(), "state_dict": model.state_dict()})


def step_statistics(steps: list[StepRecord], diverged_step: int | None) -> dict[str, float | None]:
    """Over every step taken but the diverged one: the share clipped, quantiles of the pre-clip gradient
    norm, and the mean cosine between the clipped and the unclipped update over the steps clipped."""
    steps = [s for s in steps if s.step != diverged_step]
    norms = np.array([s.grad_norm for s in steps])
    cosines = [s.clip_cosine for s in steps if s.clipped]
    return {
        **{key: float(np.quantile(norms, q)) if len(norms) else None for key, q in GRAD_NORM_QUANTILES.items()},
        "clip_cosine_mean": float(np.mean(cosines)) if cosines else None,
    }


def _finish(
    cfg, out: Path, model, reading: Reading, state: TrainingState, best_weights, count_cost: Callable[[], None]
) -> dict[str, Any]:
    """Evaluate the best epoch's weights on test and write every output file of the run; ``count_cost`` brings the
    state's CPU seconds and peak memory up to now."""
    model.load_state_dict(best_weights)
    diverged = state.divergence is not None
    completed = [e for e in state.epochs if not math.isnan(e["valid_ppl"])]  # not the diverged one
    test = reading.likelihood(model, "test", by_column=True) if not diverged else None
    taken = [s for s in state.steps if not diverged or s.step != state.divergence.step]
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
        # Over the steps taken: the diverged step's update entered no weights, and its non-finite norm "clipped".
        "clipped_fraction": float(np.mean([s.clipped for s in taken])) if taken else None,
        **step_statistics(state.steps, state.divergence.step if diverged else None),
    }
    if test is not None and test.columns:  # read as a stream: whether one column made the number
        metrics["test_column_ppl"] = [column.perplexity for column in test.columns]
        metrics["test_column_worst"], metrics["test_column_median"] = worst_and_median(metrics["test_column_ppl"])
    if reading.corpus.probes is not None and not diverged:
        table = reading.agreement(model, "test")
        write_csv(out / "agreement.csv", table)
        metrics["agreement_accuracy"] = float((table["accuracy"] * table["n"]).sum() / table["n"].sum())
        metrics["agreement_probes"] = int(table["n"].sum())  # the accuracy's sample size (rnnbench.results.outcome)
    count_cost()
    # From train_run's start to here, over every call that trained the run: the corpus read, training, every
    # evaluation; not the interpreter's start-up before it.
    metrics["cpu_seconds"] = state.cpu_seconds
    metrics["peak_rss_mb"] = state.peak_rss_mb
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


CHECKPOINT_PARTS = ("config", "model", "optimizer", "schedule", "state", "best_weights", "rng")


def _load_checkpoint(path: Path, cfg: RunConfig):
    """(model state, optimiser state, schedule, training state, best weights) from the checkpoint ``path``, with
    the random generators restored; None if it cannot be read, after setting it aside (`_set_aside`)."""
    try:
        saved = torch.load(path, weights_only=False)
        if not isinstance(saved, dict):
            raise TypeError(f"a {type(saved).__name__}, not a checkpoint's dict")
        missing = [part for part in CHECKPOINT_PARTS if part not in saved]
        if missing:
            raise ValueError(f"it has no {', '.join(missing)}")
    except Exception as err:  # a truncated or damaged file fails in torch's reader in many ways, none of them ours
        _set_aside(path, cfg, err)
        return None
    # Compared as the run id is: a rerun with more threads (another machine, a cluster) resumes.
    current = cfg.settings()
    written = RunConfig.from_settings(saved["config"]).settings()
    if written != current:
        raise ValueError(
            f"{path} was written for a different configuration; remove it to start this run afresh "
            f"(differing keys: {sorted(k for k in written.keys() | current.keys() if written.get(k) != current.get(k))})"
        )
    before = (torch.get_rng_state(), np.random.get_state(), random.getstate())
    try:
        raw = saved["state"]
        state = TrainingState(
            epoch=raw["epoch"],
            global_step=raw["global_step"],
            best_valid_nll=raw["best_valid_nll"],
            previous_valid_nll=raw["previous_valid_nll"],
            epochs=raw["epochs"],
            steps=[StepRecord(**s) for s in raw["steps"]],
            divergence=Divergence(**raw["divergence"]) if raw["divergence"] else None,
            # Absent from a checkpoint written before the run counted its cost: those calls go uncounted.
            cpu_seconds=raw.get("cpu_seconds", 0.0),
            peak_rss_mb=raw.get("peak_rss_mb", 0.0),
        )
        schedule = Schedule(**saved["schedule"])
        torch.set_rng_state(saved["rng"]["torch"])
        np.random.set_state(saved["rng"]["numpy"])
        random.setstate(saved["rng"]["python"])
    except (KeyError, TypeError, ValueError, RuntimeError) as err:  # read, but not a checkpoint of this format
        torch.set_rng_state(before[0])  # as a run that never saw it: from its seed
        np.random.set_state(before[1])
        random.setstate(before[2])
        _set_aside(path, cfg, err)
        return None
    return saved["model"], saved["optimizer"], schedule, state, saved["best_weights"]


def _set_aside(path: Path, cfg: RunConfig, err: Exception) -> None:
    """A checkpoint that cannot be read is renamed, not deleted (it may be looked at) and not read again: the run
    starts from scratch, as if it had never been interrupted (one checkpoint per run: there is no older one)."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    for n in itertools.count(2):  # a second one within the same second keeps the first
        if not aside.exists():
            break
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    path.rename(aside)
    log.warning(
        "run %s: the checkpoint %s cannot be read (%s: %s); set aside as %s, training from scratch",
        cfg.run_id,
        path,
        type(err).__name__,
        err,
        aside,
    )
