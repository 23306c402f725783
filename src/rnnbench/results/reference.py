"""Reference results: the paper-scale runs, too expensive to rebuild on every laptop, kept in the repository.

    reference/
      README.md                 the command, the commit and the CPU time that produced them
      runs.csv                  one row per run: study, seed, perplexities, epochs, CPU seconds, commit
      runs/<run_id>/            a run's small outputs, as training wrote them: config.json, epochs.csv,
                                metrics.json, dynamic.json (where it was also scored under dynamic
                                evaluation), and provenance.json (study, config files, commit, command,
                                package versions, CPU seconds, and the study whose recipe it changes where it
                                departs from one); never weights or checkpoints

Like a paper's published table, they are results from one commit; unlike it, they can be checked. A run is
**stale** when its id is no longer the one its study gives it: either the config files that define the study
now resolve it to other settings, or the code that turns settings into a run id changed (its config.json
gives another id). `stale_runs` says which and why; the book marks those rows and tests/test_reference.py
fails until they are trained again (`rnnbench reference collect`) or removed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench.io import write_csv, write_json

RUN_FILES = ("config.json", "epochs.csv", "metrics.json")  # copied as training wrote them
DYNAMIC_FILE = (
    "dynamic.json"  # copied too where the run was scored under dynamic evaluation (rnnbench.training.dynamic)
)
MANIFEST = "runs.csv"
MANIFEST_COLUMNS = (
    "run_id",
    "study",
    "corpus",
    "family",
    "seed",
    "test_ppl",
    "valid_ppl",
    "epochs",
    "max_epochs",
    "cpu_seconds",
    "cpu_measured_by",
    "commit",
)


@dataclass(frozen=True)
class ReferenceRun:
    run_id: str
    study: str
    config: dict[str, Any]  # config.json
    metrics: dict[str, Any]  # metrics.json
    epochs: pd.DataFrame  # epochs.csv
    provenance: dict[str, Any]  # provenance.json
    folder: Path
    dynamic: dict[str, Any] | None = None  # dynamic.json, when the run was also scored under dynamic evaluation


def run_folder(reference_dir: str | Path, run_id: str) -> Path:
    return Path(reference_dir) / "runs" / run_id


def read_reference(reference_dir: str | Path) -> list[ReferenceRun]:
    """Every run under ``reference_dir`` (none when the folder or its runs/ is absent), in run-id order."""
    runs_dir = Path(reference_dir) / "runs"
    if not runs_dir.is_dir():
        return []
    runs = []
    for folder in sorted(p for p in runs_dir.iterdir() if p.is_dir()):
        missing = [name for name in (*RUN_FILES, "provenance.json") if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(
                f"{folder}: reference run without {', '.join(missing)}; collect it again "
                f"(rnnbench reference collect) or remove the folder"
            )
        provenance = _read_json(folder / "provenance.json")
        runs.append(
            ReferenceRun(
                run_id=folder.name,
                study=provenance["study"],
                config=_read_json(folder / "config.json"),
                metrics=_read_json(folder / "metrics.json"),
                epochs=pd.read_csv(folder / "epochs.csv"),
                provenance=provenance,
                folder=folder,
                dynamic=_read_json(folder / DYNAMIC_FILE) if (folder / DYNAMIC_FILE).is_file() else None,
            )
        )
    return runs


def reference_files(reference_dir: str | Path) -> list[str]:
    """The files the book's tables read from ``reference_dir`` (inputs of the comparison rule)."""
    runs_dir = Path(reference_dir) / "runs"
    if not runs_dir.is_dir():
        return []
    return sorted(str(p) for p in runs_dir.glob("*/*") if p.name in (*RUN_FILES, DYNAMIC_FILE, "provenance.json"))


def stale_runs(runs: Sequence[ReferenceRun], repository: str | Path) -> dict[str, str]:
    """run id -> why it is stale, for each run whose id its study in the repository's config files no
    longer gives (``repository``: the checkout whose config/ the runs' provenance names)."""
    from rnnbench.config.files import ConfigError, merge_config_files
    from rnnbench.config.runs import RunConfig
    from rnnbench.config.settings import load_config

    stale: dict[str, str] = {}
    ids_of: dict[tuple[str, ...], Any] = {}
    for run in runs:
        settings = {k: v for k, v in run.config.items() if k != "run_id"}
        try:
            now = RunConfig.from_settings(settings).run_id
        except ConfigError as err:
            stale[run.run_id] = f"its config.json no longer validates ({err})"
            continue
        if now != run.run_id:
            stale[run.run_id] = f"its settings now give run id {now} (the code that defines run ids changed)"
            continue
        files = tuple(run.provenance["config_files"])
        if files not in ids_of:
            try:
                ids_of[files] = load_config(merge_config_files([Path(repository) / f for f in files]))
            except (ConfigError, OSError) as err:
                ids_of[files] = err
        config = ids_of[files]
        if isinstance(config, Exception):
            stale[run.run_id] = f"its config files ({', '.join(files)}) no longer load: {config}"
        elif run.study not in config.studies:
            stale[run.run_id] = f"study {run.study} is no longer in {', '.join(files)}"
        elif run.run_id not in {cfg.run_id for _, cfg in config.study_runs(run.study)}:
            stale[run.run_id] = f"study {run.study} of {', '.join(files)} now gives other settings (another run id)"
    return stale


def reference_records(runs: Sequence[ReferenceRun], repository: str | Path) -> list[dict[str, Any]]:
    """Each reference run as a record of the comparison (rnnbench.results.runs.our_runs reads it): at scale
    "reference", its folder named inside ``repository``, why it is stale (`stale_runs`; "" when it is not), and the
    commit, CPU seconds, corpus split, dynamic-evaluation record and the study whose recipe it changes
    (``departs_from``, None for most) it was kept with."""
    stale = stale_runs(runs, repository)
    return [
        {
            "config": run.config,
            "metrics": run.metrics,
            "scale": "reference",
            "studies": [run.study],
            "source": os.path.relpath(run.folder, repository),
            "stale": stale.get(run.run_id, ""),
            "commit": run.provenance.get("commit", ""),
            "cpu_seconds": run.provenance.get("cpu_seconds"),
            "corpus_stats": run.provenance.get("corpus"),
            "dynamic": run.dynamic,
            "departs_from": run.provenance.get("departs_from"),
        }
        for run in runs
    ]


def cpu_seconds(metrics: dict, epochs: pd.DataFrame, benchmark: pd.DataFrame | None) -> tuple[float, str]:
    """(seconds, how they were measured) of a run's CPU time.

    "run": the run's own count (metrics.json ``cpu_seconds``), over every call that trained it, resumed or not.
    Runs trained before the runs counted their own: "job", Snakemake's record of the training job, whose wall
    time covers every epoch (the run was never resumed), so its CPU time is the whole run's, validation and test
    included, short of what its last 30-second sample missed; "epochs (wall)": the run was resumed across jobs,
    so no record covers it all; its epochs' training seconds are wall time, an upper bound of one thread's CPU
    time (equal on an idle core, larger on a busy machine)."""
    if metrics.get("cpu_seconds") is not None:
        return float(metrics["cpu_seconds"]), "run"
    trained = float(epochs["seconds"].sum()) if "seconds" in epochs else math.nan
    if (
        benchmark is not None
        and len(benchmark)
        and {"s", "cpu_time"} <= set(benchmark)
        and float(benchmark["s"].iloc[-1]) >= trained
    ):
        return float(benchmark["cpu_time"].iloc[-1]), "job"
    return trained, "epochs (wall)"


def collect(
    results: str | Path,
    config_files: Sequence[str],
    reference_dir: str | Path,
    *,
    repository: str | Path,
    command: str,
    commit: str,
    packages: Mapping[str, str],
) -> list[str]:
    """Copy the small outputs of every finished run of the comparison studies of ``config_files`` (merged in
    that order, paths relative to ``repository``) from ``results`` into ``reference_dir``; rewrite the manifest.
    Returns the run ids collected. A run not finished yet is skipped (and named in the log)."""
    import logging

    from rnnbench import paths
    from rnnbench.config.files import merge_config_files
    from rnnbench.config.settings import load_config

    log = logging.getLogger("rnnbench.results.reference")
    config = load_config(merge_config_files([Path(repository) / f for f in config_files]))
    collected = []
    for study in config.comparison.study_names():
        for _, cfg in config.study_runs(study):
            source = Path(paths.run_dir(str(results), cfg.run_id))
            if not (source / "metrics.json").is_file():
                log.info("%s (%s) has not finished: not collected", cfg.run_id, study)
                continue
            target = run_folder(reference_dir, cfg.run_id)
            target.mkdir(parents=True, exist_ok=True)
            for name in RUN_FILES:
                shutil.copyfile(source / name, target / name)
            if (source / DYNAMIC_FILE).is_file():
                shutil.copyfile(source / DYNAMIC_FILE, target / DYNAMIC_FILE)
            benchmark_path = Path(paths.train_benchmark(str(results), cfg.run_id))
            benchmark = pd.read_csv(benchmark_path, sep="\t") if benchmark_path.is_file() else None
            epochs = pd.read_csv(source / "epochs.csv")
            corpus_stats = Path(paths.corpus_stats(str(results), cfg.corpus_key))
            write_json(
                target / "provenance.json",
                {
                    "run_id": cfg.run_id,
                    "study": study,
                    "config_files": list(config_files),
                    "commit": commit,
                    "command": command,
                    "packages": dict(packages),
                    **dict(
                        zip(
                            ("cpu_seconds", "cpu_measured_by"),
                            cpu_seconds(_read_json(source / "metrics.json"), epochs, benchmark),
                            strict=True,
                        )
                    ),
                    "threads": cfg.threads,
                    # The split and vocabulary it was measured on, for the comparison with a paper's.
                    "corpus": _read_json(corpus_stats) if corpus_stats.is_file() else None,
                    # A recipe carried beyond another study's: the comparison lists the settings that differ.
                    **({"departs_from": base} if (base := config.studies[study].departs_from) else {}),
                },
            )
            collected.append(cfg.run_id)
    write_manifest(reference_dir)
    return collected


def manifest(runs: Sequence[ReferenceRun]) -> pd.DataFrame:
    rows = [
        {
            "run_id": run.run_id,
            "study": run.study,
            "corpus": run.config["corpus"],
            "family": run.config["family"],
            "seed": run.config["seed"],
            "test_ppl": run.metrics.get("test_ppl"),
            "valid_ppl": run.metrics.get("valid_ppl"),
            "epochs": run.metrics.get("epochs"),
            "max_epochs": run.config["max_epochs"],
            "cpu_seconds": run.provenance.get("cpu_seconds"),
            "cpu_measured_by": run.provenance.get("cpu_measured_by"),
            "commit": run.provenance.get("commit"),
        }
        for run in runs
    ]
    return pd.DataFrame(rows, columns=list(MANIFEST_COLUMNS))


def write_manifest(reference_dir: str | Path) -> None:
    write_csv(Path(reference_dir) / MANIFEST, manifest(read_reference(reference_dir)))


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))
