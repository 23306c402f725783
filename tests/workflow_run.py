"""Running the workflow's Snakemake from the tests: the command, the jobs a dry run plans, a tiny extra config over
the smoke one, and the outputs a config declares (tests/test_workflow.py, tests/test_workflow_builds.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def snakemake(
    *args: str, configfiles: list[str] = (), cwd: Path = REPO, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run snakemake (in the repository by default); configfiles go last (the option takes every argument
    after it); ``env`` adds to the environment."""
    command = [SNAKEMAKE, *args]
    if configfiles:
        command += ["--configfile", *configfiles]
    environment = {**os.environ, **env} if env else None
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, env=environment, check=False)


def jobs_by_rule(dry_run_output: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run: rule -> number of jobs."""
    lines = dry_run_output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Job stats")) + 3
    counts = {}
    for line in lines[start:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    return counts


def tiny_extra_config(tmp_path: Path, **sections) -> tuple[Path, list[str]]:
    """An extra config over the smoke one: results and cache under tmp_path, runs of 5 steps, plus ``sections``
    (studies, analyses, ...). Returns the results folder and the config files to pass."""
    results = tmp_path / "results"
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        yaml.safe_dump(
            {
                "results_dir": str(results),
                "cache_dir": str(tmp_path / "cache"),
                "run_overrides": {"max_steps_per_epoch": 5, "train_tokens": 5000, "eval_tokens": 2000},
                **sections,
            }
        )
    )
    return results, ["config/smoke.yaml", str(extra)]


def declared_outputs(dry_run_output: str) -> set[str]:
    """Every output and benchmark file of the jobs a dry run lists."""
    files = set()
    for line in dry_run_output.splitlines():
        kind, _, listed = line.strip().partition(": ")
        if kind in ("output", "benchmark"):
            files |= set(listed.split(", "))
    return files


def expected(configs: list[str]) -> list[str]:
    from rnnbench.config.files import merge_config_files
    from rnnbench.config.settings import load_config
    from rnnbench.paths import expected_outputs
    from rnnbench.worked import TABLES

    return expected_outputs(load_config(merge_config_files([REPO / "config" / "config.yaml", *configs])), list(TABLES))
