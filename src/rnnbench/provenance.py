"""Provenance records: what made a table or a figure, written as a small JSON beside it.

A record names the configuration (its hash and the files it came from), the git commit of the
workflow's checkout, the versions of the packages that computed it, and the command and function that
wrote it, so any number in the report can be traced back and regenerated. It says how an output was
made, not what it is about: a study's description and metric are in its study.json. A figure's record also
says how many points it draws (rnnbench.plots.drawn), so that the book can refuse one that shows too little.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from rnnbench.io import write_json

# The config files of a workflow run, in merge order, as JSON: the Snakefile sets it when it is parsed (again in
# each cluster job, which parses it again), and every job script inherits it. Config files, command and checkout
# describe how a job was run, not what it computes, so they reach the job here and not as rule params, where a
# new file on the command line or a checkout in another folder would rerun every job.
CONFIG_FILES_VARIABLE = "RNNBENCH_CONFIG_FILES"

PACKAGES = ("rnnbench", "torch", "numpy", "pandas", "seaborn", "matplotlib", "snakemake")


def config_hash(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def git_commit(checkout: str | Path, *, ignore: Sequence[str] = ()) -> str:
    """The commit checked out in ``checkout``, with ``+dirty`` when tracked files have uncommitted changes.

    ``checkout`` is the workflow's own folder (Snakemake's ``workflow.basedir``), not the working
    directory: ``snakemake -s <checkout>/Snakefile --directory <elsewhere>`` still records the code's commit.
    """
    cwd = Path(checkout)
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        excluded = [f":(exclude){path}" for path in ignore]  # e.g. the folder being written
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", *excluded],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return commit + ("+dirty" if dirty else "")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def record(
    *,
    config: Mapping[str, Any],
    config_files: Sequence[str],
    command: str,
    checkout: str | Path,
    producer: str,
    inputs: Sequence[str] = (),
    drawn: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance fields of one output: ``config`` is the merged configuration the job ran with,
    ``checkout`` the folder of the workflow's code, ``producer`` the function that computed the output;
    ``drawn``, of a figure, the points it draws (rnnbench.plots.drawn.drawn_points)."""
    fields = {
        "config_hash": config_hash(config),
        "config_files": list(config_files),
        "git_commit": git_commit(checkout),
        "packages": package_versions(),
        "command": command,
        "producer": producer,
        "inputs": list(inputs),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return fields | ({"drawn": dict(drawn)} if drawn is not None else {})


def share_config_files(files: Sequence[str]) -> None:
    """Make the workflow's config files known to every job it starts (``CONFIG_FILES_VARIABLE``)."""
    os.environ[CONFIG_FILES_VARIABLE] = json.dumps(list(files))


def checkout_of(scriptdir: str | Path) -> str:
    """The checkout of a workflow job: the folder above its script folder (``workflow/scripts``), wherever the
    working directory is (``--directory`` may point elsewhere)."""
    return str(Path(scriptdir).resolve().parents[1])


def job_fields(config: Mapping[str, Any], rule: str, scriptdir: str | Path) -> dict[str, Any]:
    """The fields of ``record`` that say how a workflow job was run: the merged ``config``, the config files
    (``CONFIG_FILES_VARIABLE``), the command, and the checkout (``checkout_of`` the job's script folder)."""
    shared = os.environ.get(CONFIG_FILES_VARIABLE)
    if shared is None:
        raise RuntimeError(
            f"{CONFIG_FILES_VARIABLE} is not set: a workflow job's script is started by Snakemake, whose Snakefile "
            "sets it; run the rule through snakemake"
        )
    files = json.loads(shared)
    return {
        "config": config,
        "config_files": files,
        "command": "snakemake " + " ".join(f"--configfile {f}" for f in files) + f" (rule {rule})",
        "checkout": checkout_of(scriptdir),
    }


def write_provenance(path: str | Path, **fields: Any) -> None:
    """Write the provenance record ``path`` (the one the rule declares, see rnnbench.paths.provenance)."""
    write_json(path, record(**fields))
