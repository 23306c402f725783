"""Our runs, read from their folders: one record per run, and one row per run with its settings, status,
perplexity, size and time.

A record is plain data: ``{"config": <config.json>, "metrics": <metrics.json>, "scale": "paper" | "short"}``, as
`read_run` returns, optionally with its ``"source"`` folder and the ``"studies"`` it serves (`run_records`; a
reference run's, rnnbench.results.reference.reference_records, carries more). Every number in the rows is a copy
of an input or computed from inputs; none is typed here.

    read_run(run_dir, scale)               one finished run folder's record
    run_records(results, runs, scale)      the records of a results folder's runs, each with the studies it serves
    our_runs(records)                      one row per run: settings, status, perplexity, size, time
    with_job_times(ours, benchmarks)       each run's training job's wall time and the run's CPU time beside it

A run's ``scale``: short (the default config's few epochs), paper (a paper config's runs, trained here) or
reference (paper-scale runs kept in the repository, rnnbench.results.reference). Its ``status`` says whether its
perplexity can stand beside a published one (rnnbench.results.beside_published):
    converged   its schedule (Mikolov's, or plateau) stopped it before its epoch cap (validation stopped improving)
    epoch cap   it ran its full max_epochs, or its max_steps: a short run, or one a cap cut off before convergence
                (a run trained on a slice of the training split is a short run too; its description says so)
    subset      it was evaluated on part of the test split (smoke runs): no ratio to a published number,
                though it compares with our other runs of the same config (the same slice)
    diverged    no perplexity
    stuck column  its test perplexity is one evaluation column's doing (rnnbench.training.stuck_columns): shown, never compared
    stale       a reference run whose id the current config and code no longer give (rnnbench.results.reference):
                shown, never set against a published number
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench import paths
from rnnbench.metrics import FAMILY_NAMES, read_metrics
from rnnbench.results.dynamic_record import dynamic_metrics
from rnnbench.training.stuck_columns import stuck

SCALES = ("reference", "paper", "short")
STATUSES = ("converged", "epoch cap", "subset", "diverged", "stuck column", "stale")
# Runs whose perplexities compare with each other (one config evaluates all its runs on the same tokens).
MEASURED = ("converged", "epoch cap", "subset")

OUR_COLUMNS = (
    "run_id",
    "scale",
    "status",
    "family",
    "corpus",
    "description",
    "setting",
    "embed_dim",
    "hidden",
    "context",
    "direct",
    "dropout",
    "output",
    "optimizer",
    "epochs",
    "max_epochs",
    "parameters",
    "train_seconds",
    "tokens_per_second",
    "test_ppl",
    "valid_ppl",
    "source",
    "studies",
    "job_wall_seconds",
    "job_cpu_seconds",
    "seed",
    "commit",
    "stale_reason",
)


def read_run(run_dir: str | Path, scale: str) -> dict[str, Any]:
    """The record of one finished run directory (its config.json and metrics.json) at the given scale."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    run_dir = Path(run_dir)
    record: dict[str, Any] = {"scale": scale, "source": run_dir.as_posix()}
    for name in ("config", "metrics"):
        path = run_dir / f"{name}.json"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: {run_dir} is not a finished run (train it first)")
        record[name] = read_metrics(path) if name == "metrics" else json.loads(path.read_text(encoding="utf-8"))
    return record


def run_records(
    results: str | Path,
    runs: Mapping[str, Sequence[str]],
    scale: str,
    departs_from: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The record of each run of ``runs`` (run id -> the studies it serves), its folder under ``results``, at
    ``scale``: `read_run`'s, with the studies, its dynamic-evaluation record if it has one
    (rnnbench.results.dynamic_record), its source folder named inside ``results``, and the study whose recipe its
    own changes (``departs_from``: study -> that study, for the studies that name one)."""
    # A run's source is named inside the results folder, so the tables of two folders built from one config
    # (a local and a cluster build) are equal.
    return [
        {
            **read_run(paths.run_dir(results, run_id), scale),
            "studies": list(studies),
            "source": os.path.relpath(paths.run_dir(results, run_id), results),
            "dynamic": dynamic_metrics(results, run_id),
            "departs_from": next((departs_from[s] for s in studies if s in (departs_from or {})), None),
        }
        for run_id, studies in runs.items()
    ]


def run_status(config: Mapping[str, Any], metrics: Mapping[str, Any], stale: str = "") -> str:
    """One of STATUSES (see the module docstring); ``stale``: why a reference run is stale, if it is."""
    if stale:
        return "stale"
    if metrics.get("diverged"):
        return "diverged"
    if stuck(metrics.get("test_column_worst"), metrics.get("test_column_median")):
        return "stuck column"
    if config.get("eval_tokens") is not None:
        return "subset"
    capped = config.get("max_steps") is not None and metrics["steps"] >= config["max_steps"]  # its step budget spent
    stopping = config.get("schedule") in ("mikolov", "plateau")  # the schedules that stop a run on validation
    if stopping and metrics["epochs"] < config["max_epochs"] and not capped:
        return "converged"
    return "epoch cap"


def setting_key(config: Mapping[str, Any]) -> str:
    """The seeds of one model share this: its run's settings (config.json) hashed without the seed, like a run id."""
    shared = {k: v for k, v in config.items() if k not in ("run_id", "seed")}
    digest = hashlib.sha1(json.dumps(shared, sort_keys=True).encode()).hexdigest()[:10]
    return f"{config['family']}-{config['corpus']}-{digest}"


OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam"}  # as the papers write them


def describe(config: Mapping[str, Any]) -> str:
    """The model in a few words, from its settings."""
    family = config["family"]
    parts = [FAMILY_NAMES.get(family, family)]
    if family == "ff":
        parts.append(f"n - 1 = {config['context']}")
    parts += [f"H = {config['hidden']}", f"d = {config['embed_dim']}"]
    if family == "ff" and config.get("direct"):
        parts.append("direct connections")
    if config.get("tie_weights"):
        parts.append("tied embeddings")
    if config.get("dropout"):
        shared = " (one mask a sequence)" if config.get("dropout_mask") == "sequence" else ""
        parts.append(f"dropout {config['dropout']:g}{shared}")
    if config.get("recurrent_dropout"):
        parts.append(f"dropout {config['recurrent_dropout']:g} on U")
    if config.get("weight_decay"):
        parts.append(f"weight decay {config['weight_decay']:g}")
    optimizer = OPTIMIZER_NAMES.get(config["optimizer"], config["optimizer"])
    parts.append(f"{config['output']} softmax, {optimizer}, seed {config['seed']}")
    if config.get("train_tokens") is not None:
        parts.append(f"first {config['train_tokens']:,} training tokens")
    if config.get("max_steps_per_epoch") is not None:
        parts.append(f"at most {config['max_steps_per_epoch']:,} steps an epoch")
    if config.get("eval_tokens") is not None:
        parts.append(f"evaluated on the first {config['eval_tokens']:,} test tokens")
    return ", ".join(parts)


def our_runs(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per run record (see `read_run`), columns OUR_COLUMNS, then its corpus_stats, config, dynamic record
    and the study whose recipe it changes (departs_from)."""
    rows = []
    for record in records:
        config, metrics, scale = record["config"], record["metrics"], record["scale"]
        if scale not in SCALES:
            raise ValueError(f"run {config.get('run_id')!r}: scale must be one of {SCALES}, got {scale!r}")
        for key in ("test_ppl", "epochs", "parameters"):
            if key not in metrics:
                raise ValueError(f"run {config.get('run_id')!r}: metrics.json has no {key!r}")
        ff = config["family"] == "ff"
        rows.append(
            {
                "run_id": config["run_id"],
                "scale": scale,
                "status": run_status(config, metrics, record.get("stale", "")),
                "family": config["family"],
                "corpus": config["corpus"],
                "description": describe(config),
                "setting": setting_key(config),  # what the seeds of one model share
                "embed_dim": config["embed_dim"],
                "hidden": config["hidden"],
                "context": config["context"] if ff else None,  # the recurrent families read no window
                "direct": bool(config.get("direct")) if ff else False,
                "dropout": config.get("dropout", 0.0),
                "output": config["output"],
                "optimizer": config["optimizer"],
                "epochs": metrics["epochs"],
                "max_epochs": config["max_epochs"],
                "parameters": metrics["parameters"],
                "train_seconds": metrics.get("train_seconds"),
                "tokens_per_second": metrics.get("tokens_per_second"),
                "test_ppl": float_or_nan(metrics.get("test_ppl")),
                "valid_ppl": float_or_nan(metrics.get("valid_ppl")),
                "source": record.get("source", ""),
                "studies": ", ".join(record.get("studies", ())),
                "job_wall_seconds": math.nan,  # with_job_times fills these in
                "job_cpu_seconds": record.get("cpu_seconds", math.nan),
                "seed": config["seed"],
                "commit": record.get("commit", ""),
                "stale_reason": record.get("stale", ""),
                "corpus_stats": record.get("corpus_stats"),  # a reference run's own split, when it has one
                "config": config,  # its settings (config.json): the recipe set beside a paper's
                "dynamic": record.get(
                    "dynamic"
                ),  # its dynamic-evaluation record (rnnbench.results.dynamic_record), if any
                "departs_from": record.get("departs_from"),  # the study whose recipe this run's changes, if any
            }
        )
    table = pd.DataFrame(rows, columns=[*OUR_COLUMNS, "corpus_stats", "config", "dynamic", "departs_from"])
    table["context"] = table["context"].astype("Int64")
    return table


def with_job_times(ours: pd.DataFrame, benchmarks: pd.DataFrame) -> pd.DataFrame:
    """``ours`` with each run's training job's wall seconds and the run's CPU seconds from the benchmark table
    (rnnbench.results.summary.benchmark_table: rule, run_id, wall_seconds, cpu_seconds; the last repeat counts).
    A run without a record keeps what it had (a reference run its recorded CPU time), else NaN: its time is
    unknown, not zero."""
    jobs = benchmarks[benchmarks["rule"] == "train"].drop_duplicates("run_id", keep="last").set_index("run_id")
    out = ours.copy()
    out["job_wall_seconds"] = out["run_id"].map(jobs["wall_seconds"]).astype(float)
    out["job_cpu_seconds"] = out["run_id"].map(jobs["cpu_seconds"]).astype(float).fillna(out["job_cpu_seconds"])
    return out


def float_or_nan(value: Any) -> float:
    """A recorded number as a float; NaN where none was recorded (None)."""
    return float(value) if value is not None else math.nan
