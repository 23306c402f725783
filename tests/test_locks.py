"""Stale Snakemake locks: removed when the run that wrote them is dead, kept while it lives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

CLEAR = "import sys; from rnnbench.locks import clear_stale_locks; print(len(clear_stale_locks(sys.argv[1])))"
# A run that holds its lock until killed, as a Snakemake process of this workflow does.
LIVE_RUN = CLEAR + "; sys.stdout.flush(); import time; time.sleep(600)"


def python(code: str, state: Path, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    return subprocess.Popen([sys.executable, "-c", code, str(state)], env=env, text=True, **kwargs)


def clear_in_new_process(state: Path) -> int:
    """Files removed by a fresh run starting in ``state``'s directory."""
    process = python(CLEAR, state, stdout=subprocess.PIPE)
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    return int(out)


def snakemake_locks(state: Path) -> list[Path]:
    """Lock files as Snakemake writes them: one for the inputs and one for the outputs of a run."""
    (state / "locks").mkdir(parents=True, exist_ok=True)
    files = [state / "locks" / "0.input.lock", state / "locks" / "0.output.lock"]
    for path in files:
        path.write_text("results/runs/x/metrics.json\n")
    return files


def test_locks_of_a_dead_run_are_removed(tmp_path):
    files = snakemake_locks(tmp_path / ".snakemake")
    assert clear_in_new_process(tmp_path / ".snakemake") == 2
    assert not any(path.exists() for path in files)


def test_locks_of_a_live_run_stay_until_it_is_killed(tmp_path):
    state = tmp_path / ".snakemake"
    live = python(LIVE_RUN, state, stdout=subprocess.PIPE)
    try:
        assert live.stdout.readline().strip() == "0"  # it holds its lock from here on
        files = snakemake_locks(state)
        assert clear_in_new_process(state) == 0
        assert all(path.exists() for path in files)
    finally:
        live.send_signal(signal.SIGKILL)
        live.wait(timeout=60)
    assert clear_in_new_process(state) == 2  # kill -9 left the files; the next run removes them
    assert not any(path.exists() for path in files)


def test_two_live_runs_both_protect_their_locks(tmp_path):
    """A second run shares the lock of the first: when the first ends, the second's locks still stand."""
    state = tmp_path / ".snakemake"
    first = python(LIVE_RUN, state, stdout=subprocess.PIPE)
    second = None
    try:
        assert first.stdout.readline().strip() == "0"
        second = python(LIVE_RUN, state, stdout=subprocess.PIPE)
        assert second.stdout.readline().strip() == "0"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
        files = snakemake_locks(state)
        assert clear_in_new_process(state) == 0
        assert all(path.exists() for path in files)
    finally:
        for run in (first, second):
            if run is not None and run.poll() is None:
                run.send_signal(signal.SIGKILL)
                run.wait(timeout=60)


@pytest.mark.parametrize("present", [False, True])
def test_a_directory_without_locks_is_left_as_it_is(tmp_path, present):
    state = tmp_path / ".snakemake"
    if present:
        (state / "locks").mkdir(parents=True)
    assert clear_in_new_process(state) == 0
    assert (state / "locks").is_dir() == present
