"""Dynamic evaluation (Mikolov et al. 2010, 2011, "RNN LM, dynamic"): the model keeps training on the text it
is scored on, as it reads it.

    stream    | seg 1      | seg 2      | seg 3      | ...     read once, in order, as one column (batch 1)
    weights     θ_0          θ_1          θ_2
    seg k:  score it with θ_{k-1}, from the state seg k-1 ended in: its NLL enters the total here,
            before any update on it
            θ_k = θ_{k-1} - lr clip(∇ mean NLL of seg k)     one plain SGD step, the run's clipping
            the state carried into seg k+1, detached (truncated BPTT, as in training)

With lr = 0 this is static evaluation of the stream at batch 1, token for token.

Why batch 1: a batchified stream (``rnnbench.data.batching.batchify``) reads B far-apart stretches of the text
side by side, so the step after the first segment of every column has already learnt from the last column's
text, which comes after all that the first column has yet to read: later text would be learnt before earlier
text is scored. One column keeps "score, then learn" in the text's own order. It costs a forward and a
backward pass per segment of ``bptt`` tokens at batch 1: about 10 ms a segment at H = 100, d = 100 with the
adaptive softmax (measured on a loaded 2-core machine).

The step is the mean NLL's gradient over the segment's tokens, as a training step's, clipped as the run was
trained (``clip_mode``, ``clip``). The rate is chosen on the validation split (``choose_rate``), never on the
split it is applied to. The caller's model is never changed: the updates are made on a copy, with dropout
off (eval mode) and gradients on.
"""

from __future__ import annotations

import copy
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rnnbench.data.batching import batchify, bptt_segments
from rnnbench.metrics import read_metrics
from rnnbench.training import optim
from rnnbench.training.clipping import clip_gradients_
from rnnbench.training.evaluate import Likelihood, stream_likelihood
from rnnbench.training.reading import detach_state

# The segment length of a run read as whole sentences (bptt 0), which has none of its own.
SENTENCE_RUN_BPTT = 35


@dataclass(frozen=True)
class Segments:
    """Each segment's summed NLL (float64) and its number of predicted tokens, in reading order."""

    nll: np.ndarray  # (S,)
    tokens: np.ndarray  # (S,)

    def likelihood(self) -> Likelihood:
        # Summed one after another, in float64, as rnnbench.training.evaluate.stream_likelihood sums: lr = 0 gives its total
        total = 0.0
        for value in self.nll:
            total += float(value)
        return Likelihood(total, int(self.tokens.sum()))


def dynamic_segments(model, stream: np.ndarray, *, lr: float, bptt: int, clip_mode: str, clip: float) -> Segments:
    """Score ``stream`` segment by segment under dynamic evaluation (the module docstring), on a copy of ``model``."""
    if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr >= 0):
        raise ValueError(f"dynamic evaluation's lr must be a finite number >= 0, got {lr!r}")
    if model.init_state(1) is None:
        raise ValueError(
            f"dynamic evaluation reads a stream with a recurrent state; family {model.cfg.family!r} has none "
            "(allowed: rnn, lstm)"
        )
    learner = copy.deepcopy(model)
    # Only the rows a segment's tokens used get a gradient, and only they are clipped and moved (rnnbench.training.optim).
    optim.sparse_embedding_gradients(learner)
    learner.eval()  # dropout off: the text is scored, and learnt, with the network the run evaluates
    for p in learner.parameters():
        p.requires_grad_(True)
        p.grad = None
    sgd = optim.SGD(learner.parameters(), lr=lr)
    data = batchify(stream, 1)  # (T, 1): the stream in order, one column
    state = learner.init_state(1)
    nll, tokens = [], []
    with torch.enable_grad():
        for inputs, targets in bptt_segments(data, bptt):  # (t, 1), (t, 1)
            mean, n, state = learner.nll(inputs, targets, state)  # scored with the weights before this segment
            nll.append(mean.detach().double() * n)
            tokens.append(n)
            sgd.zero_grad(set_to_none=True)
            mean.backward()
            clip_gradients_(learner.parameters(), clip_mode, clip)
            sgd.step()
            state = detach_state(state)
    return Segments(torch.stack(nll).numpy() if nll else np.zeros(0), np.asarray(tokens, dtype=np.int64))


def dynamic_likelihood(model, stream: np.ndarray, *, lr: float, bptt: int, clip_mode: str, clip: float) -> Likelihood:
    """The stream's likelihood under dynamic evaluation: its segments' NLLs, each scored before its update."""
    return dynamic_segments(model, stream, lr=lr, bptt=bptt, clip_mode=clip_mode, clip=clip).likelihood()


def choose_rate(
    model, valid: np.ndarray, rates: Sequence[float], *, bptt: int, clip_mode: str, clip: float
) -> tuple[float | None, list[dict[str, Any]]]:
    """(the rate of ``rates`` with the lowest validation NLL under dynamic evaluation, one row per rate).

    Each rate starts from the caller's weights. A rate whose NLL is not finite (the updates blew up) is never
    chosen; if none is finite the choice is None. Of two equal NLLs the first rate listed wins.
    """
    if not rates:
        raise ValueError("dynamic evaluation needs at least one learning rate to choose from")
    grid, best, best_nll = [], None, math.inf
    for lr in rates:
        started = time.perf_counter()
        likelihood = dynamic_likelihood(model, valid, lr=lr, bptt=bptt, clip_mode=clip_mode, clip=clip)
        grid.append(
            {
                "lr": float(lr),
                "valid_nll": likelihood.mean_nll,
                "valid_ppl": likelihood.perplexity,
                "seconds": time.perf_counter() - started,
            }
        )
        if math.isfinite(likelihood.mean_nll) and likelihood.mean_nll < best_nll:
            best, best_nll = float(lr), likelihood.mean_nll
    return best, grid


def segment_length(run_bptt: int, bptt: int | None) -> int:
    """The segment length: ``bptt`` if given, else the run's own, else (a run read as sentences) 35."""
    if bptt is not None:
        if not (isinstance(bptt, int) and bptt >= 1):
            raise ValueError(f"dynamic evaluation's bptt must be an integer >= 1, got {bptt!r}")
        return bptt
    return run_bptt if run_bptt >= 1 else SENTENCE_RUN_BPTT


def evaluate_run(
    run_dir: str | Path,
    *,
    rates: Sequence[float],
    bptt: int | None,
    valid_tokens: int | None,
    split: str = "test",
    data_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
) -> dict[str, Any]:
    """A trained run's ``split`` at batch 1, statically and under dynamic evaluation, as one record
    (rnnbench.results.dynamic_record names its fields; every record has them all).

    The run's model.pt and config.json are read from ``run_dir``, its corpus from ``data_dir``; the splits are
    cut to the run's ``eval_tokens``, as its own evaluation cuts them. Several ``rates``: the one with the best
    NLL on the first ``valid_tokens`` validation tokens (None: all) is applied; one rate: applied as given; none:
    static only. A run that diverged is recorded as diverged, with no perplexities.
    """
    from rnnbench.config.runs import RunConfig
    from rnnbench.data.corpora import load_corpus
    from rnnbench.decay.analysis import load_trained
    from rnnbench.training.reading import split_stream

    started = time.perf_counter()
    run_dir = Path(run_dir)
    if split not in ("valid", "test"):
        raise ValueError(f"split must be 'valid' or 'test', got {split!r}")
    if split == "valid" and len(rates) > 1:
        raise ValueError(
            "the rate is chosen on the validation split, so it cannot be applied to it: score split 'test', "
            "or give one rate"
        )
    saved = _read_json(run_dir / "config.json")
    saved.pop("run_id", None)  # written beside the settings, computed from them
    cfg = RunConfig.from_settings(saved, where=str(run_dir / "config.json"))
    if cfg.family not in ("rnn", "lstm"):
        raise ValueError(
            f"{run_dir}: dynamic evaluation needs a recurrent run (rnn or lstm), got family {cfg.family!r}"
        )
    length = segment_length(cfg.bptt, bptt)
    settings = {"bptt": length, "clip_mode": cfg.clip_mode, "clip": cfg.clip}
    record: dict[str, Any] = {
        "run_id": cfg.run_id,
        "split": split,
        **settings,
        "batch_size": 1,
        "rates": [float(r) for r in rates],
        "chosen_on": "valid" if len(rates) > 1 else "given" if rates else None,
        "valid_tokens": None,
        "valid_static_ppl": None,
        "grid": [],
        "lr": None,
        "tokens": None,
        "static_nll": None,
        "static_ppl": None,
        "dynamic_nll": None,
        "dynamic_ppl": None,
        "dynamic_seconds": None,
        "diverged": bool(read_metrics(run_dir / "metrics.json").get("diverged")),
    }
    if record["diverged"]:
        return {**record, "seconds": time.perf_counter() - started}
    model = load_trained(run_dir / "model.pt")
    corpus = load_corpus(cfg.corpus, data_dir=data_dir, cache_dir=cache_dir, **cfg.corpus_options)
    if len(rates) > 1:
        cut = cfg.eval_tokens if valid_tokens is None else min(valid_tokens, cfg.eval_tokens or valid_tokens)
        valid = split_stream(corpus, "valid", cut)
        valid_static = stream_likelihood(model, valid, batch_size=1, bptt=length)
        record["lr"], record["grid"] = choose_rate(model, valid, rates, **settings)
        record.update(valid_tokens=valid_static.n_tokens, valid_static_ppl=valid_static.perplexity)
    elif rates:
        record["lr"] = float(rates[0])
    stream = split_stream(corpus, split, cfg.eval_tokens)
    static = stream_likelihood(model, stream, batch_size=1, bptt=length)
    record.update(tokens=static.n_tokens, static_nll=static.mean_nll, static_ppl=static.perplexity)
    if record["lr"] is not None:
        applied = time.perf_counter()
        dynamic = dynamic_likelihood(model, stream, lr=record["lr"], **settings)
        record.update(
            dynamic_nll=dynamic.mean_nll, dynamic_ppl=dynamic.perplexity, dynamic_seconds=time.perf_counter() - applied
        )
    return {**record, "seconds": time.perf_counter() - started}


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; a run directory holds config.json, metrics.json and model.pt")
    return json.loads(path.read_text(encoding="utf-8"))
