"""One point of a decay analysis: a network and a corpus split in, the tidy curves and rates tables out.

A network source is either an untrained spec (a mapping of `untrained_rnn` settings: radius, activation,
hidden, embed_dim, seed; or family "lstm" and `untrained_lstm`'s hidden, embed_dim, seed) or the path of a
trained model file holding {"config": the run's settings, "state_dict": ...}: a run's model.pt, or a snapshot a training run kept at some epoch. The caller names the
point with `keys` (e.g. radius and seed, or run id and epoch); they become the tables' first columns.

    curves   keys, direction (backward | forward), method (one_pass | jvp | finite), quantity (h, x, c,
             log_probs), distance, then the spread over sequences: mean, geo_mean, median, q10, q90, min, max, count
    rates    keys, direction, method, quantity, the fitted rate and its range, the predicted rates
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd
import torch

from rnnbench.decay.measure import backward_decay, check_recurrent, forward_decay, summarise
from rnnbench.decay.networks import sequences, untrained_lstm, untrained_rnn
from rnnbench.decay.rates import forward_rates, rates
from rnnbench.models import ModelConfig, RecurrentLM, build_model

UNTRAINED_SETTINGS = ("family", "radius", "activation", "hidden", "embed_dim", "seed")
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def load_trained(path: str | os.PathLike) -> RecurrentLM:
    """A recurrent LM from a run's model file ({"config": run settings, "state_dict"}), in eval mode."""
    return load_run(path)[1]


def load_run(path: str | os.PathLike):
    """(the run's settings as a RunConfig, its recurrent LM in eval mode) from its model file, read once."""
    from rnnbench.config.runs import RunConfig  # imported here: the measurement itself never needs the run schema

    data = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or not {"config", "state_dict"} <= set(data):
        raise ValueError(f"{path}: expected a dict with 'config' and 'state_dict' (a run's model file)")
    cfg = RunConfig.from_settings(data["config"], where=str(path))
    if cfg.family not in ("rnn", "lstm"):
        raise ValueError(f"{path}: gradient decay needs a recurrent model (rnn or lstm), got family {cfg.family!r}")
    vocab_size = int(data["state_dict"]["embedding.weight"].shape[0])
    model = build_model(ModelConfig.from_run(cfg, vocab_size))
    model.load_state_dict(data["state_dict"])
    return cfg, model.eval()


def network(source: Mapping[str, Any] | str | os.PathLike, vocab_size: int, dtype: torch.dtype) -> RecurrentLM:
    """The model a source names (see the module docstring), in `dtype`."""
    if isinstance(source, Mapping):
        unknown = sorted(set(source) - set(UNTRAINED_SETTINGS))
        if unknown:
            raise ValueError(f"unknown untrained-network settings {unknown}; allowed: {list(UNTRAINED_SETTINGS)}")
        settings = {k: v for k, v in source.items() if k != "family"}
        if source.get("family", "rnn") == "lstm":
            if settings.pop("radius", None) is not None:
                raise ValueError(
                    "an untrained LSTM has four gates' U: no one spectral radius to set; leave 'radius' out"
                )
            settings.pop("activation", None)  # the LSTM's gates have their own
            return untrained_lstm(vocab_size=vocab_size, dtype=dtype, **settings)
        if settings.get("radius") is None:
            raise ValueError("an untrained Elman network needs a spectral radius: the setting 'radius'")
        return untrained_rnn(vocab_size=vocab_size, dtype=dtype, **settings)
    model = load_trained(source).to(dtype)
    if model.cfg.vocab_size != vocab_size:
        raise ValueError(
            f"{source}: the model reads {model.cfg.vocab_size} words but the corpus has {vocab_size}: "
            "measure it on the corpus it was trained on"
        )
    return model


def analyse(
    model: RecurrentLM,
    tokens: torch.Tensor,
    *,
    keys: Mapping[str, Any] | None = None,
    fit: tuple[int, int] | None = None,
    eps: float = 1e-6,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Backward and forward decay of `model` on `tokens` (T + 1, N): (curves, rates), each prefixed by `keys`."""
    check_recurrent(model)
    backward = backward_decay(model, tokens)
    forward = forward_decay(model, tokens, eps=eps, seed=seed)
    curves = pd.concat(
        [
            summarise(backward).assign(direction="backward", method="one_pass"),
            summarise(forward, value="jvp").assign(direction="forward", method="jvp"),
            summarise(forward, value="finite").assign(direction="forward", method="finite"),
        ],
        ignore_index=True,
    )
    table = pd.concat(
        [
            rates(model, tokens, backward, fit=fit).assign(direction="backward", method="one_pass"),
            forward_rates(model, tokens, forward, fit=fit).assign(direction="forward"),
        ],
        ignore_index=True,
    )
    return _keyed(curves, keys), _keyed(table, keys)


def _keyed(table: pd.DataFrame, keys: Mapping[str, Any] | None) -> pd.DataFrame:
    first = ["direction", "method", "quantity"]
    table = table[first + [c for c in table.columns if c not in first]]
    for position, (name, value) in enumerate((keys or {}).items()):
        table.insert(position, name, value)
    return table


def decay_point(
    source: Mapping[str, Any] | str | os.PathLike,
    ids,
    vocab_size: int,
    *,
    steps: int,
    count: int,
    keys: Mapping[str, Any] | None = None,
    seed: int = 0,
    dtype: str = "float64",
    fit: tuple[int, int] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The curves and rates of one network on `count` windows of `steps` + 1 tokens of a split's ids.

    `seed` picks the windows and the forward direction (the untrained network has its own seed in `source`).
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)}, got {dtype!r}")
    model = network(source, vocab_size, DTYPES[dtype])
    tokens = sequences(ids, steps, count, seed=seed)
    return analyse(model, tokens, keys=keys, fit=fit, seed=seed)
