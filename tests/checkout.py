"""A copy of the workflow in a temporary folder, for tests that run Snakemake end to end: the copy owns its
.snakemake folder, locks and results, so a test never touches the checkout it runs from."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def copy_checkout(tmp_path: Path, names: list[str]) -> Path:
    """Copy ``names`` (files, folders, links kept as links) from the checkout into ``tmp_path/checkout``."""
    work = tmp_path / "checkout"
    work.mkdir()
    for name in names:
        source = REPO / name
        if source.is_symlink():
            (work / name).symlink_to(os.readlink(source))
        elif source.is_dir():
            shutil.copytree(source, work / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, work / name)
    return work
