"""What a config's training costs, study by study, read from a build's records, and the whole run projected.

    python benchmarks/run_cost.py [--configfile config/config.yaml ...] [--results DIR] [--slots 2]

For each study of the config, in the config's order: its runs (a run two studies share is counted in the first),
how many of them have a job record (results/benchmarks/train/<run_id>.tsv, written by Snakemake around each training
job), the job wall seconds of those, and their mean. A run without a record yet is projected at its study's mean
(diverged runs included, as they happen), so a build that is still running gives a projection that firms up as it
goes. Then the gradient analyses' records (results/benchmarks/analyses/) and the total: training slot-seconds over
``--slots`` training slots (rnnbench.jobs: one core per run) is the run's wall time if the slots are always busy.

A job's wall time counts whatever slowed it: a machine busy with other work, or a build paused mid-job (SIGSTOP),
which adds the pause to the jobs it caught. Read the figures from a build that ran alone.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from rnnbench.config.files import merge_config_files
from rnnbench.config.settings import load_config

REPO = Path(__file__).resolve().parents[1]


def job_seconds(folder: Path) -> dict[str, float]:
    """Each record's wall seconds (Snakemake's benchmark file: column s), by the record's name."""
    seconds = {}
    for path in sorted(folder.glob("*.tsv")):
        with path.open(encoding="utf-8") as handle:
            seconds[path.stem] = float(next(csv.DictReader(handle, delimiter="\t"))["s"])
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", nargs="+", default=[], help="config files over config/config.yaml")
    parser.add_argument("--results", help="the build's results folder (default: the config's results_dir)")
    parser.add_argument("--slots", type=int, default=2, help="training slots the run had (default 2)")
    args = parser.parse_args()

    merged = merge_config_files([REPO / "config" / "config.yaml", *args.configfile])
    config = load_config(merged)
    results = Path(args.results or merged["results_dir"])
    if not results.is_absolute():
        results = REPO / results
    trained = job_seconds(results / "benchmarks" / "train")
    analysed = job_seconds(results / "benchmarks" / "analyses")

    seen: set[str] = set()
    unrecorded = []
    total = projected_total = 0.0
    print(f"{'study':32} {'runs':>5} {'timed':>6} {'job s':>9} {'mean s':>8} {'projected s':>12}")
    for study in config.studies:
        runs = [run.run_id for _, run in config.study_runs(study)]
        own = [r for r in runs if r not in seen]
        seen.update(runs)
        timed = [trained[r] for r in own if r in trained]
        mean = sum(timed) / len(timed) if timed else float("nan")
        projected = sum(timed) + mean * (len(own) - len(timed)) if timed else float("nan")
        total += sum(timed)
        projected_total += projected if timed else 0.0
        if own and not timed:
            unrecorded.append(study)
        print(f"{study:32} {len(own):5d} {len(timed):6d} {sum(timed):9.0f} {mean:8.1f} {projected:12.0f}")
    analyses = sum(analysed.values())
    print(f"{'gradient analyses':32} {len(analysed):5d} {len(analysed):6d} {analyses:9.0f}")
    print(
        f"training: {total:,.0f} slot-s recorded, {projected_total:,.0f} projected"
        + (f" (no record yet, left out: {', '.join(unrecorded)})" if unrecorded else "")
        + "; "
        f"on {args.slots} slots {projected_total / args.slots / 60:.1f} min of wall time, analyses beside it "
        f"{analyses / 60:.1f} min of one core"
    )


if __name__ == "__main__":
    main()
