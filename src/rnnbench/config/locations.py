"""The folders rnnbench reads and writes: where each one comes from, and whether it can be used.

One precedence rule for every folder that has a setting (a config key, or a command-line flag) and an
environment variable:

    the setting, when it is given and not null
    else the environment variable, when it is set and not empty
    else the default

    setting     variable         default
    data_dir    RNNBENCH_DATA    none: the corpora are downloaded into <cache_dir>/downloads/
    cache_dir   RNNBENCH_CACHE   data/cache

`~` is the home folder, wherever a folder is given. A folder that is written to (results_dir, cache_dir, a
run's directory) must be a folder or not exist yet, below a folder that can be written. results_dir and
cache_dir must also keep out of the checkout's source tree and must not hold the checkout: removing a results
folder must never remove code. Every check is made before any job starts (`rnnbench.config.settings.load_config`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENVIRONMENT = {"data_dir": "RNNBENCH_DATA", "cache_dir": "RNNBENCH_CACHE"}
DEFAULTS: dict[str, str | None] = {"data_dir": None, "cache_dir": "data/cache"}

# The checkout's top-level folders that hold its code, configs and book sources, and Snakemake's own state;
# tests/test_locations.py checks that this is every top-level folder git tracks.
SOURCE_FOLDERS = (
    ".ci",
    ".git",
    ".snakemake",
    "benchmarks",
    "config",
    "profiles",
    "reference",  # the committed paper-scale results (rnnbench.results.reference): outputs must not overwrite them
    "reports",
    "src",
    "tests",
    "workflow",
)


def resolve(key: str, given: str | os.PathLike | None, where: str) -> tuple[str | None, str]:
    """(folder, what named it) of ``key`` by the rule above: ``where`` names the setting (``config.cache_dir``,
    ``--cache-dir``), returned when the setting decided; else the variable's name; else "the default"."""
    if given is not None:
        return expand(given), where
    variable = ENVIRONMENT[key]
    if os.environ.get(variable):
        return expand(os.environ[variable]), variable
    default = DEFAULTS[key]
    return (expand(default) if default is not None else None), "the default"


def job_folders(config: Mapping[str, Any]) -> dict[str, str | None]:
    """The data and cache folders of a workflow job, from the merged config by the rule above: ``data_dir`` as
    the config gives it (None: the corpus loader falls back to $RNNBENCH_DATA, then downloads), ``cache_dir``
    resolved. A job resolves them itself instead of receiving them as rule params: a param that changes reruns
    the job, and where the corpora lie changes nothing a job computes (every file is checked against its
    digest, every cache entry is keyed by the corpus and its options), so moving them must rerun nothing."""
    data_dir = config.get("data_dir")
    return {
        "data_dir": expand(data_dir) if data_dir is not None else None,
        "cache_dir": resolve("cache_dir", config.get("cache_dir"), "config.cache_dir")[0],
    }


def expand(folder: str | os.PathLike) -> str:
    """``~`` as the home folder, and one spelling of a path (``results/`` is ``results``: no ``results//runs``)."""
    text = os.fspath(folder)
    return os.path.normpath(os.path.expanduser(text)) if text else text


def unwritable(folder: str | os.PathLike) -> str | None:
    """Why files cannot be written in ``folder`` (made with its parents if missing), or None if they can."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        return "is a file, not a folder"
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        return f"is below {existing}, which is a file"
    # os.access answers for this process, root included: a read-only file system or a folder without write
    # permission for this user are both refused, as the first file written there would be.
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot be written: {existing} is read-only for this user"
    return None


def source_tree_problem(folder: str | os.PathLike, checkout: str | os.PathLike | None) -> str | None:
    """Why ``folder`` must not receive outputs: it holds the checkout or lies in its source tree; else None."""
    if checkout is None:
        return None
    root = Path(checkout).resolve()
    path = Path(folder).resolve()  # relative paths are relative to the working directory, as every job's are
    if path == root or root.is_relative_to(path):
        return f"holds the checkout {root}: removing the results would remove the code"
    if path.is_relative_to(root):
        top = path.relative_to(root).parts[0]
        if top in SOURCE_FOLDERS:
            return f"is inside the checkout's {top}/ ({path}), which holds code, not outputs"
    return None


def package_checkout() -> Path | None:
    """The checkout this package runs from (an editable install: <checkout>/src/rnnbench), or None."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "Snakefile").is_file() and (root / "src" / "rnnbench").is_dir() else None
