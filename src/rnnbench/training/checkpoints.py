"""Resuming a run: the folder it trains into (another run's, or the user's own files, refused before anything in it
is touched), its training state, and the checkpoint written after every epoch and read back by a rerun, everything
needed to continue as if never interrupted, random generators included. One that cannot be read is set aside
(renamed ``checkpoint.pt.corrupt-<time>``, with a warning) and the run starts from scratch."""

from __future__ import annotations

import itertools
import json
import logging
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rnnbench.config.runs import RunConfig
from rnnbench.io import write_torch
from rnnbench.training.records import Divergence, StepRecord
from rnnbench.training.schedule import Schedule

log = logging.getLogger(__name__)


@dataclass
class TrainingState:
    """The loop's state from epoch to epoch: everything a checkpoint must hold to resume bit-for-bit (with the model
    and optimiser)."""

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


# What marks a folder as a run's even without its config.json (a workflow rerun deletes an interrupted job's
# declared outputs, config.json among them, and keeps these): a checkpoint (compared with the run's settings when
# it is read) and the weights snapshots.
RUN_MARKS = ("config.json", "checkpoint.pt", "snapshots")


def refuse_other_run(out: Path, cfg: RunConfig) -> None:
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


def save_checkpoint(path: Path, cfg, model, optimizer, schedule: Schedule, state: TrainingState, best_weights) -> None:
    """Everything the run needs to continue after the epoch just ended, random generators included."""
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


def load_checkpoint(path: Path, cfg: RunConfig):
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
