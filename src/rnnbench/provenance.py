"""Provenance records: what made a table or a figure, written as a small JSON beside it.

A record names the configuration (its hash and the files it came from), the git commit of the code,
the versions of the packages that computed it, and the command and function that wrote it, so any
number in the report can be traced back and regenerated.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping, Sequence

from rnnbench.io import write_json
from rnnbench.paths import provenance as provenance_path

PACKAGES = ("rnnbench", "torch", "numpy", "pandas", "seaborn", "matplotlib", "snakemake")


def config_hash(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def git_commit(cwd: str | Path = ".") -> str:
    """The commit of the working tree, with ``+dirty`` when it has uncommitted changes."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, capture_output=True, text=True).stdout.strip()
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
    producer: str,
    inputs: Sequence[str] = (),
    **about: Any,
) -> dict[str, Any]:
    """The provenance fields; ``about`` adds what the output is of (e.g. ``study={...}``)."""
    return {
        **about,
        "config_hash": config_hash(config),
        "config_files": list(config_files),
        "git_commit": git_commit(),
        "packages": package_versions(),
        "command": command,
        "producer": producer,
        "inputs": list(inputs),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def write_provenance(output: str | Path, **fields: Any) -> None:
    """Write the provenance record of ``output`` beside it (``<stem>.provenance.json``)."""
    write_json(provenance_path(str(output)), record(**fields))
