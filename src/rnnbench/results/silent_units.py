"""Hidden units that pass no gradient, counted in trained recurrent networks: the chapter's "a unit whose input
is always negative stops passing any gradient at all".

Backward through a unit multiplies by its activation's derivative f'(a_t), so a unit whose derivative is exactly
zero at every step of a text passes no gradient anywhere on it, to its incoming weights or to earlier steps: it is
silent. The derivative is read off the unit's output h_t = f(a_t), in the network's own float32:

    tanh     f' = 1 - h^2          zero only where tanh has rounded to +-1 (|a| above about 9)
    sigmoid  f' = h (1 - h)        zero only where the sigmoid has rounded to 0 or 1
    relu     f' = [h > 0]          zero wherever a <= 0: a silent ReLU unit is a dead one

    silent_units          a model's units over a split, read as the model was trained to read it: which of them
                          pass no gradient at any step
    silent_units_by_run   a study's: each run's model.pt over its corpus's validation split, read from their files
    unit_table            a study's: per run, its units, how many are silent on the validation split, and that
                          share
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from rnnbench.data.batching import IGNORE_INDEX
from rnnbench.data.corpora import load_corpus
from rnnbench.decay.analysis import load_run
from rnnbench.training.reading import Batch, reading_for

log = logging.getLogger(__name__)

UNIT_COLUMNS = ("units", "silent_units", "silent_fraction", "positions")


def derivative_from_output(h: torch.Tensor, activation: str) -> torch.Tensor:
    """f'(a) from h = f(a), elementwise (see the module docstring)."""
    if activation == "tanh":
        return 1 - h * h
    if activation == "sigmoid":
        return h * (1 - h)
    if activation == "relu":
        return (h > 0).to(h.dtype)
    raise ValueError(f"no derivative for activation {activation!r}; known: tanh, sigmoid, relu")


@torch.no_grad()
def silent_units(model, batches: Iterable[Batch], *, carry_state: bool) -> tuple[np.ndarray, int]:
    """(mask of the model's hidden units whose derivative is zero at every step of ``batches``, steps read).

    The batches are read as evaluation reads them (rnnbench.training.reading's ``eval_batches``): each from a zero state, or,
    with ``carry_state``, from the state the last one ended in; dropout off. A padded step (an IGNORE_INDEX target,
    after a sentence has ended) is no step of the text and is not counted."""
    model.eval()
    activation = model.cfg.activation
    passes = torch.zeros(model.cfg.hidden, dtype=torch.bool)  # (H,) any step with f' != 0
    positions, state = 0, None
    for batch in batches:
        start = state if carry_state and state is not None else model.init_state(batch.inputs.shape[1])
        h, state = model.recur(model.embedding(batch.inputs), start)  # (t, B, H)
        real = batch.targets != IGNORE_INDEX  # (t, B)
        passes |= (derivative_from_output(h[real], activation) != 0).any(dim=0)
        positions += int(real.sum())
    return (~passes).numpy(), positions


def silent_units_by_run(
    runs: pd.DataFrame, model_files: Mapping[str, str], *, data_dir: str | None, cache_dir: str | None
) -> dict[str, tuple[np.ndarray, int]]:
    """run_id -> `silent_units` of its model.pt (the best epoch's weights) over its corpus's validation split, read
    as its evaluation reads it (rnnbench.training.reading), for every run of ``runs`` that did not diverge."""
    torch.set_num_threads(1)  # a table job: one core, as the rule declares
    corpora, found = {}, {}
    for run_id in runs.loc[~runs["diverged"], "run_id"]:
        cfg, model = load_run(model_files[run_id])
        if cfg.corpus_key not in corpora:
            corpora[cfg.corpus_key] = load_corpus(
                cfg.corpus, data_dir=data_dir, cache_dir=cache_dir, **cfg.corpus_options
            )
        reading = reading_for(cfg, corpora[cfg.corpus_key])
        found[run_id] = silent_units(model, reading.eval_batches("valid"), carry_state=reading.carries_state)
        log.info("%s: %d of %d units silent", run_id, int(found[run_id][0].sum()), found[run_id][0].size)
    return found


def unit_table(runs: pd.DataFrame, silent: Mapping[str, tuple[np.ndarray, int]], vary: Sequence[str]) -> pd.DataFrame:
    """One row per run of ``runs``: run_id, <vary...>, seed, units, silent_units, silent_fraction, positions, outcome,
    diverged. A run measured in ``silent`` (run id -> `silent_units`' mask and positions) has its counts; one that is
    not (a run that diverged has no weights worth reading) keeps its row, its counts empty, so that the table still
    says how many runs each setting had."""
    rows = []
    for run in runs.itertuples(index=False):
        keys = {k: getattr(run, k) for k in [*vary, "seed"]}
        if run.run_id not in silent:
            rows.append({"run_id": run.run_id, **keys, "outcome": run.outcome, "diverged": run.diverged})
            continue
        mask, positions = silent[run.run_id]
        rows.append(
            {
                "run_id": run.run_id,
                **keys,
                "units": int(mask.size),
                "silent_units": int(mask.sum()),
                "silent_fraction": float(mask.mean()) if mask.size else float("nan"),
                "positions": int(positions),
                "outcome": run.outcome,
                "diverged": run.diverged,
            }
        )
    table = pd.DataFrame(rows, columns=["run_id", *vary, "seed", *UNIT_COLUMNS, "outcome", "diverged"])
    # counts stay whole numbers beside the empty ones of diverged runs
    return table.astype({"units": "Int64", "silent_units": "Int64", "positions": "Int64"})
