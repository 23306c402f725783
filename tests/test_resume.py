"""A pipeline killed with kill -9 in the middle of training finishes when the same command is run again:
no --rerun-incomplete, no --unlock. The workflow is copied into tmp_path so that this test owns its
.snakemake folder (incomplete markers, locks) and kills nothing else."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from checkout import copy_checkout

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
# What a checkout runs: `profiles` links to workflow/profiles, where Snakemake finds the default profile.
WORKFLOW = ["Snakefile", "workflow", "profiles"]
EPOCHS = 4

# One small run on the generated agreement corpus, with epochs long enough to kill it between two.
TINY = {
    "results_dir": "results",
    "threads": 1,
    "run_overrides": {
        "max_epochs": EPOCHS,
        "schedule": "constant",
        "max_steps_per_epoch": 40,
        "train_tokens": 20000,
        "eval_tokens": 2000,
    },
    "studies": {
        "hidden_agreement": {
            "description": "resumption after kill -9",
            "family": "rnn",
            "corpus": "agreement",
            "fixed": {"output": "full", "embed_dim": 8},
            "vary": {"hidden": [8]},
            "seeds": [1],
            "metric": "agreement_accuracy",
        }
    },
    "tables": {"worked": False},
}
COMMAND = [SNAKEMAKE, "results", "--cores", "2"]  # the README's command, as a user would type it again


def copy_workflow(tmp_path: Path) -> Path:
    work = copy_checkout(tmp_path, WORKFLOW)
    (work / "config").mkdir()
    (work / "config" / "config.yaml").write_text(yaml.safe_dump({**TINY, "cache_dir": str(tmp_path / "cache")}))
    return work


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src")}


def wait_for(condition, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, "the pipeline ended before it could be killed:\n" + process.stdout.read()
        assert time.monotonic() < deadline, "no training checkpoint appeared in time"
        time.sleep(0.05)


def test_the_default_profile_applies_to_a_plain_snakemake_command():
    result = subprocess.run(
        [SNAKEMAKE, "results", "-n", "--configfile", "config/smoke.yaml"],
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "workflow specific profile profiles/default" in result.stderr


@pytest.mark.slow
def test_a_pipeline_killed_mid_training_resumes_with_the_same_command(tmp_path):
    work = copy_workflow(tmp_path)
    runs = work / "results" / "runs"
    checkpoints = lambda: sorted(runs.glob("*/checkpoint.pt"))  # noqa: E731

    first = subprocess.Popen(
        COMMAND,
        cwd=work,
        env=environment(),
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for(lambda: checkpoints(), first, timeout=300)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # snakemake and every job it started, as kill -9 of the group
        first.wait(timeout=60)
    killed = [path.parent.name for path in checkpoints()]
    assert killed, "killed after the run finished, not in the middle of it"
    # What made the same command fail before: jobs marked incomplete and the dead run's locks.
    assert any((work / ".snakemake" / "incomplete").iterdir())
    assert any((work / ".snakemake" / "locks").glob("*.lock"))

    again = subprocess.run(
        COMMAND, cwd=work, env=environment(), capture_output=True, text=True, timeout=600, check=False
    )
    output = again.stdout + again.stderr
    assert again.returncode == 0, output
    summary = pd.read_csv(work / "results" / "studies" / "hidden_agreement" / "summary.csv")
    assert summary["run_id"].nunique() == 1
    for run_id in killed:
        assert not (runs / run_id / "checkpoint.pt").exists()
        log = (work / "results" / "logs" / "train" / f"{run_id}.log").read_text()
        assert f"resuming {run_id} after epoch" in log  # from its checkpoint, not from scratch
        assert len(pd.read_csv(runs / run_id / "epochs.csv")) == EPOCHS
