"""The training loop: truncated BPTT, clipping, Mikolov's schedule, divergence, checkpoints, metrics.

The steps are here; each mechanism they call is named and lives in a module of its own::

    rnnbench.training.reading       how the run reads its data, and truncation (``detach_state``)
    rnnbench.training.optim         the update rule a run's config asks for (``make_optimizer``)
    rnnbench.training.clipping      global-norm and element-wise clipping
    rnnbench.training.schedule      the rate each epoch trains at, and when the run stops
    rnnbench.training.divergence    when a step's or an epoch's loss counts as diverged
    rnnbench.training.records       step records, thinned for steps.csv, and their statistics
    rnnbench.training.checkpoints   the run's folder checked, its state saved each epoch and resumed
    rnnbench.training.cost          the run's own CPU time and peak memory

One run = one resolved ``RunConfig`` trained into one directory::

    results/runs/<run_id>/
        config.json     the resolved settings (and the run id); `clip` is the threshold clipped at, resolved from
                        the reference run's median norm where clip_times_median sets it
        epochs.csv      per epoch: lr, train/valid perplexity, time, tokens read and per second, clipping statistics
        steps.csv       per optimiser step (evenly thinned): loss, pre-clip gradient norm, clipped flag,
                        cosine between the clipped and the unclipped gradient, and between the updates they
                        give the optimiser (measured every UPDATE_COSINE_EVERY-th step, where measured at all)
        metrics.json    final test perplexity (and each evaluation column's, for a stream), divergence (step
                        and reason), parameter count, speed, CPU time and peak memory, share of steps
                        clipped, pre-clip gradient-norm quantiles, mean clip cosine, the update cosine's
                        mean, minimum and count of clipped steps measured, the threshold clipped at (and, where
                        clip_times_median set it, its reference run and that run's median norm)
        agreement.csv   per-distance agreement accuracy on test (synthetic corpus only; metrics.json also holds
                        the validation split's overall accuracy)
        model.pt        state_dict + config of the best epoch (never a pickled module)
        snapshots/      epoch-000.pt (the initialisation) and epoch-<k>.pt, the weights at the end of
                        epoch k, each state_dict + config like model.pt (for the gradient-decay analyses)
        checkpoint.pt   only while the run is unfinished: a rerun resumes from it (one that cannot be read is
                        renamed checkpoint.pt.corrupt-<time>, with a warning, and the run starts from scratch)

How a run reads its data (a stream in truncated-BPTT segments, whole sentences, n-gram windows) is
decided once, by ``rnnbench.training.reading``; this loop never asks which model family it trains.

A run trains epochs until ``max_epochs``, the schedule stops it, it diverges, or its step budget ``max_steps``
(counted across epochs, and across the calls that trained a resumed run) is spent: the epoch that spends it stops
part way through the data and is validated like the others (rnnbench.config.updates counts the updates).

Truncated BPTT over a batchified stream (``bptt`` > 0) carries the hidden state from one segment to
the next but cuts the graph between them (``detach_state``)::

    stream columns (B of them), time running down:
      seg 1  | x1  .. x35 |  forward + backward through 35 steps, state h35 kept
      seg 2  | x36 .. x70 |  starts from h35 *detached*: values flow forward, gradients stop at the cut

With ``bptt`` = 0 each batch is a set of whole sentences read from h_0 = 0: full BPTT. With ``segments``
'sentence' and ``bptt`` = k the batches are those same sentences, and the gradient stops at steps k, 2k, ...
of each (the batch's ``cut_every``; the model's recurrence runs in blocks of k steps).

A step's loss, pre-clip gradient norm, clipped flag and cosines stay tensors until every
``READ_EVERY`` steps (and the epoch end), when they are read back together: no host round trip per
step, and every recorded number is the exact value of that step. A run that diverged is found at the
read-back and its records cut at the first diverged step, as if it had stopped there.

Where clipping can turn the optimiser's update beyond what it does to the gradient (Adam; SGD with weight decay:
``RunConfig.measures_update_cosine``), the run measures by how much on its steps 1, 1 + k, 1 + 2k, ... (k =
rnnbench.metrics.UPDATE_COSINE_EVERY): the update from the clipped gradient against the one from the unclipped
gradient at the same optimiser state (rnnbench.training.clipping), before step(), changing nothing step() does. Not
every step, and not every clipped one: whether a step is clipped is known only at the read-back, and a measurement
(a trial update of the whole model, another of all but an embedding's unused rows, their dot products) costs about
half a training step of clipping_adam_ptb's network at one thread, memory traffic mostly: measuring every step adds
about 50% to an epoch's CPU time, one step in 16 about 3%. With k a power of two the measured steps survive
steps.csv's even thinning: the first record is measured, and so is at least one kept row in every k.
"""

from __future__ import annotations

import copy
import logging
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from rnnbench.config import locations, updates
from rnnbench.config.runs import RunConfig
from rnnbench.data.corpora import load_corpus
from rnnbench.io import write_csv, write_json, write_torch
from rnnbench.metrics import UPDATE_COSINE_EVERY, read_metrics
from rnnbench.models import ModelConfig, build_model
from rnnbench.paths import snapshot_in
from rnnbench.training import optim
from rnnbench.training.allocator import retain_freed_memory
from rnnbench.training.checkpoints import TrainingState, load_checkpoint, refuse_other_run, save_checkpoint
from rnnbench.training.clipping import Clipped, clip_gradients_
from rnnbench.training.cost import cost_so_far
from rnnbench.training.divergence import step_divergence, validation_divergence
from rnnbench.training.evaluate import perplexity
from rnnbench.training.optim import make_optimizer
from rnnbench.training.reading import Reading, reading_for
from rnnbench.training.records import Divergence, StepRecord, step_statistics, thin_steps
from rnnbench.training.schedule import Schedule
from rnnbench.training.stuck_columns import worst_and_median

log = logging.getLogger("rnnbench.training.loop")


READ_EVERY = 32  # steps between read-backs of the per-step records (and divergence checks)


def train_run(
    cfg: RunConfig,
    out_dir: str | Path,
    *,
    data_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
    epoch_limit: int | None = None,
    clip_reference: str | Path | None = None,
) -> dict[str, Any]:
    """Train one run into ``out_dir`` and return its final metrics.

    A checkpoint from an earlier, interrupted call with the same config is resumed. ``epoch_limit``
    ends this call after that many epochs (leaving the checkpoint), as a time-limited cluster job would.
    A directory holding another configuration's run is refused before anything in it is touched, and a
    call that fails before its first checkpoint leaves no directory behind that it created.
    ``clip_reference``: the metrics.json of the run's reference (`RunConfig.clip_reference`), for a run whose
    threshold is a multiple of its median norm; the threshold is resolved from it before anything else.
    """
    cpu_start = time.process_time()  # the run counts its own CPU time (rnnbench.training.cost says why)
    out = Path(out_dir)
    if problem := locations.unwritable(out):  # known now, not after the corpus has loaded
        raise ValueError(f"run directory {out} {problem}; allowed: a folder that is new or holds this run")
    cfg, clipping = resolve_clip(cfg, clip_reference)
    refuse_other_run(out, cfg)
    torch.set_num_threads(cfg.threads)
    if not retain_freed_memory():
        log.info("malloc is not glibc's: freed blocks may go back to the kernel and be faulted in every step")
    corpus = load_corpus(cfg.corpus, data_dir=data_dir, cache_dir=cache_dir, **cfg.corpus_options)
    reading = reading_for(cfg, corpus)
    torch.manual_seed(cfg.seed)
    model = build_model(ModelConfig.from_run(cfg, len(corpus.vocab)))
    created = not out.exists()
    try:
        return _train(cfg, out, reading, model, epoch_limit, cpu_start, clipping)
    except Exception:
        if created and not (out / "checkpoint.pt").exists():
            shutil.rmtree(out, ignore_errors=True)
        raise


def resolve_clip(cfg: RunConfig, reference: str | Path | None) -> tuple[RunConfig, dict[str, Any]]:
    """The run with its clipping threshold resolved (`RunConfig.with_clip_from`, from its reference's metrics.json
    where ``clip_times_median`` sets it), and what metrics.json records of it: the threshold the run clips at
    (clip_threshold; null where it never clips), and for a relative threshold the reference's run id and median
    pre-clip norm (clip_reference_run, clip_reference_median; null otherwise)."""
    expected = cfg.clip_reference()
    metrics = read_metrics(reference, expected.run_id) if expected is not None and reference is not None else None
    cfg = cfg.with_clip_from(metrics)  # refuses a relative threshold without its reference's metrics
    acts = cfg.clip_mode != "none" and math.isfinite(cfg.clip)
    return cfg, {
        "clip_threshold": cfg.clip if acts else None,
        "clip_reference_run": expected.run_id if expected is not None else None,
        "clip_reference_median": float(metrics["grad_norm_median"]) if metrics is not None else None,
    }


def _train(
    cfg: RunConfig,
    out: Path,
    reading: Reading,
    model,
    epoch_limit: int | None,
    cpu_start: float,
    clipping: dict[str, Any],
) -> dict[str, Any]:
    optimizer = make_optimizer(cfg, model)
    schedule = Schedule(cfg.schedule, cfg.lr, cfg.min_improvement)
    state = TrainingState(epochs=[], steps=[])
    best_weights = copy.deepcopy(model.state_dict())
    uniform_nll = math.log(len(reading.corpus.vocab))

    checkpoint_path = out / "checkpoint.pt"
    resumed = load_checkpoint(checkpoint_path, cfg) if checkpoint_path.exists() else None
    if resumed is not None:
        model_state, optimizer_state, schedule, state, best_weights = resumed
        model.load_state_dict(model_state)
        optimizer.load_state_dict(optimizer_state)
        log.info("resuming %s after epoch %d", cfg.run_id, state.epoch)
    else:
        _save_snapshot(out, cfg, model, 0)
    earlier_cpu, earlier_peak = state.cpu_seconds, state.peak_rss_mb

    def count_cost() -> None:
        state.cpu_seconds, state.peak_rss_mb = cost_so_far(cpu_start, earlier_cpu, earlier_peak)

    # Also on resuming: a workflow rerun deletes an interrupted job's declared outputs, config.json among them.
    write_json(out / "config.json", {"run_id": cfg.run_id, **cfg.to_json()})

    epochs_this_call = 0
    while state.epoch < cfg.max_epochs and not schedule.done and state.divergence is None and _budget_left(cfg, state):
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
        save_checkpoint(checkpoint_path, cfg, model, optimizer, schedule, state, best_weights)

    metrics = _finish(cfg, out, model, reading, state, best_weights, count_cost, clipping)
    checkpoint_path.unlink(missing_ok=True)
    return metrics


def _train_epoch(cfg, model, optimizer, reading: Reading, state: TrainingState, lr: float, uniform_nll: float) -> dict:
    model.train()
    hidden = reading.first_state(model)
    # The whole epoch, or what is left of the run's step budget (rnnbench.config.updates).
    expected_steps = updates.epoch_updates(reading.steps_per_epoch(), state.global_step, cfg.max_steps)
    epoch = state.epoch + 1
    first_step = state.global_step  # steps taken before this epoch's (read-backs move state.global_step on)
    measures = optimizer if cfg.measures_update_cosine else None  # the optimiser whose update clipping may turn
    pending: list[tuple[torch.Tensor, int, Clipped]] = []  # steps taken, not yet read back
    records: list[tuple[StepRecord, int]] = []  # read back: (record, tokens)
    start = time.perf_counter()

    def read_back() -> None:
        if not pending:
            return
        values = torch.stack(
            [
                torch.stack([loss.double(), c.norm.double(), c.clipped.double(), c.cosine, c.update_cosine])
                for loss, _, c in pending
            ]
        ).tolist()  # one host read for all pending steps
        for (loss, norm, clipped, cosine, turned), (_, n, _) in zip(values, pending, strict=True):
            state.global_step += 1
            records.append((StepRecord(state.global_step, epoch, lr, loss, norm, bool(clipped), cosine, turned), n))
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
        # Measuring the update reads the gradients and the optimiser's state and changes neither.
        measured = measures if (first_step + step) % UPDATE_COSINE_EVERY == 0 else None
        pending.append((loss.detach(), n, clip_gradients_(model.parameters(), cfg.clip_mode, cfg.clip, measured)))
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
        "tokens": n_tokens,  # the training tokens the epoch's kept steps read
        "tokens_per_second": n_tokens / seconds if seconds > 0 else math.nan,
        "clipped_fraction": sum(r.clipped for r, _ in kept) / len(records) if records else math.nan,
        "grad_norm_median": float(np.median([r.grad_norm for r, _ in kept])) if kept else math.nan,
        # Filled in by validation; NaN in the epoch that diverged, so epochs.csv always has these columns.
        "valid_ppl": math.nan,
        "valid_nll": math.nan,
    }


def _budget_left(cfg: RunConfig, state: TrainingState) -> bool:
    """Whether the run's step budget (max_steps: counted across epochs, and across the calls that trained a resumed
    run, whose state holds the steps taken before) has updates left."""
    return cfg.max_steps is None or state.global_step < cfg.max_steps


def _set_lr(optimizer: optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr


def _save_snapshot(out: Path, cfg: RunConfig, model, epoch: int) -> None:
    write_torch(snapshot_in(out, epoch), {"config": cfg.to_dict(), "state_dict": model.state_dict()})


def _finish(
    cfg,
    out: Path,
    model,
    reading: Reading,
    state: TrainingState,
    best_weights,
    count_cost: Callable[[], None],
    clipping: dict[str, Any],
) -> dict[str, Any]:
    """Evaluate the best epoch's weights on test and write every output file of the run; ``count_cost`` brings the
    state's CPU seconds and peak memory up to now; ``clipping``: the threshold and its reference (resolve_clip)."""
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
        **clipping,
    }
    if test is not None and test.columns:  # read as a stream: whether one column made the number
        metrics["test_column_ppl"] = [column.perplexity for column in test.columns]
        metrics["test_column_worst"], metrics["test_column_median"] = worst_and_median(metrics["test_column_ppl"])
    if reading.corpus.probes is not None and not diverged:
        table = reading.agreement(model, "test")
        write_csv(out / "agreement.csv", table)
        metrics["agreement_accuracy"] = float((table["accuracy"] * table["n"]).sum() / table["n"].sum())
        metrics["agreement_probes"] = int(table["n"].sum())  # the accuracy's sample size (rnnbench.results.outcome)
        # The same probe on validation: what a setting of an agreement study can be chosen by without reading test.
        valid = reading.agreement(model, "valid")
        metrics["valid_agreement_accuracy"] = float((valid["accuracy"] * valid["n"]).sum() / valid["n"].sum())
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
