"""The values of the appendix "Reproducing these numbers" (reports/reproduce.qmd), and which of its alternative
sentences the results call for (rnnbench.book.conditions).

    reproduce_chapter(results)   ReproduceChapter: the provenance records, the training jobs' cost, and the wall time
                                 per model of the published comparison

The HTML edition prints every record, job and run; the PDF prints their summaries (``Provenance.first`` to
``.last``, ``TrainingCost.summary``, ``PublishedRuns.summary``) and names the files that hold the rest.

Reads results only; no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench.book import published
from rnnbench.book import results as res
from rnnbench.book.format import NONE, Markdown, code, sig, words


@dataclass(frozen=True)
class Provenance:
    """What every table's and figure's provenance record names: configuration, code, command, packages."""

    records: int
    files: Markdown  # the configuration files
    hashes: Markdown  # their merged settings' hashes
    commands: Markdown
    one_commit: bool  # every record names the same commit
    commits: Markdown  # that commit, or every commit named
    commit_count: int
    clean: bool  # a clean checkout: no commit marked +dirty or unknown
    python: Markdown
    python_recorded: bool
    versions_agree: bool  # every record names the same version of every package
    inconsistent: Markdown  # the packages whose versions differ between records
    versions: pd.DataFrame  # per package, every version seen
    table: pd.DataFrame  # per record: the output, its producer, when
    producers: int  # the functions that wrote the records
    first: Markdown  # the earliest and the latest record's time (UTC, to the minute)
    last: Markdown


def provenance(results: str | Path | None = None) -> Provenance:
    records = res.provenance_table(results)
    versions = res.package_versions(results)
    commits = sorted(records["git_commit"].unique())
    commands = sorted(records["command"].str.replace(r" \(rule \w+\)$", "", regex=True).unique())
    python = versions.set_index("package")["version"].get("python")
    inconsistent = versions.loc[~versions["consistent"], "package"]
    created = records["created"].str.slice(0, 16).str.replace("T", " ")
    return Provenance(
        records=len(records),
        files=words(code(f) for f in sorted({f for files in records["config_files"] for f in files.split()})),
        hashes=words(code(h) for h in sorted(records["config_hash"].unique())),
        commands=words(code(c) for c in commands),
        one_commit=len(commits) == 1,
        commits=words(code(c) for c in commits),
        commit_count=len(commits),
        clean=all(c and not c.endswith("+dirty") and not c.startswith("unknown") for c in commits),
        python=code(python) if python is not None else NONE,
        python_recorded=python is not None,
        versions_agree=inconsistent.empty,
        inconsistent=words(code(p) for p in inconsistent) or NONE,
        versions=versions,
        # Short enough for a printed column: a code span cannot break across lines.
        table=pd.DataFrame(
            {
                "output": records["record"].str.removesuffix(".provenance.json"),
                "producer": records["producer"].str.removeprefix("rnnbench."),
                "created": created,
            }
        ),
        producers=records["producer"].nunique(),
        first=Markdown(created.min()) if len(created) else NONE,
        last=Markdown(created.max()) if len(created) else NONE,
    )


SHORT_COMMIT = 12  # hex digits of a commit in the summary: enough to name it, short enough for a printed column


def short_commit(commit: str) -> str:
    """A commit as the summary prints it: its first SHORT_COMMIT digits, and the +dirty mark of a changed tree."""
    name, plus, mark = commit.partition("+")
    return name[:SHORT_COMMIT] + plus + mark


def commits_of(records: pd.DataFrame) -> Markdown:
    """The commits a set of provenance records name, short, in one cell."""
    commits = sorted({short_commit(c) for c in records["git_commit"] if c})
    return Markdown(", ".join(code(c) for c in commits)) if commits else NONE


# The columns of the training jobs' table, in this order, where the benchmarks table has them.
COST_COLUMNS = ("run_id", "studies", "wall_seconds", "cpu_seconds", "max_rss_mb")


@dataclass(frozen=True)
class TrainingCost:
    """tables/benchmarks.csv: every training job's wall time, its run's CPU time and peak memory."""

    jobs: int
    wall: Markdown  # summed over the jobs, in seconds
    timed: bool  # some job has a record
    slowest: Markdown  # the slowest job's run, and its wall time
    slowest_seconds: Markdown
    most_memory: Markdown  # the run with the largest peak memory, and that peak
    most_memory_mb: Markdown
    table: pd.DataFrame  # one row per job, with the studies that use its run
    summary: pd.DataFrame  # per study, then every job: runs, summed and slowest wall time, largest peak, commits


def _has(study: str):
    """Whether a run's studies (a list, or NaN for a run that no study uses) include ``study``."""
    return lambda studies: isinstance(studies, list) and study in studies


def cost_summary(
    jobs: pd.DataFrame, studies: list[str], study_of: dict[str, list[str]], records: pd.DataFrame
) -> pd.DataFrame:
    """Per study (in study order), then a row for every job: its runs, their summed and largest wall time, the
    largest peak memory, and the commits its provenance records name (a study's: those under studies/<study>/).
    A run that serves two studies counts in both rows, once in the last."""
    memory = jobs["max_rss_mb"] if "max_rss_mb" in jobs else pd.Series(math.nan, index=jobs.index)
    rows = []
    for study in [*studies, None]:
        mine = jobs.index if study is None else jobs.index[jobs["run_id"].map(study_of).map(_has(study))]
        own = records if study is None else records[records["record"].str.startswith(f"studies/{study}/")]
        rows.append(
            {
                "study": Markdown("every job") if study is None else code(study),
                "runs": len(mine),
                "wall_seconds": jobs.loc[mine, "wall_seconds"].sum() if len(mine) else math.nan,
                "slowest_seconds": jobs.loc[mine, "wall_seconds"].max(),
                "max_rss_mb": memory.loc[mine].max(),
                "commits": commits_of(own),
            }
        )
    return pd.DataFrame(rows)


def training_cost(results: str | Path | None = None) -> TrainingCost:
    jobs = res.table("benchmarks", results=results)
    studies = res.study_names(results)
    study_of: dict[str, list[str]] = {}
    for study in studies:
        for run_id in res.study_summary(study, results)["run_id"].unique():
            study_of.setdefault(run_id, []).append(study)
    jobs["studies"] = jobs["run_id"].map(lambda r: ", ".join(study_of.get(r, [])))
    timed = len(jobs) > 0
    slowest = jobs.sort_values("wall_seconds", ascending=False).iloc[0] if timed else None
    memory = jobs.dropna(subset=["max_rss_mb"]) if "max_rss_mb" in jobs else jobs.iloc[0:0]
    largest = memory.sort_values("max_rss_mb", ascending=False).iloc[0] if len(memory) else None
    return TrainingCost(
        jobs=len(jobs),
        wall=sig(jobs["wall_seconds"].sum() if timed else math.nan),
        timed=timed and largest is not None,
        slowest=code(slowest["run_id"]) if slowest is not None else NONE,
        slowest_seconds=sig(slowest["wall_seconds"]) if slowest is not None else NONE,
        most_memory=code(largest["run_id"]) if largest is not None else NONE,
        most_memory_mb=sig(largest["max_rss_mb"]) if largest is not None else NONE,
        table=jobs[[c for c in COST_COLUMNS if c in jobs]],
        summary=cost_summary(jobs, studies, study_of, res.provenance_table(results)),
    )


@dataclass(frozen=True)
class PublishedRuns:
    """Every run of ours in the published comparison (rnnbench.book.published.runs_table), where there is one."""

    shown: bool  # this results folder holds the comparison
    timed: bool  # and some of its training jobs were timed
    minutes: Markdown  # their summed wall time
    table: pd.DataFrame
    summary: pd.DataFrame  # per corpus and family: runs, summed training and job seconds, slowest job


def runs_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """The comparison's runs (published.runs_table) per corpus and family (FF or RNN, the model's first word)."""
    family = runs["model"].str.split(",").str[0]
    grouped = runs.assign(family=family).groupby(["corpus", "family"], sort=False)
    return grouped.agg(
        runs=("run", "size"),
        train_seconds=("train_seconds", "sum"),
        job_wall_seconds=("job_wall_seconds", lambda s: s.sum(min_count=1)),
        slowest_job_seconds=("job_wall_seconds", "max"),
    ).reset_index()


def published_runs(results: str | Path | None = None) -> PublishedRuns:
    if not published.has_comparison(results):
        return PublishedRuns(False, False, NONE, pd.DataFrame(), pd.DataFrame())
    runs = published.runs_table(published.comparison(results))
    minutes = published.wall_minutes(runs)
    return PublishedRuns(True, not math.isnan(minutes), sig(minutes), runs, runs_summary(runs))


@dataclass(frozen=True)
class ReproduceChapter:
    provenance: Provenance
    cost: TrainingCost
    published_runs: PublishedRuns


def reproduce_chapter(results: str | Path | None = None) -> ReproduceChapter:
    return ReproduceChapter(provenance(results), training_cost(results), published_runs(results))
