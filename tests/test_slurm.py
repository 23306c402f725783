"""The smoke config through a real SLURM: a one-node cluster on this machine (workflow/scripts/local-slurm.sh),
`--profile workflow/profiles/slurm`, and the same tables as a local run of the same config.

The cluster builds a slice of the smoke DAG that holds every kind of job the profile sends somewhere different
(SLURM_TARGETS): the corpora (the setup group), training runs (grouped four to a cluster job), the baselines and
dynamic evaluations (a cluster job each), study summaries and the comparison table (local rules, on the login
node). The whole DAG would retrain all of the smoke runs a second time for no kind of job more.

Run with `pytest -m slurm` (the default selection leaves it out: it takes minutes and starts daemons).
Needs root and Debian's slurm-wlm and munge (`apt-get install -y slurm-wlm munge`); skipped without them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from checkout import copy_checkout

from rnnbench.metrics import MACHINE_METRICS

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
LOCAL_SLURM = REPO / "workflow" / "scripts" / "local-slurm.sh"
DAEMONS = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo"]
# The slice of the smoke DAG built through SLURM, relative to its results folder (see the module docstring).
SLURM_TARGETS = ["tables/comparison.csv", "studies/rnn_hidden_ptb/summary.csv"]
# Columns and metrics that measure the machine, not the model: they differ between any two runs.
TIMING = re.compile(r"seconds|per_second")


def _missing() -> str | None:
    absent = [name for name in DAEMONS if shutil.which(name) is None]
    if absent:
        return f"SLURM not installed ({', '.join(absent)} not found): apt-get install -y slurm-wlm munge"
    if os.geteuid() != 0:
        return "a local SLURM cluster needs root (slurmd starts jobs as their user)"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return 'snakemake-executor-plugin-slurm not installed: pip install -e ".[slurm]"'
    return None


pytestmark = [pytest.mark.slurm, pytest.mark.skipif(_missing() is not None, reason=str(_missing()))]


@pytest.fixture
def cluster():
    """A running one-node cluster; every daemon it started is stopped afterwards, also on failure."""
    # Short path: the munge socket lives in it, and a Unix socket path has a 108-byte limit.
    state = Path(tempfile.mkdtemp(prefix="rnnbench-slurm-"))
    env = {**os.environ, "LOCAL_SLURM_DIR": str(state)}
    try:
        started = subprocess.run(
            [str(LOCAL_SLURM), "start"], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert started.returncode == 0, started.stdout + started.stderr
        yield state
    finally:
        subprocess.run([str(LOCAL_SLURM), "stop"], env=env, capture_output=True, text=True, timeout=120, check=False)
        status = subprocess.run(
            [str(LOCAL_SLURM), "status"], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        shutil.rmtree(state, ignore_errors=True)
    assert "running" not in status.stdout.replace("not running", ""), status.stdout


def run(work: Path, results: str, *options: str) -> tuple[subprocess.CompletedProcess, float]:
    extra = work / f"{results}.yaml"
    extra.write_text(yaml.safe_dump({"results_dir": f"results/{results}"}))
    targets = [f"results/{results}/{target}" for target in SLURM_TARGETS]
    command = [SNAKEMAKE, *targets, *options, "--configfile", "config/smoke.yaml", str(extra)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    start = time.monotonic()
    result = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=1500, check=False)
    return result, time.monotonic() - start


def tables(results: Path) -> dict[str, pd.DataFrame]:
    """Every CSV table of a results folder, without what measures time (benchmarks: only its run ids)."""
    found = {}
    for path in sorted([*results.glob("tables/*.csv"), *results.glob("studies/*/*.csv")]):
        frame = pd.read_csv(path)
        # Times, and what is read off at a matched time (tables/matched_time.csv, by = train_seconds), differ
        # between any two builds: only what their rows are (run ids, or the models' settings) is compared.
        if path.stem == "benchmarks" or ("by" in frame and frame["by"].astype(str).str.contains(TIMING).any()):
            frame = frame[[c for c in ("run_id", "setting") if c in frame]]
        if "metric" in frame:
            machine = frame["metric"].isin(MACHINE_METRICS) | frame["metric"].astype(str).str.contains(TIMING)
            frame = frame[~machine]
        frame = frame.drop(columns=[c for c in frame.columns if TIMING.search(c)]).reset_index(drop=True)
        found[str(path.relative_to(results))] = frame
    return found


def jobs_run(output: str) -> int:
    """Jobs Snakemake reports done, e.g. '38 of 38 steps (100%) done'."""
    done = re.findall(r"(\d+) of (\d+) steps \(100%\) done", output)
    assert done, output[-3000:]
    return int(done[-1][1])


def test_the_smoke_config_runs_through_slurm_with_the_tables_of_a_local_run(tmp_path, cluster):
    # reference/ too: the comparison table sets the shipped reference runs beside the published rows.
    work = copy_checkout(tmp_path, ["Snakefile", "workflow", "config", "profiles", "reference"])

    # The status checks start after 10 s instead of 40: the smoke jobs take seconds.
    on_slurm, slurm_seconds = run(
        work, "slurm", "--profile", "workflow/profiles/slurm", "--slurm-init-seconds-before-status-checks", "10"
    )
    slurm_output = on_slurm.stdout + on_slurm.stderr
    assert on_slurm.returncode == 0, slurm_output[-5000:]
    job_ids = re.findall(r"submitted with SLURM jobid (\d+)", slurm_output)
    assert job_ids, "no job went through SLURM"
    assert "Group job runs" in slurm_output  # training runs batched into shared cluster jobs

    # Each job was accepted, run and finished with exit code 0 by this cluster's controller.
    controller_log = (cluster / "slurmctld.log").read_text()
    for job_id in job_ids:
        assert f"_slurm_rpc_submit_batch_job: JobId={job_id} " in controller_log
        assert re.search(rf"_job_complete: JobId={job_id} WEXITSTATUS 0\b", controller_log), job_id

    # The local run to compare with: the smoke results this checkout already built (CI builds them just before,
    # from the same code and config), or a local run made here.
    built = os.environ.get("RNNBENCH_SMOKE_RESULTS")
    if built:
        local_results, local_note = Path(built).resolve(), f"compared with the local build in {built}"
    else:
        local, local_seconds = run(work, "local", "--cores", "2")
        local_output = local.stdout + local.stderr
        assert local.returncode == 0, local_output[-5000:]
        assert "SLURM jobid" not in local_output
        local_results = work / "results" / "local"
        local_note = f"{jobs_run(local_output)} jobs in {local_seconds:.0f} s locally (--cores 2)"

    expected, found = tables(local_results), tables(work / "results" / "slurm")
    assert set(SLURM_TARGETS) <= set(found)
    assert set(found) <= set(expected), sorted(set(found) - set(expected))
    for name, frame in found.items():
        pd.testing.assert_frame_equal(frame, expected[name], obj=name)

    print(
        f"\nsmoke config, {len(SLURM_TARGETS)} targets: {jobs_run(slurm_output)} jobs in {slurm_seconds:.0f} s through SLURM "
        f"({len(job_ids)} cluster jobs, ids {', '.join(job_ids)}); {local_note}"
    )


RUN_CONF = Path("/run/slurm/conf")


@pytest.mark.skipif(RUN_CONF.exists() or RUN_CONF.is_symlink(), reason=f"{RUN_CONF} is in use on this machine")
def test_a_link_left_by_a_killed_cluster_does_not_stop_the_next_one():
    # A cluster killed before its stop (a test run ended by a timeout) leaves RUN_CONF linked to its folder, still
    # there with its config, whose daemons are gone: the next start removes the link and says so, instead of
    # refusing to start.
    killed = Path(tempfile.mkdtemp(prefix="rnnbench-slurm-killed-"))
    (killed / "conf").mkdir()
    (killed / "conf" / "slurm.conf").write_text("ClusterName=killed\n")
    state = Path(tempfile.mkdtemp(prefix="rnnbench-slurm-"))
    env = {**os.environ, "LOCAL_SLURM_DIR": str(state)}
    RUN_CONF.parent.mkdir(parents=True, exist_ok=True)
    RUN_CONF.symlink_to(killed / "conf")
    try:
        started = subprocess.run(
            [str(LOCAL_SLURM), "start"], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert started.returncode == 0, started.stdout + started.stderr
        assert "stale link" in started.stderr
        assert os.readlink(RUN_CONF) == str(state / "conf")
    finally:
        subprocess.run([str(LOCAL_SLURM), "stop"], env=env, capture_output=True, text=True, timeout=120, check=False)
        if RUN_CONF.is_symlink() and os.readlink(RUN_CONF) == str(killed / "conf"):
            RUN_CONF.unlink()
        shutil.rmtree(killed, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
    assert not RUN_CONF.is_symlink()
