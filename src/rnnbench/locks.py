"""Stale Snakemake locks: told apart from the lock of a run that is still alive, and removed.

Snakemake locks its working directory with files under ``.snakemake/locks`` that only a clean exit
removes. After ``kill -9``, a power cut or a login node's reboot they stay, and every later run stops
with a ``LockException`` until someone runs ``snakemake --unlock``, although nothing is running.

The files say nothing of who wrote them, so every run of this workflow also holds a shared ``flock`` on
``.snakemake/rnnbench-runs.lock`` for as long as its process lives; the kernel drops it however the
process ends. A run that can take that lock exclusively knows that no other run of this workflow is
alive in the directory: the lock files it finds are stale, and it removes them before Snakemake looks.
A live run's lock files are never touched. Where ``flock`` is unsupported, nothing is removed.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

RUNS_LOCK = "rnnbench-runs.lock"

# The open lock file of this process: closing it (or the process ending) releases the lock.
_held: list = []


def clear_stale_locks(state_dir: str | os.PathLike = ".snakemake") -> list[Path]:
    """Hold this run's shared lock; if no other run holds one, remove Snakemake's lock files in
    ``state_dir``. Returns the files removed."""
    state = Path(state_dir)
    state.mkdir(parents=True, exist_ok=True)
    # Held open for this run's whole life (the lock is the open file), not inherited by its jobs (PEP 446).
    handle = open(state / RUNS_LOCK, "a")  # noqa: SIM115
    removed: list[Path] = []
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pass  # another run is alive: its lock files stand, and Snakemake checks them as usual
    except OSError:
        handle.close()  # no flock on this file system: cannot tell stale from live, remove nothing
        return removed
    else:
        for path in sorted((state / "locks").glob("*.lock")):
            path.unlink(missing_ok=True)
            removed.append(path)
    # Shared from here on, so that runs started later see this one as alive (and other live runs share it).
    fcntl.flock(handle, fcntl.LOCK_SH)
    _held.append(handle)
    return removed
