"""The reproduction appendix's summaries, which the PDF prints in place of its per-run tables."""

from __future__ import annotations

import math

import pandas as pd

from rnnbench.book import reproduce_chapter as rc

JOBS = pd.DataFrame(
    {
        "run_id": ["a", "b", "c", "d"],
        "wall_seconds": [10.0, 30.0, 5.0, 7.0],
        "max_rss_mb": [100.0, 300.0, 200.0, math.nan],
    }
)
STUDY_OF = {"a": ["one"], "b": ["one", "two"], "c": ["two"]}  # d: a run no study uses
RECORDS = pd.DataFrame(
    {
        "record": [
            "studies/one/summary.provenance.json",
            "studies/two/summary.provenance.json",
            "tables/x.provenance.json",
        ],
        "git_commit": ["0123456789abcdef0123", "fedcba9876543210fedc+dirty", "0123456789abcdef0123"],
    }
)


def test_the_cost_summary_has_a_row_per_study_and_one_for_every_job():
    summary = rc.cost_summary(JOBS, ["one", "two"], STUDY_OF, RECORDS)
    assert list(summary["study"]) == ["`one`", "`two`", "every job"]
    assert list(summary["runs"]) == [2, 2, 4]  # b serves both studies, and counts once in the last row
    assert list(summary["wall_seconds"]) == [40.0, 35.0, 52.0]
    assert list(summary["slowest_seconds"]) == [30.0, 30.0, 30.0]
    assert list(summary["max_rss_mb"]) == [300.0, 300.0, 300.0]
    assert list(summary["commits"]) == [
        "`0123456789ab`",
        "`fedcba987654+dirty`",
        "`0123456789ab`, `fedcba987654+dirty`",
    ]


def test_a_study_without_jobs_or_records_has_an_empty_row():
    summary = rc.cost_summary(JOBS, ["three"], STUDY_OF, RECORDS)
    row = summary.iloc[0]
    assert row["runs"] == 0 and math.isnan(row["wall_seconds"]) and row["commits"] == rc.NONE


def test_the_comparison_summary_sums_per_corpus_and_family():
    runs = pd.DataFrame(
        {
            "run": ["f1", "f2", "r1"],
            "corpus": ["PTB", "PTB", "PTB"],
            "model": ["FF, n‑1 = 4", "FF, n‑1 = 1", "RNN, H = 16"],
            "train_seconds": [2.0, 3.0, 4.0],
            "job_wall_seconds": [10.0, 20.0, math.nan],
        }
    )
    summary = rc.runs_summary(runs)
    assert summary[["corpus", "family", "runs"]].values.tolist() == [["PTB", "FF", 2], ["PTB", "RNN", 1]]
    assert list(summary["train_seconds"]) == [5.0, 4.0]
    assert summary["job_wall_seconds"].iloc[0] == 30.0 and math.isnan(summary["job_wall_seconds"].iloc[1])
    assert summary["slowest_job_seconds"].iloc[0] == 20.0
