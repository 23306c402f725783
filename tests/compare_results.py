"""Compare two builds of the same results folder: every table equal, measured times aside.

    python tests/compare_results.py BEFORE AFTER [--rtol 1e-12]

BEFORE and AFTER are results folders (e.g. results/smoke, or a copy of it). Compared: every CSV under
tables/ and studies/<study>/, exactly (or, with --rtol, numbers to that relative tolerance), except what
measures the machine rather than the model (wall time, memory, load, training speed); and every
provenance record, except when and from which commit it was written. Exits 0 when they agree, 1 with one
line per difference otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from rnnbench.metrics import MACHINE_METRICS

# Columns that are measurements of the machine: tables/benchmarks.csv's, the seconds a run had trained by each epoch
# (learning.csv, learning_curves.csv), and a run's training and job times beside its perplexity (comparison.csv,
# crossover.csv); and the metrics of studies/*/summary.csv that are.
TIMING_COLUMNS = (
    "wall_seconds",
    "max_rss_mb",
    "cpu_seconds",
    "seconds_trained",
    "train_seconds",
    "job_wall_seconds",
    "job_cpu_seconds",
)
# Tables in which a column of another name is a time: matched_time.csv's cost is the training time it matches at.
TIMING_COLUMNS_OF = {"tables/matched_time.csv": ("cost",)}
TIMING_METRICS = tuple(sorted(MACHINE_METRICS))
# Provenance fields that change with every build of the same results.
PROVENANCE_VOLATILE = ("created", "git_commit")


def tables(root: Path) -> list[str]:
    found = list(root.glob("tables/*.csv")) + list(root.glob("studies/*/*.csv"))
    return sorted(str(p.relative_to(root)) for p in found)


def records(root: Path) -> list[str]:
    found = list(root.glob("tables/*.provenance.json")) + list(root.glob("studies/*/*.provenance.json"))
    return sorted(str(p.relative_to(root)) for p in found)


def comparable(table: pd.DataFrame, name: str = "") -> pd.DataFrame:
    """The table (``name``: its path under the results folder) without its timing columns and timing metrics."""
    timing = TIMING_COLUMNS + TIMING_COLUMNS_OF.get(name, ())
    table = table.drop(columns=[c for c in timing if c in table.columns])
    if "metric" in table.columns:
        table = table[~table["metric"].isin(TIMING_METRICS)].reset_index(drop=True)
    return table


def compare_tables(before: Path, after: Path, rtol: float = 0.0) -> list[str]:
    problems = []
    names_before, names_after = tables(before), tables(after)
    problems += [f"{name}: only in {before}" for name in sorted(set(names_before) - set(names_after))]
    problems += [f"{name}: only in {after}" for name in sorted(set(names_after) - set(names_before))]
    for name in sorted(set(names_before) & set(names_after)):
        a, b = (comparable(pd.read_csv(root / name), name) for root in (before, after))
        try:
            if rtol:
                pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=rtol, atol=0.0)
            else:
                pd.testing.assert_frame_equal(a, b, check_exact=True)
        except AssertionError as error:
            problems.append(f"{name}: {' '.join(str(error).split())[:300]}")
    return problems


def compare_records(before: Path, after: Path) -> list[str]:
    problems = []
    names_before, names_after = records(before), records(after)
    problems += [f"{name}: only in {before}" for name in sorted(set(names_before) - set(names_after))]
    problems += [f"{name}: only in {after}" for name in sorted(set(names_after) - set(names_before))]
    for name in sorted(set(names_before) & set(names_after)):
        a, b = (json.loads((root / name).read_text(encoding="utf-8")) for root in (before, after))
        for key in sorted((set(a) | set(b)) - set(PROVENANCE_VOLATILE)):
            if a.get(key) != b.get(key):
                problems.append(f"{name}: {key}: {a.get(key)!r} -> {b.get(key)!r}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for numbers (default: exact)")
    args = parser.parse_args(argv)
    before, after = args.before, args.after
    table_problems = compare_tables(before, after, args.rtol)
    record_problems = compare_records(before, after)
    for line in table_problems + record_problems:
        print(line)
    print(
        f"{len(tables(after))} tables compared ({'exactly' if not args.rtol else f'rtol {args.rtol:g}'}): "
        f"{len(table_problems)} difference(s); "
        f"{len(records(after))} provenance records compared: {len(record_problems)} difference(s)"
    )
    return 1 if table_problems or record_problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
